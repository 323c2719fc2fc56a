"""The online MaskablePPO learner, without processes: serving, storing executed actions, updating."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from actors.policy.config import PolicyConfig
from actors.common.actions import OBS_DIM
from actors.common.observation import FEATURE_NAMES, observation_columns
from actors.policy.learner import OnlineMaskablePPO, policy_logits_and_values

N_ENVS = 2
POSITION_START = FEATURE_NAMES.index("position")


def small_config(**overrides) -> PolicyConfig:
    # Random rows in every column: these tests are about PPO's mechanics, so the network sees all 261.
    settings = dict(n_steps=16, batch_size=16, n_epochs=4, seed=3, net_arch=(32, 32), features_seen=())
    settings.update(overrides)
    return PolicyConfig(**settings)


def random_obs(rng: np.random.Generator) -> np.ndarray:
    return rng.normal(size=(N_ENVS, OBS_DIM)).astype(np.float32)


def no_dones() -> tuple[np.ndarray, np.ndarray]:
    return np.zeros(N_ENVS, bool), np.zeros(N_ENVS, bool)


def test_proposal_for_a_masked_state_never_picks_a_masked_action():
    learner = OnlineMaskablePPO(small_config(), N_ENVS)
    rng = np.random.default_rng(0)
    for step in range(300):
        masks = rng.random((N_ENVS, 6)) < 0.3
        masks[np.arange(N_ENVS), rng.integers(0, 6, N_ENVS)] = True  # at least one allowed
        proposal = learner.propose(random_obs(rng), masks, step)
        assert masks[np.arange(N_ENVS), proposal.actions].all()
        assert (proposal.probs[~masks] == 0).all()
        np.testing.assert_allclose(proposal.probs.sum(axis=1), 1.0, rtol=1e-5)
        np.testing.assert_allclose(proposal.confidences, proposal.probs[np.arange(N_ENVS), proposal.actions])


def test_window_bars_seen_hides_the_older_window_bars_from_the_network():
    rng = np.random.default_rng(1)
    masks = np.ones((N_ENVS, 6), bool)
    obs = random_obs(rng)
    older = obs.copy()
    older[:, : 19 * 11] = rng.normal(size=(N_ENVS, 19 * 11))  # every window bar but the newest changes
    newest = obs.copy()
    newest[:, 19 * 11 : 20 * 11] += 3.0

    def probs(learner, rows):
        return learner.propose(rows, masks, 0).probs

    sees_one = OnlineMaskablePPO(small_config(window_bars_seen=1, learn=False), N_ENVS)
    np.testing.assert_array_equal(probs(sees_one, obs), probs(sees_one, older))
    assert not np.allclose(probs(sees_one, obs), probs(sees_one, newest))
    sees_all = OnlineMaskablePPO(small_config(learn=False), N_ENVS)
    assert not np.allclose(probs(sees_all, obs), probs(sees_all, older))


def test_features_seen_shows_the_network_only_the_named_features():
    rng = np.random.default_rng(4)
    masks = np.ones((N_ENVS, 6), bool)
    obs = random_obs(rng)
    regime = FEATURE_NAMES.index("market_regime")
    others_changed = rng.normal(size=obs.shape).astype(np.float32)
    others_changed[:, regime] = obs[:, regime]
    others_changed[:, POSITION_START:POSITION_START + 5] = obs[:, POSITION_START:POSITION_START + 5]
    regime_changed = obs.copy()
    regime_changed[:, regime] += 3.0

    def probs(learner, rows):
        return learner.propose(rows, masks, 0).probs

    sees_belief = OnlineMaskablePPO(small_config(features_seen=("position", "market_regime"), learn=False), N_ENVS)
    np.testing.assert_array_equal(probs(sees_belief, obs), probs(sees_belief, others_changed))
    assert not np.allclose(probs(sees_belief, obs), probs(sees_belief, regime_changed))


def test_an_unknown_feature_in_features_seen_is_an_error_naming_the_key():
    with pytest.raises(ValueError, match=r"policy.features_seen.*'market_regim'"):
        small_config(features_seen=("position", "market_regim"))


def test_observation_columns_expand_groups_and_bar_features_over_the_window():
    assert len(observation_columns(["window"])) == 220
    assert len(observation_columns(["close_change"])) == 20
    assert observation_columns(["position"]).tolist() == list(range(POSITION_START, POSITION_START + 5))
    assert observation_columns(["market_regime", "market_regime"]).tolist() == [FEATURE_NAMES.index("market_regime")]


def test_a_single_allowed_action_is_proposed_with_confidence_one():
    learner = OnlineMaskablePPO(small_config(), N_ENVS)
    masks = np.zeros((N_ENVS, 6), bool)
    masks[:, 4] = True
    proposal = learner.propose(random_obs(np.random.default_rng(1)), masks, 0)
    assert (proposal.actions == 4).all()
    np.testing.assert_allclose(proposal.confidences, 1.0)


def test_a_mask_with_nothing_allowed_falls_back_to_hold_and_is_counted():
    learner = OnlineMaskablePPO(small_config(), N_ENVS)
    proposal = learner.propose(random_obs(np.random.default_rng(2)), np.zeros((N_ENVS, 6), bool), 0)
    assert (proposal.actions == 0).all()
    assert learner.counters["empty_mask_rows"] == N_ENVS


def test_non_finite_observations_are_zeroed_and_counted_without_poisoning_the_normaliser():
    learner = OnlineMaskablePPO(small_config(), N_ENVS)
    obs = random_obs(np.random.default_rng(3))
    obs[0, 5] = np.nan
    obs[1, 7] = np.inf
    learner.propose(obs, np.ones((N_ENVS, 6), bool), 0)
    assert learner.counters["non_finite_obs"] == 1
    assert np.isfinite(learner.normalizer.obs_rms.mean).all()


def test_a_batch_of_the_wrong_shape_is_a_clear_error():
    learner = OnlineMaskablePPO(small_config(), N_ENVS)
    with pytest.raises(ValueError, match="obs shape"):
        learner.propose(np.zeros((3, OBS_DIM), np.float32), np.ones((3, 6), bool), 0)


def test_by_default_a_transition_is_stored_with_the_proposed_action_so_ppo_stays_on_policy():
    learner = OnlineMaskablePPO(small_config(), N_ENVS)
    masks = np.ones((N_ENVS, 6), bool)
    proposal = learner.propose(random_obs(np.random.default_rng(4)), masks, 0)
    executed = (proposal.actions + 1) % 6  # risk vetoed / fusion overrode every env: part of the environment

    result = learner.record(0, executed, np.ones(N_ENVS, np.float32), *no_dones())

    buffer = learner.rollout.collecting
    assert result.stored and result.n_differs == N_ENVS
    np.testing.assert_array_equal(buffer.actions[0, :, 0], proposal.actions)
    np.testing.assert_allclose(buffer.log_probs[0], np.log(proposal.probs[np.arange(N_ENVS), proposal.actions]), rtol=1e-4)
    assert learner.counters["executed_differs_from_proposal"] == N_ENVS


def test_learn_from_executed_stores_the_executed_action_and_its_log_probability():
    learner = OnlineMaskablePPO(small_config(learn_from="executed"), N_ENVS)
    masks = np.ones((N_ENVS, 6), bool)
    proposal = learner.propose(random_obs(np.random.default_rng(4)), masks, 0)
    executed = (proposal.actions + 1) % 6  # fusion/risk chose something else for every env

    result = learner.record(0, executed, np.ones(N_ENVS, np.float32), *no_dones())

    buffer = learner.rollout.collecting
    assert result.stored and result.n_differs == N_ENVS
    assert buffer.pos == 1
    np.testing.assert_array_equal(buffer.actions[0, :, 0], executed)
    expected = np.log(proposal.probs[np.arange(N_ENVS), executed])
    np.testing.assert_allclose(buffer.log_probs[0], expected, rtol=1e-4)
    assert learner.counters["executed_differs_from_proposal"] == N_ENVS


def test_an_executed_action_outside_the_mask_is_stored_with_a_widened_mask_and_a_finite_log_probability():
    learner = OnlineMaskablePPO(small_config(learn_from="executed"), N_ENVS)
    masks = np.zeros((N_ENVS, 6), bool)
    masks[:, 1] = True
    learner.propose(random_obs(np.random.default_rng(5)), masks, 0)

    learner.record(0, np.array([0, 0]), np.zeros(N_ENVS, np.float32), *no_dones())

    buffer = learner.rollout.collecting
    assert buffer.action_masks[0, :, 0].all()  # HOLD now allowed in the stored mask
    assert np.isfinite(buffer.log_probs[0]).all() and (buffer.log_probs[0] > -50).all()
    assert learner.counters["executed_outside_mask"] == N_ENVS


def test_stored_log_probabilities_are_those_the_sb3_update_computes_before_any_step():
    learner = OnlineMaskablePPO(small_config(), N_ENVS)
    rng = np.random.default_rng(6)
    for step in range(8):
        masks = rng.random((N_ENVS, 6)) < 0.6
        masks[:, 0] = True
        proposal = learner.propose(random_obs(rng), masks, step)
        executed = np.where(rng.random(N_ENVS) < 0.5, proposal.actions, 0)
        learner.record(step, executed, rng.normal(size=N_ENVS).astype(np.float32), *no_dones())

    buffer, pos = learner.rollout.collecting, learner.rollout.collecting.pos
    obs = torch.as_tensor(buffer.observations[:pos].reshape(-1, OBS_DIM))
    actions = torch.as_tensor(buffer.actions[:pos].reshape(-1))
    masks = torch.as_tensor(buffer.action_masks[:pos].reshape(-1, 6))
    with torch.no_grad():
        values, log_probs, _ = learner.model.policy.evaluate_actions(obs, actions, action_masks=masks)
    np.testing.assert_allclose(log_probs.numpy(), buffer.log_probs[:pos].reshape(-1), atol=1e-5)
    np.testing.assert_allclose(values.numpy().ravel(), buffer.values[:pos].reshape(-1), atol=1e-5)


def test_a_truncated_episode_is_bootstrapped_with_the_value_of_its_terminal_observation():
    learner = OnlineMaskablePPO(small_config(normalize_reward=False), N_ENVS)
    rng = np.random.default_rng(7)
    proposal = learner.propose(random_obs(rng), np.ones((N_ENVS, 6), bool), 0)
    terminal_obs = random_obs(rng)
    terminated = np.array([False, True])
    truncated = np.array([True, False])

    learner.record(0, proposal.actions, np.array([1.0, 1.0], np.float32), terminated, truncated, terminal_obs)

    with torch.no_grad():
        _, terminal_values = policy_logits_and_values(
            learner.serving, torch.as_tensor(learner.normalizer.normalize_obs(terminal_obs))
        )
    stored = learner.rollout.collecting.rewards[0]
    assert stored[0] == pytest.approx(1.0 + learner.model.gamma * float(terminal_values[0]), abs=1e-5)
    assert stored[1] == pytest.approx(1.0)  # terminated: no bootstrap


def test_a_transition_without_a_proposal_is_counted_and_not_stored():
    learner = OnlineMaskablePPO(small_config(), N_ENVS)
    result = learner.record(41, np.zeros(N_ENVS, np.int64), np.zeros(N_ENVS, np.float32), *no_dones())
    assert not result.stored and result.reason == "no_proposal"
    assert learner.counters["transitions_not_stored_no_proposal"] == 1


def test_a_timed_out_step_is_not_stored_and_the_chain_is_cut_with_a_bootstrapped_value():
    learner = OnlineMaskablePPO(small_config(normalize_reward=False), N_ENVS)
    rng = np.random.default_rng(8)
    masks = np.ones((N_ENVS, 6), bool)
    first = learner.propose(random_obs(rng), masks, 0)
    learner.record(0, first.actions, np.zeros(N_ENVS, np.float32), *no_dones())
    skipped = learner.propose(random_obs(rng), masks, 1)

    result = learner.record(1, np.zeros(N_ENVS, np.int64), np.zeros(N_ENVS, np.float32), *no_dones(), timed_out=[True, False])
    third = learner.propose(random_obs(rng), masks, 2)
    learner.record(2, third.actions, np.zeros(N_ENVS, np.float32), *no_dones())

    buffer = learner.rollout.collecting
    assert not result.stored and result.reason == "timed_out"
    assert buffer.pos == 2
    np.testing.assert_allclose(buffer.rewards[0], learner.model.gamma * skipped.values, atol=1e-5)
    assert buffer.episode_starts[1].all()  # a new GAE chain starts after the cut


def run_tiny_task(learner: OnlineMaskablePPO, steps: int, seed: int) -> list[float]:
    """A contextual bandit in episodes of 8 steps: BUY pays when the first 16 features are high, SELL when
    low; the other actions are masked (HOLD pays nothing)."""
    rng = np.random.default_rng(seed)
    masks = np.zeros((N_ENVS, 6), bool)
    masks[:, :3] = True
    hit_rates = []

    def random_obs(rng):
        obs = rng.normal(size=(N_ENVS, OBS_DIM)).astype(np.float32)
        obs[:, :16] += np.where(rng.random((N_ENVS, 1)) < 0.5, 1.5, -1.5)
        return obs

    obs = random_obs(rng)
    for step in range(steps):
        proposal = learner.propose(obs, masks, step)
        learner.update_if_ready()
        target = np.where(obs[:, 0] > 0, 1, 2)
        rewards = (proposal.actions == target).astype(np.float32)
        hit_rates.append(float(rewards.mean()))
        truncated = np.full(N_ENVS, (step + 1) % 8 == 0)
        next_obs = random_obs(rng)
        learner.record(step, proposal.actions, rewards, np.zeros(N_ENVS, bool), truncated, next_obs)
        obs = next_obs
    return hit_rates


def test_learning_from_executed_transitions_changes_the_weights_and_reports_approx_kl_above_zero():
    learner = OnlineMaskablePPO(
        small_config(n_steps=64, batch_size=32, n_epochs=6, learning_rate=3e-3, gamma=0.5, ent_coef=0.0), N_ENVS
    )
    weights_before = learner.parameters_vector()

    hit_rates = run_tiny_task(learner, steps=64 * 8 + 1, seed=9)

    assert learner.n_updates == 8
    assert np.abs(learner.parameters_vector() - weights_before).max() > 1e-3
    assert learner.latest_figures["approx_kl"] > 1e-6
    assert learner.latest_figures["clip_fraction"] >= 0.0
    assert np.mean(hit_rates[-64:]) > np.mean(hit_rates[:64]) + 0.25  # it learned the planted rule


def test_steps_during_an_update_are_served_by_the_old_policy_and_stored_into_the_next_rollout():
    learner = OnlineMaskablePPO(small_config(n_steps=4, batch_size=8), N_ENVS)
    rng = np.random.default_rng(10)
    masks = np.ones((N_ENVS, 6), bool)

    def step_once(step: int):
        proposal = learner.propose(random_obs(rng), masks, step)
        if learner.update_ready and not learner.update_running:
            learner.begin_update()  # the actor would now run_update in its worker thread
        return learner.record(step, proposal.actions, np.zeros(N_ENVS, np.float32), *no_dones())

    results = [step_once(step) for step in range(4)]  # fills rollout 1
    serving_before = learner.parameters_vector()
    results += [step_once(step) for step in range(4, 12)]  # update 1 "runs"; rollout 2 fills, then no room

    assert learner.update_running
    assert all(r.stored for r in results[:8])
    assert [r.reason for r in results[8:]] == ["learner_busy"] * 4
    np.testing.assert_array_equal(learner.parameters_vector(), serving_before)  # still the pre-update policy

    learner.run_update()
    learner.finish_update()
    assert learner.update_ready  # rollout 2, collected meanwhile, is next
    assert not np.array_equal(learner.parameters_vector(), serving_before)
    assert learner.counters["transitions_not_stored_learner_busy"] == 4


def test_a_frozen_learner_serves_deterministically_and_stores_nothing():
    learner = OnlineMaskablePPO(small_config(learn=False), N_ENVS)
    obs = random_obs(np.random.default_rng(11))
    masks = np.ones((N_ENVS, 6), bool)
    first = learner.propose(obs, masks, 0)
    again = learner.propose(obs, masks, 1)
    result = learner.record(0, first.actions, np.zeros(N_ENVS, np.float32), *no_dones())

    np.testing.assert_array_equal(first.actions, again.actions)
    np.testing.assert_array_equal(first.actions, first.probs.argmax(axis=1))
    assert result.reason == "frozen" and learner.num_timesteps == N_ENVS
    assert learner.normalizer.obs_rms.count < 1  # statistics untouched


def test_the_numpy_serving_copy_computes_what_the_torch_policy_computes():
    import torch

    from actors.policy.learner import policy_logits_and_values
    from actors.policy.masking import masked_log_softmax
    from actors.policy.serving import NumpyPolicy, sample

    learner = OnlineMaskablePPO(PolicyConfig(learn=False, net_arch=(32, 16)), 3)
    obs = np.random.default_rng(1).normal(size=(3, 261)).astype(np.float32)
    with torch.no_grad():
        logits_t, values_t = policy_logits_and_values(learner.serving, torch.as_tensor(obs))
    logits, values = NumpyPolicy(learner.serving).logits_and_values(obs)
    np.testing.assert_allclose(logits, logits_t.numpy(), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(values, values_t.numpy(), rtol=1e-5, atol=1e-5)
    masks = np.array([[1, 0, 0, 1, 0, 0], [0, 1, 1, 0, 0, 0], [1, 1, 1, 1, 1, 1]], dtype=bool)
    log_probs = masked_log_softmax(logits, masks)
    expected = torch.log_softmax(torch.where(torch.as_tensor(masks), logits_t, torch.tensor(-1e8)), dim=1).numpy()
    np.testing.assert_allclose(log_probs, expected, rtol=1e-5, atol=1e-5)
    draws = np.stack([sample(np.exp(log_probs), np.random.default_rng(i)) for i in range(300)])
    assert masks[np.arange(3), draws].all()  # never a masked action
