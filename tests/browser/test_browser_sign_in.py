"""Signing in to the real served app (`python -m ui.serve`) in headless Debian chromium.

A fresh data dir as `make run` leaves it (`core init`, the demo load): the app opens on
the sign-in form and nothing else, whatever page the address names; a wrong password is
refused; the initial admin's one-time password (the file `init` wrote) signs in and must
be changed first; then the overview shows who is signed in, a new tab of the browser is
signed in by its cookie, and signing out returns to the form. A client that knows only a
signed-in tab's session id (it is in every upload URL) gets the sign-in form and cannot
upload into it, while that tab goes on; a disabled account's page is blanked without a
click, and so is a page left past the idle limit (a server of its own with a short one).
The last test stops the server and reads the access audit the browser wrote. The tests
run in file order and build on one another.
"""

from __future__ import annotations

import os
import re
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from core.services.admin.accounts import SIGN_IN_REFUSED
from tests.support.browser_support import (CHROMIUM, LOAD, NO_CHROMIUM, PASSWORD, REVIEWER, ROOT, SESSION_COOKIE,
                                   add_account, core_json, full_page_screenshot, server_env, serving, settle,
                                   sign_in, sign_in_timed, signed_in_as, submit_sign_in)
from tests.support.stream_client import cookie_header, page_session_ids, run_page

pytestmark = pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=NO_CHROMIUM)  # browser: by folder
ARTIFACTS = Path(os.environ.get("WORKBENCH_TEST_ARTIFACTS") or ROOT / "test-artifacts" / "screenshots")
STEP = 30_000
NEW_PASSWORD = "a-password-of-my-own-42"
PAGES = ("", "documents", "review_queue", "chat", "evals", "operations")
LEAVING = "dr.leaving"  # an account disabled while its page is open
done: dict[str, Any] = {}


@pytest.fixture(scope="module")
def app(tmp_path_factory, demo_loaded):
    data = tmp_path_factory.mktemp("sign-in") / "data"
    demo_loaded(data)  # `core init`, REVIEWER (and an admin), `core demo`; the first admin's password unchanged
    env = server_env(data)
    # Where `core init` said it wrote the one-time password (tests/core/cli/test_cli_users runs init itself).
    password_file = data / "initial-admin-password.txt"
    assert password_file.stat().st_mode & 0o777 == 0o600
    one_time = re.search(r"^password: (\S+)$", password_file.read_text(), re.M).group(1)
    add_account(env, LEAVING, "reviewer")
    patients = core_json(env, "patient", "list")["patients"]
    private = [v for p in patients for v in (p["mrn"], p["first_name"], p["last_name"])]  # not before sign-in
    demo_patient = next(p["patient_id"] for p in patients if p["mrn"] == "DEMO-1001")  # the demo documents' patient
    with serving(env) as (url, proc):
        def stop() -> None:
            if proc.poll() is None:
                proc.terminate()
                proc.wait(20)

        yield {"url": url, "env": env, "data": data, "password_file": password_file, "one_time": one_time,
               "private": private, "demo_patient": demo_patient, "stop": stop}


@pytest.fixture
def page(browser):
    tab = browser.new_page()
    yield tab
    tab.close()


def shows_nothing_private(page, app) -> None:
    settle(page)
    text, html = page.locator("body").inner_text(), page.content()
    leaked = [v for v in app["private"] if v in text or v in html]
    assert not leaked, f"{page.url} shows {leaked} before anyone is signed in"


def test_the_app_opens_on_the_sign_in_form_and_nothing_else(app, page):
    for path in PAGES:  # a deep link to any page, with a patient named in it, gets the form too
        page.goto(f"{app['url']}/{path}?patient=1")
        page.get_by_role("button", name="Sign in").wait_for(timeout=LOAD)
        page.get_by_role("textbox", name="User name").wait_for()
        page.get_by_label("Password", exact=True).wait_for()
        shows_nothing_private(page, app)
        assert page.get_by_test_id("stSidebarNav").count() == 0, path
        assert page.get_by_role("link", name="Documents").count() == 0, path
        assert page.get_by_text("Signed in as").count() == 0, path
    page.goto(app["url"])
    page.get_by_role("button", name="Sign in").wait_for(timeout=LOAD)
    full_page_screenshot(page, ARTIFACTS / "sign-in.png")
    done["form"] = True


def test_a_wrong_password_is_refused(app, page):
    page.goto(app["url"])
    submit_sign_in(page, "admin", "not-the-password-at-all")
    page.get_by_test_id("stAlertContentError").get_by_text(SIGN_IN_REFUSED).wait_for(timeout=STEP)
    page.get_by_role("button", name="Sign in").wait_for()
    shows_nothing_private(page, app)
    assert page.get_by_text("Signed in as").count() == 0


