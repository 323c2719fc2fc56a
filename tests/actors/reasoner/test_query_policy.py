from actors.common.llm.prompts import SAMPLE_CONTEXT
from actors.reasoner.config import ReasonerConfig
from actors.reasoner.query_policy import QueryPolicy

FLAT = dict(SAMPLE_CONTEXT, position=0)
LONG = dict(SAMPLE_CONTEXT, position=1, contracts=1)


def test_always_on_thinks_about_every_observation():
    policy = QueryPolicy(ReasonerConfig(query_policy="always"))

    assert all(policy.reason_to_think(0, step, LONG) for step in range(20))


def test_every_n_thinks_once_per_n_steps_per_env():
    policy = QueryPolicy(ReasonerConfig(query_policy="every_n", query_every_n_steps=5))

    env0 = [step for step in range(12) if policy.reason_to_think(0, step, LONG)]
    env1 = [step for step in range(3, 9) if policy.reason_to_think(1, step, LONG)]

    assert env0 == [0, 5, 10]
    assert env1 == [3, 8]


def test_every_n_starts_over_when_the_step_count_restarts():
    policy = QueryPolicy(ReasonerConfig(query_policy="every_n", query_every_n_steps=5))
    policy.reason_to_think(0, 100, LONG)

    assert policy.reason_to_think(0, 1, LONG) == "interval"


def test_selective_thinks_when_the_policy_is_unsure_and_not_when_it_is_confident_in_a_steady_position():
    policy = QueryPolicy(ReasonerConfig(query_policy="selective", query_every_n_steps=100, query_rl_confidence_below=0.7))
    policy.reason_to_think(0, 0, LONG)  # first sight of the env: interval

    policy.note_rl_confidence(0, 0.95)
    confident = policy.reason_to_think(0, 1, LONG)
    policy.note_rl_confidence(0, 0.4)
    unsure = policy.reason_to_think(0, 2, LONG)

    assert confident == "" and unsure == "rl_uncertain"


def test_selective_thinks_when_flat_and_when_the_position_state_changes():
    policy = QueryPolicy(ReasonerConfig(query_policy="selective", query_every_n_steps=100))
    policy.note_rl_confidence(0, 0.99)
    policy.reason_to_think(0, 0, LONG)

    assert policy.reason_to_think(0, 1, FLAT) == "flat"
    assert policy.reason_to_think(0, 2, dict(LONG, trail_on=True)) == "state_changed"
    assert policy.reason_to_think(0, 3, dict(LONG, trail_on=True)) == ""
