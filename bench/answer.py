"""Answer latency: `ask` on a patient with about 500 facts, offline (no drafter).

Builds a throwaway data dir, indexes the guideline corpus, ingests generated lab
reports (10 results each, a new collection date each time) plus an intake form
until the patient has >= 500 facts, embeds them, then times a mix of questions
(look-ups, attention questions with guideline retrieval, a refusal, a free-text
question answered through the patient-fact vectors, a follow-up).
Prints p50/p95 overall and per kind; target p95 <= 500 ms.
Usage: python bench/answer.py [--rounds N]
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import tempfile
import time
from datetime import date, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

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


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--facts", type=int, default=500)
    args = parser.parse_args()

    from domain.policy.questions.intent import parse_question
    from core.services.answer.answering import ask
    from core.services.answer.corpus import index_guideline_corpus
    from core.services.review.fact_vectors import index_pending
    from core.services.admin.access_audit import shell_user
    from core.services.ingest.ingestion import attach_and_extract
    from core.services.admin.patients import add_patient
    from core.services.ingest.worker import Worker
    from core.services.workbench import open_workbench
    from domain.settings import Settings
    from golden.fixtures import INTAKE_CASES, LAB_CASES, LAB_LAYOUTS, render_intake, render_lab, with_layout

    with tempfile.TemporaryDirectory() as tmp:
        wb = open_workbench(Settings(data_dir=Path(tmp)))
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
            with wb.db.cursor() as cur:
                facts = cur.execute("SELECT count(*) FROM document_facts WHERE patient_id = ?",
                                    [patient["id"]]).fetchone()[0]
            if facts >= args.facts:
                break
            day = (date(2024, 1, 1) + timedelta(days=9 * n)).isoformat()
            case = dataclasses.replace(with_layout(base, layouts[n % len(layouts)]), collection_date=day)
            attached = attach_and_extract(wb, patient_id=patient["id"], source=f"lab{n}.pdf", data=render_lab(case),
                                          filename=f"lab{n}.pdf", doc_type="lab_pdf", by=shell_user())
            job = worker.run_specific(attached.job["id"])
            assert job["status"] == "succeeded", job["error_code"]
            n += 1
        vectors = index_pending(wb, limit=10_000)
        print(f"patient with {facts} facts from {n} lab reports + 1 intake form ({vectors} vectors), "
              f"built in {time.perf_counter() - built:.1f} s")

        # Warm up once (model load, searcher build) as a running server would have.
        ask(wb, patient["id"], "What deserves attention in her labs?")
        timings: dict[str, list[float]] = {}
        for _ in range(args.rounds):
            previous = None
            for kind, question in QUESTIONS:
                start = time.perf_counter()
                result = ask(wb, patient["id"], question, previous=previous)
                timings.setdefault(kind, []).append((time.perf_counter() - start) * 1000)
                previous = result.parsed
            start = time.perf_counter()
            ask(wb, patient["id"], "and her LDL?", previous=parse_question("What is her latest A1c?"))
            timings.setdefault("follow_up", []).append((time.perf_counter() - start) * 1000)
        every = [t for ts in timings.values() for t in ts]
        print(f"ask over {len(every)} questions: p50 {pct(every, 0.5):.1f} ms, p95 {pct(every, 0.95):.1f} ms "
              f"(target p95 <= 500 ms)")
        for kind, ts in timings.items():
            print(f"  {kind:<10} p50 {pct(ts, 0.5):7.1f} ms  p95 {pct(ts, 0.95):7.1f} ms  (n={len(ts)})")
        wb.close()


if __name__ == "__main__":
    main()
