"""How well the coverage guard (``extract/coverage.py``) does its job, measured.

Three measures, each over the golden documents and the layouts of ``golden.coverage_layouts``
(read by the real normalizers and extractors, no database):

* **recall, by ablation**: every result a reader did read is dropped in turn, as if the
  reader had missed it; the guard must then report its place (the dropped fact's box on
  a page, its section elsewhere). ``recall = caught / dropped``.
* **precision, reader off**: the guard is run as if no reader had read anything; every
  region it reports must be a real printed result: on a golden document the place of a
  result a reader read, on a written layout a result of its ground truth. Others are
  false alarms. On golden documents this is a lower bound: a real result no reader reads
  counts as an alarm too (they are listed in ``unexplained``).
* **missed results caught**: on the written layouts, the printed results that no fact of
  today's readers covers, and the share of them the guard reports on the full reading.

``regions`` lists what the guard reports on the full reading of every document: on golden
documents each is a result the case files do not expect to be read, or a false alarm.

Run it: ``python -m golden.coverage_measure`` (``--json`` for the dict). The gate adds the
same figures to its run (``case_coverage`` per case, ``combine`` for the run), and
``bench/extraction_accuracy.py`` calls ``guard_scores()``.
"""

from __future__ import annotations

import json
import re
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from domain.content import NormalizedContent
from domain.models import BoundingBox, Citation, DocType, FactProposal
from domain.policy.facts.citations import verify_citations
from extract.coverage import UnreadRegion, joined_from, unread_content

# Fact types that are printed results, the ones whose loss the guard must catch.
RESULT_FACT_TYPES = frozenset({"lab_result", "vital_sign"})


@dataclass
class Sample:
    """One document as read: its content, the facts kept for it (citations verified)
    and, for a written layout, the results it prints (test, value)."""

    name: str
    content: NormalizedContent
    facts: list[FactProposal]
    truth: list[tuple[str, str]] | None = None  # None: a golden document (no ground truth)
    # A golden document whose case expects results left unread (``documents: {name:
    # {"unread_content": N}}``): the N places the guard reports are results, judged so by
    # the case's author.
    expected_unread: int | list[int] | None = None


