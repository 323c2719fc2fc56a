"""Does fusion learn whom to trust when flat? (``bin/bench fusion``)

The fusion network (its default layers and learning rate, fusion.hindsight_lessons) on flat steps where RL always
holds and a reader names a side (a right call +$200, a wrong one -$250: costs make a coin lose). Per seed, 400 steps
to learn, then 400 others with the network frozen (out of sample). Two kinds of reader:

- even: right on a share of the steps whatever the market. Ceiling: following it everywhere.
- seller: always SELL, in a market that moves with its trend on a share of the steps, so it is right in falls and
  wrong in rises. Ceiling: following it in falls only, which needs fusion.market_inputs (the network then sees the
  trend); without them the best a network can do is the floor.

For each reader and setting: on how many seeds the network followed the reader on every test step where following
pays in expectation and on none of the others ("as the ceiling"), on none, or otherwise; the fused $ a step beside
the floor (RL alone: 0) and the ceiling, both on the same test steps.
The drill is tests/actors/fusion/trust_drill.py; tests/actors/fusion assert the same at a few seeds.
"""

from __future__ import annotations

import argparse
import time

import msgspec
import numpy as np

from actors.fusion.config import FusionConfig
from tests.actors.fusion import trust_drill
from tests.bench.common import machine_line


def network_config(**overrides) -> FusionConfig:
    """The default network; first update after 48 lessons, then every 32; no exploring (RL never enters here)."""
    return FusionConfig(**{"method": "network", "min_experiences": 48, "update_every_experiences": 32, "explore_rate": 0.0,
                           **overrides})


def one_seed(config: FusionConfig, seed: int, kind: str, share: float) -> tuple[float, float, float]:
    """(share of test steps the network did as the ceiling does, fused $ a step, the ceiling's $ a step)."""
    reader = trust_drill.even_reader(share) if kind == "even" else trust_drill.seller(share)
    test = trust_drill.learned_then_tested(config, seed, reader)
    if kind == "even":
        pays = np.full(len(test["llm"]), share * trust_drill.RIGHT_USD + (1 - share) * trust_drill.WRONG_USD > 0)
    else:
        pays = test["trend"] == "down"
    ceiling = np.where(pays, test["llm"], 0.0)
    as_ceiling = float(np.mean((test["fused"] != 0.0) == pays))
    return as_ceiling, float(test["fused"].mean()), float(ceiling.mean())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", type=int, default=10, help="seeds per reader")
    parser.add_argument("--readers", nargs="+", default=["even:0.75", "even:0.6", "even:0.5", "seller:0.75", "seller:0.6"],
                        help="KIND:SHARE, KIND even (right on SHARE) or seller (the market moves with its trend on SHARE)")
    args = parser.parse_args()
    print(f"\nfusion learning whom to trust when flat, {args.seeds} seeds a reader  ({machine_line()})")
    print(f"{'reader':>12}  {'market inputs':>13}  {'as the ceiling on every test step / some / none':>48}  "
          f"{'fused $':>8}  {'floor':>6}  {'ceiling':>8}  secs")
    for spec in args.readers:
        kind, share = spec.split(":")
        for with_market in (False, True):
            config = msgspec.structs.replace(network_config(), market_inputs=with_market)
            started = time.perf_counter()
            runs = [one_seed(config, seed, kind, float(share)) for seed in range(args.seeds)]
            matches = np.array([r[0] for r in runs])
            every, none = int(np.sum(matches >= 0.99)), int(np.sum(matches <= 0.01))
            print(f"{spec:>12}  {'yes' if with_market else 'no':>13}  {f'{every} / {args.seeds - every - none} / {none} seeds':>48}  "
                  f"{np.mean([r[1] for r in runs]):>+8.1f}  {0.0:>+6.1f}  {np.mean([r[2] for r in runs]):>+8.1f}  "
                  f"{time.perf_counter() - started:.0f}")


if __name__ == "__main__":
    main()
