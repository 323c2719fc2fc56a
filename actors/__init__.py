"""The actors: one subpackage per actor, its domain code beside a thin actor shell (actors/<x>/actor.py).

The names below are the one place an actor's name is spelled: ``runtime.actors`` lists them, the
supervisor starts ``actors/<name>/actor.py`` for each, and the jobs (actors/jobs/) wait for them.
"""

ENV = "env"
POLICY = "policy"
REASONER = "reasoner"
FUSION = "fusion"
RISK = "risk"
LORA = "lora"
FEED = "feed"

DECISION_LOOP: tuple[str, ...] = (ENV, POLICY, REASONER, FUSION, RISK)
"""The actors of the decision loop, in start order (the default of ``runtime.actors``)."""
