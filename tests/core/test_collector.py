"""The serving process's collector setting: what exists once it is set up is frozen
and young collections wait for many more new objects; cycles are still collected."""

import gc

from core.collector import YOUNG_THRESHOLD, settle_for_serving

DEFAULTS = (700, 10, 10)  # CPython's


def test_settling_freezes_the_set_up_objects_and_raises_the_young_threshold():
    # Start from CPython's defaults: an app test earlier in this process may have
    # started the app's runtime, which settles the collector itself.
    before, frozen_before = gc.get_threshold(), gc.get_freeze_count()
    gc.unfreeze()
    gc.set_threshold(*DEFAULTS)
    try:
        settle_for_serving()
        assert gc.get_threshold()[0] == YOUNG_THRESHOLD > DEFAULTS[0]
        assert gc.get_freeze_count() > 0
        # a cycle made afterwards is still found by a collection
        a: list = []
        a.append(a)
        del a
        assert gc.collect() >= 1
    finally:
        gc.set_threshold(*before)
        if not frozen_before:
            gc.unfreeze()
