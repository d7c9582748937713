"""The real UI in a real headless browser (Debian chromium driven by Playwright).

`python -m ui.serve` is what `make run` starts: the worker must be live before any
browser connects, and a clinician must be able to sign in, pick a patient, upload a
file and see it listed with its job status. The app is the worker's shared one
(tests/browser/conftest.py); the upload goes to a chart of its own.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.support.browser_support import CHROMIUM, NO_CHROMIUM, REVIEWER, sign_in

pytestmark = pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=NO_CHROMIUM)  # browser: by folder


def test_worker_is_fresh_before_any_page_is_opened(served):
    # `core health --json` as it answered once the server was up, before any browser connected
    report = served.health_before_any_page
    assert report["checks"]["worker_fresh"] is True, report
    assert report["components"]["database"]["detail"].startswith("held")


def test_clinician_uploads_a_document_and_sees_it_listed(served, browser, tmp_path):
    page = browser.new_page()
    sign_in(page, served.url, REVIEWER, patient=served.patients["upload"])  # a chart of its own, empty
    page.get_by_text("Chart overview").first.wait_for(timeout=60_000)
    page.get_by_role("link", name="Documents", exact=True).click()  # uploading lives on the Documents page
    page.get_by_text("No documents on this chart yet").wait_for(timeout=30_000)
    upload = tmp_path / "stored-note.pdf"
    upload.write_bytes(b"%PDF-1.4\n% an unparseable pdf, stored under Other\n")
    page.locator("input[type='file']").set_input_files(str(upload))
    page.get_by_text("stored-note.pdf").first.wait_for(timeout=30_000)
    # one category select per chosen file, suggested from the file; its label is hidden
    page.locator("[data-testid='stExpander'] [data-testid='stSelectbox']").first.click()
    page.get_by_role("option", name="Other", exact=True).click()
    page.get_by_role("button", name="Upload 1 file").click()
    page.get_by_text("stored-note.pdf was stored; its category is not read automatically").wait_for(timeout=30_000)
    # the document picker now holds it (a select shows its choice as the combobox's value)
    picker = page.get_by_role("combobox", name="Document")
    picker.wait_for(timeout=30_000)
    assert picker.input_value().startswith("stored-note.pdf"), picker.input_value()
    page.get_by_role("link", name="Chart overview", exact=True).click()
    page.get_by_text("Documents (1)").wait_for(timeout=30_000)
    page.screenshot(path=os.environ.get("UI_SCREENSHOT", str(tmp_path / "overview.png")), full_page=True)
    page.close()


def test_chosen_patient_survives_moving_between_pages(served, browser):
    page = browser.new_page()
    sign_in(page, served.url, REVIEWER)
    page.get_by_text("Chart overview").first.wait_for(timeout=60_000)
    page.locator("[data-testid='stSidebar'] [data-testid='stSelectbox']").click()
    page.get_by_role("option", name="Okonkwo").first.click()
    page.get_by_text("MRN DEMO-1003").first.wait_for(timeout=30_000)  # sidebar card and page caption
    page.get_by_role("link", name="Chat", exact=True).click()
    page.get_by_text("Answers come only").wait_for(timeout=30_000)
    shown = page.locator("[data-testid='stSidebar'] [data-testid='stSelectbox']").evaluate(
        "e => e.innerText + ' ' + Array.from(e.querySelectorAll('input, [aria-label], [title]'))"
        ".map(i => (i.value || '') + ' ' + (i.getAttribute('aria-label') || '') + ' ' + (i.title || '')).join(' ')")
    assert "Okonkwo" in shown, shown
    page.get_by_test_id("stChatInputTextArea").fill("What is her latest A1c?")
    page.keyboard.press("Enter")
    page.get_by_text("No Hemoglobin A1c result found").first.wait_for(timeout=60_000)  # summary and section
    page.close()