def test_the_one_time_password_signs_in_and_must_be_changed(app, page):
    page.goto(f"{app['url']}/?patient={app['demo_patient']}")  # a link to a chart opens it once signed in
    submit_sign_in(page, "admin", app["one_time"])
    page.get_by_role("button", name="Change password").wait_for(timeout=STEP)
    page.get_by_text("Change your password").first.wait_for()
    # signed in, but nothing of a patient and no way around the form until the password is changed
    signed_in_as(page, "admin").wait_for()
    shows_nothing_private(page, app)
    assert page.get_by_test_id("stSidebarNav").count() == 0
    page.get_by_label("Current password", exact=True).fill(app["one_time"])
    page.get_by_label("New password", exact=True).fill(NEW_PASSWORD)
    page.get_by_label("New password again", exact=True).fill(NEW_PASSWORD)
    page.get_by_role("button", name="Change password").click()
    page.get_by_role("heading", name="Chart overview").wait_for(timeout=LOAD)
    page.get_by_test_id("stSidebar").get_by_text("Signed in as admin (admin)").wait_for(timeout=STEP)
    page.get_by_test_id("stSidebarNav").wait_for()
    page.get_by_text("MRN DEMO-1001").first.wait_for(timeout=STEP)
    assert not app["password_file"].exists(), "the spent one-time password file is still there"
    full_page_screenshot(page, ARTIFACTS / "signed-in-overview.png")
    done["changed"] = True


def test_the_cookie_signs_in_a_new_tab_and_sign_out_returns_to_the_form(app, page):
    if "changed" not in done:
        pytest.skip("needs the password changed by the previous test")
    # The browser holds the sign-in: a new tab (a new Streamlit session) is signed in without the form.
    page.goto(app["url"])
    page.get_by_role("heading", name="Chart overview").wait_for(timeout=LOAD)
    page.get_by_test_id("stSidebar").get_by_text("Signed in as admin (admin)").wait_for(timeout=STEP)
    cookie = next(c for c in page.context.cookies() if c["name"] == SESSION_COOKIE)
    assert cookie["httpOnly"] and cookie["sameSite"] == "Strict" and cookie["path"] == "/", cookie
    page.get_by_role("button", name="Sign out").click()
    page.get_by_role("button", name="Sign in").wait_for(timeout=STEP)
    page.get_by_text("Signed out.").wait_for(timeout=STEP)
    shows_nothing_private(page, app)
    assert page.get_by_text("Signed in as").count() == 0
    full_page_screenshot(page, ARTIFACTS / "signed-out.png")
    nav_after_sign_out = page.get_by_test_id("stSidebarNav").count()
    page.reload()  # the cookie's sign-in has ended: the form again
    page.get_by_role("button", name="Sign in").wait_for(timeout=LOAD)
    shows_nothing_private(page, app)
    # the one-time password was spent with the change
    submit_sign_in(page, "admin", app["one_time"])
    page.get_by_test_id("stAlertContentError").get_by_text(SIGN_IN_REFUSED).wait_for(timeout=STEP)
    done["signed_out"] = True
    # the page list goes with the session: the form is all a signed-out browser is shown
    assert nav_after_sign_out == 0, "the sidebar still lists the pages after signing out"


def test_a_session_id_alone_does_not_open_a_signed_in_session(app, browser):
    """Issue 21, item 1: Streamlit resumes any session whose id a WebSocket names, and
    the id is in every upload URL. A client naming a signed-in tab's id without that
    browser's cookie gets a session of its own, with the sign-in form; the tab goes on."""
    page = browser.new_page()
    sessions = page_session_ids(page)
    try:
        sign_in(page, app["url"], REVIEWER, patient=app["demo_patient"])
        page.get_by_text("MRN DEMO-1001").first.wait_for(timeout=LOAD)
        settle(page)
        victim = sessions[-1]
        attacker = run_page(app["url"], session_id=victim)
        assert attacker.session_id != victim, "the server resumed the signed-in session for a stranger"
        assert "Sign in" in attacker.buttons and "Signed in as" not in attacker.text, attacker.text[:2000]
        leaked = [v for v in app["private"] if v in attacker.text]
        assert not leaked, f"a client with only the session id was shown {leaked}"
        # nor can it put a file into that session (the upload URL names the session)
        put = urllib.request.Request(f"{app['url']}/_stcore/upload_file/{victim}/probe", data=b"x", method="PUT")
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(put, timeout=30)
        assert refused.value.code == 403 and b"Not your session" in refused.value.read()
        # The signed-in tab is untouched: still signed in, the chart still there after a click.
        page.get_by_role("link", name="Documents", exact=True).click()
        page.get_by_role("heading", name="Documents").first.wait_for(timeout=LOAD)
        signed_in_as(page, REVIEWER).wait_for(timeout=STEP)
        assert sessions[-1] == victim
        # The browser's own cookie does reopen it (what a reconnecting tab sends).
        own = run_page(app["url"], session_id=victim, cookie=cookie_header(page.context))
        assert own.session_id == victim and f"Signed in as **{REVIEWER}** (reviewer)" in own.text, own.text[:2000]
        done["hijack"] = True
    finally:
        page.close()


