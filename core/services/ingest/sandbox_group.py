"""What every jobs' forkserver runs before it forks a child, warm or not
(core.services.ingest.sandbox): numpy's OpenBLAS kept to one thread, and a process group
of its own.

A process group of its own (and so of every job's child forked from it): Ctrl-C in the
terminal running `make run`, or a signal sent to the app's group, would otherwise end a
reading midway while the app shuts down in order. The forkserver still ends with the app
(multiprocessing closes its "alive" pipe), and a child ends itself within half a second
of its worker's end (sandbox._orphan_watch)."""

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # before numpy is imported, or it starts a pool

try:
    os.setpgid(0, 0)
except OSError:  # already a group or session leader
    pass
