"""Reciprocal rank fusion: exact scores, merging, de-duplication, determinism."""

from __future__ import annotations

import pytest

from retrieve.fusion import RRF_K, reciprocal_rank_fusion


def test_single_list_keeps_order_with_paper_scores():
    fused = reciprocal_rank_fusion([["a", "b", "c"]])
    assert [cid for cid, _ in fused] == ["a", "b", "c"]
    assert [score for _, score in fused] == pytest.approx([1 / 61, 1 / 62, 1 / 63])
    assert RRF_K == 60


def test_agreement_between_lists_beats_a_single_first_place():
    # "b" is second in both lists; "a" is first in one list only.
    fused = dict(reciprocal_rank_fusion([["a", "b"], ["c", "b"]]))
    assert fused["b"] == pytest.approx(2 / 62)
    assert fused["a"] == pytest.approx(1 / 61)
    assert max(fused, key=fused.get) == "b"


def test_merges_and_dedupes_across_lists():
    fused = reciprocal_rank_fusion([["x", "y"], ["y", "z"], ["z"]])
    ids = [cid for cid, _ in fused]
    assert sorted(ids) == ["x", "y", "z"]
    assert len(ids) == len(set(ids))


def test_repeat_inside_one_list_counts_once_at_best_rank():
    fused = dict(reciprocal_rank_fusion([["a", "b", "a"]]))
    assert fused["a"] == pytest.approx(1 / 61)
    assert fused["b"] == pytest.approx(1 / 62)


def test_ties_keep_first_seen_order():
    fused = reciprocal_rank_fusion([["p", "q"], ["q", "p"]])
    assert fused[0][1] == pytest.approx(fused[1][1])
    assert [cid for cid, _ in fused] == ["p", "q"]


def test_small_k_sharpens_the_head():
    fused = dict(reciprocal_rank_fusion([["a", "b"]], k=0))
    assert fused["a"] == pytest.approx(1.0)
    assert fused["b"] == pytest.approx(0.5)


def test_empty_inputs_and_bad_k():
    assert reciprocal_rank_fusion([]) == []
    assert reciprocal_rank_fusion([[], []]) == []
    with pytest.raises(ValueError):
        reciprocal_rank_fusion([["a"]], k=-1)
