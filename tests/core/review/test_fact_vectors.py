"""The fact index warmed before a reviewer's first decision: once per index and
process, in the background, and never a failure of the page that asked."""

from __future__ import annotations

import threading

from core.services.review.fact_vectors import warm_up


class SlowIndex:
    """A fact index whose first use takes a while (LanceDB's import, the model's load)."""

    def __init__(self, fails: bool = False):
        self.searched: list[tuple[int, int]] = []
        self.done = threading.Event()
        self.release = threading.Event()
        self.fails = fails

    def search(self, patient_id, query, k=10):
        self.release.wait(5)
        self.searched.append((patient_id, k))
        self.done.set()
        if self.fails:
            raise RuntimeError("the vector table cannot be opened")
        return []


class Bench:
    def __init__(self, index):
        self.fact_index = index


def test_the_index_is_warmed_once_in_the_background():
    index = SlowIndex()
    warm_up(Bench(index), 7)  # returns at once: the search waits for release
    assert index.searched == []
    warm_up(Bench(index), 8)  # the same index: not warmed twice
    index.release.set()
    assert index.done.wait(5)
    assert index.searched == [(7, 1)]
    other = SlowIndex()
    other.release.set()
    warm_up(Bench(other), 9)  # another index (another workbench) is warmed on its own
    assert other.done.wait(5) and other.searched == [(9, 1)]


def test_a_failing_warm_up_is_no_error_and_no_index_is_no_work():
    index = SlowIndex(fails=True)
    index.release.set()
    warm_up(Bench(index), 1)
    assert index.done.wait(5)  # it ran, failed in its thread, and raised nothing here
    warm_up(Bench(None), 1)
