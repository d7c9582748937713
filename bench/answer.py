"""Answer latency by chart size: `ask` on a patient with about N facts, offline (no drafter).

For each size, builds a data dir, indexes the guideline corpus, ingests generated lab
reports (10 results each, a new collection date each time) plus an intake form until
the patient has >= N facts, embeds them, then times a mix of questions (look-ups,
attention questions with guideline retrieval, a refusal, a free-text question answered
through the patient-fact vectors, a follow-up) after one warm-up question, as a running
server would have answered before; then the first question after a write (the record
version bumped, so what is kept per version is read and built again).

The floor, measured in the same run on the same chart: the one SELECT that reads the
patient's usable facts (``storage.evidence_repo.usable_facts``), which any answer over
the record pays at least once per change of the record. Prints p50/p95 per size and
kind, the floor and the ratio, and the largest size's p95 over the smallest's
(sub-linear in facts: less than the ratio of the sizes). Target p95 <= 500 ms.
Usage: python bench/answer.py [--facts 500 5000] [--rounds N] [--keep DIR]
(--keep: build each size's data dir under DIR once and reuse it on later runs.)
"""

from __future__ import annotations

import argparse
import gc
import dataclasses
import sys
import tempfile
import time
from datetime import date, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

DEFAULT_GC = (700, 10, 10)  # CPython's collector thresholds

QUESTIONS = [
    ("lookup", "What is her latest A1c?"),
    ("lookup", "List her medications"),
    ("lookup", "Any allergies?"),
    ("attention", "What deserves attention in her labs?"),
    ("guideline", "How often should her A1c be checked?"),
    ("refusal", "Should I increase her atorvastatin dose?"),
    ("free_text", "cough and fever"),
    ("lookup", "Show all her cholesterol results"),
]


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def build_chart(wb, n_facts: int) -> tuple[int, str]:
    """A patient with >= ``n_facts`` facts (lab reports plus an intake form), embedded;
    returns the patient id and a line describing the chart."""
    from core.services.admin.access_audit import shell_user
    from core.services.admin.patients import add_patient
    from core.services.answer.corpus import index_guideline_corpus
    from core.services.ingest.ingestion import attach_and_extract
    from core.services.ingest.worker import Worker
    from core.services.review.fact_vectors import index_pending
    from golden.fixtures import INTAKE_CASES, LAB_CASES, LAB_LAYOUTS, render_intake, render_lab, with_layout

    index_guideline_corpus(wb)
    base = LAB_CASES[5]
    p = base.patient
    patient = add_patient(wb, mrn=p.mrn, first=p.first, last=p.last, dob=date.fromisoformat(p.dob), sex=p.sex,
                          by=shell_user())
    worker = Worker(wb, worker_id="bench")
    layouts = sorted(LAB_LAYOUTS)
    intake = attach_and_extract(wb, patient_id=patient["id"], source="intake.pdf", data=render_intake(INTAKE_CASES[1]),
                                filename="intake.pdf", doc_type="intake_form", by=shell_user())
    worker.run_specific(intake.job["id"])
    built = time.perf_counter()
    n = 0
    while True:
        facts = count_facts(wb, patient["id"])
        if facts >= n_facts:
            break
        day = (date(2024, 1, 1) + timedelta(days=9 * n)).isoformat()
        case = dataclasses.replace(with_layout(base, layouts[n % len(layouts)]), collection_date=day)
        attached = attach_and_extract(wb, patient_id=patient["id"], source=f"lab{n}.pdf", data=render_lab(case),
                                      filename=f"lab{n}.pdf", doc_type="lab_pdf", by=shell_user())
        job = worker.run_specific(attached.job["id"])
        assert job["status"] == "succeeded", job["error_code"]
        n += 1
    vectors = index_pending(wb, limit=100_000)
    return patient["id"], (f"{facts} facts from {n} lab reports + 1 intake form ({vectors} vectors), "
                           f"built in {time.perf_counter() - built:.1f} s")


def count_facts(wb, patient_id: int) -> int:
    with wb.db.cursor() as cur:
        return cur.execute("SELECT count(*) FROM document_facts WHERE patient_id = ?", [patient_id]).fetchone()[0]


def floor_ms(wb, patient_id: int, rounds: int) -> list[float]:
    """The one SELECT of the patient's usable facts, timed alone."""
    from storage import evidence_repo

    out = []
    for _ in range(rounds):
        start = time.perf_counter()
        with wb.db.cursor() as cur:
            evidence_repo.usable_facts(cur, patient_id)
        out.append((time.perf_counter() - start) * 1000)
    return out


