"""The prompts of a risk-read LoRA round (riskfit_round.py, risklevel_round.py): news seed 1's market history (its later
days held out) plus other seeds' whole markets as training prompts only (held-out templates dropped)."""
import dataclasses

import msgspec

from actors.jobs.cli import build_parser
from actors.jobs.common import configure
from actors.jobs.lora import history_market, market_history


def risk_round_prompts(settings: dict, train: int, held: int, extra_seeds: list[int], extra_train: int):
    """(config with max_eval_examples = the held-out count, every experience, the training ones)."""
    cfg = configure(build_parser().parse_args(["lora"]), settings)
    exps, _ = market_history(history_market(cfg), train, held)
    for seed in extra_seeds:  # another market: all of its prompts train (ids kept apart from seed 1's)
        other = configure(build_parser().parse_args(["lora"]), {**settings, "run.seed": seed})
        more, _ = market_history(history_market(other), extra_train, 8)  # the ceiling needs a few held out: dropped
        exps += [dataclasses.replace(e, id=f"seed{seed}:{e.id}", meta={**e.meta, "held_out": False})
                 for e in more if not e.meta.get("held_out") and not e.meta.get("template_held_out")]
    n_held = sum(1 for e in exps if e.meta.get("held_out"))
    cfg = msgspec.structs.replace(cfg, lora=msgspec.structs.replace(cfg.lora, max_eval_examples=n_held))
    return cfg, exps, [e for e in exps if not e.meta.get("held_out")]
