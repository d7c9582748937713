"""What a real browser is given of a patient, on the served app (issue 21, items 2 and 5).

Item 2: Streamlit serves its media store at ``/media/<id>`` to anyone with the address.
Every ``/media/`` address the app hands this browser (in its websocket messages, and in
the requests the page then makes) is collected while a reviewer opens a three-page
document with its thumbnails and the review audit, and an admin the access audit: there
is none, the page images are ``data:`` URLs, and a download's address exists only once
its button is clicked, for a few seconds (ui/media.py).

Item 5: an HL7 batch uploaded as ``**bold**[x](http://e)<RLO>fdp.hl7`` and read in parts
names its parts, on the buttons that open them, as the literal text, in stored order.
"""

from __future__ import annotations

import csv
import io
import os
import re
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from tests.support.browser_support import (CHROMIUM, LOAD, NO_CHROMIUM, ROOT, chromium_context, open_signed_in, server_env,
                                   serving, settle, sign_in)
from tests.conftest import TEST_PASSWORD

pytestmark = pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=NO_CHROMIUM)
MRN = "DEMO-1001"
BATCH_NAME = "**bold**[x](http://e)\u202efdp.hl7"
MEDIA = re.compile(rb"/media/[0-9a-f]{16,}\.[a-z0-9]+")


def _fill(data: Path) -> dict[str, int]:
    """Documents and a review decision, made before the server opens the data dir (one
    writer): a three-page report, another patient's report rejected by a reviewer, and
    the batch read in parts of two messages."""
    from core.services.ingest.ingestion import attach_and_extract
    from core.services.admin.patients import get_patient
    from core.services.review.decisions import decide_identity
    from core.services.workbench import open_workbench
    from core.services.ingest.worker import Worker
    from domain.settings import reload_settings
    from golden.fixtures import LAB_CASES, render_lab
    from tests.conftest import seed_test_accounts
    from tests.support.file_builders import pdf
    from tests.core.ingest.test_hl7_batch_split import batch

    saved = {k: os.environ.get(k) for k in ("WORKBENCH_DATA_DIR", "WORKBENCH_HL7_MESSAGES_PER_JOB",
                                            "WORKBENCH_JOB_PROCESS")}
    os.environ.update(WORKBENCH_DATA_DIR=str(data), WORKBENCH_HL7_MESSAGES_PER_JOB="2", WORKBENCH_JOB_PROCESS="off")
    try:
        wb = open_workbench(reload_settings())
        try:
            seed_test_accounts(wb)
            patient = get_patient(wb, mrn=MRN)
            ids = {"patient": patient["id"]}

            def read(data_: bytes, doc_type: str, name: str):
                attached = attach_and_extract(wb, patient_id=patient["id"], source=name, data=data_, filename=name,
                                              doc_type=doc_type, by="dr.reviewer")
                for job in attached.jobs:
                    assert Worker(wb).run_specific(job["id"])["status"] == "succeeded", name
                return attached

            ids["pages"] = read(pdf(pages=3), "lab_pdf", "three-pages.pdf").document["id"]
            wrong = read(render_lab(LAB_CASES[0]), "lab_pdf", "someone-elses-lab.pdf")
            from core.services.review.facts import document_report

            check = document_report(wb, wrong.document["id"])["identity"]["identity_check_id"]
            decide_identity(wb, check, approve=False, by="dr.reviewer", reason="another patient's report")
            attached = read(batch(5), "hl7v2_message", BATCH_NAME)
            assert len(attached.parts) == 3
            ids["batch"] = attached.document["id"]
            return ids
        finally:
            wb.close()
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        reload_settings()


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    data = tmp_path_factory.mktemp("media") / "data"
    env = {**server_env(data), "WORKBENCH_HL7_MESSAGES_PER_JOB": "2"}
    subprocess.run([sys.executable, "-m", "core", "init", "--json"], cwd=ROOT, env=env, check=True,
                   capture_output=True, timeout=300)
    ids = _fill(data)
    with serving(env) as (url, _proc):
        yield url, ids


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    with chromium_context(tmp_path_factory.mktemp("chromium-profile")) as context:
        yield context


class MediaSeen:
    """Every /media/ address handed to a page: in a websocket message or requested."""

    def __init__(self, page) -> None:
        self.sent: list[str] = []
        self.requested: list[str] = []
        page.on("websocket", lambda ws: ws.on("framereceived", self._frame))
        page.on("request", lambda r: self.requested.append(r.url) if "/media/" in r.url else None)

    def _frame(self, payload) -> None:
        raw = payload if isinstance(payload, bytes) else str(payload).encode()
        self.sent += [m.decode() for m in MEDIA.findall(raw)]

    def all(self) -> list[str]:
        """The addresses, as /media/<id>.<ext>, in the order first seen."""
        found = self.sent + [m.decode() for u in self.requested for m in MEDIA.findall(u.encode())]
        return list(dict.fromkeys(found))


