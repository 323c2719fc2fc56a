"""Re-export: the triple-barrier labelling lives in actors/common/hindsight.py (the env computes it, the trainer reads it)."""

from actors.common.hindsight import BUY, HOLD, SELL, BarrierSpec, HindsightLabel, SideOutcome, triple_barrier_label

__all__ = ["BUY", "HOLD", "SELL", "BarrierSpec", "HindsightLabel", "SideOutcome", "triple_barrier_label"]
