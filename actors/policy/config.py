"""The [policy] config section: MaskablePPO hyperparameters, online learning, checkpoints."""

from __future__ import annotations

import msgspec

from config.checks import require as _require


class PolicyConfig(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    learn: bool = True
    """True: learn online from env.transition (train); False: frozen policy (backtest, paper)."""
    total_timesteps: int = 100_000
    """Env steps (summed over environments) after which the policy reports sys.done; 0 = never."""
    seed: int = -1
    """Seeds torch and numpy for the network initialisation, sampling and minibatch order; -1 = run.seed."""
    torch_threads: int = 1
    """torch.set_num_threads for inference and the PPO update."""
    deterministic_when_frozen: bool = True
    """When learn=false, propose the most probable allowed action instead of sampling."""

    # ------------------------------------------------------------------ PPO (SB3 names)
    n_steps: int = 2048
    """Steps per environment in one rollout (rollout size = n_steps * n_envs)."""
    batch_size: int = 64
    """Minibatch size of the PPO update."""
    n_epochs: int = 10
    """Passes over the rollout per PPO update."""
    learning_rate: float = 3e-4
    gamma: float = 0.99
    gae_lambda: float = 0.95
    clip_range: float = 0.2
    ent_coef: float = 0.01
    """Entropy bonus; a little keeps the policy exploring while fusion/risk override it."""
    vf_coef: float = 0.5
    max_grad_norm: float = 0.5
    target_kl: float = 0.0
    """Stop an update early when approx_kl exceeds 1.5 x this; 0 = no limit."""
    net_arch: tuple[int, ...] = (64, 64)
    """Hidden layer sizes of the policy and value networks (separate networks, SB3's MlpPolicy)."""

    # ------------------------------------------------------------------ normalisation (VecNormalize's)
    normalize_obs: bool = True
    normalize_reward: bool = True
    clip_obs: float = 10.0
    clip_reward: float = 10.0

    # ------------------------------------------------------------------ health, progress, checkpoints
    frozen_kl_threshold: float = 1e-6
    """An update whose approx_kl is below this counts as 'frozen' (the seeds' 004 failure)."""
    frozen_warn_updates: int = 3
    """Consecutive frozen updates before a frozen_policy warning."""
    progress_interval_secs: float = 1.0
    """How often sys.progress is published."""
    checkpoint_every_steps: int = 50_000
    """Env steps between checkpoints (also one at done and at stop); 0 = only at done/stop."""
    keep_checkpoints: int = 3
    """Most recent checkpoints kept in <run_dir>/checkpoints (older ones are deleted)."""
    resume_from: str = ""
    """A run directory or checkpoint file to continue training from (same step count); '' = fresh."""
    model_path: str = ""
    """A checkpoint file to load (backtest: with learn=false); '' = none."""

    def __post_init__(self) -> None:
        _require(self.total_timesteps >= 0, "policy.total_timesteps", "must be >= 0")
        _require(self.torch_threads >= 1, "policy.torch_threads", "must be >= 1")
        _require(self.n_steps >= 2, "policy.n_steps", "must be >= 2")
        _require(self.batch_size >= 2, "policy.batch_size", "must be >= 2")
        _require(self.n_epochs >= 1, "policy.n_epochs", "must be >= 1")
        _require(self.learning_rate > 0, "policy.learning_rate", "must be > 0")
        _require(0 < self.gamma <= 1, "policy.gamma", "must be in (0, 1]")
        _require(0 <= self.gae_lambda <= 1, "policy.gae_lambda", "must be in [0, 1]")
        _require(self.clip_range > 0, "policy.clip_range", "must be > 0")
        _require(self.ent_coef >= 0, "policy.ent_coef", "must be >= 0")
        _require(self.vf_coef >= 0, "policy.vf_coef", "must be >= 0")
        _require(self.max_grad_norm > 0, "policy.max_grad_norm", "must be > 0")
        _require(self.target_kl >= 0, "policy.target_kl", "must be >= 0")
        _require(len(self.net_arch) >= 1 and all(n >= 1 for n in self.net_arch), "policy.net_arch", "needs positive layer sizes")
        _require(self.clip_obs > 0, "policy.clip_obs", "must be > 0")
        _require(self.clip_reward > 0, "policy.clip_reward", "must be > 0")
        _require(self.frozen_kl_threshold >= 0, "policy.frozen_kl_threshold", "must be >= 0")
        _require(self.frozen_warn_updates >= 1, "policy.frozen_warn_updates", "must be >= 1")
        _require(self.progress_interval_secs > 0, "policy.progress_interval_secs", "must be > 0")
        _require(self.checkpoint_every_steps >= 0, "policy.checkpoint_every_steps", "must be >= 0")
        _require(self.keep_checkpoints >= 1, "policy.keep_checkpoints", "must be >= 1")
