"""The error every job raises for what it could not do; bin/run prints its message on one line and exits 1.

Its own module, below actors/jobs/common.py, so the ledger and the other evaluation modules can raise it without
importing the job machinery (which imports them)."""


class JobError(RuntimeError):
    """A job could not do what was asked (missing checkpoint, broken data file, runtime failure, ...)."""
