"""One LoRA round teaching the risk read on a news market history (sized for a loaded 2-core box)."""
import sys, time, json
from pathlib import Path
import msgspec
from actors.jobs.cli import build_parser
from actors.jobs.common import configure
from actors.jobs.lora import market_history, history_market
from actors.lora import train_offline

train, held, steps, days, out = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), Path(sys.argv[5])
t0 = time.time()
cfg = configure(build_parser().parse_args(["lora"]), {"run.seed": 1, "data.scenario": "news", "lora.teach": "risk",
                "reasoner.risk_read": True, "reasoner.mode": "single_shot", "lora.steps_per_round": steps,
                "lora.learning_rate": 6e-4, "lora.market_history_days": days})
market = history_market(cfg)
exps, _ = market_history(market, train, held)
n_held = sum(1 for e in exps if e.meta.get("held_out"))
cfg = msgspec.structs.replace(cfg, lora=msgspec.structs.replace(cfg.lora, max_eval_examples=n_held))
ev = [e for e in exps if e.meta.get("risk_event")]
print(f"{len(exps)} experiences ({n_held} held out; {len(ev)} event bars, "
      f"{sum(1 for e in ev if e.meta.get('held_out'))} held out of which {sum(1 for e in ev if e.meta.get('held_out') and e.meta.get('template_held_out'))} held-out templates) in {time.time()-t0:.0f} s", flush=True)
t1 = time.time()
reports = train_offline(cfg.lora, cfg.reasoner, out, exps, 1,
                        progress=lambda p: print(f"step {p.step}/{p.steps} loss {p.loss:.3f} {time.time()-t1:.0f} s", flush=True))
r = reports[0]
print(json.dumps({"secs_round": time.time() - t1, "secs_total": time.time() - t0, "published": r.version.published,
                  "why": r.result.verdict.why, "metrics": r.result.metrics(), "mix": r.result.verdict.answer_mix,
                  "before_mix": {k: list(r.result.before_answers).count(i) for i, k in enumerate(("CALM","ELEVATED","EXTREME"))},
                  "adapter": str(r.version.path)}, indent=1), flush=True)