def _status(url: str) -> int:
    """What anyone gets for ``url``: a plain request, no cookie, no session."""
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.status
    except urllib.error.HTTPError as exc:
        return exc.code


def downloaded_only_on_click(page, seen: MediaSeen, button: str) -> list[dict[str, str]]:
    """The CSV behind ``button``: no /media/ address exists for it before the click, and
    the click downloads it. Its rows."""
    download = page.get_by_role("button", name=button)
    download.wait_for(timeout=LOAD)
    settle(page)
    page.wait_for_timeout(1000)
    assert seen.all() == [], f"/media/ addresses handed to the page before any click: {seen.all()}"
    with page.expect_download(timeout=LOAD) as fetched:
        download.click()
    return list(csv.DictReader(io.StringIO(Path(fetched.value.path()).read_text())))


def test_no_page_image_or_audit_file_waits_at_a_media_address(served, browser):
    url, ids = served
    page = browser.new_page()
    seen = MediaSeen(page)
    sign_in(page, url, "dr.reviewer", TEST_PASSWORD, patient=ids["patient"])
    page.get_by_text(f"MRN {MRN}").first.wait_for(timeout=LOAD)

    # A three-page report: the page under its boxes, then the thumbnails, all inline.
    open_signed_in(page, url, "documents", patient=ids["patient"], document=ids["pages"])
    page.locator(".cdw-img[src^='data:image/']").wait_for(timeout=LOAD)
    settle(page)
    page.get_by_text("Page thumbnails").click()
    thumbs = page.locator("[data-testid='stImage'] img")
    thumbs.nth(2).wait_for(timeout=LOAD)
    sources = thumbs.evaluate_all("els => els.map(e => e.getAttribute('src'))")
    assert len(sources) == 3 and all(s.startswith("data:image/png;base64,") for s in sources), \
        [s[:60] for s in sources]
    assert all(w == 90 for w in thumbs.evaluate_all("els => els.map(e => e.naturalWidth)"))

    # The review audit: its CSV is offered, and no address for it exists before the click.
    open_signed_in(page, url, "review_queue", patient=ids["patient"])
    page.get_by_text("items to review").first.wait_for(timeout=LOAD)
    page.get_by_role("tab", name="Audit").click()
    rows = downloaded_only_on_click(page, seen, "Download CSV")
    assert any("rejected patient match" in r["summary"] for r in rows), rows
    (address,) = seen.all()  # the click made the one address, for this file
    assert address.endswith(".csv")
    # Fetchable for a moment (the browser fetched it at once), then gone for everyone.
    from ui.media import KEEP_SECONDS

    time.sleep(KEEP_SECONDS + 3)
    assert _status(url + address) == 404
    page.close()


def test_the_access_audit_with_mrns_is_built_only_when_clicked(served, browser):
    url, ids = served
    page = browser.new_page()
    seen = MediaSeen(page)
    sign_in(page, url, "dr.ops", TEST_PASSWORD, patient=ids["patient"])
    page.get_by_text(f"MRN {MRN}").first.wait_for(timeout=LOAD)  # a chart view: an MRN in the audit
    open_signed_in(page, url, "operations")
    page.get_by_role("tab", name="Access audit").click()
    rows = downloaded_only_on_click(page, seen, "Download access audit (CSV)")
    assert any(r["event"] == "view_chart" and r["patient_mrn"] == MRN for r in rows), rows
    page.close()


def test_a_batch_read_in_parts_names_its_parts_as_literal_text(served, browser):
    url, ids = served
    page = browser.new_page()
    sign_in(page, url, "dr.reviewer", TEST_PASSWORD, patient=ids["patient"])
    page.get_by_text(f"MRN {MRN}").first.wait_for(timeout=LOAD)
    open_signed_in(page, url, "documents", patient=ids["patient"], document=ids["batch"])
    page.get_by_text("This file was read in parts").wait_for(timeout=LOAD)
    settle(page)
    buttons = page.locator("[data-testid='stButton'] button").filter(has_text="fdp.hl7")
    texts = [t.replace("\u2060", "") for t in buttons.all_inner_texts()]
    assert texts == [f"**bold**[x](http://e)\ufffdfdp.hl7 · {m} · read"
                     for m in ("messages 1–2", "messages 3–4", "message 5")], texts
    # Drawn as text: no link, no bold, no direction override anywhere on the page.
    assert buttons.locator("a, strong, b").count() == 0
    assert "\u202e" not in page.locator("body").inner_text()
    select = page.locator("[data-testid='stSelectbox']").filter(has_text="Document").first
    chosen = select.evaluate("""e => [e.innerText, ...Array.from(e.querySelectorAll('input'))
        .map(i => i.value || i.getAttribute('aria-label') || '')].join(' | ')""")
    assert "**bold**[x](http://e)\ufffdfdp.hl7 · " in chosen.replace("\u2060", ""), chosen
    page.close()
