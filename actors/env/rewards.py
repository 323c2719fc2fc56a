"""The env's one reward, documented here and nowhere else.

    reward_t = (equity_t - equity_{t-1} - entry_penalty_usd * entered_t) / reward_scale_usd  -  drawdown_penalty * breached_t

- ``equity`` is the account balance plus the open position's unrealised P&L marked at
  the bar's close (at the fill price on the bar a position closes). So the reward sums
  realised and unrealised P&L, net of commission and slippage (they lower the balance the
  moment they are paid), and the episode's rewards add up to its net P&L / scale.
- ``breached_t`` is 1 on the step equity touched the trailing-drawdown threshold (the
  episode terminates there). The penalty makes ending the account worse than its dollar
  loss alone, because in a prop-firm evaluation a breach ends the evaluation.
- ``entered_t`` is 1 on the step an entry filled. ``entry_penalty_usd`` (default 0) is a
  training-only turnover charge on top of the real costs: a shaping term that makes a policy
  earn more than its commission and slippage before it opens a position, against the
  churn a noisy per-bar reward teaches. It never touches the account's P&L.
- ``reward_scale_usd`` (default $100) keeps typical per-bar rewards near unit scale for PPO.
"""

from __future__ import annotations


def step_reward(equity_before: float, equity_after: float, breached: bool, reward_scale_usd: float, drawdown_penalty: float,
                entered: bool = False, entry_penalty_usd: float = 0.0) -> float:
    reward = (equity_after - equity_before - (entry_penalty_usd if entered else 0.0)) / reward_scale_usd
    if breached:
        reward -= drawdown_penalty
    return reward
