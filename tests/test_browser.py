"""The real UI in a real headless browser (Debian chromium driven by Playwright).

`python -m ui.serve` is what `make run` starts: the worker must be live before any
browser connects, and a clinician must be able to pick a patient, upload a file and
see it listed with its job status.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="Debian chromium is not installed (apt-get install chromium)"),
]
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    data = tmp_path_factory.mktemp("ui") / "data"
    port = _free_port()
    env = {**os.environ, "WORKBENCH_DATA_DIR": str(data), "STREAMLIT_SERVER_PORT": str(port),
           "STREAMLIT_SERVER_ADDRESS": "127.0.0.1", "WORKBENCH_WORKER_IDLE_SLEEP": "0.3"}
    subprocess.run([sys.executable, "-m", "core", "init", "--json"], cwd=ROOT, env=env, check=True,
                   capture_output=True)
    proc = subprocess.Popen([sys.executable, "-m", "ui.serve"], cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    url = f"http://127.0.0.1:{port}"
    deadline = time.time() + 90
    while time.time() < deadline:
        try:
            if urllib.request.urlopen(url + "/_stcore/health", timeout=2).read() == b"ok":
                break
        except OSError:
            time.sleep(0.3)
    else:
        proc.kill()
        pytest.fail("Streamlit did not come up: " + proc.stderr.read().decode()[-2000:])
    yield {"url": url, "env": env, "data": data}
    proc.terminate()
    proc.wait(20)


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    from playwright.sync_api import sync_playwright

    profile = tmp_path_factory.mktemp("chromium-profile")
    with sync_playwright() as pw:
        context = pw.chromium.launch_persistent_context(
            str(profile), executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS,
            viewport={"width": 1400, "height": 1000},
        )
        yield context
        context.close()


def test_worker_is_fresh_before_any_page_is_opened(server):
    proc = subprocess.run([sys.executable, "-m", "core", "health", "--json"], cwd=ROOT, env=server["env"],
                          capture_output=True, text=True, check=True)
    report = json.loads(proc.stdout)
    assert report["checks"]["worker_fresh"] is True, report
    assert report["components"]["database"]["detail"].startswith("held")


def test_clinician_uploads_a_document_and_sees_it_listed(server, browser, tmp_path):
    page = browser.new_page()
    page.goto(server["url"])
    page.get_by_text("Chart overview").first.wait_for(timeout=60_000)
    page.get_by_role("link", name="Documents").click()  # uploading lives on the Documents page
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
    page.get_by_role("link", name="Chart overview").click()
    page.get_by_text("Documents (1)").wait_for(timeout=30_000)
    page.screenshot(path=os.environ.get("UI_SCREENSHOT", str(tmp_path / "overview.png")), full_page=True)
    page.close()


def test_chosen_patient_survives_moving_between_pages(server, browser):
    page = browser.new_page()
    page.goto(server["url"])
    page.get_by_text("Chart overview").first.wait_for(timeout=60_000)
    page.locator("[data-testid='stSidebar'] [data-testid='stSelectbox']").click()
    page.get_by_role("option", name="Okonkwo").first.click()
    page.get_by_text("MRN DEMO-1003").first.wait_for(timeout=30_000)  # sidebar card and page caption
    page.get_by_role("link", name="Chat").click()
    page.get_by_text("Answers come only").wait_for(timeout=30_000)
    shown = page.locator("[data-testid='stSidebar'] [data-testid='stSelectbox']").evaluate(
        "e => e.innerText + ' ' + Array.from(e.querySelectorAll('input, [aria-label], [title]'))"
        ".map(i => (i.value || '') + ' ' + (i.getAttribute('aria-label') || '') + ' ' + (i.title || '')).join(' ')")
    assert "Okonkwo" in shown, shown
    page.get_by_test_id("stChatInputTextArea").fill("What is her latest A1c?")
    page.keyboard.press("Enter")
    page.get_by_text("No Hemoglobin A1c result found").wait_for(timeout=60_000)
    page.close()
