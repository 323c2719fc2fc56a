"""The rollout chain: pairs each served step with its executed transition and fills SB3 rollout buffers.

A proposal is computed at env.obs step N; its transition (the action fusion and risk let
through, the reward) arrives later on env.transition for step N. The chain keeps what the
policy computed per step (``PendingStep``) until that transition comes, and stores the pair
into the rollout being collected, with the log-probability of the EXECUTED action under the
policy that served the step.

Four buffers rotate: collecting -> ready (full, returns computed) -> training (the PPO
update reads it in a worker thread) -> spare -> collecting. Steps that arrive during an
update go into the next rollout; only when that one fills too are steps left out (counted
``transitions_not_stored_learner_busy``). A step that cannot be stored (no proposal, timed
out, learner busy) ends the GAE chain exactly: the last stored reward is bootstrapped with
V(next state), as SB3 treats a time-limit truncation, and a new chain starts after it. A
step that goes missing with no value to bootstrap from discards the partial rollout
(``rollouts_discarded_gap``).

In a reproducible run (run.reproducible) the policy updates synchronously, so none of this should happen: the chain is
``strict`` and each of those cases raises StepDropped (the policy actor counts it as ``steps_dropped``, and the run
says it is not reproducible).
"""

from __future__ import annotations

from collections import Counter, OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch
from sb3_contrib import MaskablePPO
from sb3_contrib.common.maskable.buffers import MaskableRolloutBuffer

from actors.policy.masking import masked_log_softmax

class StepDropped(RuntimeError):
    """A reproducible run's rollout could not store a step (run.reproducible): the data would depend on timing."""


MAX_PENDING_STEPS = 16
"""Served steps kept waiting for their transition; older ones are counted as never executed."""


@dataclass(frozen=True, slots=True)
class RecordResult:
    stored: bool
    reason: str
    """'' when stored; otherwise why not (no_proposal, learner_busy, timed_out, frozen, ...)."""
    n_differs: int = 0
    """Environments whose executed action differed from the proposal."""


@dataclass(slots=True)
class PendingStep:
    """What the policy computed for one env.obs step, kept until its transition arrives."""

    obs_norm: np.ndarray
    masks: np.ndarray
    logits: np.ndarray
    values: np.ndarray
    actions: np.ndarray
    episode_starts: np.ndarray


