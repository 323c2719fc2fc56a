"""The RL policy actor: MaskablePPO that serves proposals and learns from the executed actions.

- learner.py      OnlineMaskablePPO: propose() / record() / begin_update, run_update, finish_update
                  on SB3's MaskableActorCriticPolicy, MaskableRolloutBuffer, train() and logger
- normalizer.py   VecNormalize-equivalent observation/reward normalisation (saved with the model)
- checkpoint.py   atomic checkpoint files (model + normaliser + counters), latest_checkpoint()
- training_log.py SB3 logger -> TensorBoard + ppo_update log events; the frozen-policy watch
- config.py       the [policy] section
- actor.py        the thin actor shell (ACTOR = PolicyActor)
- pass_through.py a stand-in for fusion + risk (proposal -> verdict), for tests and benchmarks

What a job needs from this package (no torch import): ``find_checkpoint`` (which refuses a file that is not a checkpoint),
``latest_checkpoint`` and ``checkpoint_steps``.
"""

from __future__ import annotations

from pathlib import Path

from actors.policy.checkpoint import CheckpointError, check_checkpoint, checkpoint_steps, latest_checkpoint

__all__ = ["CheckpointError", "CheckpointNotFound", "check_checkpoint", "checkpoint_steps", "find_checkpoint", "latest_checkpoint"]


class CheckpointNotFound(FileNotFoundError):
    """No policy checkpoint where the user pointed (--model, --resume)."""


def find_checkpoint(location: Path | str) -> Path:
    """The checkpoint file ``location`` names, or the newest one of a run directory; else CheckpointNotFound. A file
    that is not a checkpoint raises CheckpointError (actors/policy/checkpoint.py), naming it."""
    location = Path(location)
    if not location.exists():
        raise CheckpointNotFound(f"no such checkpoint or run directory: {location}")
    found = latest_checkpoint(location)
    if found is None:
        raise CheckpointNotFound(f"no policy checkpoint in {location} (looked in {location}/checkpoints)")
    check_checkpoint(found)
    return found
