"""Online MaskablePPO: serve proposals and learn from the actions that were really executed.

SB3's `learn()` owns the environment loop, so the policy would only ever learn from its own
proposals (the seeds' failure 001: the LLM and the risk veto never took part in training).
Here the loop belongs to the bus. This module keeps SB3's public pieces — the
MaskableActorCriticPolicy, the MaskableRolloutBuffer with its GAE, `MaskablePPO.train()`
with its logger, save/load — and feeds them from outside:

    propose(obs, masks, step)          -> actions sampled under the mask, their probabilities, values
    record(step, executed, rewards...) -> stores the EXECUTED action (after fusion and risk) with
                                          its log-probability under the policy that proposed it
    begin_update / run_update / finish_update
                                       -> PPO update on a full rollout; run_update may run in a
                                          worker thread while propose() keeps serving

Serving while an update runs (the choice, and why): proposals come from a separate copy of
the policy (`serving`) that only the event-loop thread touches, and the update trains
`model.policy` on a rollout that only the worker touches; the copy takes the new weights in
`finish_update`, between two messages. Steps that arrive during an update are served by the
pre-update policy and stored, with that policy's log-probabilities (it *is* their behaviour
policy, so PPO's ratio stays correct), into the next rollout. The decision loop therefore
never waits for training. Only if that next rollout fills up before the update ends are
further steps served but not stored (counted as `transitions_not_stored_learner_busy`); the
cut is made exact by bootstrapping the last stored reward with V(next state) and starting a
new GAE chain, the same treatment SB3 gives a time-limit truncation. That pairing of served
steps with transitions, and the rotation of rollout buffers, is actors/policy/rollout.py.

It is over 400 lines because serving, recording and the threaded update share one SB3 model and
its rollout state; the pieces that stand alone (rollout pairing, checkpoints) already live apart.
"""

from __future__ import annotations

import copy
import io
import time
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import gymnasium as gym
import numpy as np
import torch
from sb3_contrib import MaskablePPO
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
from stable_baselines3.common.vec_env import DummyVecEnv

from actors.common.actions import HOLD, N_ACTIONS, OBS_BAR_FEATURES, OBS_DIM, OBS_WINDOW_BARS
from actors.common.observation import observation_columns
from actors.policy.checkpoint import Checkpoint, read_checkpoint, write_checkpoint
from actors.policy.config import PolicyConfig
from actors.policy.masking import masked_log_softmax
from actors.policy.normalizer import ObsRewardNormalizer
from actors.policy.rollout import RecordResult, RolloutChain
from actors.policy.serving import numpy_form, sample
from actors.policy.training_log import Figures, FrozenPolicyWatch, make_training_logger

__all__ = ["OnlineMaskablePPO", "Proposal", "RecordResult", "UpdateReport", "maskable_ppo_kwargs", "policy_logits_and_values"]


# --------------------------------------------------------------------------- spaces-only env


class SpacesOnlyEnv(gym.Env):
    """Declares the spaces SB3 needs to build MaskablePPO; the real env runs in another process."""

    def __init__(self, obs_dim: int, n_actions: int) -> None:
        self.observation_space = gym.spaces.Box(-np.inf, np.inf, shape=(obs_dim,), dtype=np.float32)
        self.action_space = gym.spaces.Discrete(n_actions)

    def reset(self, *, seed=None, options=None):
        raise RuntimeError("SpacesOnlyEnv is never stepped: observations arrive on the bus")

    def step(self, action):
        raise RuntimeError("SpacesOnlyEnv is never stepped: observations arrive on the bus")


def _hidden_columns(config: PolicyConfig, obs_dim: int) -> np.ndarray | None:
    """The observation columns the config hides: the window's bars older than policy.window_bars_seen, and what
    policy.features_seen leaves out. None when all are seen or the observation is not the env's 261 columns
    (plain use with another width)."""
    if obs_dim != OBS_DIM:
        return None
    hidden = np.arange((OBS_WINDOW_BARS - config.window_bars_seen) * OBS_BAR_FEATURES)
    if config.features_seen:
        hidden = np.union1d(hidden, np.setdiff1d(np.arange(obs_dim), observation_columns(config.features_seen)))
    return hidden.astype(np.intp) if len(hidden) else None


def spaces_only_vec_env(obs_dim: int, n_actions: int, n_envs: int) -> DummyVecEnv:
    return DummyVecEnv([partial(SpacesOnlyEnv, obs_dim, n_actions) for _ in range(n_envs)])


