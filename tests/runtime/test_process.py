"""What an actor's own process does that the in-process harness does not."""

import json

from runtime.testing import running_actors


def test_an_actor_process_freezes_its_start_up_heap_so_a_full_collection_skips_it():
    with running_actors(["runtime.probes:Relay1"]) as rt:
        log_file = rt.run_dir / "logs" / "relay1.jsonl"
        events = [json.loads(line) for line in log_file.read_text().splitlines()]
    frozen = [event for event in events if event["event"] == "heap_frozen"]
    assert len(frozen) == 1 and frozen[0]["objects"] > 10_000  # the interpreter, zmq, msgspec, structlog at least
