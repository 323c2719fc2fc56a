"""One lora.teach = "risk" round (docs/experiments/riskfit.md): the held-out event bars of riskread_lora_round.py
(news, seed 1, its later days), training prompts from that market's training days plus other seeds' whole markets.

usage: riskfit_round.py TRAIN HELD STEPS DAYS OUT [EXTRA_SEEDS] [EXTRA_TRAIN]
  EXTRA_SEEDS: comma-separated seeds whose markets add EXTRA_TRAIN training prompts each (never held out)."""
import json
import sys
import time
from collections import Counter
from pathlib import Path

from actors.lora import train_offline
from docs.experiments.risk_round_store import risk_round_prompts

train, held, steps, days, out = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), Path(sys.argv[5])
extra_seeds = [int(s) for s in sys.argv[6].split(",")] if len(sys.argv) > 6 and sys.argv[6] else []
extra_train = int(sys.argv[7]) if len(sys.argv) > 7 else train
settings = {"run.seed": 1, "data.scenario": "news", "lora.teach": "risk", "reasoner.risk_read": True,
            "reasoner.mode": "single_shot", "lora.steps_per_round": steps, "lora.learning_rate": 6e-4,
            "lora.market_history_days": days}
t0 = time.time()
cfg, exps, training = risk_round_prompts(settings, train, held, extra_seeds, extra_train)
n_held = sum(1 for e in exps if e.meta.get("held_out"))
gate = [e for e in exps if e.meta.get("held_out") and e.meta.get("risk_event") and not e.meta.get("template_held_out")]
print(json.dumps({"experiences": len(exps), "held_out": n_held, "training": len(training),
                  "training_event_bars": sum(1 for e in training if e.meta.get("risk_event")),
                  "training_levels": dict(Counter(e.meta.get("risk_level", -1) for e in training)),
                  "gate": len(gate), "gate_levels": dict(Counter(e.meta["risk_level"] for e in gate)),
                  "secs": round(time.time() - t0)}), flush=True)
t1 = time.time()
reports = train_offline(cfg.lora, cfg.reasoner, out, exps, 1,
                        progress=lambda p: print(f"step {p.step}/{p.steps} loss {p.loss:.3f} {time.time() - t1:.0f} s", flush=True))
r = reports[0]
levels = ("CALM", "ELEVATED", "EXTREME")
summary = {"secs_round": time.time() - t1, "secs_total": time.time() - t0, "published": r.version.published,
           "why": r.result.verdict.why, "metrics": r.result.metrics(), "after_mix": r.result.verdict.answer_mix,
           "before_mix": {k: list(r.result.before_answers).count(i) for i, k in enumerate(levels)},
           "adapter": str(r.version.path),
           "gate": [{"id": e.id, "label": e.meta["risk_level"], "calendar": e.meta.get("risk_calendar"),
                     "keyword": e.meta.get("risk_keyword"), "before": b, "after": a}
                    for e, b, a in zip(gate, r.result.before_answers, r.result.after_answers)]}
(out / "summary.json").write_text(json.dumps(summary, indent=1))
print(json.dumps({k: v for k, v in summary.items() if k != "gate"}, indent=1), flush=True)
