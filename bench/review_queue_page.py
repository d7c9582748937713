"""Review queue page times with 500 items (AppTest, headless).

Builds a throwaway data dir: one typed lab report for a chart patient, then 500
needs-review findings cloned from its facts (five review reasons, same cited page),
and times the Review queue page: the first render, warm re-renders, a key press (`j`,
`k`: the Next / Previous buttons carry those keys) to the next item drawn, a decision
(Approve, which also opens the next item), and on the Documents page a click on a box to
its fact shown. Goal (issue 27): key press or decision to the next item drawn in at most
150 ms warm.

A key or a decision is timed twice. "In the browser" reruns what a browser's click
reruns: only the queue's fragment (the buttons are inside it), sent with that
fragment's id, as the browser sends it. "Whole page" is AppTest's own click, which
reruns every part of the page (sign-in, sidebar, tabs, alerts, audit): an upper bound.
The page's compiled code is kept between runs, as the server keeps it (AppTest alone
compiles the page again on every run, some 60 ms for this page that no server pays).

The floor is measured in the same run, on the same machine: one UPDATE and one INSERT
in a transaction on the same database (what a decision writes, at the least) plus one
rerun of an empty page through the same AppTest machinery. Each line prints its ratio
to that floor.
Usage: python bench/review_queue_page.py [--items 500] [--rounds 5]
"""

from __future__ import annotations

import argparse
import inspect
import os
import re
import sys
import tempfile
import time
from contextlib import contextmanager
from functools import partial
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
        boxed = [f.id for f in base if (f.citation or {}).get("bounding_box")]
        return patient["id"], reviewer, attached.document["id"], boxed
    finally:
        wb.close()


EMPTY_PAGE = "import streamlit as st\nst.markdown('.')\n"


def floor(data_dir: Path, rounds: int) -> tuple[float, float]:
    """(median seconds of one UPDATE + INSERT transaction on the bench's database, median
    seconds of one rerun of an empty page), measured before the page opens the database."""
    from core.services.workbench import open_workbench
    from domain.settings import reload_settings
    from streamlit.testing.v1 import AppTest

    wb = open_workbench(reload_settings())
    try:
        with wb.db.transaction() as cur:
            cur.execute("CREATE TABLE bench_floor (id INTEGER, written TIMESTAMP)")  # the throwaway data dir
            fact_id = cur.execute("SELECT min(id) FROM document_facts").fetchone()[0]
        writes = []
        for n in range(rounds * 4):
            t = time.perf_counter()
            with wb.db.transaction() as cur:
                cur.execute("UPDATE document_facts SET review_reason = review_reason WHERE id = ?", [fact_id])
                cur.execute("INSERT INTO bench_floor VALUES (?, now())", [n])
            writes.append(time.perf_counter() - t)
        with wb.db.transaction() as cur:
            cur.execute("DROP TABLE bench_floor")
    finally:
        wb.close()
    page = data_dir / "empty_page.py"
    page.write_text(EMPTY_PAGE)
    at = AppTest.from_file(str(page), default_timeout=60)
    at.run()
    reruns = []
    for _ in range(rounds * 4):
        t = time.perf_counter()
        at.run()
        reruns.append(time.perf_counter() - t)
    return median(writes), median(reruns)


def keep_compiled_scripts() -> None:
    """One script cache for every AppTest run, as the server has one for its life
    (AppTest makes a new one per run, so it compiles the page again each time)."""
    from streamlit.runtime.scriptrunner.script_cache import ScriptCache
    from streamlit.testing.v1 import app_test

    shared = ScriptCache()
    app_test.ScriptCache = lambda: shared


FRAGMENTS: dict[str, str] = {}  # fragment function's name -> its id, as the page registers them


def record_fragments() -> None:
    """Note each fragment's id as the page registers it: the id a browser sends back
    with a click on a widget inside that fragment."""
    from streamlit.runtime.fragment import MemoryFragmentStorage

    register = MemoryFragmentStorage.register

    def recording(storage, key, fragment, **kwargs):
        func = inspect.getclosurevars(fragment).nonlocals.get("non_optional_func")
        if func is not None:
            FRAGMENTS[func.__name__] = key
        return register(storage, key, fragment, **kwargs)

    MemoryFragmentStorage.register = recording


