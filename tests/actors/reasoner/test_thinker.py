import pytest

from actors.common.llm.prompts import SAMPLE_CONTEXT
from actors.reasoner.config import ReasonerConfig
from actors.reasoner.engine import Completion
from actors.reasoner.thinker import Thinker
from tests.actors.reasoner.real_engine import engine_fixture

SHORT = dict(max_tokens_per_step=8, max_decide_tokens=20, cache_enabled=False)
"""Four-step's first three steps need only be there (8 tokens each; 12 cost a sixth more of the test); the decide step
keeps 20, what the fallback rule is checked on."""

# (context, mask): flat with entries allowed, long with stop management only, short near the
# drawdown limit with exits only, and a flat one whose mask forbids BUY.
CASES = [
    (dict(SAMPLE_CONTEXT), [True, True, True, False, False, False]),
    (dict(SAMPLE_CONTEXT, position=1, contracts=2, entry_price=18200.0, unrealized_pnl=1000.0, bars_in_position=12),
     [True, False, False, True, True, False]),
    (dict(SAMPLE_CONTEXT, trend="down", rsi=22.0, position=-1, contracts=1, trail_on=True, drawdown_buffer=300.0,
          consecutive_losses=3), [True, False, False, True, False, True]),
    (dict(SAMPLE_CONTEXT, trend="down", pattern="double_top"), [True, False, True, False, False, False]),
]


engine = engine_fixture(**SHORT)


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["four_step", "single_shot"])
def test_a_real_smollm2_thought_names_an_allowed_action_for_every_context_or_is_a_counted_fallback(engine, mode):
    thinker = Thinker(engine, ReasonerConfig(mode=mode, **SHORT))

    cases = CASES if mode == "four_step" else CASES[2:]  # single shot: fewer, to keep the suite short

    thoughts = [thinker.think(context, mask) for context, mask in cases]

    for thought, (_, mask) in zip(thoughts, cases):
        assert mask[thought.action], (thought.action, thought.decision)
        assert 0.0 <= thought.confidence <= 1.0
        assert thought.mode == mode and thought.generated_tokens > 0 and thought.latency_ms > 0
        if thought.fallback:  # e.g. "HOLD | 1.00 | Confidence: 1.00 1": a reason that is no reason is not advice
            assert (thought.action, thought.confidence) == (0, 0.0), thought.decision
    assert thinker.parser.fallbacks == sum(t.fallback for t in thoughts)  # every garbage reason is counted
    if mode == "single_shot":  # its examples keep SmolLM2-135M's reasons about the market
        assert not any(t.fallback for t in thoughts), [t.decision for t in thoughts]
    # Four-step decides after 20 tokens of free text often read "Confidence, 1.00%": counted fallbacks (issue 24).
    if mode == "four_step":
        assert all(t.analysis and t.options and t.risks for t in thoughts)
        # Steps 2-4 re-read only their new turn; everything before it came from the KV cache.
        assert all(t.reused_prompt_tokens > 2 * t.prompt_tokens for t in thoughts)


def test_a_real_smollm2_writes_a_risk_read_under_the_grammar(engine):
    thought = Thinker(engine, ReasonerConfig(mode="single_shot", risk_read=True, **SHORT)).think(*CASES[0])

    assert thought.risk_level in (0, 1, 2), thought.decision  # reasoner.risk_read: the read comes before the reason
    assert not thought.fallback and thought.reason, thought.decision


def test_without_prefix_reuse_the_engine_forgets_its_cache_before_every_step():
    engine = GarbageEngine()

    Thinker(engine, ReasonerConfig(reuse_prefix=False, **SHORT)).think(*CASES[0])
    Thinker(engine, ReasonerConfig(reuse_prefix=True, **SHORT)).think(*CASES[0])

    assert engine.forgotten == 4 and engine.calls == 8


class GarbageEngine:
    """An engine (e.g. a server ignoring the grammar) that answers nonsense."""

    adapter_version = 3

    def __init__(self):
        self.calls = 0
        self.forgotten = 0

    def chat(self, messages, *, max_tokens, grammar=None):
        self.calls += 1
        return Completion("~~ 12 ## ??", 10, 10, 5, 0.0, 0.01, 0.01)

    def forget_context(self):
        self.forgotten += 1


def test_a_garbage_answer_becomes_a_counted_hold_with_zero_confidence():
    thinker = Thinker(GarbageEngine(), ReasonerConfig(**SHORT))

    thought = thinker.think(*CASES[0])

    assert thought.fallback and thought.action == 0 and thought.confidence == 0.0
    assert thinker.parser.fallbacks == 1 and thought.adapter_version == 3


class AbortedMidThought(GarbageEngine):
    """Answers the first step, then is aborted (the actor stops) during the second."""

    def chat(self, messages, *, max_tokens, grammar=None):
        from actors.reasoner.engine import GenerationAborted

        self.calls += 1
        if self.calls > 1:
            raise GenerationAborted("aborted")
        return Completion("The trend is up.", 10, 10, 5, 0.0, 0.01, 0.01)


def test_a_thought_aborted_midway_yields_no_thought_at_all():
    thinker = Thinker(AbortedMidThought(), ReasonerConfig(**SHORT))

    thoughts = thinker.think_many([CASES[0], CASES[1]])

    assert thoughts == []


def test_a_thought_carries_the_adapter_version_it_was_made_under():
    engine = GarbageEngine()
    engine.adapter_version = 7
    thinker = Thinker(engine, ReasonerConfig(mode="single_shot", **SHORT))

    thought = thinker.think(*CASES[0])

    assert thought.adapter_version == 7


class _BusyEngine:
    """Answers after burning CPU (a model's work) or after sleeping (waiting, as on a loaded machine)."""

    adapter_version = 0

    def __init__(self, burn: bool, secs: float = 0.15) -> None:
        self.burn, self.secs = burn, secs

    def chat(self, messages, *, max_tokens, grammar=None):
        import time

        if self.burn:
            until = time.process_time() + self.secs
            while time.process_time() < until:
                pass
        else:
            time.sleep(self.secs)
        return Completion("HOLD | 0.50 | wait", 100, 40, 8, 0.01, 0.05, self.secs)

    def forget_context(self):
        pass


@pytest.mark.parametrize("burn", [True, False])
def test_a_thought_records_the_cpu_time_it_cost_apart_from_its_wall_time(burn):
    config = ReasonerConfig(mode="single_shot", temperature=0.0)
    thinker = Thinker(_BusyEngine(burn), config)
    thought = thinker.think(SAMPLE_CONTEXT, [True, True, True, False, False, False])
    # process_time counts every thread of the process (a library's busy pool too), so a burn bounds no wall time;
    # waiting does: its thought took the wall time and almost no CPU
    assert thought.latency_ms >= (0.0 if burn else 150.0)
    assert (thought.cpu_secs >= 0.15) if burn else (thought.cpu_secs < 0.1)  # waiting is not work
    assert thinker.think(SAMPLE_CONTEXT, [True, True, True, False, False, False]).cpu_secs == 0.0  # the memo's answer cost nothing
