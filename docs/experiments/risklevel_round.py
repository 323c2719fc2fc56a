"""One lora.teach = "risk" round with the level-choice loss and CALM/ELEVATED-balanced draws
(docs/experiments/risklevel.md): the same stores, gate and held-out templates as riskfit_round.py (news, seed 1, its
later days held out; seeds 2 and 3 add training prompts), new loss and sampling settings.

usage: risklevel_round.py TRAIN HELD STEPS DAYS OUT EXTRA_SEEDS EXTRA_TRAIN SETTINGS_JSON [BEFORE_JSON]
  SETTINGS_JSON: extra --set overrides, e.g. '{"lora.level_loss_weight": 1.0, "lora.text_loss_weight": 0}'.
  BEFORE_JSON: a riskfit_round.py summary.json whose "gate" rows hold the base model's reads ("before") on the same
  gate: reused (the memo of the kept weights' answers) once the ids and labels match row by row and the base model's
  reads of the first CHECK_ROWS gate prompts, computed again here, equal the stored ones; the held-out templates'
  base reads are computed here (they were not stored)."""
import json
import sys
import time
from collections import Counter
from pathlib import Path

from actors.lora.core import LoraCore
from actors.lora.risk_teach import gate_and_apart
from docs.experiments.risk_round_store import risk_round_prompts

CHECK_ROWS = 8
train, held, steps, days, out = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), Path(sys.argv[5])
extra_seeds = [int(s) for s in sys.argv[6].split(",")] if sys.argv[6] else []
extra_train = int(sys.argv[7])
overrides = json.loads(sys.argv[8])
before_path = sys.argv[9] if len(sys.argv) > 9 else ""
settings = {"run.seed": 1, "data.scenario": "news", "lora.teach": "risk", "reasoner.risk_read": True,
            "reasoner.mode": "single_shot", "lora.steps_per_round": steps, "lora.learning_rate": 6e-4,
            "lora.market_history_days": days, **overrides}
t0 = time.time()
cfg, exps, training = risk_round_prompts(settings, train, held, extra_seeds, extra_train)
n_held = sum(1 for e in exps if e.meta.get("held_out"))
out.mkdir(parents=True, exist_ok=True)
core = LoraCore(cfg.lora, cfg.reasoner, out)
core.store.add(exps)
gate, apart = gate_and_apart(core.store.held_out(cfg.lora.max_eval_examples))
print(json.dumps({"experiences": len(exps), "held_out": n_held, "training": len(training),
                  "training_levels": dict(Counter(e.meta.get("risk_level", -1) for e in training)),
                  "gate": len(gate), "gate_levels": dict(Counter(e.meta["risk_level"] for e in gate)), "apart": len(apart),
                  "lora": {k: getattr(cfg.lora, k) for k in ("learning_rate", "steps_per_round", "batch_size",
                           "text_loss_weight", "action_loss_weight", "level_loss_weight", "balance_levels",
                           "level_rare_share")},
                  "draws_of_400": dict(Counter(e.meta["risk_level"] for e in core.store.sample(400, __import__("numpy").random.default_rng(0)))),
                  "secs": round(time.time() - t0)}), flush=True)
trainer = core.load_trainer()
reused = False
if before_path:
    rows = json.loads(Path(before_path).read_text())["gate"]
    same = [r["id"] for r in rows] == [e.id for e in gate] and [r["label"] for r in rows] == [e.meta["risk_level"] for e in gate]
    check = trainer.risk_levels(gate[:CHECK_ROWS] + apart)
    agree = check[:CHECK_ROWS] == [r["before"] for r in rows[:CHECK_ROWS]]
    print(json.dumps({"before_ids_labels_match": same, "before_check_agrees": agree, "check": check[:CHECK_ROWS],
                      "stored": [r["before"] for r in rows[:CHECK_ROWS]], "secs": round(time.time() - t0)}), flush=True)
    if same and agree:
        trainer._kept_memo["levels"] = (tuple(e.id for e in gate + apart), [r["before"] for r in rows] + check[CHECK_ROWS:])
        reused = True
t1 = time.time()
report = core.run_round(lambda p: print(f"step {p.step}/{p.steps} loss {p.loss:.3f} {time.time() - t1:.0f} s", flush=True))
core.close()
r = report.result
levels = ("CALM", "ELEVATED", "EXTREME")
summary = {"secs_round": time.time() - t1, "secs_total": time.time() - t0, "published": report.version.published,
           "why": r.verdict.why, "metrics": r.metrics(), "after_mix": r.verdict.answer_mix, "before_reused": reused,
           "before_mix": {k: list(r.before_answers).count(i) for i, k in enumerate(levels)},
           "adapter": str(report.version.path), "settings": settings,
           "gate": [{"id": e.id, "label": e.meta["risk_level"], "calendar": e.meta.get("risk_calendar"),
                     "keyword": e.meta.get("risk_keyword"), "before": b, "after": a}
                    for e, b, a in zip(gate, r.before_answers, r.after_answers)]}
(out / "summary.json").write_text(json.dumps(summary, indent=1))
print(json.dumps({k: v for k, v in summary.items() if k != "gate"}, indent=1), flush=True)
