"""Does fusion learn whom to trust when flat? (``bin/bench fusion``)

The fusion network (its default layers and learning rate, fusion.hindsight_lessons) on flat steps where RL always
holds and a reader names the side that pays with a given probability (a right call +$200, a wrong one -$250: costs
make a coin lose). Per seed, 400 steps to learn, then 400 others with the network frozen (out of sample). For each
reader: on how many seeds the network followed it on every test step, on none, or on some; the fused $ a step beside
the floor (RL alone: 0) and the ceiling (the reader everywhere), both measured on the same test steps.
The steps come from tests/actors/fusion/test_hindsight_lessons.py (``play``), which asserts the same at a few seeds.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from actors.fusion.config import FusionConfig
from actors.fusion.fuser import Fuser
from tests.actors.fusion.test_hindsight_lessons import play
from tests.bench.common import machine_line

LEARN_STEPS, TEST_STEPS = range(1, 401), range(1000, 1400)


def network_config(**overrides) -> FusionConfig:
    """The default network; first update after 48 lessons, then every 32; no exploring (RL never enters here)."""
    return FusionConfig(**{"method": "network", "min_experiences": 48, "update_every_experiences": 32, "explore_rate": 0.0,
                           **overrides})


def one_seed(seed: int, reader_right: float) -> tuple[float, float, float]:
    """(share of test steps the network followed the reader, fused $ a step, the reader's $ a step)."""
    rng = np.random.default_rng(seed)
    fuser = Fuser(network_config())
    play(fuser, rng, LEARN_STEPS, reader_right)
    test = play(Fuser(network_config(learn=False), learner=fuser.learner), rng, TEST_STEPS, reader_right)
    return float(np.mean(test["fused"] != 0.0)), float(test["fused"].mean()), float(test["llm"].mean())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", type=int, default=10, help="seeds per reader")
    parser.add_argument("--readers", type=float, nargs="+", default=[0.75, 0.6, 0.5], help="how often each reader is right")
    args = parser.parse_args()
    print(f"\nfusion learning whom to trust when flat, {args.seeds} seeds a reader  ({machine_line()})")
    print(f"{'reader right on':>16}  {'followed on every test step / some / none':>42}  {'fused $':>8}  {'floor':>6}  {'ceiling':>8}  secs")
    for right in args.readers:
        started = time.perf_counter()
        runs = [one_seed(seed, right) for seed in range(args.seeds)]
        follows = np.array([r[0] for r in runs])
        every, none = int(np.sum(follows >= 0.99)), int(np.sum(follows <= 0.01))
        print(f"{right:>16.2f}  {f'{every} / {args.seeds - every - none} / {none} seeds':>42}  "
              f"{np.mean([r[1] for r in runs]):>+8.1f}  {0.0:>+6.1f}  {np.mean([r[2] for r in runs]):>+8.1f}  "
              f"{time.perf_counter() - started:.0f}")


if __name__ == "__main__":
    main()
