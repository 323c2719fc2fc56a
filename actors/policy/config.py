"""The [policy] config section: MaskablePPO hyperparameters, online learning, checkpoints; PolicySettings, what the policy actor reads."""

from __future__ import annotations

from typing import Annotated

import msgspec

from actors.common.loop_settings import LoopShape
from actors.common.observation import observation_columns
from config.checks import ConfigSection, Count, Fraction, NonNegative, Positive, PositiveCount, PositiveSecs
from config.checks import require as _require
from runtime.settings import RuntimeSettings

AtLeastTwo = Annotated[int, msgspec.Meta(ge=2)]
LEARN_FROM = ("proposed", "executed")
DEFAULT_FEATURES_SEEN: tuple[str, ...] = ()
"""All 261 columns: the old default, the position, validity and the regime belief, was one input tuned to our own
synthetic generator (a filter with its drift and hazard); a procedure that picks inputs would have to run inside each
training fold, and nothing shows one working yet."""


class PolicyConfig(ConfigSection, kw_only=True):
    learn: bool = True
    """True: learn online from env.transition (train); False: frozen policy (backtest, paper)."""
    total_timesteps: Count = 100_000
    """Env steps (summed over environments) after which the policy reports sys.done; 0 = never."""
    seed: Annotated[int, msgspec.Meta(ge=-1)] = -1
    """Seeds torch and numpy for the network initialisation, sampling and minibatch order; -1 = run.seed."""
    torch_threads: PositiveCount = 1
    """torch.set_num_threads for inference and the PPO update."""
    deterministic_when_frozen: bool = True
    """When learn=false, propose the most probable allowed action instead of sampling."""
    learn_from: str = "proposed"
    """proposed: PPO stores the action the policy sampled, and fusion's and risk's changes to it are part of the
    environment (on-policy: the ratio of new to old probability is about an action the old policy drew) |
    executed: it stores the action that was executed (what the policy's account saw), an off-policy sample whenever fusion or
    risk changed it. Measured in-process on the regimes market: executed gave approx_kl ~0.09 and clip
    fraction ~0.5 with half the transitions changed by risk; proposed gives 0.01-0.02 and 0.1-0.2."""

    window_bars_seen: Annotated[int, msgspec.Meta(ge=1, le=20)] = 20
    """How many of the observation window's newest bars the network sees (1-20); the older bars' columns are fed as 0.
    The other 41 features (position, market, timeframes, patterns, risk) are always seen."""
    features_seen: tuple[str, ...] = DEFAULT_FEATURES_SEEN
    """Observation features the network sees; the rest are fed as 0. Empty (the default) = all 261. Entries are groups
    (window, position, validity, market, timeframe, pattern, risk), column names, or a bar feature (all its window lags),
    as actors/common/observation.py names them; an unknown name stops start-up. The checkpoint keeps the columns its
    network was not shown (``hidden_columns``), and a loaded checkpoint's choice wins over this setting.
    Why all 261: the former default, ("position", "validity", "market_regime"), beat all 261 on the synthetic
    market (+$585 a day [521, 649] against +$305 on 638 test days) because market_regime was a filter whose
    constants mirrored that market's generator; an input picked on our own generator is no default for a user's file.
    market_regime is now an HMM fitted on each run's training days (actors/env/regime_model.py), and the choice of inputs
    is left to the network (docs/experiments/43-inputs.md has the figures)."""

    # ------------------------------------------------------------------ PPO (SB3 names)
    n_steps: AtLeastTwo = 2048
    """Steps per environment in one rollout (rollout size = n_steps * n_envs)."""
    batch_size: AtLeastTwo = 64
    """Minibatch size of the PPO update."""
    n_epochs: PositiveCount = 10
    """Passes over the rollout per PPO update."""
    learning_rate: Positive = 3e-4
    gamma: Annotated[float, msgspec.Meta(gt=0, le=1)] = 0.9
    """0.9, not SB3's 0.99: the reward marks the position to market every bar, so an action's worth shows within a
    few bars and a long horizon only adds noise (in process, 150k steps on 44 days: 0.99 lost $391 a day
    out of sample, 0.9 $95; on 208 days at 300k: 0.99 -$117, 0.9 +$86)."""
    gae_lambda: Fraction = 0.95
    clip_range: Positive = 0.2
    ent_coef: NonNegative = 0.01
    """Entropy bonus; a little keeps the policy exploring while fusion/risk override it."""
    vf_coef: NonNegative = 0.5
    max_grad_norm: Positive = 0.5
    target_kl: NonNegative = 0.0
    """Stop an update early when approx_kl exceeds 1.5 x this; 0 = no limit."""
    net_arch: tuple[PositiveCount, ...] = (64, 64)
    """Hidden layer sizes of the policy and value networks (separate networks, SB3's MlpPolicy)."""

    # ------------------------------------------------------------------ normalisation (VecNormalize's)
    normalize_obs: bool = True
    normalize_reward: bool = True
    clip_obs: Positive = 10.0
    clip_reward: Positive = 10.0

    # ------------------------------------------------------------------ health, progress, checkpoints
    frozen_kl_threshold: NonNegative = 1e-6
    """An update whose approx_kl is below this counts as 'frozen' (updates that no longer change the policy)."""
    frozen_warn_updates: PositiveCount = 3
    """Consecutive frozen updates before a frozen_policy warning."""
    progress_interval_secs: PositiveSecs = 1.0
    """How often sys.progress is published."""
    checkpoint_every_steps: Count = 50_000
    """Env steps between checkpoints (also one at done and at stop); 0 = only at done/stop."""
    keep_checkpoints: PositiveCount = 3
    """Most recent checkpoints kept in <run_dir>/checkpoints (older ones are deleted)."""
    resume_from: str = ""
    """A run directory or checkpoint file to continue training from (same step count); '' = fresh."""
    rollout_from_checkpoint: bool = True
    """A loaded checkpoint keeps its n_steps, batch_size and n_epochs; false = this config's (a resumed
    phase at another pace, e.g. the main job's lockstep phase, collects shorter rollouts)."""
    model_path: str = ""
    """A checkpoint file to load (backtest: with learn=false); '' = none."""
    skip_forced_bars: bool = False
    """Learn from choices only: a bar whose action mask allows only HOLD (env.decision_every_bars' bars between
    decisions) is played by the trainer, HOLD through the risk rules, and its reward is added to the decision before
    it, so a rollout, the discount and the step budget count decisions, not bars: a semi-Markov decision process
    (Sutton, Precup and Singh 1999), Atari's frame skip (Mnih et al. 2015). With a decision every 30 bars PPO sees the
    15:29 entry's whole half hour as one reward instead of 30 rewards discounted by 0.9 each, and a budget covers 30
    times the days. The account is the same bar for bar; only what is stored changes. Honoured by the in-process
    trainer (``bin/run evaluate``, whose cadence grid turns it on); a learning policy actor refuses it at start-up
    (its rollout chain pairs one transition with one served step)."""

    def __post_init__(self) -> None:
        _require(self.learn_from in LEARN_FROM, "policy.learn_from", f"must be one of {LEARN_FROM}, got {self.learn_from!r}")
        super().__post_init__()
        _require(len(self.net_arch) >= 1 and all(n >= 1 for n in self.net_arch), "policy.net_arch", "needs positive layer sizes")
        try:
            observation_columns(self.features_seen)
        except ValueError as error:
            _require(False, "policy.features_seen", str(error))


class PolicySettings(RuntimeSettings, kw_only=True):
    """What the policy actor reads: the runtime's sections, [policy], and of [env] its width (n_envs: one
    rollout-buffer row per environment)."""

    policy: PolicyConfig = msgspec.field(default_factory=PolicyConfig)
    env: LoopShape = LoopShape()  # a view of [env]: a frozen value
