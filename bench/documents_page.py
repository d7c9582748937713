"""Documents page render time for a 10-page document with 200 facts (AppTest, headless).

Builds a throwaway data dir: one 10-page typed lab PDF read by the real worker, then
enough facts cloned from its own (spread over the pages and the four box colours) to
make 200; times the Documents page (first render, warm re-renders) and, apart, the
viewer's service calls (document_view, page_image cold and warm). Target: under 1 s warm.
Usage: python bench/documents_page.py [--facts 200] [--pages 10] [--rounds 5]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

# Clones take turns through these, so every colour is drawn.
SHADES = [("verified", "promoted", True), ("document_fact", "not_promotable", True),
          ("needs_review", "needs_review", False)]


def ten_page_pdf(pages: int) -> tuple[bytes, object]:
    import pymupdf

    from golden.fixtures import LAB_CASES, render_lab

    case = LAB_CASES[0]
    out = pymupdf.open()
    for _ in range(pages):
        with pymupdf.open(stream=render_lab(case), filetype="pdf") as one:
            out.insert_pdf(one)
    data = out.tobytes()
    out.close()
    return data, case


def seed(data_dir: Path, facts: int, pages: int):
    from datetime import date

    from bench.accounts import bench_reviewer
    from core.services.ingest.ingestion import ingest_now
    from core.services.admin.patients import add_patient
    from core.services.workbench import open_workbench
    from domain.settings import reload_settings
    from storage import facts_repo

    os.environ["WORKBENCH_DATA_DIR"] = str(data_dir)
    os.environ["WORKBENCH_START_WORKER"] = "false"
    wb = open_workbench(reload_settings())
    try:
        data, case = ten_page_pdf(pages)
        p = case.patient
        reviewer = bench_reviewer(wb)
        patient = add_patient(wb, mrn=p.mrn, first=p.first, last=p.last, dob=date.fromisoformat(p.dob), sex=p.sex,
                              by=reviewer.username)
        attached = ingest_now(wb, patient_id=patient["id"], source="long-lab.pdf", data=data,
                              filename="long-lab.pdf", doc_type="lab_pdf", by=reviewer.username).attached
        doc_id = attached.document["id"]
        with wb.db.transaction() as cur:
            base = facts_repo.facts_for_document(cur, doc_id)
            clones = []
            for i in range(max(0, facts - len(base))):
                f = base[i % len(base)]
                certainty, promotion, active = SHADES[i % len(SHADES)]
                citation = dict(f.citation) | {"page": 1 + i % pages, "page_or_section": f"page {1 + i % pages}"}
                clones.append({k: getattr(f, k) for k in ("patient_id", "document_id", "job_id", "identity_check_id",
                                                 "doc_type", "fact_type", "fact_text", "structured_value",
                                                 "confidence", "scope", "context")}
                              | {"citation": citation, "certainty": certainty, "active": active,
                                 "promotion_status": promotion, "fact_fingerprint": f"bench-{i}",
                                 "clinical_content_fingerprint": f"bench-content-{i}"})
            facts_repo.insert_facts(cur, clones)
        return patient["id"], doc_id, reviewer
    finally:
        wb.close()


def _ms(samples: list[float]) -> str:
    samples = sorted(samples)
    return (f"median {statistics.median(samples) * 1000:6.0f} ms (min {samples[0] * 1000:.0f}, "
            f"max {samples[-1] * 1000:.0f})")


def services(rounds: int, doc_id: int, pages: int) -> None:
    from core.services.review import document_view as dv
    from core.services.workbench import open_workbench
    from domain.settings import get_settings

    wb = open_workbench(get_settings())
    try:
        dv.clear_caches()
        t = time.perf_counter()
        view = dv.document_view(wb, doc_id)
        cold_view = time.perf_counter() - t
        warm_view = []
        for _ in range(rounds):
            t = time.perf_counter()
            view = dv.document_view(wb, doc_id)
            warm_view.append(time.perf_counter() - t)
        t = time.perf_counter()
        dv.page_image(wb, doc_id, pages)  # from the pipeline's render file, into memory
        cold_page = time.perf_counter() - t
        warm_page = []
        for _ in range(rounds):
            t = time.perf_counter()
            dv.page_image(wb, doc_id, pages)
            warm_page.append(time.perf_counter() - t)
        print(f"  document_view ({len(view.facts)} facts, {len(view.boxes())} boxes on {view.page_count} pages)")
        print(f"    first {cold_view * 1000:6.0f} ms · warm {_ms(warm_view)}")
        print(f"  page_image: first {cold_page * 1000:.0f} ms · warm {_ms(warm_page)} · "
              f"pages rasterised by the viewer: {dv.render_stats['renders']}")
    finally:
        wb.close()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--facts", type=int, default=200)
    parser.add_argument("--pages", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        patient_id, doc_id, reviewer = seed(Path(tmp) / "data", args.facts, args.pages)
        import streamlit as st
        from streamlit.testing.v1 import AppTest

        from bench.accounts import sign_in

        st.cache_resource.clear()
        at = AppTest.from_file(str(ROOT / "Home.py"), default_timeout=300)
        at.session_state["patient_id"] = patient_id
        sign_in(at, reviewer)
        at.query_params["document"] = str(doc_id)
        at.run()
        t = time.perf_counter()
        at.switch_page("app_pages/documents.py").run()
        first = time.perf_counter() - t
        assert not at.exception, at.exception
        shown = len(at.get("dataframe")[0].value)
        warm = []
        for _ in range(args.rounds):
            t = time.perf_counter()
            at.run()
            warm.append(time.perf_counter() - t)
        assert not at.exception, at.exception
        print(f"documents page, {args.pages}-page document, {shown} facts listed")
        print(f"  first render        {first * 1000:7.0f} ms")
        print(f"  warm render         {_ms(warm)}")
        services(args.rounds, doc_id, args.pages)
        print("  (AppTest reruns the whole page; in a browser choosing a fact reruns only the viewer fragment)")


if __name__ == "__main__":
    main()
