import time

from actors import LORA, POLICY
from actors.jobs.lora import MIN_THOUGHTS_ON_ADAPTER, FirstRoundWatch
from bus.messages import Done, LlmThought, LoraAdapter, Stats


def thought(version: int) -> LlmThought:
    return LlmThought(query_id="q", env_id=0, episode_id=0, step_seen=1, action=0, confidence=0.5, mode="single_shot",
                      adapter_version=version)


def lora_stats(rounds: int) -> Stats:
    return Stats(actor=LORA, counters={}, gauges={"rounds": float(rounds)})


def test_the_run_goes_on_after_the_policy_is_done_until_thoughts_run_on_the_published_adapter():
    watch = FirstRoundWatch()
    assert not watch(LoraAdapter(version=1, path="/a.gguf"))  # a round alone does not end training the policy is in
    assert not watch(lora_stats(1))
    assert not watch(Done(actor=POLICY, reason="total_timesteps"))
    assert not watch(thought(0))  # the base model's thoughts do not count
    stops = [watch(thought(1)) for _ in range(MIN_THOUGHTS_ON_ADAPTER)]
    assert stops == [False] * (MIN_THOUGHTS_ON_ADAPTER - 1) + [True]
    assert watch.thoughts_by_version == {0: 1, 1: MIN_THOUGHTS_ON_ADAPTER}


def test_a_round_that_published_nothing_ends_the_run_once_the_trainer_counts_it():
    watch = FirstRoundWatch()
    assert not watch(Done(actor=POLICY, reason="total_timesteps"))
    assert not watch(thought(0))
    assert not watch(lora_stats(0))
    assert watch(lora_stats(1))


def test_without_a_round_the_run_ends_at_the_deadline_and_says_so():
    watch = FirstRoundWatch(max_wait_secs=0.05)
    assert not watch(Done(actor=POLICY, reason="total_timesteps"))
    time.sleep(0.1)
    assert watch(thought(0)) and watch.timed_out
    assert not FirstRoundWatch()(Done(actor="fusion", reason="x"))  # another actor's done is not the policy's
