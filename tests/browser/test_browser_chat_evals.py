"""Chat and Evals in the real served UI (the shared app, production defaults) and headless
Debian chromium.

Chat: a chart filled through the CLI beside the running app (as an operator would:
`core patient add`, `core ingest`; the app's endpoint takes the writes) holds a lab
report and two intake forms, one saying NKDA and one a penicillin allergy. A suggested
question is asked in one click; the answer opens with its two-line summary, guideline
passages folded; an allergy question flags the disagreement citing both forms.
Evals: runs written into the data dir (older than test_browser_evals' runs, so theirs
stays the newest) draw the trend as two series, two runs of one day as two points.
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import pytest

from tests.support.browser_support import ADMIN, CHROMIUM, LOAD, NO_CHROMIUM, full_page_screenshot, sign_in
from tests.support.cli_support import as_json, cli
from tests.support.eval_fixtures import make_run, write_run

pytestmark = [pytest.mark.browser, pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=NO_CHROMIUM)]
ARTIFACTS = Path(os.environ.get("BROWSER_ARTIFACTS", "/tmp/browser-chat-evals"))


def _chart(server, tmp_path) -> int:
    from golden.fixtures import INTAKE_CASES, LAB_CASES, render_intake, render_lab
    from golden.ground_truth import ExpectedAllergy

    lab = LAB_CASES[2]  # Odalys Brannigan: a high glucose among others
    intake = INTAKE_CASES[0]  # the same person
    p = lab.patient
    added = as_json(cli(server["data"], "patient", "add", "--mrn", p.mrn, "--first", p.first, "--last", p.last,
                        "--dob", p.dob, "--sex", p.sex, "--json"))
    common = dict(notes=(), review_terms=(), margin_note=None, past_history="")
    files = {
        "lab-report.pdf": ("lab_pdf", render_lab(lab)),
        "intake-march.pdf": ("intake_form", render_intake(dataclasses.replace(
            intake, name="nkda", allergies_printed="NKDA", allergies=(), **common))),
        "intake-june.pdf": ("intake_form", render_intake(dataclasses.replace(
            intake, name="pcn", allergies_printed="Penicillin (hives)", phone="(541) 555-0142",
            allergies=(ExpectedAllergy("Penicillin", "hives"),), **common))),
    }
    for name, (doc_type, data) in files.items():
        path = tmp_path / name
        path.write_bytes(data)
        report = as_json(cli(server["data"], "ingest", str(path), "--patient", p.mrn, "--doc-type", doc_type,
                             "--by", "dr.reviewer", "--json"))
        assert report["job"]["status"] == "succeeded", report["job"]
    return added["patient_id"]


def test_a_suggested_question_answers_with_its_summary_and_a_flag_cites_both_forms(server, browser, tmp_path):
    patient_id = _chart(server, tmp_path)
    page = browser.new_page()
    sign_in(page, server["url"], ADMIN, patient=patient_id)
    page.get_by_role("link", name="Chat", exact=True).click()
    suggestion = page.get_by_role("button", name="What deserves attention in her labs?")
    suggestion.wait_for(timeout=LOAD)
    assert page.get_by_role("button", name="What allergies are on record?").count() == 1
    suggestion.click()
    answer = page.locator("[data-testid='stChatMessage']").nth(1)
    # the first answer of a server loads the embedder and reranker: give it time on a busy machine
    answer.get_by_text("How this answer was made").wait_for(timeout=3 * LOAD)
    alert = answer.locator("[data-testid='stAlert']").first
    lines = [line for line in alert.locator("p").inner_text().splitlines() if line.strip()]
    # two lines: the answer's first finding (the chart check's alert comes first), then what else
    assert len(lines) == 2 and lines[0].startswith("Chart alert: Potassium"), lines
    assert lines[1].startswith("Also: 1 disagreement in the record to check; ") and "guideline passage" in lines[1]
    guidelines = answer.locator("[data-testid='stExpander']").filter(has_text="Guideline Evidence")
    assert guidelines.count() == 1, answer.inner_text()[-1500:]
    # folded: its passages take no room until opened
    assert guidelines.locator("[data-testid='stExpanderDetails']").first.is_hidden()
    full_page_screenshot(page, ARTIFACTS / "chat-summary-folded-guidelines.png")

    page.get_by_role("button", name="What allergies are on record?").click()
    second = page.locator("[data-testid='stChatMessage']").nth(3)
    second.get_by_text("Records disagree").first.wait_for(timeout=LOAD)
    text = second.inner_text()
    assert "1 disagreement in the record to check" in text
    assert "intake-march.pdf" in text and "intake-june.pdf" in text, text  # both sources, by name
    full_page_screenshot(page, ARTIFACTS / "chat-records-disagree.png")
    page.close()


def test_the_trend_draws_whole_set_and_chosen_case_runs_as_two_series(server, browser):
    data = server["data"]
    # A passing whole-set run, then on one day a failing run of chosen cases and a failing
    # whole-set run: "The right facts reach the chart" falls to 80% in both series.
    for run_id, at, verdict, selection in (
            ("20261120-090000-0b0b01", "2026-11-20T09:00:00Z", "pass", None),
            ("20261121-083000-0b0b02", "2026-11-21T08:30:00Z", "fail", ["lab-classic-clean"]),
            ("20261121-161500-0b0b03", "2026-11-21T16:15:00Z", "fail", None)):
        run = make_run(run_id=run_id, verdict=verdict, started_at=at, finished_at=at.replace(":00Z", ":40Z"))
        write_run(data, run | {"selection": selection})
    page = browser.new_page()
    sign_in(page, server["url"], ADMIN)
    page.get_by_role("link", name="Evals", exact=True).click()
    page.get_by_text("Pass rate of every check across runs").wait_for(timeout=LOAD)
    trend = page.locator("[data-testid='stVegaLiteChart']").first
    trend.wait_for(timeout=LOAD)
    page.wait_for_timeout(1500)  # let Vega draw
    # Vega draws SVG (its words are text nodes) or a canvas (its words are in the chart's
    # accessible description): either way the legend names both series.
    legend = " ".join(trend.locator("svg text").evaluate_all("els => els.map(e => e.textContent)")) + \
        " ".join(trend.locator("[aria-label], [aria-roledescription]").evaluate_all(
            "els => els.map(e => e.getAttribute('aria-label') || '')"))
    assert "Whole golden set" in legend and "Chosen cases only" in legend, legend[:500]
    trend.scroll_into_view_if_needed()
    trend.screenshot(path=str(ARTIFACTS / "evals-trend-two-series.png"))
    page.close()
