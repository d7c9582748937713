"""The cyclic garbage collector, set for a process that serves for long.

A serving process holds a few hundred thousand long-lived objects (libraries, models,
the workbench) and builds large short-lived ones: a first question after a write at
5,000 facts builds ~5,000 candidates, and with CPython's defaults that one question ran
about 280 young collections and a full one over every object, near half its time
(bench/answer.py). So, once the process is set up: what exists then is frozen (never
scanned again; reference counting still frees it), and a young collection waits for
50,000 new container objects instead of 700. Cycles are still collected, later.
"""

from __future__ import annotations

import gc

YOUNG_THRESHOLD = 50_000  # CPython's default is 700
OLDER_THRESHOLDS = (20, 20)  # collections of the younger generation before an older one (default 10, 10)


def settle_for_serving() -> None:
    """Collect once, freeze what survives, and raise the thresholds. Called by the
    serving process (ui.runtime.start), `core mllp` and `core worker` once they are set up."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(YOUNG_THRESHOLD, *OLDER_THRESHOLDS)
