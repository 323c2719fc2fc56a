"""Env 0's evaluation-account walk and its halted stretches, as the dashboard follows them from the loop's messages.

A new episode id on env.obs is a new evaluation account (the last one ended); env.episode says how it ended (a
drawdown breach fails it, the profit target passes it). A full-speed run is sampled, so an account whose env.episode
was not seen is judged from its balance, and two halted steps of one rule close together are one stretch.
Plain Python: ``DashboardState`` (state.py) calls it under its lock and logs the events it returns.
"""

from __future__ import annotations

from collections import deque

from actors.dashboard.model import Account, AccountRules

HALT_GAP_STEPS = 64
"""Two halted steps of the same rule this close, with no step seen between them without it, are one stretch
(a full-speed run is sampled: the reader does not decode every step)."""


class AccountWalk:
    """Env 0's evaluation accounts, newest first (the open one first while it runs), and how many ended each way."""

    def __init__(self, max_accounts: int) -> None:
        self.rules = AccountRules()
        self.accounts: deque[Account] = deque(maxlen=max_accounts)
        self.counts: dict[str, int] = {"passed": 0, "failed": 0, "ended": 0}

    def clear(self) -> None:
        self.accounts.clear()
        self.counts = dict.fromkeys(self.counts, 0)

    def step(self, step: int, episode_id: int, balance: float) -> str:
        """Env 0 at ``step`` in episode ``episode_id``; the event text when that closed the previous account, else ''."""
        current = self.accounts[0] if self.accounts else None
        if current is not None and current.episode_id == episode_id:
            current.end_step, current.balance = step, balance
            return ""
        closed = ""
        if current is not None and current.outcome == "open":  # its env.episode was not seen (sampled): judge from its balance
            closed = self._close(current, failed=False, net=current.balance - current.start_balance)
        start = self.rules.start_balance or balance
        index = current.index + 1 if current is not None else 0
        self.accounts.appendleft(Account(index, episode_id, step, step, start, balance))
        return closed

    def episode_ended(self, episode_id: int, metrics: dict[str, float]) -> str:
        """Env 0's episode ``episode_id`` ended with ``metrics`` (env.episode); the event text, or '' when not followed."""
        account = next((a for a in self.accounts if a.episode_id == episode_id), None)
        if account is None or account.outcome != "open":
            return ""
        return self._close(account, failed=metrics.get("apex_violations", 0.0) > 0,
                           net=float(metrics.get("net_pnl_usd", account.balance - account.start_balance)))

    def _close(self, account: Account, failed: bool, net: float) -> str:
        target = self.rules.profit_target
        if failed:
            account.outcome, account.reason = "failed", "trailing_drawdown"
        elif target > 0 and net >= target:
            account.outcome, account.reason = "passed", "profit_target"
        else:
            account.outcome, account.reason = "ended", "episode_end"
        account.balance = account.start_balance + net
        self.counts[account.outcome] += 1
        return f"account {account.index} {account.outcome} ({account.reason}) net {net:+,.2f} $ over steps {account.start_step}-{account.end_step}"


class HaltSpans:
    """[first step, last step, rule] of env 0's halted stretches, oldest first."""

    def __init__(self, max_spans: int) -> None:
        self.spans: deque[list] = deque(maxlen=max_spans)
        self._open = False

    def clear(self) -> None:
        self.spans.clear()
        self._open = False

    def add(self, step: int, halt: str) -> None:
        """A halted step extends the open stretch of its rule, or starts one; a step without a halt closes it."""
        if not halt:
            self._open = False
            return
        last = self.spans[-1] if self.spans else None
        if last is not None and self._open and last[2] == halt and 0 <= step - last[1] <= HALT_GAP_STEPS:
            last[1] = step
        else:
            self.spans.append([step, step, halt])
        self._open = True
