"""The Evals page in the real served UI (``python -m ui.serve``) and headless Debian chromium.

A seeded run file in the served data dir (with the documents it kept) is imported by the
page; a reviewer sees the verdict, the failing case with its reasons, the cited page with
its box, and the charts, but only an admin is offered "Run the gate".
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.support.eval_fixtures import (FAILING_CASE, FAILING_REASON, GOLDEN_LAB_CASE, GOLDEN_LAB_REASON, make_run,
                                 with_golden_lab, write_run)
from tests.support.browser_support import ADMIN, CHROMIUM, REVIEWER, sign_in  # fixtures: tests/browser/conftest.py
from tests.support.kept_runs import keep_fixture_documents

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not Path(CHROMIUM).exists(),
                       reason="Debian chromium is not installed (apt-get install chromium)"),
]
GOLDEN_CASES = Path(__file__).resolve().parents[2] / "golden" / "cases"


def _document(case_id: str, name: str) -> tuple[bytes, str]:
    from golden.documents import build
    from tests.support.eval_fixtures import fixture_document

    return build(case_id, name) if (case_id, name) == (GOLDEN_LAB_CASE, "report") else fixture_document(case_id, name)


def test_reviewer_sees_why_the_gate_failed(server, browser, tmp_path):  # noqa: F811
    if not (GOLDEN_CASES / f"{GOLDEN_LAB_CASE}.json").is_file():
        pytest.skip(f"golden case {GOLDEN_LAB_CASE} is not in this checkout")
    write_run(server["data"], make_run(run_id="20261130-091500-0a0a0a", verdict="pass",
                                       started_at="2026-11-30T09:15:00Z", finished_at="2026-11-30T09:15:39Z",
                                       commit="bb944d4"))
    # Kept as the gate keeps a run's documents: the lab case's is the real golden document.
    write_run(server["data"], keep_fixture_documents(server["data"], with_golden_lab(make_run()), _document))
    page = browser.new_page()
    sign_in(page, server["url"], REVIEWER)  # reading runs is everyone's; running the gate is an admin's
    page.get_by_role("link", name="Evals", exact=True).click()
    page.get_by_text("Failed cases (2)").wait_for(timeout=60_000)
    page.get_by_text(GOLDEN_LAB_REASON).first.wait_for(timeout=30_000)
    page.get_by_text(FAILING_REASON).first.wait_for(timeout=30_000)
    assert page.get_by_text(FAILING_CASE).first.is_visible()
    # the case drill-down opens on the first failed case: the lab, drawn from the document the run kept
    page.get_by_text("the cited place is boxed in red").first.wait_for(timeout=60_000)
    # the shared viewer draws the page with the one cited box over it
    page.locator(".cdw-box").first.wait_for(timeout=30_000)
    assert page.locator(".cdw-box").count() == 1
    # both charts render (Vega-Lite draws into a canvas or svg)
    charts = page.locator("[data-testid='stVegaLiteChart']")
    charts.nth(1).wait_for(timeout=30_000)
    assert charts.count() == 2
    page.get_by_text("Bottleneck:").wait_for()
    page.get_by_role("button", name="Download run (JSON)").wait_for()
    page.get_by_text("Running the gate needs the admin role").wait_for()
    assert page.get_by_role("button", name="Run the gate").count() == 0
    # Streamlit scrolls inside its own container: a tall window gets the whole page in one picture.
    page.set_viewport_size({"width": 1400, "height": 5200})
    page.wait_for_timeout(2000)  # let the charts redraw at the new size
    page.screenshot(path=os.environ.get("EVALS_SCREENSHOT", "/tmp/evals_page.png"), full_page=True)
    page.close()


def test_only_an_admin_is_offered_the_gate(server, browser):  # noqa: F811
    page = browser.new_page()
    sign_in(page, server["url"], ADMIN)
    page.get_by_role("link", name="Evals", exact=True).click()
    page.get_by_role("button", name="Run the gate").wait_for(timeout=60_000)
    assert page.get_by_text("Running the gate needs the admin role").count() == 0
    page.close()
