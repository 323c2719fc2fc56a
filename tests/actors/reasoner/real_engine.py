"""The real SmolLM2 engine as a module-scoped fixture, for the test modules that think with it."""

import pytest

from actors.reasoner.config import ReasonerConfig
from actors.reasoner.engines import build_engine


def engine_fixture(**settings):
    """A module-scoped fixture (assign it to ``engine``): ``build_engine(ReasonerConfig(**settings))``, closed after the module."""

    @pytest.fixture(scope="module")
    def engine():
        engine = build_engine(ReasonerConfig(**settings))
        yield engine
        engine.close()

    return engine
