"""Cells: the independent pieces of an evidence grid (evaluate's folds x seeds, ablation's seeds x variants, a sweep's
trials), each a pure function of (payload, cell), run on Ray (a local Ray, or a cluster with ``--ray ADDRESS``) or in this
process, with faults contained, finished cells cached by their configuration hash, and their CPU time counted.

- ``cell.py``: the typed ``Cell`` and the configuration hash that names it.
- ``cache.py``: finished cells on disk, so a rerun resumes.
- ``pool.py``: ``CellPool`` runs cells (Ray tasks with declared resources, retried when a worker dies).
- ``progress.py``: one bar over the cells (done, running, failed, eta).
- ``walkforward.py``, ``ablation.py``: evaluate's and ablation's cells on the pool.
"""
