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
import re
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from tests.support.accounts import TEST_PASSWORD
from tests.support.browser_support import CHROMIUM, LOAD, NO_CHROMIUM, open_signed_in, settle, sign_in
from tests.support.served_app import MEDIA_MRN as MRN

pytestmark = pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=NO_CHROMIUM)
MEDIA = re.compile(rb"/media/[0-9a-f]{16,}\.[a-z0-9]+")


@pytest.fixture(scope="module")
def media_app(served):
    """The worker's shared app (tests/browser/conftest.py) and this module's document ids
    in it (tests/support/served_app.py, fill_media): url, {"patient", "pages", "batch"}."""
    return served.url, {"patient": served.patients["media"], **served.media}


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


def test_no_page_image_or_audit_file_waits_at_a_media_address(media_app, browser):
    url, ids = media_app
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


def test_the_access_audit_with_mrns_is_built_only_when_clicked(media_app, browser):
    url, ids = media_app
    page = browser.new_page()
    seen = MediaSeen(page)
    sign_in(page, url, "dr.ops", TEST_PASSWORD, patient=ids["patient"])
    page.get_by_text(f"MRN {MRN}").first.wait_for(timeout=LOAD)  # a chart view: an MRN in the audit
    open_signed_in(page, url, "operations")
    page.get_by_role("tab", name="Access audit").click()
    rows = downloaded_only_on_click(page, seen, "Download access audit (CSV)")
    assert any(r["event"] == "view_chart" and r["patient_mrn"] == MRN for r in rows), rows
    page.close()


def test_a_batch_read_in_parts_names_its_parts_as_literal_text(media_app, browser):
    url, ids = media_app
    page = browser.new_page()
    sign_in(page, url, "dr.reviewer", TEST_PASSWORD, patient=ids["patient"])
    page.get_by_text(f"MRN {MRN}").first.wait_for(timeout=LOAD)
    open_signed_in(page, url, "documents", patient=ids["patient"], document=ids["batch"])
    page.get_by_text("This file was read in parts").wait_for(timeout=LOAD)
    settle(page)
    buttons = page.locator("[data-testid='stButton'] button").filter(has_text="fdp.hl7")
    texts = [t.replace("\u2060", "") for t in buttons.all_inner_texts()]
    # each part's name as literal text, in stored order, then what reading it did ("read, 4 added to the chart")
    names = [f"**bold**[x](http://e)\ufffdfdp.hl7 · {m} · read, " for m in ("messages 1–2", "messages 3–4", "message 5")]
    assert len(texts) == len(names) and all(t.startswith(n) for t, n in zip(texts, names)), texts
    # Drawn as text: no link, no bold, no direction override anywhere on the page.
    assert buttons.locator("a, strong, b").count() == 0
    assert "\u202e" not in page.locator("body").inner_text()
    select = page.locator("[data-testid='stSelectbox']").filter(has_text="Document").first
    chosen = select.evaluate("""e => [e.innerText, ...Array.from(e.querySelectorAll('input'))
        .map(i => i.value || i.getAttribute('aria-label') || '')].join(' | ')""")
    assert "**bold**[x](http://e)\ufffdfdp.hl7 · " in chosen.replace("\u2060", ""), chosen
    page.close()