# --------------------------------------------------------------------------- results


@dataclass(frozen=True, slots=True)
class Proposal:
    actions: np.ndarray
    """int64 [n], always allowed by the mask."""
    confidences: np.ndarray
    """float32 [n]: probability of the chosen action under the masked distribution."""
    probs: np.ndarray
    """float32 [n, n_actions]: the masked distribution (0 on masked actions)."""
    values: np.ndarray
    """float32 [n]: value estimate (in normalised-reward units)."""
    log_probs: np.ndarray
    """float32 [n]: log-probability of the proposed actions."""


@dataclass(frozen=True, slots=True)
class UpdateReport:
    figures: Figures
    frozen: bool
    """True when approx_kl stayed below the threshold for the configured number of updates."""
    consecutive_frozen: int


# --------------------------------------------------------------------------- the learner


class OnlineMaskablePPO:
    """MaskablePPO served step by step from outside, learning from executed actions."""

    def __init__(
        self,
        config: PolicyConfig,
        n_envs: int,
        *,
        obs_dim: int = OBS_DIM,
        n_actions: int = N_ACTIONS,
        tensorboard_dir: Path | None = None,
        on_figures: Callable[[Figures], None] | None = None,
        checkpoint: Checkpoint | None = None,
        reproducible: bool = False,
    ) -> None:
        """``reproducible`` (run.reproducible): deterministic torch kernels, and a rollout that raises StepDropped
        for a step it cannot store (the caller updates synchronously, so none should be)."""
        if n_envs < 1:
            raise ValueError(f"n_envs must be >= 1, got {n_envs}")
        torch.set_num_threads(config.torch_threads)
        if reproducible:
            torch.use_deterministic_algorithms(True)
        self.config = config
        self.n_envs = n_envs
        self.obs_dim = obs_dim
        self.n_actions = n_actions
        self.learning = config.learn
        self.seed = max(config.seed, 0)  # the actor resolves -1 to run.seed; plain use gets 0
        self.deterministic = (not config.learn) and config.deterministic_when_frozen
        self._hidden_columns = _hidden_columns(config, obs_dim)
        """Columns the network is not shown (fed as 0), from policy.window_bars_seen and features_seen; None: all seen.
        A checkpoint keeps the columns its network was trained without, and they win over the config (below)."""
        self.counters: Counter[str] = Counter()
        self.latest_figures: Figures = {}
        self._on_figures = on_figures
        self._env_arange = np.arange(n_envs)

        venv = spaces_only_vec_env(obs_dim, n_actions, n_envs)
        self.model = self._load_model(checkpoint, venv, config) if checkpoint else self._new_model(venv)
        self.model.set_random_seed(self.seed)
        self.model.set_logger(make_training_logger(tensorboard_dir, self._on_dump))
        self.normalizer = ObsRewardNormalizer(
            obs_dim,
            n_envs,
            gamma=self.model.gamma,
            norm_obs=config.normalize_obs,
            norm_reward=config.normalize_reward,
            clip_obs=config.clip_obs,
            clip_reward=config.clip_reward,
        )
        self.n_updates = 0
        self.learned_steps = 0
        if checkpoint:
            self.normalizer.load_bytes(checkpoint.normalizer_bytes)
            self._hidden_columns = self._columns_trained_without(checkpoint)
            self.n_updates = int(checkpoint.meta.get("n_updates", 0))
            self.learned_steps = int(checkpoint.meta.get("learned_steps", 0))

        self.serving: MaskableActorCriticPolicy = copy.deepcopy(self.model.policy)
        self.serving.set_training_mode(False)
        # The hot path runs a numpy copy of the serving weights when the architecture allows it.
        self._serving_np = numpy_form(self.serving)
        self._sample_rng = np.random.default_rng(self.seed)
        self.frozen_watch = FrozenPolicyWatch(config.frozen_kl_threshold, config.frozen_warn_updates)
        self._episode_returns: deque[float] = deque(maxlen=100)
        self._episode_lengths: deque[int] = deque(maxlen=100)
        self._update_started_at = 0.0
        self.rollout: RolloutChain | None = (
            RolloutChain(self.model, n_envs, self.counters, self._terminal_values, config.learn_from == "proposed", strict=reproducible)
            if self.learning else None
        )
        """Pairs served steps with their transitions into rollouts; None for a frozen policy."""

    @classmethod
    def from_checkpoint_file(cls, path: Path, config: PolicyConfig, n_envs: int, **kwargs) -> OnlineMaskablePPO:
        return cls(config, n_envs, checkpoint=read_checkpoint(Path(path)), **kwargs)

    # ------------------------------------------------------------------ construction

    def _columns_trained_without(self, checkpoint: Checkpoint) -> np.ndarray | None:
        """The columns a checkpoint's network never saw. Its weights for them are untrained and its normaliser has
        no spread for them, so showing them now would feed it noise: the checkpoint's choice wins over the config's
        (counted as ``features_seen_from_checkpoint`` when they differ). A checkpoint from before this was saved
        saw every column."""
        saved = checkpoint.meta.get("hidden_columns") or []
        trained_without = np.asarray(saved, dtype=np.intp) if saved else None
        if saved != self._hidden_column_list():
            self.counters["features_seen_from_checkpoint"] += 1
        return trained_without

    def _hidden_column_list(self) -> list[int]:
        return [] if self._hidden_columns is None else self._hidden_columns.tolist()

    def _new_model(self, venv: DummyVecEnv) -> MaskablePPO:
        return MaskablePPO("MlpPolicy", venv, **maskable_ppo_kwargs(self.config, self.seed))

    @staticmethod
    def _load_model(checkpoint: Checkpoint, venv: DummyVecEnv, cfg: PolicyConfig) -> MaskablePPO:
        # SB3's load restores weights, optimizer state, hyperparameters and num_timesteps;
        # giving it the spaces-only env also checks the spaces and sets n_envs. With
        # rollout_from_checkpoint off, the rollout size and minibatching come from the config, so a
        # resumed phase can update at its own pace (the main job's lockstep phase).
        rollout = {} if cfg.rollout_from_checkpoint else {"n_steps": cfg.n_steps, "batch_size": cfg.batch_size, "n_epochs": cfg.n_epochs}
        return MaskablePPO.load(io.BytesIO(checkpoint.model_bytes), env=venv, device="cpu", **rollout)

    # ------------------------------------------------------------------ properties

    @property
    def num_timesteps(self) -> int:
        """Env steps seen so far, summed over environments (SB3's count; saved in checkpoints)."""
        return int(self.model.num_timesteps)

    @property
    def update_ready(self) -> bool:
        """A full rollout with its returns computed waits, and no update is running."""
        return self.rollout is not None and self.rollout.update_ready

    @property
    def rollout_closing(self) -> bool:
        """The collecting rollout is full: the next observation closes it (its values end the GAE) for an update."""
        return self.rollout is not None and self.rollout.collecting is not None and self.rollout.collecting.full

    @property
    def update_running(self) -> bool:
        return self.rollout is not None and self.rollout.training is not None

    @property
    def rollout_fill(self) -> int:
        """Steps stored in the rollout being collected (0 when none is collecting)."""
        return self.rollout.fill if self.rollout is not None else 0

    @property
    def episode_reward_mean(self) -> float:
        return float(np.mean(self._episode_returns)) if self._episode_returns else float("nan")

    # ------------------------------------------------------------------ serving

    def propose(self, obs: np.ndarray, masks: np.ndarray, step: int) -> Proposal:
        """Actions for one env.obs batch: sampled (or argmax when frozen) under the mask, never a masked one."""
        obs = self._sanitize_obs(obs)
        masks = self._sanitize_masks(masks)
        obs_norm = self.normalizer.observe(obs) if self.learning else self.normalizer.normalize_obs(obs)
        logits_np, values = self._logits_and_values(obs_norm)
        log_probs_all = masked_log_softmax(logits_np, masks)
        probs = np.exp(log_probs_all).astype(np.float32)
        if self.deterministic:
            actions = probs.argmax(axis=1).astype(np.int64)
        else:
            actions = sample(probs, self._sample_rng)
        values = values.astype(np.float32)
        chosen_log_probs = log_probs_all[self._env_arange, actions].astype(np.float32)
        if self.rollout is not None:
            self.rollout.serve(step, obs_norm, masks, np.asarray(logits_np, dtype=np.float32), values, actions)
        return Proposal(
            actions=actions,
            confidences=probs[self._env_arange, actions],
            probs=probs,
            values=values,
            log_probs=chosen_log_probs,
        )

    def _logits_and_values(self, obs_norm: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        if self._serving_np is not None:
            return self._serving_np.logits_and_values(obs_norm)
        with torch.no_grad():
            logits, values = policy_logits_and_values(self.serving, torch.as_tensor(obs_norm))
        return logits.numpy(), values.numpy()

    def _sanitize_obs(self, obs: np.ndarray) -> np.ndarray:
        # EnvObs checks its own widths on decode; only the env count is this learner's to know.
        if len(obs) != self.n_envs:
            raise ValueError(f"obs shape {np.shape(obs)}: {len(obs)} rows for {self.n_envs} envs")
        return self._finite(obs)

    def _finite(self, obs: np.ndarray) -> np.ndarray:
        obs = np.array(obs, dtype=np.float32)  # a copy: bus arrays are read-only views
        if not np.isfinite(obs).all():
            # One NaN would poison the running mean forever; count it and feed zeros instead.
            self.counters["non_finite_obs"] += 1
            obs = np.nan_to_num(obs, nan=0.0, posinf=0.0, neginf=0.0)
        if self._hidden_columns is not None:
            obs[:, self._hidden_columns] = 0.0  # constant, so normalised to 0: the network gets nothing from them
        return obs

    def _sanitize_masks(self, masks: np.ndarray) -> np.ndarray:
        masks = np.array(masks, dtype=bool)  # a copy: bus arrays are read-only views
        if len(masks) != self.n_envs:
            raise ValueError(f"masks shape {masks.shape}: {len(masks)} rows for {self.n_envs} envs")
        empty_rows = ~masks.any(axis=1)
        if empty_rows.any():
            # Nothing allowed is a broken mask; HOLD is the one action that cannot hurt.
            self.counters["empty_mask_rows"] += int(empty_rows.sum())
            masks[empty_rows, HOLD] = True
        return masks

    def _terminal_values(self, terminal_obs: np.ndarray) -> np.ndarray:
        """The serving policy's values of raw terminal observations (the rollout bootstraps truncations with them)."""
        obs = self.normalizer.normalize_obs(self._finite(terminal_obs))
        with torch.no_grad():
            _, values = policy_logits_and_values(self.serving, torch.as_tensor(obs))
        return values.numpy()

    # ------------------------------------------------------------------ learning from transitions

    def record(
        self,
        step: int,
        executed_actions: np.ndarray,
        rewards: np.ndarray,
        terminated: np.ndarray,
        truncated: np.ndarray,
        terminal_obs: np.ndarray | None = None,
        timed_out: np.ndarray | None = None,
    ) -> RecordResult:
        """Store the transition of loop step `step` (the executed actions, not the proposals)."""
        executed = np.asarray(executed_actions, dtype=np.int64).reshape(-1)
        rewards = np.asarray(rewards, dtype=np.float32).reshape(-1)
        terminated = np.asarray(terminated, dtype=bool).reshape(-1)
        truncated = np.asarray(truncated, dtype=bool).reshape(-1)
        for name, array in (("actions", executed), ("rewards", rewards), ("terminated", terminated), ("truncated", truncated)):
            if array.shape != (self.n_envs,):
                raise ValueError(f"transition {name} shape {array.shape} != ({self.n_envs},)")
        self.model.num_timesteps += self.n_envs
        if not self.learning:
            return RecordResult(stored=False, reason="frozen")
        dones = terminated | truncated
        if not np.isfinite(rewards).all():
            self.counters["non_finite_rewards"] += 1
            rewards = np.nan_to_num(rewards, nan=0.0, posinf=0.0, neginf=0.0)
        scaled_rewards = self.normalizer.observe_rewards(rewards, dones)
        assert self.rollout is not None
        return self.rollout.record(step, executed, scaled_rewards, terminated, truncated, terminal_obs, timed_out)

    def note_episode(self, episode_return: float, length: int) -> None:
        """A finished episode (env.episode), for ep_rew_mean in logs and progress."""
        self._episode_returns.append(float(episode_return))
        self._episode_lengths.append(int(length))

    # ------------------------------------------------------------------ the PPO update

    def begin_update(self) -> bool:
        """Hand the ready rollout to training. Call on the serving thread; False when nothing to do."""
        if self.rollout is None or self.rollout.begin_training() is None:
            return False
        self._update_started_at = time.monotonic()
        return True

    def run_update(self) -> None:
        """SB3's PPO update on the rollout handed over by begin_update. Blocking: run it in a worker thread.

        Touches only `model` (its policy, optimizer and logger) and the training rollout, never
        what propose()/record() use, so serving continues meanwhile.
        """
        if self.rollout is None or self.rollout.training is None:
            raise RuntimeError("run_update() without begin_update()")
        self.model.rollout_buffer = self.rollout.training
        self.model.train()

    def finish_update(self) -> UpdateReport:
        """Publish the new weights to the serving policy and log the update. Call on the serving thread."""
        if not self.update_running:
            raise RuntimeError("finish_update() without begin_update()")
        assert self.rollout is not None
        self.serving.load_state_dict(self.model.policy.state_dict())
        if self._serving_np is not None:
            self._serving_np.load(self.serving)
        rollout_size = self.rollout.end_training()
        self.n_updates += 1
        self.learned_steps += rollout_size
        logger = self.model.logger
        logger.record("rollout/ep_rew_mean", self.episode_reward_mean)
        if self._episode_lengths:
            logger.record("rollout/ep_len_mean", float(np.mean(self._episode_lengths)))
        logger.record("time/update_secs", time.monotonic() - self._update_started_at)
        logger.record("policy/updates", self.n_updates)
        logger.record("policy/learned_steps", self.learned_steps)
        logger.record("policy/executed_differs", self.counters["executed_differs_from_proposal"])
        logger.record("policy/not_stored_learner_busy", self.counters["transitions_not_stored_learner_busy"])
        logger.dump(step=self.num_timesteps)
        frozen = self.frozen_watch.observe(self.latest_figures.get("approx_kl", float("nan")))
        return UpdateReport(self.latest_figures, frozen, self.frozen_watch.consecutive_frozen)

    def update_if_ready(self) -> UpdateReport | None:
        """All three steps on the calling thread (tests, single-threaded use)."""
        if not self.begin_update():
            return None
        self.run_update()
        return self.finish_update()

    def _on_dump(self, figures: Figures) -> None:
        self.latest_figures = figures
        if self._on_figures is not None:
            self._on_figures(figures)

    # ------------------------------------------------------------------ checkpoints

    def checkpoint(self) -> Checkpoint:
        """A snapshot of model + normaliser. Call when no update is running (the optimizer is consistent)."""
        if self.update_running:
            raise RuntimeError("checkpoint() while a PPO update is running")
        model_file = io.BytesIO()
        self.model.save(model_file)
        return Checkpoint(
            model_bytes=model_file.getvalue(),
            normalizer_bytes=self.normalizer.to_bytes(),
            meta={"n_updates": self.n_updates, "learned_steps": self.learned_steps, "n_envs": self.n_envs,
                  "hidden_columns": self._hidden_column_list()},
        )

    def save_checkpoint(self, directory: Path) -> Path:
        return write_checkpoint(Path(directory), self.num_timesteps, self.checkpoint())

    def parameters_vector(self) -> np.ndarray:
        """All serving weights as one vector (for tests and change detection)."""
        return torch.nn.utils.parameters_to_vector(self.serving.parameters()).detach().numpy().copy()


def maskable_ppo_kwargs(cfg: PolicyConfig, seed: int) -> dict:
    """MaskablePPO's constructor arguments from [policy] (also the plain-SB3 baseline's, so both train alike)."""
    return dict(
        learning_rate=cfg.learning_rate,
        n_steps=cfg.n_steps,
        batch_size=cfg.batch_size,
        n_epochs=cfg.n_epochs,
        gamma=cfg.gamma,
        gae_lambda=cfg.gae_lambda,
        clip_range=cfg.clip_range,
        ent_coef=cfg.ent_coef,
        vf_coef=cfg.vf_coef,
        max_grad_norm=cfg.max_grad_norm,
        target_kl=cfg.target_kl or None,
        policy_kwargs={"net_arch": list(cfg.net_arch)},
        seed=seed,
        device="cpu",
        verbose=0,
    )


# --------------------------------------------------------------------------- policy arithmetic


def policy_logits_and_values(policy: MaskableActorCriticPolicy, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """One forward pass: raw action logits [n, A] and values [n], as SB3's forward computes them."""
    features = policy.extract_features(obs)
    if policy.share_features_extractor:
        latent_pi, latent_vf = policy.mlp_extractor(features)
    else:
        pi_features, vf_features = features
        latent_pi = policy.mlp_extractor.forward_actor(pi_features)
        latent_vf = policy.mlp_extractor.forward_critic(vf_features)
    return policy.action_net(latent_pi), policy.value_net(latent_vf).flatten()
