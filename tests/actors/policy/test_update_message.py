"""policy.update: one PPO update's SB3 figures as the typed message the dashboard draws (actors/policy/actor.py)."""

import math

from actors.policy.actor import update_message


def test_an_sb3_dump_becomes_the_typed_update_with_the_episode_return_and_the_update_count():
    figures = {"num_timesteps": 256.0, "approx_kl": 0.02, "clip_fraction": 0.1, "rollout_ep_rew_mean": -4.5, "policy_updates": 3.0,
               "time_update_secs": 1.2}
    update = update_message(figures)

    assert (update.update, update.num_timesteps, update.approx_kl, update.clip_fraction) == (3, 256, 0.02, 0.1)
    assert update.mean_episode_return == -4.5
    assert math.isnan(update.value_loss)  # SB3 gave none: NaN, not 0
