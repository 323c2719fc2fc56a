"""``python -m actors.dashboard``: the dashboard process (``bin/run ... --dashboard`` starts it beside a job)."""

import sys

from actors.dashboard.server import main

sys.exit(main())
