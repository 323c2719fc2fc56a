import numpy as np

from actors.reasoner.pending import PendingObservations, ThoughtRequest


def request(env_id, step):
    return ThoughtRequest(env_id=env_id, episode_id=0, step=step, obs=np.zeros(261, np.float32),
                          mask=(True,) * 6, context={})


def test_only_the_newest_observation_of_an_env_waits_and_replacements_are_counted():
    pending = PendingObservations()
    for step in range(5):
        pending.put(request(0, step))

    assert len(pending) == 1 and pending.replaced == 4
    assert pending.pop_next().step == 4
    assert pending.pop_next() is None


def test_envs_are_served_round_robin_so_a_busy_env_cannot_starve_the_others():
    pending = PendingObservations()
    served = []
    for step in range(6):
        pending.put(request(0, step))
        if step == 0:
            pending.put(request(1, step))
            pending.put(request(2, step))
        served.append(pending.pop_next().env_id)

    assert served[:3] == [0, 1, 2]
    assert served[3:] == [0, 0, 0]
