"""The policy actor: answers every env.obs with one policy.proposal and learns from env.transition.

A thin shell over actors/policy/learner.py. The hot path (env.obs -> proposal) runs on the
event loop; the PPO update runs in the actor's worker thread while proposals keep being
served (see the learner's module docstring for why that is safe and what happens to steps
that arrive meanwhile).

In a reproducible run (run.reproducible) the update is synchronous instead: after the proposal that closed a rollout
the actor reads no message until the update is done (the env simply waits for its verdict), so every step is served by
the weights of the same number of updates whatever the machine's load; training completes right after the update of
the last full rollout, at exactly policy.total_timesteps, and later transitions are not recorded.
"""

from __future__ import annotations

import asyncio
import math
import time
from functools import partial
from pathlib import Path

import msgspec

from actors.policy.checkpoint import checkpoint_dir, latest_checkpoint, prune_checkpoints, read_checkpoint
from actors.policy.config import PolicySettings
from actors.policy.learner import OnlineMaskablePPO
from actors.policy.rollout import StepDropped
from bus.messages import EnvEpisode, EnvObs, EnvTransition, PolicyProposal, PolicyUpdate
from runtime.actor import Actor
from runtime.rate import StepRate

PROGRESS_FIGURES = (
    "approx_kl",
    "clip_fraction",
    "explained_variance",
    "entropy_loss",
    "value_loss",
    "policy_gradient_loss",
)
STOP_WAIT_FOR_UPDATE_SECS = 20.0


def resolve_start_checkpoint(resume_from: str, model_path: str, learn: bool, own_run_dir: Path) -> Path | None:
    """Which checkpoint to start from.

    A learning policy restarted by the supervisor inside the same run continues from its own
    newest checkpoint (a crash must not throw the training away); otherwise policy.resume_from
    (a run dir or file) wins over policy.model_path.
    """
    own = latest_checkpoint(checkpoint_dir(own_run_dir)) if learn else None
    if own is not None:
        return own
    if resume_from:
        found = latest_checkpoint(resume_from)
        if found is None:
            raise ValueError(f"policy.resume_from: no checkpoint found in {resume_from}")
        return found
    if model_path:
        path = Path(model_path)
        if not path.is_file():
            raise ValueError(f"policy.model_path: {model_path} is not a file")
        return path
    return None