@dataclass
class Tally:
    dropped: int = 0
    caught: int = 0
    alarms: int = 0  # regions reported with the reader off
    explained: int = 0  # of those, real results
    printed_unread: int = 0  # layouts: printed results no fact covers
    unread_caught: int = 0  # ... that the guard reports
    regions: list[dict[str, Any]] = field(default_factory=list)
    unexplained: list[dict[str, Any]] = field(default_factory=list)
    not_caught: list[dict[str, Any]] = field(default_factory=list)

    def add(self, other: "Tally") -> None:
        for name in ("dropped", "caught", "alarms", "explained", "printed_unread", "unread_caught"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.regions += other.regions
        self.unexplained += other.unexplained
        self.not_caught += other.not_caught


def _overlap(a: BoundingBox, b: BoundingBox) -> bool:
    return a.x < b.x + b.width and b.x < a.x + a.width and a.y < b.y + b.height and b.y < a.y + a.height


def _same_place(region: UnreadRegion, citation: Citation) -> bool:
    from extract.coverage import related_locators

    if region.page is not None or citation.page is not None:
        return (region.page == citation.page and region.box is not None and citation.bounding_box is not None
                and _overlap(region.box, citation.bounding_box))
    return related_locators(region.locator, citation.page_or_section)


def _joined_here(region: UnreadRegion, fact: FactProposal) -> bool:
    """A reading joined from two lines (systolic and diastolic rows) cites one of them;
    the other line's number is read too."""
    if region.page is not None or fact.citation.page is not None:
        return False
    return bool(joined_from(fact, region.locator) & set(re.findall(r"\d+(?:\.\d+)?", region.text)))


def _same_region(a: UnreadRegion, b: UnreadRegion) -> bool:
    if a.page is not None or b.page is not None:
        return a.page == b.page and a.box is not None and b.box is not None and _overlap(a.box, b.box)
    from extract.coverage import related_locators

    return related_locators(a.locator, b.locator)


def _count_ok(n: int, want: int | list[int] | None) -> bool:
    if not want:
        return False
    return n == want if isinstance(want, int) else want[0] <= n <= want[1]


def _shows(region: UnreadRegion, test: str, value: str) -> bool:
    words = region.text.lower()
    return test.lower() in words and value.lower() in words.split() + [w.strip(",.;()") for w in words.split()]


def _describe(sample: Sample, region: UnreadRegion) -> dict[str, Any]:
    return {"document": sample.name, "where": region.locator, "text": region.text[:160], "why": region.reason}


def score_sample(sample: Sample) -> Tally:
    tally = Tally()
    full = unread_content(sample.content, sample.facts)
    expected = _count_ok(len(full), sample.expected_unread)
    tally.regions = [_describe(sample, r) | {"expected": expected} for r in full]
    # Recall by ablation.
    for i, fact in enumerate(sample.facts):
        if fact.fact_type not in RESULT_FACT_TYPES:
            continue
        tally.dropped += 1
        regions = unread_content(sample.content, sample.facts[:i] + sample.facts[i + 1:])
        if any(_same_place(r, fact.citation) for r in regions):
            tally.caught += 1
        else:
            tally.not_caught.append({"document": sample.name, "where": fact.citation.page_or_section,
                                     "text": fact.citation.quote_or_value[:160]})
    # Precision with the reader off.
    results = [f for f in sample.facts if f.fact_type in RESULT_FACT_TYPES]
    judged = full if expected else []
    for region in unread_content(sample.content, []):
        tally.alarms += 1
        if sample.truth is not None:
            real = any(_shows(region, test, value) for test, value in sample.truth)
        else:
            real = (any(_same_place(region, f.citation) or _joined_here(region, f) for f in results)
                    or any(_same_region(region, j) for j in judged))
        if real:
            tally.explained += 1
        else:
            tally.unexplained.append(_describe(sample, region))
    # Printed results today's readers leave unread, and whether the guard says so.
    if sample.truth:
        read_text = " ".join(" ".join([f.citation.quote_or_value, f.fact_text, *map(str, f.structured_value.values())])
                             for f in sample.facts).lower()
        for test, value in sample.truth:
            if test.lower() in read_text and value.lower() in read_text:
                continue  # a fact names this test and value: read
            tally.printed_unread += 1
            if any(_shows(r, test, value) for r in full):
                tally.unread_caught += 1
            else:
                tally.not_caught.append({"document": sample.name, "where": "-", "text": f"{test} {value}"})
    return tally


def _ratio(num: int, den: int) -> float | None:
    return round(num / den, 4) if den else None


def combine(tallies: Iterable[Tally], **extra: Any) -> dict[str, Any]:
    """The guard's figures from per-document tallies."""
    total = Tally()
    for t in tallies:
        total.add(t)
    return {
        "precision": _ratio(total.explained, total.alarms),
        "recall": _ratio(total.caught, total.dropped),
        "regions": len(total.regions),
        "expected_regions": sum(bool(r.get("expected")) for r in total.regions),
        "dropped": total.dropped, "caught": total.caught,
        "alarms": total.alarms, "real_alarms": total.explained,
        "missed_results": total.printed_unread, "missed_results_caught": total.unread_caught,
        "missed_share_caught": _ratio(total.unread_caught, total.printed_unread),
        "unread_regions": total.regions[:50], "unexplained": total.unexplained[:50],
        "not_caught": total.not_caught[:50], **extra,
    }


def tally_to_dict(t: Tally) -> dict[str, Any]:
    return {k: getattr(t, k) for k in ("dropped", "caught", "alarms", "explained", "printed_unread", "unread_caught",
                                       "regions", "unexplained", "not_caught")}


def tally_from_dict(d: dict[str, Any]) -> Tally:
    return Tally(**{k: d[k] for k in ("dropped", "caught", "alarms", "explained", "printed_unread", "unread_caught",
                                      "regions", "unexplained", "not_caught") if k in d})


# --------------------------------------------------------------------------- reading documents

def read_sample(name: str, data: bytes, doc_type: str, truth: list[tuple[str, str]] | None = None) -> Sample:
    """Normalize and extract one document as the worker would (no database), keeping the
    facts whose citations verify."""
    from domain.limits import Limits
    from extract.normalize import normalize
    from extract.registry import extractor_for

    dt = DocType(doc_type)
    with tempfile.TemporaryDirectory(prefix="coverage-") as tmp:
        content = normalize(data, render_dir=Path(tmp), doc_type=dt, ocr_engine=None, limits=Limits())
    result = extractor_for(dt)(content, "documents:0")
    return Sample(name, content, verified_facts(content, result.facts), truth)


def verified_facts(content: NormalizedContent, facts: list[FactProposal]) -> list[FactProposal]:
    citations = verify_citations([f.citation for f in facts], content)
    return [f.model_copy(update={"citation": c}) for f, c in zip(facts, citations) if c.verified]


def layout_samples() -> list[Sample]:
    from golden.coverage_layouts import LAYOUTS

    return [read_sample(f"layout: {layout.name}", layout.build(), layout.doc_type,
                        [(r.test, r.value) for r in layout.truth]) for layout in LAYOUTS.values()]


def golden_samples(case_ids: list[str] | None = None) -> Iterable[Sample]:
    """Each document a golden case uploads with a doc_type, read as the worker would;
    documents that cannot be read (the bad-input cases) or need absent shared data are
    left out."""
    from domain.errors import WorkbenchError
    from golden.cases import load_cases
    from golden.documents import SharedDataMissing, build_spec

    seen: set[tuple[str, str]] = set()
    for case in load_cases(only=case_ids):
        refused = {int(i) for i in (case.expect.get("step_errors") or {})}  # never read by the product
        for index, step in enumerate(case.steps):
            if not step.upload or not step.doc_type or (case.id, step.upload) in seen or index in refused:
                continue
            seen.add((case.id, step.upload))
            try:
                data, _ = build_spec(case.documents[step.upload], case.patients, key=step.upload)
                sample = read_sample(f"{case.id}/{step.upload}", data, step.doc_type)
                sample.expected_unread = _expected_unread(case.expect, step.name or step.upload)
                yield sample
            except (WorkbenchError, SharedDataMissing):
                continue


def _expected_unread(expect: dict[str, Any], name: str) -> int | list[int] | None:
    return ((expect.get("documents") or {}).get(name) or {}).get("unread_content")


def case_coverage(obs: Any) -> dict[str, Any]:
    """A golden case's tally from what its run saw: each upload's content as the pipeline
    read it and the facts it stored (the gate adds these to the run)."""
    total = Tally()
    for name, upload in obs.uploads.items():
        content = obs.contents.get(upload.document_id)
        report = obs.reports.get(name)
        if content is None or report is None:
            continue
        facts = [FactProposal(fact_type=f["fact_type"], fact_text=f["fact_text"] or "-",
                              structured_value=f["structured_value"] or {},
                              citation=Citation.model_validate(f["citation"]), confidence=f["confidence"])
                 for f in report["facts"] if f["fact_type"] != "unread_content"
                 and (f.get("citation") or {}).get("verified")]
        total.add(score_sample(Sample(f"{obs.case.id}/{name}", content, facts,
                                      expected_unread=_expected_unread(obs.case.expect, name))))
    return tally_to_dict(total)


def scores_from(golden: list[Tally], written: list[Tally]) -> dict[str, Any]:
    """Precision and recall over both sets; ``regions`` and ``unread_regions`` are the
    golden documents' only (the written layouts are made to be missed): each is a result
    its case expects unread (``expected``), or one no case expects, or a false alarm;
    each set's figures on their own too."""
    out = combine(golden + written)
    mine = combine(golden)
    for key in ("regions", "expected_regions", "unread_regions"):
        out[key] = mine[key]
    out["golden"] = {k: v for k, v in mine.items() if not isinstance(v, list)}
    out["layouts"] = {k: v for k, v in combine(written).items() if not isinstance(v, list)}
    return out


def guard_scores(case_ids: list[str] | None = None, *, layouts: bool = True) -> dict[str, Any]:
    """The guard's precision, recall and regions over the golden documents (all, or
    those of ``case_ids``) and the written layouts; also each part on its own."""
    golden = [score_sample(s) for s in golden_samples(case_ids)]
    written = [score_sample(s) for s in layout_samples()] if layouts else []
    return scores_from(golden, written)


def main(argv: list[str]) -> int:
    scores = guard_scores([a for a in argv if not a.startswith("--")] or None)
    if "--json" in argv:
        print(json.dumps(scores, indent=1, default=str))
    else:
        from core.services.evals.report import coverage_guard_lines

        print("\n".join(coverage_guard_lines(scores)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
