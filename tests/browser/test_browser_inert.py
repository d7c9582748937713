"""Documents must not drive the browser, in the real page: a chart whose documents carry
image, link and HTML payloads pointing at a dead loopback address (one of each format,
tests/support/inert_support.py) is opened in headless Debian chromium on the served app,
and no page fetches or links anything a document names. That every page draws those
payloads as inert text is tests/ui/test_inert_rendering.py (AppTest)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.accounts import TEST_PASSWORD
from tests.support.browser_support import CHROMIUM, NO_CHROMIUM, sign_in

pytestmark = pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=NO_CHROMIUM)


def test_a_real_browser_fetches_nothing_a_document_names(served, tmp_path_factory):
    from playwright.sync_api import sync_playwright

    from tests.support.browser_support import launch_chromium

    requests: list[str] = []
    with sync_playwright() as pw:
        context = launch_chromium(pw, tmp_path_factory.mktemp("chromium-profile"))
        context.on("request", lambda r: requests.append(r.url))
        page = context.new_page()
        # the chart of this module's payload documents (tests/support/served_app.py)
        sign_in(page, served.url, "dr.reviewer", TEST_PASSWORD, patient=served.patients["inert"])
        page.get_by_role("heading", name="Findings", exact=True).wait_for(timeout=60_000)
        page.get_by_text("Critical: Potassium ![x](http:").first.wait_for(timeout=30_000)  # shown as text
        page.wait_for_timeout(1500)
        _assert_nothing_live(page, requests)
        page.get_by_role("link", name="Review queue").click()
        page.get_by_text("items to review").first.wait_for(timeout=60_000)
        page.wait_for_timeout(1500)
        _assert_nothing_live(page, requests)
        page.get_by_role("link", name="Documents").first.click()
        page.get_by_text("Delete this document").first.wait_for(timeout=60_000)
        page.wait_for_timeout(1500)
        _assert_nothing_live(page, requests)
        context.close()


def _assert_nothing_live(page, requests: list[str]) -> None:
    assert not [u for u in requests if "127.0.0.1:9/" in u], requests
    live = page.evaluate("""() => [...document.querySelectorAll('img[src], a[href], script[src]')]
        .map(e => e.getAttribute('src') || e.getAttribute('href')).filter(u => u.includes('127.0.0.1:9'))""")
    assert live == []
