import asyncio

import numpy as np
import pytest
from structlog.testing import capture_logs

from actors.common.llm.prompts import SAMPLE_CONTEXT
from actors.lora.core import LoraCore, RoundReport
from actors.lora.store import ExperienceStore
from actors.lora.round_types import RoundResult, TrainStats
from actors.lora.versions import AdapterVersion
from bus.messages import EnvHindsight, EnvObs, EnvOutcome, LlmThought, LoraAdapter, MarketContext
from runtime.testing import actor_harness

FLAT_MASK = [True, True, True, False, False, False]


@pytest.fixture(autouse=True)
def no_model_load(monkeypatch):
    """The actor loads its model at start for the first round; these tests train through a stand-in or not at all."""
    monkeypatch.setattr(LoraCore, "load_trainer", lambda self: None)


def env_obs(step):
    return EnvObs(env_ids=[0], episode_ids=[1], step=step, obs=np.zeros((1, 261), np.float32),
                  masks=np.array([FLAT_MASK]), contexts=[MarketContext(**SAMPLE_CONTEXT)])


def thought(query_id, step):
    return LlmThought(env_id=0, episode_id=1, step_seen=step, query_id=query_id, action=1, confidence=0.7,
                      mode="four_step", analysis="Uptrend.", options="BUY or HOLD.", risks="A reversal.",
                      decision="BUY | 0.70 | trend")


def outcome(query_ids, trade_id=1, pnl=300.0):
    return EnvOutcome(env_id=0, episode_id=1, trade_id=trade_id, side=1, contracts=1, entry_ns=0, exit_ns=1,
                      entry_price=1.0, exit_price=2.0, pnl_usd=pnl, bars_held=3, exit_reason="target",
                      decision_steps=[3], llm_query_ids=query_ids)


async def test_a_closed_trade_becomes_a_stored_experience_with_the_rebuilt_decide_prompt(tmp_path):
    async with actor_harness("lora", {"lora.experiences_per_round": 100}, run_dir=tmp_path) as h:
        await h.deliver(env_obs(3), outcome(["r-1"]), thought("r-1", 3), outcome(["r-1"]))
        await h.stop()

    store = ExperienceStore(tmp_path / "lora" / "experiences.sqlite", max_experiences=10, held_out_fraction=0.2)
    [experience] = store.all()
    assert experience.target.startswith("BUY | 0.80 | ")
    assert experience.messages[1]["content"].startswith("Market: NQ at 10:31 ET, price 18250.25")
    assert [m["content"] for m in experience.messages[2::2]] == ["Uptrend.", "BUY or HOLD.", "A reversal."]
    assert experience.messages[-1]["content"].startswith("Decide now.")


async def test_every_m_new_experiences_a_round_runs_and_a_published_version_is_announced(tmp_path, monkeypatch):
    def fake_round(self, progress=None):
        metrics = {"match_rate_before": 0.5, "match_rate_after": 0.9, "published": 1.0}  # as LoraCore.run_round writes them
        version = AdapterVersion(1, tmp_path / "v0001" / "adapter.gguf", metrics, True)
        stats = TrainStats(1, 0.5, 0.5, 10, 100.0, 0.1)
        return RoundReport(RoundResult(0.5, 0.9, True, stats, 4), version)

    monkeypatch.setattr(LoraCore, "run_round", fake_round)
    with capture_logs() as logs:
        async with actor_harness("lora", {"lora.experiences_per_round": 2}, run_dir=tmp_path) as h:
            await h.deliver(env_obs(3), thought("r-1", 3), thought("r-2", 3), outcome(["r-1"], 1), outcome(["r-2"], 2))
            adapter = await h.recv(LoraAdapter)
            await h.stop()

    assert (adapter.version, adapter.metrics["match_rate_after"]) == (1, 0.9)
    [logged] = [e for e in logs if e["event"] == "lora_round"]
    assert (logged["version"], logged["published"], logged["match_rate_before"]) == (1, True, 0.5)
    assert not [e for e in logs if e["event"] == "task_failed"]


def hindsight(step, action=1, long_pnl=390.0, short_pnl=-210.0):
    """The env's label of env 0's decision step ``step`` (actors/env/loop.py hindsight_message)."""
    return EnvHindsight(env_ids=[0], episode_ids=[1], steps=[step], actions=np.array([action]),
                        long_pnl_usd=np.array([long_pnl]), short_pnl_usd=np.array([short_pnl]),
                        long_exits=["target"], short_exits=["stop"], long_bars=np.array([2]), short_bars=np.array([1]))


async def test_env_hindsight_labels_become_experiences_of_the_thoughts_that_saw_their_step(tmp_path):
    async with actor_harness("lora", {"lora.experiences_per_round": 100}, run_dir=tmp_path) as h:
        # step 4's label arrives before its thought (a thought may finish after the horizon); step 3's after
        await h.deliver(env_obs(3), env_obs(4), thought("r-1", 3), hindsight(3), hindsight(4, action=2, short_pnl=390.0),
                        thought("r-2", 4), hindsight(9))
        counters = dict(h.actor.counters)
        await h.stop()

    store = ExperienceStore(tmp_path / "lora" / "experiences.sqlite", max_experiences=10, held_out_fraction=0.2)
    experiences = {e.id: e for e in store.all()}
    assert set(experiences) == {"hindsight:r-1", "hindsight:r-2"}
    # the reason is what the prompt showed (SAMPLE_CONTEXT: trend up, +0.12% vs VWAP, momentum +0.8), not the outcome
    assert experiences["hindsight:r-1"].target == "BUY | 0.80 | uptrend, above VWAP, momentum positive"
    assert experiences["hindsight:r-2"].target.startswith("SELL | 0.80 | ") and experiences["hindsight:r-2"].pnl_usd == 390.0
    assert experiences["hindsight:r-2"].meta["outcome"] == "short reaches its target first"
    assert counters["hindsight_labels"] == 3 and counters["experiences"] == 2


