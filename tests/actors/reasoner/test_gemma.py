"""reasoner.model = "gemma3-270m": the real Gemma 3 270M GGUF through llama.cpp, Gemma's turn format, under the grammar."""

from __future__ import annotations

from actors.common.actions import ACTION_NAMES
from actors.common.llm.grammar import decision_grammar
from actors.common.llm.parser import DecisionParser
from actors.reasoner.config import ReasonerConfig
from actors.reasoner.engines import build_engine

MESSAGES = [{"role": "system", "content": "Reply with one line: ACTION | confidence | risk | reason."},
            {"role": "user", "content": "NQ: +0.30% vs VWAP, trend up. News: 0 min ago: CPI far above expectations. "
                                        "Choose ACTION from: HOLD, SELL."}]


def test_gemma_reads_its_turn_format_and_answers_under_the_grammar_with_a_risk_read():
    engine = build_engine(ReasonerConfig(model="gemma3-270m", n_ctx=512, temperature=0.0))
    try:
        assert engine.model_path.endswith("gemma-3-270m-q4_k_m.gguf")
        assert engine.render(MESSAGES).startswith("<bos><start_of_turn>user\nReply with one line")
        mask = [True, False, True, False, False, False]  # HOLD or SELL only

        text = engine.chat(MESSAGES, max_tokens=20, grammar=decision_grammar(mask, risk_read=True)).text
    finally:
        engine.close()
    parsed = DecisionParser(expect_risk=True).parse(text, mask)

    assert not parsed.fallback, text
    assert ACTION_NAMES[parsed.action] in ("HOLD", "SELL"), text
    assert parsed.risk_level in (0, 1, 2), text
