import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
# Child processes started by the supervisor find the project the same way.
os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH", "")]))


def pytest_collection_modifyitems(config, items):
    """The Ray tests run one after another on one xdist worker (bin/test's --dist loadgroup): a second Ray cluster
    started beside them on the same machine would find theirs (ray's /tmp/ray/ray_current_cluster)."""
    import pytest

    for item in items:
        if "/jobs/cells/" in item.path.as_posix():
            item.add_marker(pytest.mark.xdist_group("ray"))
