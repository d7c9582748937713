"""HL7 messages waiting for a chart, in the real served app (`python -m ui.serve` with
WORKBENCH_START_MLLP on) and headless Debian chromium: a lab interface sends two results
over MLLP for a patient under the lab's own MRN; a reviewer opens the Review queue's tab
(the count in its name), sees who each message names, puts one on the chart the
workbench suggests and sets the other aside; the app's worker reads the message put on the
chart, in its forkserver child as in production. The server is then stopped and the
database read: that job succeeded for the chart, the other message set aside, the views
audited."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pytest

from core.services.interfaces.mllp import frame, read_reply
from tests.support.browser_support import (CHROMIUM, LOAD, NO_CHROMIUM, REVIEWER, ROOT, add_account, chromium_context,
                                   free_port, full_page_screenshot, server_env, serving, settle, sign_in)
from tests.support.hl7_messages import msa, oru

pytestmark = pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=NO_CHROMIUM)  # browser: by folder
ARTIFACTS = Path(os.environ.get("WORKBENCH_TEST_ARTIFACTS") or ROOT / "test-artifacts" / "screenshots")
STEP = 30_000
TAB = "Messages waiting for a chart"


def send(port: int, *messages: bytes) -> None:
    """What a lab's interface engine does: each message framed, each answered before the next."""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        for data in messages:
            sock.sendall(frame(data))
            assert msa(read_reply(sock))[1] == "AA"


def test_a_reviewer_puts_one_message_on_a_chart_and_sets_another_aside(tmp_path, cli_init):
    data = cli_init(tmp_path / "data")
    mllp_port = free_port()
    # make run's environment plus the HL7 listener (off by default), the feature under test.
    env = server_env(data) | {"WORKBENCH_START_MLLP": "true", "WORKBENCH_MLLP_PORT": str(mllp_port)}
    add_account(env, REVIEWER, "reviewer")
    with serving(env) as (url, proc), chromium_context(tmp_path / "chromium-profile") as browser:
        # Marisol Quintero-Vale's glucose under the lab's MRN, and a result for someone no chart knows.
        send(mllp_port, oru("LAB-0001", mrn="WL-55501"),
             oru("LAB-0002", mrn="WL-90210", name="STRANGER^PAT", dob="19770707", value="95"))
        page = browser.new_page()
        sign_in(page, url, REVIEWER)
        page.get_by_role("link", name="Review queue", exact=True).click()
        page.get_by_role("tab", name=f"{TAB} (2)").click()
        page.get_by_text("Messages from interfaces waiting for a chart").wait_for(timeout=LOAD)
        page.get_by_text("QUINTERO-VALE, MARISOL").wait_for(timeout=STEP)
        page.get_by_text("STRANGER, PAT").wait_for()
        assert page.get_by_text("The MRN in the message is on no chart here.").count() == 2
        assert "unknown_patient" not in page.locator("body").inner_text()
        settle(page)
        full_page_screenshot(page, ARTIFACTS / "held-messages.png")

        first = page.locator(".st-key-held-1")
        first.get_by_role("combobox").click()
        suggested = page.get_by_role("option").first
        assert suggested.inner_text().startswith("Quintero-Vale, Marisol (DEMO-1001) — name and birth date agree")
        page.screenshot(path=str(ARTIFACTS / "held-messages-suggested-chart.png"))  # the open select, as seen
        suggested.click()
        settle(page)
        first.get_by_role("button", name="Put on this chart").click()
        page.get_by_text("The message was put on the chart of Quintero-Vale, Marisol (DEMO-1001)").wait_for(
            timeout=STEP)
        page.get_by_role("tab", name=f"{TAB} (1)").wait_for()  # the count follows; the tab stays open
        settle(page)
        assert page.get_by_text("QUINTERO-VALE, MARISOL", exact=True).count() == 0  # (the chart names differ in case)

        second = page.locator(".st-key-held-2")
        second.get_by_role("button", name="Not for this clinic").click()
        page.get_by_role("button", name="Set it aside").click()
        page.get_by_text("The message was set aside as not for this clinic.").wait_for(timeout=STEP)
        page.get_by_text("No message from an interface is waiting for a chart.").wait_for()
        page.get_by_role("tab", name=f"{TAB} (0)").wait_for()
        settle(page)
        full_page_screenshot(page, ARTIFACTS / "held-messages-done.png")
        page.close()
        # The decision queued a job; the app's worker reads it (the CLI's health reads its heartbeat).
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            queue = json.loads(subprocess.run([sys.executable, "-m", "core", "health", "--json"], cwd=ROOT, env=env,
                                              capture_output=True, text=True, check=True).stdout)["components"]["queue"]
            if queue["succeeded"] + queue["failed"] >= 1 and not queue["pending"] and not queue["running"]:
                break
            time.sleep(1)
        proc.terminate()
        proc.wait(20)

    con = duckdb.connect(str(data / "workbench.duckdb"), read_only=True)
    try:
        rows = con.execute("SELECT control_id, status, decided_by, job_id FROM inbound_messages ORDER BY id").fetchall()
        job = con.execute("SELECT j.status, p.mrn FROM processing_jobs j JOIN patients p ON p.id = j.patient_id "
                          "WHERE j.id = ?", [rows[0][3]]).fetchone()
        seen = con.execute("SELECT actor, object_id FROM access_events WHERE event = 'view_message' "
                           "ORDER BY object_id").fetchall()
    finally:
        con.close()
    assert [r[:3] for r in rows] == [("LAB-0001", "attached", REVIEWER), ("LAB-0002", "dismissed", REVIEWER)]
    assert job == ("succeeded", "DEMO-1001")
    assert seen == [(REVIEWER, "1"), (REVIEWER, "2")]  # each message's patient, written once
