"""Review queue page render time with 500 items (AppTest, headless).

Builds a throwaway data dir: one typed lab report for a chart patient, then 500
needs-review findings cloned from its facts (five review reasons, same cited page),
and times the Review queue page: the first render, warm re-renders, and a decision
(Approve as verified, which also opens the next item). Target: under 1 s warm.
Usage: python bench/review_queue_page.py [--items 500] [--rounds 5]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

REASONS = ["read by OCR: check the value", "unit not recognised", "uncertain wording ('?')",
           "written outside the form's fields", "value outside the printable range"]


def seed(data_dir: Path, items: int):
    from datetime import date

    from bench.accounts import bench_reviewer
    from core.services.ingest.ingestion import ingest_now
    from core.services.admin.patients import add_patient
    from core.services.workbench import open_workbench
    from domain.settings import reload_settings
    from golden.fixtures import LAB_CASES, render_lab
    from storage import facts_repo

    os.environ["WORKBENCH_DATA_DIR"] = str(data_dir)
    os.environ["WORKBENCH_START_WORKER"] = "false"
    wb = open_workbench(reload_settings())
    try:
        case = LAB_CASES[0]
        p = case.patient
        reviewer = bench_reviewer(wb)
        patient = add_patient(wb, mrn=p.mrn, first=p.first, last=p.last, dob=date.fromisoformat(p.dob), sex=p.sex,
                              by=reviewer.username)
        attached = ingest_now(wb, patient_id=patient["id"], source="lab.pdf", data=render_lab(case),
                              filename="lab.pdf", doc_type="lab_pdf", by=reviewer.username).attached
        with wb.db.transaction() as cur:
            base = facts_repo.facts_for_document(cur, attached.document["id"])
            clones = []
            for i in range(items):
                f = base[i % len(base)]
                clones.append({k: getattr(f, k) for k in ("patient_id", "document_id", "job_id", "identity_check_id",
                                                 "doc_type", "fact_type", "fact_text", "structured_value",
                                                 "citation", "confidence", "scope", "context")}
                              | {"certainty": "needs_review", "active": False, "promotion_status": "needs_review",
                                 "review_reason": REASONS[i % len(REASONS)], "fact_fingerprint": f"bench-{i}",
                                 "clinical_content_fingerprint": f"bench-content-{i}"})
            facts_repo.insert_facts(cur, clones)
        return patient["id"], reviewer
    finally:
        wb.close()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--items", type=int, default=500)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        patient_id, reviewer = seed(Path(tmp) / "data", args.items)
        import streamlit as st
        from streamlit.testing.v1 import AppTest

        from bench.accounts import sign_in

        st.cache_resource.clear()
        at = AppTest.from_file(str(ROOT / "Home.py"), default_timeout=300)
        at.session_state["patient_id"] = patient_id
        sign_in(at, reviewer)
        at.run()
        t = time.perf_counter()
        at.switch_page("app_pages/review_queue.py").run()
        first = time.perf_counter() - t
        assert not at.exception, at.exception
        count = next(m.value for m in at.markdown if "items to review" in m.value)
        warm = []
        for _ in range(args.rounds):
            t = time.perf_counter()
            at.run()
            warm.append(time.perf_counter() - t)
        decisions = []
        for _ in range(args.rounds):
            approve = next(b for b in at.button if b.label == "Approve as verified")
            t = time.perf_counter()
            approve.click().run()
            decisions.append(time.perf_counter() - t)
            assert not at.exception, at.exception
        after = next(m.value for m in at.markdown if "items to review" in m.value)
    warm.sort()
    decisions.sort()
    print(f"review queue page, {count.strip('*')}")
    print(f"  first render        {first * 1000:7.0f} ms")
    print(f"  warm render median  {warm[len(warm) // 2] * 1000:7.0f} ms (min {warm[0] * 1000:.0f}, "
          f"max {warm[-1] * 1000:.0f})")
    print(f"  decision + next item median {decisions[len(decisions) // 2] * 1000:7.0f} ms "
          f"(min {decisions[0] * 1000:.0f}, max {decisions[-1] * 1000:.0f}); now {after.strip('*')}")
    print("  (AppTest runs the whole page on a click; in a browser a decision reruns only the queue fragment)")


if __name__ == "__main__":
    main()
