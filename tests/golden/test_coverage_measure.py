"""The coverage guard's measure (golden/coverage_measure.py) on the layouts written for it:
figures that can fail, and the eval report's words for them."""

from __future__ import annotations

from core.services.evals.report import coverage_guard_lines
from golden.coverage_measure import Sample, combine, layout_samples, score_sample, scores_from


def test_the_written_layouts_are_measured_with_their_ground_truth():
    samples = {s.name: s for s in layout_samples()}
    quiet = score_sample(samples["layout: numbers but no result"])
    assert quiet.alarms == 0 and quiet.regions == []  # letterhead, contacts, doses, targets: no result
    cumulative = score_sample(samples["layout: two-panel cumulative sheet"])
    assert cumulative.alarms >= 7 and cumulative.explained == cumulative.alarms
    # Results told in sentences are still read only in part: every one missed is caught.
    sentences = score_sample(samples["layout: results in sentences"])
    assert sentences.unread_caught == sentences.printed_unread > 0
    scores = scores_from([], [score_sample(s) for s in samples.values()])
    assert scores["precision"] == 1.0 and scores["missed_share_caught"] == 1.0
    assert scores["regions"] == 0  # the layouts' unread places are not golden regions


def test_a_guard_that_reported_nothing_would_score_no_recall():
    sample = layout_samples()[1]  # the grid its reader reads in full
    blind = score_sample(Sample(sample.name, sample.content, sample.facts, sample.truth))
    assert blind.dropped > 0 and blind.caught == blind.dropped
    # Drop the page's words: the dropped results can no longer be found, and it shows.
    sample.content.pages[0].words = []
    empty = score_sample(sample)
    assert empty.caught == 0 and combine([empty])["recall"] == 0.0


def test_the_report_says_the_figures_in_words():
    lines = coverage_guard_lines({"precision": 0.5, "alarms": 4, "real_alarms": 2, "recall": 1.0, "dropped": 3,
                                  "caught": 3, "regions": 1, "expected_regions": 0, "missed_results": 0,
                                  "unread_regions": [{"document": "case/doc", "where": "page 1",
                                                      "text": "Potassium 6.1", "expected": False}]})
    assert lines[0].startswith("Coverage guard: precision 50.0% (2 of 4")
    assert "recall 100.0% (3 of 3" in lines[0]
    assert any("no case expects it: case/doc · page 1: Potassium 6.1" in line for line in lines)
    assert coverage_guard_lines(None) == []


def test_the_accuracy_bench_pairs_a_trend_result_with_its_own_date():
    # A faxed flowsheet's "34 L" on 2 December was read "3414" and held for review; the
    # bench had paired the expected result with the 1 December eGFR (read right, charted)
    # and counted a misread charted as verified.
    from bench.extraction_accuracy import _best_fields

    matcher = {"fact_type": "lab_result", "where": {"test_name": "eGFR", "value": "34", "unit": "mL/min",
                                                    "abnormal_flag": "low", "collection_date": "2026-12-02"}}
    first = {"fact_type": "lab_result", "structured_value": {"test_name": "eGFR", "value": "30", "unit": "mL/min",
                                                             "abnormal_flag": "low", "collection_date": "2026-12-01"}}
    held = {"fact_type": "lab_result", "structured_value": {"test_name": "eGFR", "value": "3414", "unit": "mL/min",
                                                            "abnormal_flag": "normal", "collection_date": "2026-12-02"}}
    assert _best_fields(matcher, [first, held]) == (3, held)