def test_a_disabled_accounts_page_is_blanked_without_a_click(app, browser):
    """Issue 21, item 6: `core user disable U` while U's chart is open blanks it on
    time, not at U's next click."""
    page = browser.new_page()
    try:
        sign_in(page, app["url"], LEAVING, PASSWORD, patient=app["demo_patient"])
        page.get_by_text("MRN DEMO-1001").first.wait_for(timeout=LOAD)
        settle(page)
        core_json(app["env"], "user", "disable", LEAVING, "--by", "admin")  # handed to the running app
        # no click, no reload: the page checks every 10 s at most (15-minute idle limit)
        page.get_by_text("Your account is no longer active; ask an administrator.").wait_for(timeout=STEP)
        page.get_by_role("button", name="Sign in").wait_for(timeout=STEP)
        shows_nothing_private(page, app)
        assert page.get_by_text("Signed in as").count() == 0
    finally:
        page.close()


def test_the_access_audit_holds_what_the_browser_did(app):
    if "signed_out" not in done:
        pytest.skip("needs the sign-in steps above")
    app["stop"]()  # DuckDB admits one process: read once the app has let go
    import duckdb

    con = duckdb.connect(str(app["data"] / "workbench.duckdb"), read_only=True)
    try:
        admin_id = con.execute("SELECT id FROM users WHERE username = 'admin'").fetchone()[0]
        rows = con.execute("SELECT event, actor, user_id FROM access_events WHERE channel = 'ui' "
                           "ORDER BY id").fetchall()
    finally:
        con.close()
    # (admin's disabling of LEAVING, from the command line, is not one of their sign-in steps)
    events = [event for event, actor, _ in rows if actor == "admin" and event != "user_disabled"]
    # refused, the one-time password, its change, a chart view, sign-out, the spent one refused
    for expected in ("sign_in_failed", "sign_in", "password_changed", "view_chart", "sign_out"):
        assert expected in events, (expected, events)
    assert events.index("sign_in_failed") < events.index("sign_in") < events.index("password_changed")
    assert events[-2:] == ["sign_out", "sign_in_failed"], events
    assert events.count("sign_in") == 1, events  # the new tab was signed in by the cookie, not a password
    assert all(user_id == admin_id for _, actor, user_id in rows if actor == "admin"), rows
    if "hijack" in done:  # the stranger's attempt on the reviewer's session, by whom it targeted
        assert ("session_refused", REVIEWER) in {(event, actor) for event, actor, _ in rows}, rows


# ----------------------------------------------------------------------------- the idle limit, on time

IDLE_MINUTES = 0.1  # 6 s; the page then checks every second


@pytest.fixture(scope="module")
def quick_idle_app(tmp_path_factory, cli_init):
    data = cli_init(tmp_path_factory.mktemp("idle") / "data")
    env = {**server_env(data), "WORKBENCH_IDLE_TIMEOUT_MINUTES": str(IDLE_MINUTES), "WORKBENCH_LOAD_DEMO": "false"}
    add_account(env, REVIEWER, "reviewer")
    with serving(env) as (url, _proc):
        yield url


def test_a_page_left_past_the_idle_limit_is_blanked_without_a_click(quick_idle_app, browser):
    """Issue 21, item 6: the chart does not stay on screen until the next click; the
    page's own checks (a fragment's timer) never count as activity, or it would never
    end."""
    page = browser.new_page()
    try:
        shown = sign_in_timed(page, quick_idle_app, REVIEWER, patient=1)  # the last activity: the limit counts from it
        page.get_by_text("MRN DEMO-1001").first.wait_for(timeout=LOAD)
        notice = page.get_by_text(f"Signed out after {IDLE_MINUTES:g} minutes without activity.")
        notice.wait_for(timeout=STEP)  # nothing is clicked while we wait
        assert time.monotonic() - shown >= IDLE_MINUTES * 60 - 2  # not before the limit
        page.get_by_role("button", name="Sign in").wait_for()
        settle(page)
        text, html = page.locator("body").inner_text(), page.content()
        assert "DEMO-1001" not in text and "DEMO-1001" not in html
        assert page.get_by_text("Signed in as").count() == 0
        page.reload()  # the cookie's sign-in is over too
        page.get_by_role("button", name="Sign in").wait_for(timeout=LOAD)
        assert page.get_by_text("Signed in as").count() == 0
    finally:
        page.close()