class PolicyActor(Actor):
    settings_type = PolicySettings
    subscriptions = (EnvObs, EnvTransition, EnvEpisode)

    async def on_start(self) -> None:
        cfg = self.config.policy
        if not cfg.learn:
            # A frozen policy (backtest, paper) only answers observations: no wake-up per transition.
            self.subscriptions = (EnvObs,)
        if cfg.seed < 0:
            cfg = msgspec.structs.replace(cfg, seed=self.config.run.seed)
        start_from = resolve_start_checkpoint(cfg.resume_from, cfg.model_path, cfg.learn, self.run_dir)
        self._reproducible = self.config.run.reproducible and cfg.learn
        """Synchronous updates and an exact budget (run.reproducible; a frozen policy is reproducible as it is)."""
        # Built in the worker thread (a second or two of torch set-up) so heartbeats keep flowing.
        self.learner = await self.in_worker(
            partial(
                OnlineMaskablePPO,
                cfg,
                self.config.env.n_envs,
                tensorboard_dir=self.run_dir / "tensorboard" if cfg.learn else None,
                on_figures=self._log_update,
                checkpoint=read_checkpoint(start_from) if start_from else None,
                reproducible=self._reproducible,
            )
        )
        self._checkpoints = checkpoint_dir(self.run_dir)
        self._last_checkpoint_steps = self.learner.num_timesteps
        self._update_task: asyncio.Task | None = None
        self._training_done = False
        self._completed = False
        """Training complete (its checkpoint written): a reproducible run records nothing more."""
        self._bad_input_logged: set[str] = set()
        self._propose_secs_total = 0.0
        self._last_answer: tuple[EnvObs, PolicyProposal] | None = None
        """The last observation answered and its proposal: the same step re-sent (a peer restarted) gets the same answer."""
        self.spawn(self._progress_loop(), "progress")
        self.log.info(
            "policy_ready",
            learn=cfg.learn,
            n_envs=self.learner.n_envs,
            num_timesteps=self.learner.num_timesteps,
            start_checkpoint=str(start_from or ""),
        )

    @classmethod
    def warm_up(cls, config) -> None:
        """A spare builds one throwaway learner: the first one in a process takes seconds (torch and SB3 set-up),
        the next a few ms, so the restarted policy's on_start is quick."""
        cfg = config.policy
        OnlineMaskablePPO(msgspec.structs.replace(cfg, learn=False, seed=cfg.seed if cfg.seed >= 0 else config.run.seed), config.env.n_envs)

    # ------------------------------------------------------------------ messages

    async def on_message(self, msg) -> None:
        match msg:
            case EnvObs():
                self._on_obs(msg)
                if self._reproducible:
                    await self._update_in_step()
            case EnvTransition():
                self._on_transition(msg)
                if self._reproducible and self._training_done and not self._completed and not self.learner.rollout_closing:
                    await self._complete_training()  # nothing left to learn: no rollout waits for its next observation
            case EnvEpisode():
                self.learner.note_episode(msg.episode_return, msg.steps)

    def _on_obs(self, msg: EnvObs) -> None:
        if self._is_resent(msg):
            # Proposing again would store a second pending step (and resample): the rollout keeps one per step.
            self.publish(self._last_answer[1])
            self.counters["resent_obs_answered"] += 1
            return
        started = time.perf_counter()
        try:
            proposal = self.learner.propose(msg.obs, msg.masks, msg.step)
        except ValueError as error:
            self._bad_input("bad_obs", error, step=msg.step)
            return
        answer = PolicyProposal(
            env_ids=msg.env_ids,
            step=msg.step,
            actions=proposal.actions,
            confidences=proposal.confidences,
            probs=proposal.probs,
            values=proposal.values,
        )
        self.publish(answer)
        self._last_answer = (msg, answer)
        self.counters["proposals"] += 1
        self._propose_secs_total += time.perf_counter() - started
        if self.learner.update_ready and not self._training_done and not self._reproducible:
            self._start_update()

    def _is_resent(self, msg: EnvObs) -> bool:
        """The observation just answered, again: same step, envs and episodes (an env restarted from step 0 differs)."""
        if self._last_answer is None:
            return False
        last = self._last_answer[0]
        return (last.step == msg.step and list(last.env_ids) == list(msg.env_ids) and list(last.episode_ids) == list(msg.episode_ids)
                and bool((last.obs == msg.obs).all()))

    def _on_transition(self, msg: EnvTransition) -> None:
        if self._completed and self._reproducible:
            self.counters["transitions_after_training"] += 1  # the checkpoint holds exactly the budget
            return
        try:
            result = self.learner.record(
                msg.step,
                msg.actions,
                msg.rewards,
                msg.terminated,
                msg.truncated,
                msg.terminal_obs,
                msg.timed_out or None,
            )
        except ValueError as error:
            self._bad_input("bad_transition", error, step=msg.step)
            return
        except StepDropped as error:  # reproducible: the step is lost to learning, and the run says so
            self._bad_input("steps_dropped", error, step=msg.step)
            result = None
        self.counters["transitions"] += 1
        if result is not None and not result.stored and result.reason not in ("frozen", "learner_busy"):
            self.log.debug("transition_not_stored", step=msg.step, reason=result.reason)
        if not self.config.policy.learn or self._training_done:
            return
        total = self.config.policy.total_timesteps
        if total and self.learner.num_timesteps >= total:
            self._training_done = True
            if not self._reproducible:  # reproducible: on_message completes it, after the last update
                self.spawn(self._complete_training(), "complete_training")
        elif self._update_task is None:
            self._checkpoint_if_due()

    def _bad_input(self, kind: str, error: Exception, **fields) -> None:
        self.counters[kind] += 1
        if kind not in self._bad_input_logged:  # first of each kind in full; the counter tells the rest
            self._bad_input_logged.add(kind)
            self.log.warning(kind, error=str(error), **fields)

    # ------------------------------------------------------------------ the PPO update

    def _start_update(self) -> None:
        if self._update_task is not None or not self.learner.begin_update():
            return
        self._update_task = self.spawn(self._run_update(), "ppo_update")

    async def _run_update(self) -> None:
        await self.in_worker(self.learner.run_update)
        self._update_task = None
        self._after_update()
        if self.learner.update_ready and not self._training_done:
            self._start_update()

    async def _update_in_step(self) -> None:
        """Reproducible: the update a rollout is ready for runs now, before the next message is read; training
        completes after the update of the last rollout."""
        if self._completed:
            return
        if self.learner.begin_update():
            await self.in_worker(self.learner.run_update)
            self._after_update()
        if self._training_done:
            await self._complete_training()

    def _after_update(self) -> None:
        report = self.learner.finish_update()
        if report.frozen:
            self.log.warning(
                "frozen_policy",
                approx_kl=report.figures.get("approx_kl", float("nan")),
                clip_fraction=report.figures.get("clip_fraction", float("nan")),
                consecutive_updates=report.consecutive_frozen,
            )
        self._checkpoint_if_due()

    def _log_update(self, figures: dict[str, float]) -> None:
        """One update's figures (SB3's dump, on the serving thread): published as policy.update, logged with the same fields."""
        update = update_message(figures)
        self.log.info(PolicyUpdate.LOG_EVENT, **_finite({**figures, **msgspec.structs.asdict(update)}))
        self.publish(update)

    async def _wait_for_update(self) -> None:
        task = self._update_task
        if task is not None:  # (a reproducible run never has one here: its updates are synchronous)
            await asyncio.wait({task}, timeout=STOP_WAIT_FOR_UPDATE_SECS)

    # ------------------------------------------------------------------ checkpoints and the end

    def _checkpoint_if_due(self) -> None:
        every = self.config.policy.checkpoint_every_steps
        if every and self.learner.num_timesteps - self._last_checkpoint_steps >= every:
            self._save_checkpoint()

    def _save_checkpoint(self) -> Path | None:
        if self.learner.update_running:
            return None
        started = time.perf_counter()
        path = self.learner.save_checkpoint(self._checkpoints)
        prune_checkpoints(self._checkpoints, self.config.policy.keep_checkpoints)
        self._last_checkpoint_steps = self.learner.num_timesteps
        self.counters["checkpoints"] += 1
        self.log.info(
            "checkpoint_saved",
            path=str(path),
            num_timesteps=self.learner.num_timesteps,
            save_ms=round((time.perf_counter() - started) * 1000, 1),
        )
        return path

    async def _complete_training(self) -> None:
        self._completed = True
        await self._wait_for_update()
        path = self._save_checkpoint()
        summary = self._summary()
        self.log.info("training_complete", checkpoint=str(path or ""), **summary)
        # A last progress report first, so whoever shows the latest progress shows the final figures.
        self.progress(self.learner.num_timesteps, self.config.policy.total_timesteps, 0.0, self._progress_figures())
        self.done("timesteps_reached", summary)

    def _summary(self) -> dict[str, float]:
        summary = {
            "num_timesteps": float(self.learner.num_timesteps),
            "updates": float(self.learner.n_updates),
            "learned_steps": float(self.learner.learned_steps),
            "stored_steps": float(self.learner.counters["transitions_stored"] * self.learner.n_envs),
            "ep_rew_mean": self.learner.episode_reward_mean,
        }
        for name in PROGRESS_FIGURES:
            summary[name] = self.learner.latest_figures.get(name, float("nan"))
        return _finite(summary)

    async def on_stop(self) -> None:
        if not hasattr(self, "learner"):
            return
        await self._wait_for_update()
        if self.config.policy.learn and self.learner.num_timesteps > self._last_checkpoint_steps:
            self._save_checkpoint()
        self.learner.model.logger.close()

    # ------------------------------------------------------------------ progress and stats

    async def _progress_loop(self) -> None:
        interval = self.config.policy.progress_interval_secs
        meter = StepRate(self.learner.num_timesteps)
        while True:
            await asyncio.sleep(interval)
            steps = self.learner.num_timesteps
            self.progress(steps, self.config.policy.total_timesteps, meter.rate(steps), self._progress_figures())

    def _progress_figures(self) -> dict[str, float]:
        counters = self.learner.counters
        figures = {
            "ep_rew_mean": self.learner.episode_reward_mean,
            "updates": float(self.learner.n_updates),
            "learned_steps": float(self.learner.learned_steps),
            "stored_steps": float(counters["transitions_stored"] * self.learner.n_envs),
            "not_stored_learner_busy": float(counters["transitions_not_stored_learner_busy"] * self.learner.n_envs),
            "executed_differs": float(counters["executed_differs_from_proposal"]),
            "frozen_updates": float(self.learner.frozen_watch.consecutive_frozen),
        }
        for name in PROGRESS_FIGURES:
            if name in self.learner.latest_figures:
                figures[name] = self.learner.latest_figures[name]
        return _finite(figures)

    def gauges(self) -> dict[str, float]:
        if not hasattr(self, "learner"):
            return {}
        proposals = self.counters["proposals"]
        gauges = {
            "num_timesteps": float(self.learner.num_timesteps),
            "updates": float(self.learner.n_updates),
            "rollout_fill": float(self.learner.rollout_fill),
            "propose_mean_us": 1e6 * self._propose_secs_total / proposals if proposals else 0.0,
            **{f"learner_{k}": float(v) for k, v in self.learner.counters.items()},
        }
        if "approx_kl" in self.learner.latest_figures:
            gauges["approx_kl"] = self.learner.latest_figures["approx_kl"]
        return _finite(gauges)


def update_message(figures: dict[str, float]) -> PolicyUpdate:
    """SB3's dump of one update (actors/policy/training_log.py's names) as the typed message."""
    learning = {name: float(figures[name]) for name in PolicyUpdate.__struct_fields__ if name in figures}
    return PolicyUpdate(**{**learning, "update": int(figures.get("policy_updates", 0)), "num_timesteps": int(figures.get("num_timesteps", 0)),
                           "mean_episode_return": float(figures.get("rollout_ep_rew_mean", math.nan))})


def _finite(figures: dict[str, float]) -> dict[str, float]:
    """Drop NaN/inf (e.g. ep_rew_mean before the first episode): JSON logs and tables stay clean."""
    return {k: float(v) for k, v in figures.items() if math.isfinite(v)}


ACTOR = PolicyActor
