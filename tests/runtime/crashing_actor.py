"""An actor that dies right after starting: drives the supervisor's restart limit in tests."""

import os

from runtime.actor import Actor


class CrashingActor(Actor):
    async def on_start(self) -> None:
        self.log.info("about_to_crash")
        os._exit(3)


ACTOR = CrashingActor
