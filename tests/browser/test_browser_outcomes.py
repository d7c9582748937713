"""Outcomes first, in a real browser (issue 26), on the demo load served as `make run`
serves it: the overview opens with what needs attention (alerts, critical results) above
the documents; its documents table says what happened to each ("held: names another
patient", "read, 10 added to the chart", a page of another patient), never "verified";
the Documents page says the same; in the fax packet the page of another patient carries
a red banner and the cover page no warning. Sign-in with no chart named opens none when
this account viewed none, then the one it viewed last. Screenshots go to
$WORKBENCH_TEST_ARTIFACTS (default <repo>/test-artifacts/screenshots)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.support.browser_support import (CHROMIUM, LOAD, NO_CHROMIUM, REVIEWER, ROOT, core_json,
                                           chromium_context, full_page_screenshot, grid_rows, open_signed_in,
                                           server_env, serving, settle, sign_in)

pytestmark = pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=NO_CHROMIUM)
ARTIFACTS = Path(os.environ.get("WORKBENCH_TEST_ARTIFACTS") or ROOT / "test-artifacts" / "screenshots")
STEP = 30_000
MRN = "DEMO-1001"
WRONG, TYPED, FAX, REPEAT = ("demo-wrong-patient-lab.pdf", "demo-lab-typed.pdf", "demo-fax-packet.pdf",
                             "demo-lab-repeat.pdf")


@pytest.fixture(scope="module")
def demo(tmp_path_factory, demo_loaded):
    """`core init`, a reviewer (and an admin), `core demo`; then the app served with make run's defaults."""
    data = tmp_path_factory.mktemp("outcomes") / "data"
    loaded = demo_loaded(data)["demo"]
    env = server_env(data)
    documents = {d["filename"]: d["document_id"] for d in loaded["documents"] if d["patient_mrn"] == MRN}
    patient_id = next(p["patient_id"] for p in core_json(env, "patient", "list")["patients"] if p["mrn"] == MRN)
    with serving(env) as (url, _proc):
        yield {"url": url, "documents": documents, "patient": patient_id}


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    with chromium_context(tmp_path_factory.mktemp("chromium-profile")) as context:
        tab = context.new_page()
        yield tab
        tab.close()


def shot(page, name: str) -> Path:
    return full_page_screenshot(page, ARTIFACTS / f"{name}.png")


def test_sign_in_opens_no_chart_nobody_chose(demo, page):
    sign_in(page, demo["url"], REVIEWER)
    page.get_by_text("Choose a patient in the sidebar").wait_for(timeout=LOAD)
    assert page.get_by_test_id("stSidebar").get_by_text("MRN ").count() == 0  # no chart open, none viewed
    assert page.get_by_role("heading", name="Documents (").count() == 0
    page.get_by_text("sample documents are loaded").first.wait_for(timeout=LOAD)  # the welcome knows the demo
    shot(page, "outcomes-sign-in-no-patient")


def test_the_overview_opens_with_what_needs_attention_and_what_happened(demo, page):
    open_signed_in(page, demo["url"], "", patient=demo["patient"])
    page.get_by_text("Needs attention").first.wait_for(timeout=LOAD)
    settle(page)
    attention = page.get_by_text("Needs attention").first.bounding_box()
    documents = page.get_by_role("heading", name="Documents (").first.bounding_box()
    critical = page.get_by_text("Critical: Potassium 6.8").first.bounding_box()
    assert attention["y"] < critical["y"] < documents["y"]
    assert critical["y"] < 1000  # above the fold of a 1000 px window
    grid = page.locator("[data-testid='stDataFrame']").filter(has=page.locator("th", has_text="what happened")).first
    rows = {r["file"]: r for r in grid_rows(grid, count=len(demo["documents"]))}
    assert rows[WRONG]["what happened"] == "held: names another patient"
    assert rows[TYPED]["what happened"] == "read, 10 added to the chart"
    assert rows[FAX]["what happened"].startswith("page 3 names another patient")
    assert "conflict with the chart" in rows[REPEAT]["what happened"]
    assert not any("verified" in r["what happened"] for r in rows.values())
    shot(page, "outcomes-overview")


def test_the_documents_page_says_what_happened(demo, page):
    open_signed_in(page, demo["url"], "documents", patient=demo["patient"], document=demo["documents"][WRONG])
    page.get_by_text("What happened").first.wait_for(timeout=LOAD)
    settle(page)
    cell = page.locator("[data-testid='stMarkdownContainer']").filter(has_text="What happened").first
    assert "held: names another patient" in cell.inner_text()
    shot(page, "outcomes-documents-held")


def test_the_fax_page_of_another_patient_carries_a_red_banner_and_the_cover_none(demo, page):
    open_signed_in(page, demo["url"], "documents", patient=demo["patient"], document=demo["documents"][FAX])
    page.get_by_text("Facts (").first.wait_for(timeout=LOAD)
    settle(page)
    # page 1: the cover sheet, said quietly; no warning or error box about it
    page.get_by_text("Page 1: cover sheet").wait_for(timeout=STEP)
    alerts = page.locator("[data-testid='stAlert']").all_inner_texts()
    assert not any("Page 1" in a or "classified" in a for a in alerts), alerts
    shot(page, "outcomes-fax-cover")
    page.get_by_role("radio", name="3 (", exact=False).click()
    banner = page.locator("[data-testid='stAlertContentError']").filter(has_text="Page 3 names another patient")
    banner.wait_for(timeout=STEP)
    settle(page)
    shot(page, "outcomes-fax-page-3")


def test_signing_in_again_opens_the_chart_viewed_last(demo, page):
    sign_in(page, demo["url"], REVIEWER)
    page.get_by_test_id("stSidebar").get_by_text(f"MRN {MRN}").wait_for(timeout=LOAD)
    page.get_by_role("heading", name="Chart overview").wait_for(timeout=LOAD)
    shot(page, "outcomes-sign-in-last-patient")
