"""The base model's risk read on the held-out event bars of riskfit_round.py (news, seed 1), with the risk question
before ("(e.g. ELEVATED 15)") and after the example was removed: the level each answer would write under the decide
grammar (LoraTrainer.risk_levels, what the publish rule reads). docs/experiments/riskfit.md.

usage: riskfit_base_reads.py TRAIN HELD DAYS OUT.json [old,new]"""
import json
import sys
import time
from collections import Counter

import actors.common.llm.prompts as prompts
from actors.common.llm.prompts import PromptBook
from actors.jobs.cli import build_parser
from actors.jobs.common import configure
from actors.jobs.lora import history_market, market_history_bars
from actors.lora import history_experiences
from actors.lora.core import base_model_path
from actors.lora.trainer import LoraTrainer

train, held, days, out = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
variants = sys.argv[5].split(",") if len(sys.argv) > 5 else ["old", "new"]
QUESTIONS = {"old": ("After the confidence, say how dangerous the next minutes are: CALM, or ELEVATED or EXTREME and for how "
                     "many minutes (e.g. ELEVATED 15), then the reason."), "new": prompts.RISK_READ_TASK}
t0 = time.time()
cfg = configure(build_parser().parse_args(["lora"]), {"run.seed": 1, "data.scenario": "news", "lora.teach": "risk",
                "reasoner.risk_read": True, "reasoner.mode": "single_shot", "lora.market_history_days": days})
bars, _, _ = market_history_bars(history_market(cfg), train, held)
trainer = LoraTrainer(cfg.lora, base_model_path(cfg.lora, cfg.reasoner))
result = {}
for variant in variants:
    prompts.RISK_READ_TASK = QUESTIONS[variant]
    exps = history_experiences(PromptBook(cfg.reasoner), cfg.reasoner.mode, cfg.lora.target_confidence, bars)
    gate = [e for e in exps if e.meta.get("held_out") and e.meta.get("risk_event") and e.meta.get("risk_level", -1) >= 0]
    assert QUESTIONS[variant] in gate[0].messages[-1]["content"]
    levels = trainer.risk_levels(gate)
    labels = [e.meta["risk_level"] for e in gate]
    apart = [e.meta.get("template_held_out", False) for e in gate]
    result[variant] = {"n": len(gate), "mix": dict(Counter(levels)), "labels": dict(Counter(labels)),
                       "match": sum(a == y for a, y in zip(levels, labels)) / len(gate),
                       "rows": [{"id": e.id, "label": y, "read": a, "apart": h} for e, y, a, h in zip(gate, labels, levels, apart)],
                       "secs": round(time.time() - t0)}
    print(variant, {k: v for k, v in result[variant].items() if k != "rows"}, flush=True)
json.dump(result, open(out, "w"), indent=1)