@contextmanager
def only_fragment(fid: str):
    """AppTest runs within it rerun only the fragment ``fid``, as a browser's click on a
    widget inside that fragment does (the rerun request names the fragment)."""
    from streamlit.testing.v1 import local_script_runner

    whole = local_script_runner.RerunData
    local_script_runner.RerunData = partial(whole, fragment_id_queue=[fid])
    try:
        yield
    finally:
        local_script_runner.RerunData = whole


def median(values: list[float]) -> float:
    values = sorted(values)
    return values[len(values) // 2]


def timed(step, rounds: int) -> list[float]:
    out = []
    for _ in range(rounds):
        t = time.perf_counter()
        step()
        out.append(time.perf_counter() - t)
    return sorted(out)


def line(name: str, values: list[float], base: float) -> str:
    mid = median(values)
    return (f"  {name:<42} median {mid * 1000:6.0f} ms (min {values[0] * 1000:.0f}, max {values[-1] * 1000:.0f})"
            f"  = {mid / base:5.1f} x floor")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--items", type=int, default=500)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        patient_id, reviewer, document_id, boxed = seed(Path(tmp) / "data", args.items)
        keep_compiled_scripts()
        record_fragments()
        write, rerun = floor(Path(tmp), args.rounds)
        base = write + rerun
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
        warm = timed(at.run, args.rounds)

        def press(label: str):
            def step():
                before = at.session_state["rq_current"]
                next(b for b in at.button if b.label == label).click().run()
                assert not at.exception, at.exception
                assert at.session_state["rq_current"] != before, f"{label} opened no other item"
            return step

        moves = sorted(timed(press("Next"), args.rounds) + timed(press("Previous"), args.rounds))
        queue = FRAGMENTS["to_review"]
        with only_fragment(queue):
            fragment_moves = sorted(timed(press("Next"), args.rounds) + timed(press("Previous"), args.rounds))

        def decide():
            before = at.session_state["rq_current"]
            next(b for b in at.button if b.label == "Approve").click().run()
            assert not at.exception, at.exception
            assert at.session_state["rq_current"] != before and any(s.value.startswith("Finding approved")
                                                                    for s in at.success)

        decisions = timed(decide, args.rounds)
        with only_fragment(queue):
            fragment_decisions = timed(decide, args.rounds)
        after = next(m.value for m in at.markdown if "items to review" in m.value)

        # The Documents page: a click on a box (the overlay's callback sets the chosen fact)
        # to that fact shown in the "Chosen:" line beside the page.
        at.query_params["document"] = str(document_id)
        at.switch_page("app_pages/documents.py").run()
        assert not at.exception, at.exception
        assert len(boxed) >= args.rounds, "the bench report has too few boxed facts for the rounds"

        def click_box(ids=iter(boxed)):
            fact_id = next(ids)
            at.session_state[f"doc-{document_id}:fact"] = fact_id
            at.run()
            assert not at.exception, at.exception
            assert any(c.value.startswith("Chosen:") for c in at.caption)

        clicks = timed(click_box, args.rounds)
    count_words = lambda text: re.search(r"\d+ of \d+ items to review", text).group(0)  # noqa: E731
    print(f"review queue page, {count_words(count)}")
    print(f"  floor: UPDATE + INSERT {write * 1000:.0f} ms + empty page rerun {rerun * 1000:.0f} ms "
          f"= {base * 1000:.0f} ms")
    print(f"  first render                               {first * 1000:6.0f} ms")
    print(line("warm render", warm, base))
    print(line("key j / k to the next item, in the browser", fragment_moves, base))
    print(line("decision (a) to the next item, browser", fragment_decisions, base))
    print(line("key j / k to the next item, whole page", moves, base))
    print(line("decision (a) to the next item, whole page", decisions, base))
    print(line("click on a box to its fact shown", clicks, base))
    print(f"  now {count_words(after)}")
    print("  goal: key press or decision to the next item drawn <= 150 ms warm, as the browser reruns it "
          "(the queue's fragment); the whole page is an upper bound")


if __name__ == "__main__":
    main()
