"""Starting the real app and a headless Debian chromium for the browser tests, and
signing in to it the way a person does.

Signing in: the password check ends with the browser holding an HttpOnly session cookie
(docs/access.md), and that cookie is the sign-in: every full page load (``page.goto``, a
reload, a new tab of the same browser context) opens a new Streamlit session that the
cookie signs in at once, without the form. One browser context holds one cookie, so one
account at a time, as one real browser does. A tab signs in through the real form
(``sign_in``: the context's cookie is dropped first, so the form shows) and then either
moves within its session by the sidebar links, or opens a page as a link does
(``open_signed_in``): a new session, signed in by the cookie when it is the tab's
account's, else through the form again. The tests want the second for a page with
``?document=``-style parameters: within one session a select keeps its earlier choice
and overrides the link. Should the app open its default page after sign-in rather than
the one the address named, ``open_signed_in`` then moves there within the new session
(``go``: what the browser's back and forward buttons do).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator
from urllib.parse import urlencode, urlparse

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
NO_CHROMIUM = "Debian chromium is not installed (apt-get install chromium)"
LOAD = 60_000  # ms: first render of a page (server warm-up, page images)
STEP_MS = 30_000  # ms: one rerun after a click
# The accounts the browser tests act as, made with `core user add` on their throwaway data dir.
REVIEWER, ADMIN = "dr.browser", "dr.browser-admin"
PASSWORD = "copper-harbor-violet-72"  # passes the password rules, as any password set here must


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def make_run_env(data: Path) -> dict[str, str]:
    """The environment `make run` gives the app and the CLI beside it, on ``data``: every
    WORKBENCH_* and STREAMLIT_* variable is left out, also one the test process inherited
    or a fixture set (the ``data_dir`` fixture sets WORKBENCH_JOB_PROCESS=off), so what
    runs has the production defaults: jobs read in the forkserver child, the worker
    thread, the CLI's endpoint, the worker's idle sleep. A test that needs another
    setting adds it and says why (tests/conftest.py lists which tests do)."""
    kept = {k: v for k, v in os.environ.items() if not k.startswith(("WORKBENCH_", "STREAMLIT_"))}
    return {**kept, "WORKBENCH_DATA_DIR": str(data)}


def server_env(data: Path, port: int | None = None) -> dict[str, str]:
    """``make_run_env`` for a workbench served on ``port``: the data dir and the port are
    all that differ from `make run` (ui.serve listens on the loopback address by itself)."""
    return {**make_run_env(data), "STREAMLIT_SERVER_PORT": str(port or free_port())}


def wait_healthy(url: str, wait_s: float = 90, proc: subprocess.Popen | None = None) -> bool:
    """Whether the Streamlit server at ``url`` answered its health check within ``wait_s``
    (no longer than ``proc``, the server, keeps running)."""
    deadline = time.time() + wait_s
    while time.time() < deadline:
        try:
            if urllib.request.urlopen(url + "/_stcore/health", timeout=2).read() == b"ok":
                return True
        except OSError:
            if proc is not None and proc.poll() is not None:
                return False
            time.sleep(0.3)
    return False


# Times a server is started again on another port when its own was taken meanwhile.
PORT_RETRIES = 3


@contextmanager
def serving(env: dict[str, str], *, wait_s: float = 90,
            log: Path | None = None) -> Iterator[tuple[str, subprocess.Popen]]:
    """`python -m ui.serve` as `make run` starts it; yields its URL once healthy. With
    ``log``, the server's stderr goes to that file (read it when a test fails; a pipe
    nobody reads can fill up and stall the server during a long test).

    ``free_port`` only finds a port free for a moment: another process of the run (a
    browser, a client's connection) may take it before the server binds it, which then
    stops with "Port ... is not available". The server is then started on another free
    port, which ``env`` then names, up to PORT_RETRIES times."""
    for attempt in range(PORT_RETRIES + 1):
        err = open(log, "wb") if log is not None else subprocess.PIPE
        proc = subprocess.Popen([sys.executable, "-m", "ui.serve"], cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                                stderr=err)
        url = f"http://127.0.0.1:{env['STREAMLIT_SERVER_PORT']}"
        if wait_healthy(url, wait_s, proc):
            break
        proc.kill()
        proc.wait(20)
        said = (log.read_bytes() if log is not None else proc.stderr.read()).decode(errors="replace")
        if log is not None:
            err.close()
        if "is not available" in said and attempt < PORT_RETRIES:
            env["STREAMLIT_SERVER_PORT"] = str(free_port())
            continue
        pytest.fail("Streamlit did not come up: " + said[-2000:])
    try:
        yield url, proc
    finally:
        if proc.poll() is None:
            proc.terminate()
            proc.wait(20)
        if log is not None:
            err.close()


def launch_chromium(pw, profile: Path, *, width: int = 1400, height: int = 1000):
    """A persistent headless chromium context with the flags this machine needs."""
    return pw.chromium.launch_persistent_context(str(profile), executable_path=CHROMIUM, headless=True,
                                                 args=CHROMIUM_ARGS, viewport={"width": width, "height": height})


@contextmanager
def chromium_context(profile: Path, **viewport: int) -> Iterator[Any]:
    """A module's browser: one persistent headless chromium context, closed at the end."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        context = launch_chromium(pw, profile, **viewport)
        try:
            yield context
        finally:
            context.close()


# ----------------------------------------------------------------------------- accounts and sign-in


# The person's own first change of the temporary password, made through the service the
# change-password form calls (test_browser_sign_in goes through that form in the browser).
_FIRST_CHANGE = """
import sys
from core.services.admin.accounts import change_password
from core.services.workbench import open_workbench
username, temporary, password = sys.stdin.read().splitlines()
wb = open_workbench()
try:
    change_password(wb, username, current=temporary, new=password)
finally:
    wb.close()
"""


def core_json(env: dict[str, str], *args: str, timeout: float = 600) -> dict[str, Any]:
    """`python -m core <args> --json` beside a served app's data dir, as an operator runs
    it; its JSON answer, or the test fails with the command's error output."""
    # PYTHONFAULTHANDLER: a command still running at the timeout is sent SIGABRT, so its
    # stderr shows where each of its threads waits (a one-off hang is then diagnosable).
    proc = subprocess.Popen([sys.executable, "-m", "core", *args, "--json"], cwd=ROOT,
                            env={**env, "PYTHONFAULTHANDLER": "1"}, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGABRT)
        try:
            _, err = proc.communicate(timeout=30)
        finally:
            proc.kill()
        pytest.fail(f"core {' '.join(args)} was still running after {timeout:g} s; where it waited:\n{err[-6000:]}")
    assert proc.returncode == 0, f"core {' '.join(args)} failed: {err[-2000:]}"
    return json.loads(out)


def add_account(env: dict[str, str], username: str, role: str, password: str = PASSWORD) -> dict[str, Any]:
    """An account made as an operator makes one: `core user add` with a temporary
    password on stdin; then its person's first change of it to ``password``, so a test
    signs in to the pages and not to the change-password form every new account gets.
    Run it before the server starts: DuckDB admits one process. Passwords go on stdin,
    never in arguments."""
    temporary = f"first-{password}-temporary"
    proc = subprocess.run([sys.executable, "-m", "core", "user", "add", "--username", username, "--role", role,
                           "--json"], cwd=ROOT, env=env, input=temporary + "\n", capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, f"core user add {username} failed: {proc.stderr[-2000:]}"
    changed = subprocess.run([sys.executable, "-c", _FIRST_CHANGE], cwd=ROOT, env=env, capture_output=True, text=True,
                             input=f"{username}\n{temporary}\n{password}\n", timeout=120)
    assert changed.returncode == 0, f"changing {username}'s first password failed: {changed.stderr[-2000:]}"
    return json.loads(proc.stdout) | {"must_change_password": False}


def settle(page, timeout: float = LOAD) -> None:
    """Wait until no script run is going or requested: a click that lands while a
    fragment is rerunning can be dropped, and an open select closes when it redraws."""
    page.locator("[data-testid='stApp'][data-test-script-state='notRunning']").wait_for(state="attached",
                                                                                       timeout=timeout)


def submit_sign_in(page, username: str, password: str) -> None:
    """Type into the sign-in form and press its button (the form must be showing)."""
    page.get_by_role("button", name="Sign in").wait_for(timeout=LOAD)
    settle(page)
    page.get_by_role("textbox", name="User name").fill(username)
    page.get_by_label("Password", exact=True).fill(password)  # type=password: not a "textbox" role
    page.get_by_role("button", name="Sign in").click()


def signed_in_as(page, username: str):
    # "Signed in as dr.browser (reviewer)": the name up to its role, so that
    # "dr.browser" is not found in "dr.browser-admin".
    return page.get_by_test_id("stSidebar").get_by_text(re.compile(rf"^Signed in as {re.escape(username)} \("))


_ACCOUNT: dict[Any, tuple[str, str]] = {}  # page -> the account it signed in as, for open_signed_in


def _address(url: str, path: str, params: dict[str, Any]) -> str:
    return f"{url}/{path.strip('/')}" + ("?" + urlencode(params) if params else "")


def _signs_in(page, username: str, password: str) -> None:
    submit_sign_in(page, username, password)
    signed, refused = signed_in_as(page, username), page.get_by_test_id("stAlertContentError")
    signed.or_(refused).first.wait_for(timeout=LOAD)  # across the ticket's round trip to the cookie route
    if not signed.count():
        pytest.fail(f"signing in as {username} was refused: {refused.first.inner_text()}")
    settle(page)
    _ACCOUNT[page] = (username, password)


SESSION_COOKIE = "workbench_session"  # ui/session_cookie.py's COOKIE_NAME


def sign_out_browser(page) -> None:
    """Forget the context's sign-in cookie (as closing a private window does): the next
    page load shows the sign-in form. Tabs already open keep their connection."""
    page.context.clear_cookies(name=SESSION_COOKIE)


def sign_in(page, url: str, username: str, password: str = PASSWORD, **params: Any) -> None:
    """Open the app in ``page`` and sign in through the real form; fails with the form's
    error when the app refuses. ``params`` go in the address opened, as in a link
    (``patient=<id>`` opens that patient's chart once signed in)."""
    sign_out_browser(page)
    page.goto(_address(url, "", params))
    _signs_in(page, username, password)


def sign_in_timed(page, url: str, username: str, password: str = PASSWORD, **params: Any) -> float:
    """``sign_in``, returning when the form was submitted (``time.monotonic``): the
    account's last activity, from which an idle limit counts."""
    sign_out_browser(page)
    page.goto(_address(url, "", params))
    submitted = time.monotonic()
    _signs_in(page, username, password)
    return submitted


def open_signed_in(page, url: str, path: str = "", **params: Any) -> None:
    """``/<path>?<params>`` in a new session, signed in as the account ``page`` signed in
    as with ``sign_in``: by the context's cookie when it is that account's (another tab
    may have signed in as someone else since), else through the form; the caller waits
    for what the page should show."""
    username, password = _ACCOUNT[page]
    page.goto(_address(url, path, params))
    form, anyone = page.get_by_role("button", name="Sign in"), page.get_by_text("Signed in as")
    form.or_(anyone).first.wait_for(timeout=LOAD)
    if not signed_in_as(page, username).count():
        if anyone.count():  # the cookie is another account's
            sign_out_browser(page)
            page.goto(_address(url, path, params))
        _signs_in(page, username, password)
    settle(page)
    if urlparse(page.url).path.strip("/") != path.strip("/"):  # the app opened its default page instead
        go(page, path, **params)


def go(page, path: str = "", **params: Any) -> None:
    """Move a signed-in tab to ``/<path>?<params>`` within its session (see the module
    docstring). Streamlit clears the old page's elements as the new run starts, so what a
    caller then waits for is the new page's."""
    target = "/" + path.strip("/") + ("?" + urlencode(params) if params else "")
    page.evaluate("t => { history.pushState(null, '', t); window.dispatchEvent(new PopStateEvent('popstate')); }",
                  target)


def full_page_screenshot(page, path: Path, *, width: int = 1400, height: int = 1000) -> Path:
    """The whole page in one picture. Streamlit scrolls inside its own container, so the
    window is made as tall as the content first, and put back after."""
    path.parent.mkdir(parents=True, exist_ok=True)
    settle(page)  # a page caught mid-rerun is drawn faded
    tall = page.evaluate("""() => Math.max(0, ...Array.from(document.querySelectorAll('*'))
        .filter(e => ['auto', 'scroll'].includes(getComputedStyle(e).overflowY))
        .map(e => e.scrollHeight + e.getBoundingClientRect().top))""")
    page.set_viewport_size({"width": width, "height": max(height, int(tall) + 2)})
    page.evaluate("""() => document.querySelectorAll('*').forEach(e => {
        if (['auto', 'scroll'].includes(getComputedStyle(e).overflowY)) e.scrollTo(0, 0); })""")
    page.wait_for_timeout(400)  # let the grids and the page images lay out at the new size
    page.screenshot(path=str(path), full_page=True)
    page.set_viewport_size({"width": width, "height": height})
    return path


# ----------------------------------------------------------------------------- reading a page


def selectbox(page, label: str):
    return page.locator("[data-testid='stSelectbox']").filter(has=page.get_by_text(label, exact=True))


def choose(page, label: str, option: str, attempts: int = 3) -> None:
    """Pick ``option`` in the select box ``label``. A rerun of the page (a fragment that
    refreshes while jobs are read) can close the open list under the pointer, as it
    would for a person, who opens it again: so do we, a few times, then fail."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    for attempt in range(attempts):
        settle(page)
        selectbox(page, label).first.click()
        try:
            page.get_by_role("option", name=re.compile("^" + re.escape(option))).click(timeout=10_000)
            break
        except PlaywrightTimeout:
            if attempt == attempts - 1:
                raise
            page.keyboard.press("Escape")
    settle(page)


def drawn_boxes(page) -> dict[int, dict[str, Any]]:
    """The viewer's overlay boxes: fact id -> colour class and place (percent of the page)."""
    found = page.locator(".cdw-box").evaluate_all("""els => els.map(e => ({
        id: Number(e.dataset.factId), cls: e.className,
        x: parseFloat(e.style.left), y: parseFloat(e.style.top),
        w: parseFloat(e.style.width), h: parseFloat(e.style.height)}))""")
    return {b["id"]: b for b in found}


def grid_rows(grid, count: int | None = None) -> list[dict[str, str]]:
    """Every row of an st.dataframe, read from its accessible table. The grid draws on a
    canvas and keeps only the cells in view in that table, so it is swept both ways.
    ``count``: wait until the grid has that many rows (it is redrawn after the text above it)."""
    from playwright.sync_api import expect

    table = grid.locator("table[role='grid']")
    table.wait_for(state="attached", timeout=STEP_MS)  # kept off-screen for screen readers
    if count is not None:
        expect(table).to_have_attribute("aria-rowcount", str(count + 1), timeout=STEP_MS)
    n_rows = int(table.get_attribute("aria-rowcount")) - 1
    n_cols = int(table.get_attribute("aria-colcount"))
    scroller = grid.locator(".dvn-scroller").first
    headers: dict[int, str] = {}
    cells: dict[tuple[int, int], str] = {}
    for _ in range(3):  # a grid still laying out reports a narrower scroll area: sweep again once it has grown
        width, view_w, height, view_h = scroller.evaluate(
            "e => [e.scrollWidth, e.clientWidth, e.scrollHeight, e.clientHeight]")
        ys = sorted({*range(0, max(0, height - view_h), max(35, view_h - 70)), max(0, height - view_h)})
        xs = sorted({*range(0, max(0, width - view_w), max(50, view_w - 50)), max(0, width - view_w)})
        for y in ys:
            for x in xs:
                scroller.evaluate("(e, at) => e.scrollTo(at[0], at[1])", [x, y])
                grid.page.wait_for_timeout(200)  # the accessible cells follow on the next frames
                seen = table.evaluate("""t => [
                    Array.from(t.querySelectorAll('th')).map(h => [Number(h.getAttribute('aria-colindex')),
                                                                   h.innerText]),
                    Array.from(t.querySelectorAll('td')).map(c => [
                        Number(c.parentElement.getAttribute('aria-rowindex')), Number(c.getAttribute('aria-colindex')),
                        c.innerText])]""")
                headers.update({col: text for col, text in seen[0]})
                cells.update({(row, col): text for row, col, text in seen[1]})
        if len(headers) == n_cols and len(cells) == n_rows * n_cols:
            break
        grid.page.wait_for_timeout(1000)
    scroller.evaluate("e => e.scrollTo(0, 0)")
    assert len(headers) == n_cols and len(cells) == n_rows * n_cols, \
        f"read {len(cells)} of {n_rows} x {n_cols} cells ({sorted(headers.values())})"
    return [{headers[c]: cells[(r, c)] for c in sorted(headers)} for r in range(2, n_rows + 2)]
