"""Undo from the Audit tab in a real browser (issue 26): a finding that differs from
the chart is approved with "Replace the chart value", then undone from the Audit tab
with a reason; the page says in words what left the chart and what is current again,
and the chart (read by the CLI beside the running app) shows the old value again.

Its own server on a fresh data dir, made and served as `make run` does (production
defaults: jobs read in the forkserver child, the worker thread, the CLI's endpoint):
two reports of the same patient read through `core ingest`, the second with a
different first result. Screenshots in $WORKBENCH_TEST_ARTIFACTS (default
<repo>/test-artifacts/screenshots)."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import pytest

from golden.fixtures import LAB_CASES, render_lab
from tests.support.browser_support import (CHROMIUM, LOAD, NO_CHROMIUM, REVIEWER, ROOT, add_account,
                                           chromium_context, core_json, full_page_screenshot, open_signed_in, server_env,
                                           serving, settle, sign_in)

pytestmark = pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=NO_CHROMIUM)  # browser: by folder
ARTIFACTS = Path(os.environ.get("WORKBENCH_TEST_ARTIFACTS") or ROOT / "test-artifacts" / "screenshots")
STEP = 30_000
CASE = LAB_CASES[0]
PANEL, ROWS = CASE.panels[0]
FIRST = ROWS[0]  # the result the second report prints differently
CHANGED = "12.9"


def chart_values(env: dict[str, str]) -> list[str]:
    chart = core_json(env, "chart", "--patient", CASE.patient.mrn)
    return sorted(r["value"] for r in chart["labs"] if r["test_name"] == FIRST.test_name)


@pytest.fixture(scope="module")
def app(tmp_path_factory, cli_init):
    root = tmp_path_factory.mktemp("undo")
    data = cli_init(root / "data")
    env = server_env(data)
    add_account(env, REVIEWER, "reviewer")
    p = CASE.patient
    patient = core_json(env, "patient", "add", "--mrn", p.mrn, "--first", p.first, "--last", p.last, "--dob", p.dob)
    changed = dataclasses.replace(CASE, panels=((PANEL, (dataclasses.replace(FIRST, value=CHANGED), *ROWS[1:])),
                                                *CASE.panels[1:]))
    for name, case in (("first.pdf", CASE), ("second.pdf", changed)):
        (root / name).write_bytes(render_lab(case))
        report = core_json(env, "ingest", str(root / name), "--patient", p.mrn, "--doc-type", "lab_pdf")
        assert report["job"]["status"] == "succeeded", report["job"]
    with serving(env, log=root / "server.log") as (url, _proc):
        yield {"url": url, "env": env, "patient_id": patient["patient_id"]}


def test_a_replaced_chart_value_is_undone_from_the_audit_tab(app, tmp_path_factory):
    with chromium_context(tmp_path_factory.mktemp("chromium-profile")) as browser:
        page = browser.new_page()
        sign_in(page, app["url"], REVIEWER, patient=app["patient_id"])
        open_signed_in(page, app["url"], "review_queue", patient=app["patient_id"])
        page.get_by_role("button", name="Replace the chart value").wait_for(timeout=LOAD)
        settle(page)
        assert chart_values(app["env"]) == [FIRST.value]

        page.get_by_role("button", name="Replace the chart value").click()
        page.get_by_text("The chart now holds this finding's value", exact=False).first.wait_for(timeout=STEP)
        settle(page)
        assert chart_values(app["env"]) == [CHANGED]

        page.get_by_role("tab", name="Audit").click()
        undo = page.get_by_role("button", name="Undo decision")
        undo.first.wait_for(timeout=STEP)
        settle(page)
        assert page.get_by_text("approved finding “WBC”, replacing the chart's value".replace("WBC", FIRST.test_name),
                                exact=False).count()
        full_page_screenshot(page, ARTIFACTS / "review-audit-before-undo.png")
        page.get_by_role("textbox", name="Why undo it").first.fill("replaced the wrong value")
        page.get_by_role("textbox", name="Why undo it").first.press("Tab")  # the value reaches the app
        settle(page)
        undo.first.click()
        notice = f"{FIRST.test_name} {FIRST.value} {FIRST.unit} from first.pdf is current again"
        error = page.locator("[data-testid='stException'], [data-testid='stAlertContentError']")
        page.get_by_text(notice, exact=False).or_(error).first.wait_for(timeout=STEP)
        assert not error.count(), error.first.inner_text()
        assert page.get_by_text(f"{FIRST.test_name} {CHANGED} {FIRST.unit} removed from the chart",
                                exact=False).count()
        full_page_screenshot(page, ARTIFACTS / "review-audit-undo.png")
        assert chart_values(app["env"]) == [FIRST.value]

        # The finding is back in the queue with its three choices.
        page.get_by_role("tab", name="To review").click()
        page.get_by_role("button", name="Replace the chart value").wait_for(timeout=STEP)
        page.close()
