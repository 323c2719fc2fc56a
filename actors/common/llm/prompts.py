"""Prompt building: the named market context and the action mask become chat messages.

A thought is one growing conversation (system, user, assistant, user, ...). The system
prompt comes first and is the same for every env and step, the market context comes
next, so consecutive thoughts share a token prefix and consecutive steps of one thought
share everything before the newest turn: llama.cpp reuses that part of its KV cache.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from actors.common.actions import ACTION_NAMES, allowed_actions

FOUR_STEPS: tuple[str, ...] = ("analyse", "options", "risks", "decide")

# A representative context (every bus.messages.MarketContext field). Used to check the
# templates at start-up, and by tests and the benchmark.
SAMPLE_CONTEXT: dict[str, Any] = {
    "symbol": "NQ",
    "time_et": "10:31",
    "price": 18250.25,
    "trend": "up",
    "rsi": 61.5,
    "adx": 27.0,
    "atr": 12.5,
    "momentum": 0.8,
    "vwap_distance_pct": 0.12,
    "support": 18210.0,
    "resistance": 18290.0,
    "pattern": "higher_highs",
    "volume_trend": "rising",
    "volatility_regime": 1.1,
    "position": 0,
    "contracts": 0,
    "entry_price": 0.0,
    "unrealized_pnl": 0.0,
    "bars_in_position": 0,
    "trail_on": False,
    "stop_at_break_even": False,
    "consecutive_losses": 0,
    "win_rate": 0.5,
    "recent_net_pnl": 0.0,
    "balance": 50000.0,
    "drawdown_buffer": 2500.0,
    "trailing_limit": 2500.0,
    "daily_pnl": 0.0,
    "minutes_to_close": 388.0,
    "session_id": 19723,
    "tape": "moves +1 0 +1 +2 -1 +1 0 +1 +1 0 +1 +1 | 20 bars +2.4 ATR | 60 bars +6.5 ATR | range 88% | ATR 50 ticks"
            " | VWAP +1.2 ATR | 388 min to flat",
    "bar_open": 18247.0,
    "bar_high": 18252.5,
    "bar_low": 18244.75,
    "stop_price": 0.0,
    "target_price": 0.0,
}

Message = dict[str, str]
RISK_READ_TASK = ("After the confidence, say how dangerous the next minutes are: CALM, or ELEVATED or EXTREME and for how "
                  "many minutes, then the reason.")
"""Appended to the decide and single-shot questions when reasoner.risk_read is on (actors/common/llm/grammar.py).
No example answer: the base SmolLM2-135M copied the former "(e.g. ELEVATED 15)" on every prompt (riskread.md,
news.md), a prior a LoRA round first had to unlearn; the grammar alone gives the field its form."""

# Template name -> its [reasoner] config key.
_TEMPLATE_KEYS: dict[str, str] = {
    "context": "context_template",
    "analyse": "analyse_prompt",
    "options": "options_prompt",
    "risks": "risks_prompt",
    "decide": "decide_prompt",
    "single_shot": "single_shot_prompt",
    "single_shot_context": "single_shot_context_template",
}


def prompt_fields(context: Mapping[str, Any], mask: Sequence[bool]) -> dict[str, Any]:
    """The context plus the derived, readable fields the templates may use."""
    fields = dict(context)
    position = int(fields.get("position", 0))
    contracts = abs(int(fields.get("contracts", 0)))
    if position > 0:
        fields["position_text"] = f"long {contracts}"
    elif position < 0:
        fields["position_text"] = f"short {contracts}"
    else:
        fields["position_text"] = "flat"
    fields["trail_text"] = "on" if fields.get("trail_on") else "off"
    fields["break_even_text"] = "yes" if fields.get("stop_at_break_even") else "no"
    fields["allowed_actions"] = ", ".join(ACTION_NAMES[action] for action in allowed_actions(mask))
    # A context from before the tape (a stored experience, a feed without history) still renders.
    fields["tape"] = fields.get("tape") or "not enough bars yet"
    # The news line (actors/common/llm/news.py): "" without events, so a prompt without news is unchanged.
    fields["news"] = fields.get("news") or ""
    return fields


class PromptSettings(Protocol):
    """The [reasoner] keys a PromptBook reads (actors/reasoner/config.py ReasonerConfig fits); the LoRA
    trainer builds its prompts from the same section, so it teaches what the reasoner asks."""

    system_prompt: str
    single_shot_system_prompt: str
    context_template: str
    analyse_prompt: str
    options_prompt: str
    risks_prompt: str
    decide_prompt: str
    single_shot_prompt: str
    single_shot_context_template: str


class PromptBook:
    """The configured templates, checked once, rendered per thought."""

    def __init__(self, config: PromptSettings) -> None:
        self.system_prompt = config.system_prompt
        self.single_shot_system_prompt = config.single_shot_system_prompt
        self._templates = {name: getattr(config, key) for name, key in _TEMPLATE_KEYS.items()}
        if getattr(config, "risk_read", False):  # the answer's form changes: the question says so
            for name in ("decide", "single_shot"):
                self._templates[name] = f"{self._templates[name]} {RISK_READ_TASK}"
        self._check_templates()

    def opening(self, fields: Mapping[str, Any], first_step: str) -> list[Message]:
        """System prompt + one user turn: the market context followed by the first task.

        The single shot has its own system prompt and compact context: in lockstep the loop runs
        at its pace, and the per-thought part of the prompt is what it pays for."""
        if first_step == "single_shot":
            system_prompt, context_text = self.single_shot_system_prompt, self._render("single_shot_context", fields)
        else:
            system_prompt, context_text = self.system_prompt, self._render("context", fields)
        task_text = self._render(first_step, fields)
        return [
            {"role": "system", "content": system_prompt},
            {"role": "user", "content": f"{context_text}\n\n{task_text}"},
        ]

    def step(self, step: str, fields: Mapping[str, Any]) -> Message:
        """The user turn that asks for one later step of the four."""
        return {"role": "user", "content": self._render(step, fields)}

    def _render(self, name: str, fields: Mapping[str, Any]) -> str:
        try:
            return self._templates[name].format(**fields)
        except (KeyError, ValueError, IndexError, TypeError) as exc:
            raise ValueError(f"reasoner.{_TEMPLATE_KEYS[name]} cannot be rendered: {exc!r}") from exc

    def _check_templates(self) -> None:
        sample = prompt_fields(SAMPLE_CONTEXT, [True] * 6)
        for name in self._templates:
            self._render(name, sample)

