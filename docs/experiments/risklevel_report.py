"""Tables of a risk round's summary.json (risklevel_round.py / riskfit_round.py): match on the gate's held-out event
bars for base, adapter, calendar and keyword rules, the adapter's paired differences (95 %), the confusion tables
and balanced accuracy. docs/experiments/risklevel.md.

usage: risklevel_report.py SUMMARY.json"""
import json
import sys
from collections import Counter

from actors.lora.publishing import paired_gain

LEVELS = ("CALM", "ELEVATED", "EXTREME")
summary = json.load(open(sys.argv[1]))
rows = summary["gate"]
labels = [r["label"] for r in rows]
reads = {name: [r[name] for r in rows] for name in ("before", "after", "calendar", "keyword")}
reads["always ELEVATED"] = [1] * len(rows)
hits = {name: [a == y for a, y in zip(answers, labels)] for name, answers in reads.items()}
print(f"gate: {len(rows)} held-out event bars, labels {dict(Counter(LEVELS[y] for y in labels))}")
print("| reader | match | balanced accuracy | adapter minus it (paired, 95 %) |\n| --- | --- | --- | --- |")
for name, answers in reads.items():
    recalls = [sum(h for h, y in zip(hits[name], labels) if y == level) / max(labels.count(level), 1)
               for level in range(3) if labels.count(level)]
    gain = "" if name == "after" else "{:+.3f} [{:+.3f}, {:+.3f}]".format(*paired_gain(hits[name], hits["after"], 1.96))
    print(f"| {name} | {sum(hits[name]) / len(rows):.3f} | {sum(recalls) / len(recalls):.3f} | {gain} |")
print("\n| label | base: " + " / ".join(LEVELS) + " | adapter: " + " / ".join(LEVELS) + " |\n| --- | --- | --- |")
for level in range(3):
    cells = [" / ".join(str(sum(1 for a, y in zip(reads[who], labels) if y == level and a == read)) for read in range(3))
             for who in ("before", "after")]
    print(f"| {LEVELS[level]} ({labels.count(level)}) | {cells[0]} | {cells[1]} |")
m = summary["metrics"]
apart = {k: round(v, 3) for k, v in m.items() if k.startswith("apart_")}
print("\nheld-out templates:", json.dumps(apart))
print("why:", summary["why"], "published:", summary["published"], "after mix:", summary["after_mix"],
      "secs_round:", round(summary["secs_round"]), "train_secs:", round(m.get("train_secs", 0)))