def run_size(n_facts: int, rounds: int, keep: Path | None) -> dict[str, float]:
    from domain.policy.questions.intent import parse_question
    from core.collector import settle_for_serving
    from core.services.answer.answering import ask
    from core.services.workbench import open_workbench
    from domain.settings import Settings
    from storage import record_version

    with tempfile.TemporaryDirectory() as tmp:
        data_dir = keep / f"facts-{n_facts}" if keep else Path(tmp)
        reuse = keep is not None and (data_dir / "built").exists()
        wb = open_workbench(Settings(data_dir=data_dir))
        try:
            if reuse:
                patient_id = int((data_dir / "built").read_text())
                line = f"{count_facts(wb, patient_id)} facts (data dir reused from {data_dir})"
            else:
                patient_id, line = build_chart(wb, n_facts)
                if keep is not None:
                    (data_dir / "built").write_text(str(patient_id))
            print(f"== chart of {n_facts} facts: {line}")
            # Warm up once (model load, searcher build) as a running server would have, and
            # set the garbage collector as the server does once it is set up.
            ask(wb, patient_id, "What deserves attention in her labs?")
            settle_for_serving()
            timings: dict[str, list[float]] = {}
            for _ in range(rounds):
                previous = None
                for kind, question in QUESTIONS:
                    start = time.perf_counter()
                    result = ask(wb, patient_id, question, previous=previous)
                    timings.setdefault(kind, []).append((time.perf_counter() - start) * 1000)
                    previous = result.parsed
                start = time.perf_counter()
                ask(wb, patient_id, "and her LDL?", previous=parse_question("What is her latest A1c?"))
                timings.setdefault("follow_up", []).append((time.perf_counter() - start) * 1000)
            # The first question after a write pays for reading and building the record again.
            # Also with CPython's collector defaults, alternating, for the gain of
            # core.collector (the server's setting) on this path.
            after_write, after_write_default = [], []
            for _ in range(max(rounds, 3)):
                for settled, out in ((False, after_write_default), (True, after_write)):
                    if settled:
                        settle_for_serving()
                    else:
                        gc.unfreeze()
                        gc.set_threshold(*DEFAULT_GC)
                    with wb.db.transaction() as cur:
                        record_version.bump(cur, [patient_id], "bench")
                    start = time.perf_counter()
                    ask(wb, patient_id, "What is her latest A1c?")
                    out.append((time.perf_counter() - start) * 1000)
            floor = floor_ms(wb, patient_id, max(rounds * 3, 10))
        finally:
            wb.close()
    every = [t for ts in timings.values() for t in ts]
    p50, p95, f50 = pct(every, 0.5), pct(every, 0.95), pct(floor, 0.5)
    print(f"ask over {len(every)} questions: p50 {p50:.1f} ms, p95 {p95:.1f} ms (target p95 <= 500 ms)")
    for kind, ts in timings.items():
        print(f"  {kind:<10} p50 {pct(ts, 0.5):7.1f} ms  p95 {pct(ts, 0.95):7.1f} ms  (n={len(ts)})")
    print(f"  first question after a write (the record read and built again): p50 {pct(after_write, 0.5):.1f} ms "
          f"(n={len(after_write)}); with the collector's defaults {pct(after_write_default, 0.5):.1f} ms")
    print(f"floor (the SELECT of the patient's usable facts): p50 {f50:.1f} ms; ask p50 / floor {p50 / f50:.1f}x, "
          f"ask p95 / floor {p95 / f50:.1f}x")
    return {"p50": p50, "p95": p95, "floor": f50}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--facts", type=int, nargs="+", default=[500, 5000], help="chart sizes (facts)")
    parser.add_argument("--keep", type=Path, default=None, help="build each size's data dir here once, then reuse it")
    args = parser.parse_args()

    results = {n: run_size(n, args.rounds, args.keep) for n in sorted(set(args.facts))}
    if len(results) > 1:
        small, large = min(results), max(results)
        a, b = results[small], results[large]
        print(f"== {large} facts / {small} facts ({large / small:.0f}x the facts): ask p50 {b['p50'] / a['p50']:.1f}x, "
              f"p95 {b['p95'] / a['p95']:.1f}x; floor {b['floor'] / a['floor']:.1f}x "
              f"(sub-linear: under {large / small:.0f}x)")


if __name__ == "__main__":
    main()
