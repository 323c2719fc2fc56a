"""A thought: what the reasoner answered for one market state, how it got there (the parse, the tokens, the time)
and where it came from (the model, the cache, the memo). Its own module: the thinker that makes thoughts and the
cache and memo that keep them each import it, and none imports another for it."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Thought:
    action: int
    confidence: float
    mode: str
    analysis: str
    options: str
    risks: str
    decision: str
    """Raw text of the decide step (or of the single-shot answer)."""
    reason: str
    fallback: bool
    parse_how: str
    latency_ms: float
    prompt_tokens: int
    """Prompt tokens actually read over all steps (tokens reused from the KV cache excluded)."""
    reused_prompt_tokens: int
    """Prompt tokens served from the KV cache over all steps."""
    generated_tokens: int
    generation_secs: float
    adapter_version: int
    cached: bool = False
    memo: bool = False
    """True when this is the model's earlier answer to the exact same prompt (actors/reasoner/memo.py)."""
    cpu_secs: float = 0.0
    """CPU time of this process while it was made (with n_threads = 1 about its wall time on a core of its own: what
    a thought costs a quiet machine when a loaded one stretches latency_ms)."""
    news: tuple[str, ...] = ()
    """The texts of the events its prompt's {news} line read, newest first (() without news): what a trade's row
    shows as the headline behind its entry (actors/env/report/)."""
    news_ids: tuple[str, ...] = ()
    """Their event ids, in the same order ('' for an event sent without one)."""
    risk_level: int = -1
    """The answer's risk read (reasoner.risk_read): an index into RISK_LEVELS (CALM, ELEVATED, EXTREME); -1 = none."""
    risk_minutes: int = 0
    """For how many minutes the read holds (0 for CALM or none)."""
