"""The coverage guard as a clinician meets it in the served app: a letter whose results
the lab reader takes only in part is uploaded through the Documents page, read by the real worker,
and the page says it was read but that results were not, never a plain success."""

from __future__ import annotations

from pathlib import Path

import pytest

from golden.coverage_layouts import LAYOUTS
from tests.support.browser_support import CHROMIUM, NO_CHROMIUM, REVIEWER, sign_in

pytestmark = pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=NO_CHROMIUM)  # browser: by folder


def test_documents_page_says_results_were_not_read(served, browser, tmp_path):
    page = browser.new_page()
    sign_in(page, served.url, REVIEWER, patient=served.patients["coverage"])  # a chart of its own, empty
    page.get_by_text("Chart overview").first.wait_for(timeout=60_000)
    page.get_by_role("link", name="Documents", exact=True).click()
    page.get_by_text("No documents on this chart yet").wait_for(timeout=30_000)
    upload = tmp_path / "letter.pdf"  # results told in sentences, read in part
    upload.write_bytes(LAYOUTS["results in sentences"].build())
    page.locator("input[type='file']").set_input_files(str(upload))
    page.get_by_text("letter.pdf").first.wait_for(timeout=30_000)
    page.locator("[data-testid='stExpander'] [data-testid='stSelectbox']").first.click()
    page.get_by_role("option", name="Lab Report", exact=True).click()
    page.get_by_role("button", name="Upload 1 file").click()
    # Read by the worker in its job child; the notice and the status say what was not read.
    page.get_by_text("results were not read — see review").first.wait_for(timeout=120_000)
    page.get_by_text("printed on this document but not read").wait_for(timeout=30_000)
    picker = page.get_by_role("combobox", name="Document")
    assert "results were not read" in picker.input_value(), picker.input_value()
    page.close()