async def test_with_trade_labels_only_env_hindsight_teaches_nothing(tmp_path):
    async with actor_harness("lora", {"lora.labels": "trades"}, run_dir=tmp_path) as h:
        await h.deliver(env_obs(3), thought("r-1", 3), hindsight(3))
        await h.stop()

    store = ExperienceStore(tmp_path / "lora" / "experiences.sqlite", max_experiences=10, held_out_fraction=0.2)
    assert store.count() == 0


async def test_seed_experiences_are_stored_at_start_and_their_round_starts_before_any_thought(tmp_path, monkeypatch):
    from actors.lora.store import write_experiences_file
    from tests.actors.lora.test_store import experience

    rounds = []
    monkeypatch.setattr(LoraCore, "run_round", lambda self, progress=None: rounds.append(self.store.count()) or _no_publish(tmp_path))
    seed_file = write_experiences_file(tmp_path / "seed.jsonl", [experience(n, action=n % 3) for n in range(6)])
    with capture_logs() as logs:
        async with actor_harness("lora", {"lora.experiences_per_round": 4, "lora.seed_experiences_path": str(seed_file)},
                                 run_dir=tmp_path) as h:
            for _ in range(200):  # the round runs in the actor's worker thread
                if rounds:
                    break
                await asyncio.sleep(0.05)
            await h.stop()

    assert [e["added"] for e in logs if e["event"] == "lora_seeded"] == [6]
    assert rounds == [6]


async def test_a_broken_seed_file_is_logged_and_the_trainer_goes_on(tmp_path):
    broken = tmp_path / "seed.jsonl"
    broken.write_text('{"id": "x"}\nnot json\n')
    with capture_logs() as logs:
        async with actor_harness("lora", {"lora.experiences_per_round": 100, "lora.seed_experiences_path": str(broken)},
                                 run_dir=tmp_path) as h:
            await h.deliver(env_obs(3), outcome(["r-1"]), thought("r-1", 3))
            await h.stop()

    [failed] = [e for e in logs if e["event"] == "lora_seed_failed"]
    assert failed["path"] == str(broken)
    assert ExperienceStore(tmp_path / "lora" / "experiences.sqlite", max_experiences=10, held_out_fraction=0.2).count() == 1


def _no_publish(tmp_path):
    version = AdapterVersion(1, tmp_path / "v0001" / "adapter.gguf", {"published": 0.0}, False)
    return RoundReport(RoundResult(0.5, 0.4, False, TrainStats(1, 0.5, 0.5, 10, 100.0, 0.1), 4), version)


async def test_a_published_adapter_is_held_until_the_loop_reaches_lora_publish_from_step(tmp_path, monkeypatch):
    from bus.messages import LoraRound

    def fake_round(self, progress=None):
        version = AdapterVersion(1, tmp_path / "v0001" / "adapter.gguf", {"match_rate_after": 0.9, "published": 1.0}, True)
        return RoundReport(RoundResult(0.5, 0.9, True, TrainStats(1, 0.5, 0.5, 10, 100.0, 0.1), 4), version)

    monkeypatch.setattr(LoraCore, "run_round", fake_round)
    async with actor_harness("lora", {"lora.experiences_per_round": 2, "lora.publish_from_step": 10}, run_dir=tmp_path) as h:
        await h.deliver(env_obs(3), thought("r-1", 3), thought("r-2", 3), outcome(["r-1"], 1), outcome(["r-2"], 2))
        await h.recv(LoraRound)  # the round ended and published ...
        await h.deliver(env_obs(9))
        held = h.messages(LoraAdapter)  # ... but the reasoner must not swap it in before step 10
        await h.deliver(env_obs(10))
        adapter = await h.recv(LoraAdapter)
        await h.stop()
    assert held == [] and adapter.version == 1


def test_a_snapshot_round_samples_and_judges_only_what_was_stored_when_it_started(tmp_path):
    from actors.lora.experience import Experience

    def experience(n):
        return Experience(id=f"e-{n}", messages=[{"role": "user", "content": f"q{n}"}], mask=(True,) * 6,
                          target="BUY | 0.80 | up", action=1, pnl_usd=10.0, source="trade")

    store = ExperienceStore(tmp_path / "x.sqlite", max_experiences=1000, held_out_fraction=0.2)
    store.add([experience(n) for n in range(50)])
    snapshot = store.last_seq()
    before = ({e.id for e in store.sample(400, np.random.default_rng(0), snapshot)}, store.held_out(100, snapshot))
    store.add([experience(n) for n in range(50, 100)])  # the loop stores more while the round trains
    after = ({e.id for e in store.sample(400, np.random.default_rng(0), snapshot)}, store.held_out(100, snapshot))
    assert before == after and max(int(i[2:]) for i in after[0]) < 50
    assert max(int(e.id[2:]) for e in store.held_out(100)) >= 50  # without a snapshot: the newest