class RolloutChain:
    """The four-buffer state machine between served steps and the PPO update."""

    def __init__(
        self,
        model: MaskablePPO,
        n_envs: int,
        counters: Counter[str],
        terminal_values: Callable[[np.ndarray], np.ndarray],
        store_proposed: bool = False,
        strict: bool = False,
    ) -> None:
        """``terminal_values(raw_obs [k, obs_dim]) -> V [k]``: the serving policy's values of terminal
        observations, for bootstrapping truncated episodes. ``strict`` (a reproducible run): a step that cannot be
        stored, or a rollout discarded for a gap, raises StepDropped after the chain is cut as usual."""
        self.strict = strict
        self.model = model
        self.n_envs = n_envs
        self.counters = counters
        self._terminal_values = terminal_values
        self._env_arange = np.arange(n_envs)
        self.store_proposed = store_proposed
        """Store the proposed action (fusion's and risk's changes are the environment's) instead of the executed one."""
        self._pending: OrderedDict[int, PendingStep] = OrderedDict()
        self.episode_starts = np.ones(n_envs, dtype=bool)
        """Per env, whether the next observation begins an episode (the last transition ended one)."""
        self.collecting: MaskableRolloutBuffer | None = self._new_buffer()
        self.spare: MaskableRolloutBuffer | None = self._new_buffer()
        self.ready: MaskableRolloutBuffer | None = None
        self.training: MaskableRolloutBuffer | None = None
        self._last_stored_step: int | None = None
        self._chain_broken = False

    def _new_buffer(self) -> MaskableRolloutBuffer:
        return MaskableRolloutBuffer(
            self.model.n_steps,
            self.model.observation_space,
            self.model.action_space,
            device="cpu",
            gamma=self.model.gamma,
            gae_lambda=self.model.gae_lambda,
            n_envs=self.n_envs,
        )

    # ------------------------------------------------------------------ state

    @property
    def update_ready(self) -> bool:
        """A full rollout with its returns computed waits, and no update is running."""
        return self.ready is not None and self.training is None

    @property
    def fill(self) -> int:
        """Steps stored in the rollout being collected (0 when none is collecting)."""
        return self.collecting.pos if self.collecting is not None else 0

    # ------------------------------------------------------------------ served steps

    def serve(self, step: int, obs_norm: np.ndarray, masks: np.ndarray, logits: np.ndarray, values: np.ndarray,
              actions: np.ndarray) -> None:
        """A step was served: close a full rollout (its last values are this step's), keep the step for its transition."""
        self._finish_rollout_if_full(step, values)
        self._pending[step] = PendingStep(obs_norm, masks, logits, values, actions, self.episode_starts.copy())
        self._pending.move_to_end(step)
        while len(self._pending) > MAX_PENDING_STEPS:
            self._pending.popitem(last=False)
            self.counters["proposals_never_executed"] += 1

    def _finish_rollout_if_full(self, step: int, values: np.ndarray) -> None:
        """At the env.obs after the last stored step: GAE with the last values, then the rollout is ready."""
        buffer = self.collecting
        if buffer is None or not buffer.full:
            return
        if self._last_stored_step != step - 1:
            self.counters["rollouts_discarded_gap"] += 1
            buffer.reset()  # (strict: the step that went missing raised when its transition came, or it never came)
            return
        buffer.compute_returns_and_advantage(last_values=torch.as_tensor(values), dones=self.episode_starts)
        self.ready, self.collecting = buffer, None
        self._take_spare_for_collecting()

    # ------------------------------------------------------------------ transitions

    def record(
        self,
        step: int,
        executed: np.ndarray,
        scaled_rewards: np.ndarray,
        terminated: np.ndarray,
        truncated: np.ndarray,
        terminal_obs: np.ndarray | None,
        timed_out: np.ndarray | None,
    ) -> RecordResult:
        """Store the transition of loop step ``step`` with its served step, or say why not."""
        pending = self._pending.pop(step, None)
        try:
            reason = self._why_not_storable(pending, executed, timed_out)
            if reason:
                self.counters[f"transitions_not_stored_{reason}"] += 1
                self._cut_chain_before(step, pending)
                self._dropped(f"step {step} not stored: {reason}")
                return RecordResult(stored=False, reason=reason)
            assert pending is not None
            n_differs = self._store(step, pending, executed, scaled_rewards, terminated, truncated, terminal_obs)
            return RecordResult(stored=True, reason="", n_differs=n_differs)
        finally:
            self.episode_starts = terminated | truncated

    def _dropped(self, why: str) -> None:
        if self.strict:
            raise StepDropped(why)

    def _why_not_storable(self, pending: PendingStep | None, executed: np.ndarray, timed_out) -> str:
        if pending is None:
            return "no_proposal"
        if timed_out is not None and np.asarray(timed_out, dtype=bool).any():
            # The env took HOLD because no verdict arrived in time: not a decision of this policy.
            return "timed_out"
        if ((executed < 0) | (executed >= pending.masks.shape[1])).any():
            return "bad_action"
        if self.collecting is None:
            return "learner_busy"
        if self.collecting.full:
            return "rollout_full"
        return ""

    def _store(
        self,
        step: int,
        pending: PendingStep,
        executed: np.ndarray,
        scaled_rewards: np.ndarray,
        terminated: np.ndarray,
        truncated: np.ndarray,
        terminal_obs: np.ndarray | None,
    ) -> int:
        buffer = self.collecting
        assert buffer is not None
        n_differs = int((executed != pending.actions).sum())
        if self.store_proposed:
            executed = pending.actions
        if buffer.pos > 0 and self._last_stored_step != step - 1 and not self._chain_broken:
            # A step went missing without a value to bootstrap from: this rollout cannot be linked up.
            self.counters["rollouts_discarded_gap"] += 1
            buffer.reset()
            gap = True
        else:
            gap = False
        masks = pending.masks.copy()
        outside = ~masks[self._env_arange, executed]
        if outside.any():
            # The env executed something the proposal mask forbade (its own override). Widen the
            # stored mask so old and new log-probabilities are finite and computed alike.
            self.counters["executed_outside_mask"] += int(outside.sum())
            masks[self._env_arange[outside], executed[outside]] = True
        log_probs = masked_log_softmax(pending.logits, masks)[self._env_arange, executed].astype(np.float32)
        buffer_rewards = scaled_rewards.copy()
        self._bootstrap_truncated(buffer_rewards, terminated, truncated, terminal_obs)
        episode_starts = np.ones(self.n_envs, dtype=bool) if self._chain_broken else pending.episode_starts
        buffer.add(
            pending.obs_norm,
            executed.reshape(-1, 1),
            buffer_rewards,
            episode_starts.astype(np.float32),
            torch.as_tensor(pending.values),
            torch.as_tensor(log_probs),
            action_masks=masks,
        )
        self._last_stored_step = step
        self._chain_broken = False
        self.counters["transitions_stored"] += 1
        self.counters["executed_differs_from_proposal"] += n_differs
        if gap:
            self._dropped(f"a step before {step} never came: the rollout was discarded")
        return n_differs

    def _bootstrap_truncated(self, rewards: np.ndarray, terminated, truncated, terminal_obs) -> None:
        """SB3's time-limit handling: reward += gamma * V(terminal obs) where the episode was cut, not ended."""
        cut = truncated & ~terminated
        if not cut.any():
            return
        if terminal_obs is None or np.shape(terminal_obs) != (self.n_envs, *self.model.observation_space.shape):
            self.counters["truncated_without_terminal_obs"] += int(cut.sum())
            return
        rewards[cut] += self.model.gamma * self._terminal_values(np.asarray(terminal_obs, dtype=np.float32)[cut])

    def _cut_chain_before(self, step: int, pending: PendingStep | None) -> None:
        """Step ``step`` will not be stored: end the GAE chain of the collecting rollout exactly there."""
        buffer = self.collecting
        if buffer is None or buffer.pos == 0 or self._chain_broken:
            self._chain_broken = True
            return
        if pending is not None and self._last_stored_step == step - 1 and not buffer.full:
            # The last stored step led to this step's observation: bootstrap with its value,
            # as SB3 does for a truncation, unless that observation began a new episode.
            continuing = ~pending.episode_starts
            buffer.rewards[buffer.pos - 1] += self.model.gamma * pending.values * continuing
        elif not buffer.full:
            self.counters["rollouts_discarded_gap"] += 1
            buffer.reset()
        self._chain_broken = True

    # ------------------------------------------------------------------ hand-over to the update

    def begin_training(self) -> MaskableRolloutBuffer | None:
        """The ready rollout becomes the training one (None when there is none or an update runs)."""
        if not self.update_ready:
            return None
        self.training, self.ready = self.ready, None
        self._take_spare_for_collecting()
        return self.training

    def end_training(self) -> int:
        """The update is done: its rollout becomes the spare. Returns the env steps it held."""
        if self.training is None:
            raise RuntimeError("end_training() without begin_training()")
        rollout_size = self.training.buffer_size * self.training.n_envs
        self.training.reset()
        self.spare, self.training = self.training, None
        self._take_spare_for_collecting()
        return rollout_size

    def _take_spare_for_collecting(self) -> None:
        if self.collecting is None and self.spare is not None:
            self.collecting, self.spare = self.spare, None
            self.collecting.reset()
            self._last_stored_step = None
            self._chain_broken = False
