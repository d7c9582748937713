"""The reverse-proxy recipe (deploy/nginx/workbench.conf, issue 21) run for real: Debian's
nginx with a self-signed certificate in front of the app as `make run` serves it (the
test worker's shared one, tests/browser/conftest.py). The template is used with only its CHANGE lines changed
(certificate, key, server name, the app's port) plus the listening ports, which a test
cannot take at 443 and 80."""

from __future__ import annotations

import http.client
import os
import re
import shutil
import signal
import socket
import ssl
import subprocess
import threading
import time
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Iterator

import pytest

from tests.support.browser_support import CHROMIUM, CHROMIUM_ARGS, LOAD, NO_CHROMIUM, REVIEWER, ROOT, free_port, sign_in

NGINX = Path("/usr/sbin/nginx")
TEMPLATE = ROOT / "deploy" / "nginx" / "workbench.conf"
SERVER_NAME = "workbench.test"  # chromium is told it is 127.0.0.1 (--host-resolver-rules)
UPLOAD_MAX = 50 * 1024 * 1024  # WORKBENCH_UPLOAD_MAX_BYTES' default, and the template's 50m


def require_nginx() -> None:
    if not NGINX.exists():
        pytest.skip("Debian's nginx is not installed at /usr/sbin/nginx (apt-get install nginx)")
    if shutil.which("openssl") is None:
        pytest.skip("the openssl command is not installed (apt-get install openssl)")


# ----------------------------------------------------------------------------- the template, filled in

def filled_template(*, cert: Path, key: Path, app_port: int, https_port: int, http_port: int) -> str:
    """The template with what an operator changes, and the listening ports, swapped;
    each is found exactly where the template says, so the template cannot drift from
    what this test runs."""
    text = TEMPLATE.read_text()
    swaps = [  # (what the template has, what the test puts there, how many times)
        ("/etc/ssl/certs/workbench.pem", str(cert), 1),
        ("/etc/ssl/private/workbench.key", str(key), 1),
        ("server_name workbench.clinic.example;", f"server_name {SERVER_NAME};", 2),
        ("server 127.0.0.1:8501;", f"server 127.0.0.1:{app_port};", 1),
        ("listen 443 ssl;", f"listen 127.0.0.1:{https_port} ssl;", 1),
        ("listen 80;", f"listen 127.0.0.1:{http_port};", 1),
    ]
    for old, new, times in swaps:
        assert text.count(old) == times, f"the template should have {old!r} {times} time(s)"
        text = text.replace(old, new)
    changed = [line for line in TEMPLATE.read_text().splitlines() if "# CHANGE" in line]
    assert len(changed) == 5, changed  # cert, key, the server name twice, the port: nothing else
    return text


def main_config(tmp: Path, site: Path) -> str:
    """An nginx.conf for a user without root: the http {} of Debian's nginx.conf (its
    looser ssl_protocols included, which the site overrides), every path in ``tmp``."""
    user = "user root;" if os.geteuid() == 0 else ""  # as root, workers would run as nobody
    return f"""{user}
worker_processes 1;
events {{ worker_connections 1024; }}
http {{
    sendfile on;
    types_hash_max_size 2048;
    include /etc/nginx/mime.types;
    default_type application/octet-stream;
    ssl_protocols TLSv1 TLSv1.1 TLSv1.2 TLSv1.3;
    ssl_prefer_server_ciphers on;
    gzip on;
    access_log {tmp}/access.log;
    client_body_temp_path {tmp}/client_body;
    proxy_temp_path {tmp}/proxy;
    fastcgi_temp_path {tmp}/fastcgi;
    uwsgi_temp_path {tmp}/uwsgi;
    scgi_temp_path {tmp}/scgi;
    include {site};
}}
"""


def self_signed(tmp: Path) -> tuple[Path, Path]:
    cert, key = tmp / "workbench.pem", tmp / "workbench.key"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                    "-nodes", "-keyout", str(key), "-out", str(cert), "-days", "2", "-subj", f"/CN={SERVER_NAME}",
                    "-addext", f"subjectAltName=DNS:{SERVER_NAME},IP:127.0.0.1"],
                   check=True, capture_output=True, timeout=60)
    return cert, key


@contextmanager
def nginx(tmp: Path, *, app_port: int) -> Iterator[dict]:
    """Debian's nginx in the foreground on free loopback ports; stopped (and, failing
    that, killed with its workers) however the test ends."""
    cert, key = self_signed(tmp)
    https_port, http_port = free_port(), free_port()
    site = tmp / "workbench.conf"
    site.write_text(filled_template(cert=cert, key=key, app_port=app_port, https_port=https_port,
                                    http_port=http_port))
    conf = tmp / "nginx.conf"
    conf.write_text(main_config(tmp, site))
    cmd = [str(NGINX), "-e", "stderr", "-c", str(conf), "-p", f"{tmp}/",
           "-g", f"daemon off; pid {tmp}/nginx.pid; error_log stderr;"]
    checked = subprocess.run([*cmd[:-2], "-t", "-g", f"pid {tmp}/nginx.pid; error_log stderr;"],
                             capture_output=True, text=True, timeout=30)
    assert checked.returncode == 0, checked.stderr
    assert "[warn]" not in checked.stderr and "[emerg]" not in checked.stderr, checked.stderr
    log = tmp / "nginx.stderr"
    with log.open("wb") as err:
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err,
                                start_new_session=True)  # its own group: the workers go with it
    try:
        deadline = time.monotonic() + 20
        while True:
            assert proc.poll() is None, f"nginx exited: {log.read_text()[-2000:]}"
            try:
                socket.create_connection(("127.0.0.1", https_port), timeout=1).close()
                break
            except OSError:
                assert time.monotonic() < deadline, f"nginx did not listen: {log.read_text()[-2000:]}"
                time.sleep(0.1)
        yield {"url": f"https://127.0.0.1:{https_port}", "https_port": https_port, "http_port": http_port,
               "cert": cert, "log": log, "access_log": tmp / "access.log"}
    finally:
        proc.terminate()  # SIGTERM: nginx's fast shutdown, workers included
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            pass
        try:
            os.killpg(proc.pid, signal.SIGKILL)  # the group this test started, whatever is left of it
        except ProcessLookupError:
            pass
        proc.wait(10)


@pytest.fixture(scope="module")
def app(served):
    """`make run`'s app, the worker's shared one (tests/browser/conftest.py): every
    WORKBENCH_* and STREAMLIT_* setting at its default but the data dir and the port; the
    reviewer `core user add` made signs in to a chart of this module's own."""
    return {"url": served.url, "port": int(served.env["STREAMLIT_SERVER_PORT"]), "patient": served.patients["proxy"]}


@pytest.fixture(scope="module")
def proxy(request, tmp_path_factory):
    require_nginx()  # before the app is started for nothing
    app = request.getfixturevalue("app")
    with nginx(tmp_path_factory.mktemp("nginx"), app_port=app["port"]) as running:
        yield running


def request(proxy, method: str, path: str, *, headers: dict[str, str] | None = None,
            body: bytes | None = None) -> tuple[http.client.HTTPResponse, bytes]:
    """One request over https, checking the certificate nginx serves is the test's."""
    context = ssl.create_default_context(cafile=str(proxy["cert"]))
    conn = http.client.HTTPSConnection("127.0.0.1", proxy["https_port"], context=context, timeout=30)
    try:
        conn.request(method, path, body=body, headers=headers or {})
        response = conn.getresponse()
        return response, response.read()
    finally:
        conn.close()


SIGNED_IN = "workbench_session=probe"  # nginx looks only for the cookie; the app judges its token


def signed_in_cookies(proxy) -> str:
    """What a signed-in page of the app sends: Streamlit's XSRF cookie and the sign-in cookie."""
    return f"{xsrf_cookie(proxy)}; {SIGNED_IN}"


def xsrf_cookie(proxy) -> str:
    """The cookie a browser gets when it opens the app (from /_stcore/health)."""
    response, _ = request(proxy, "GET", "/_stcore/health")
    found = re.search(r"(_streamlit_xsrf=[^;]+)", response.getheader("Set-Cookie") or "")
    assert found, response.getheaders()
    return found.group(1)


SECURITY_HEADERS = ("Strict-Transport-Security", "Content-Security-Policy", "X-Frame-Options",
                    "X-Content-Type-Options", "Referrer-Policy", "Permissions-Policy")


def assert_security_headers(response, *, frame: str = "'none'", frame_options: str = "DENY") -> None:
    for name in SECURITY_HEADERS:
        assert len(response.headers.get_all(name) or []) == 1, f"{name}: {response.headers.get_all(name)}"
    hsts = response.getheader("Strict-Transport-Security")
    assert int(re.search(r"max-age=(\d+)", hsts).group(1)) >= 180 * 24 * 3600, hsts
    assert f"frame-ancestors {frame}" in response.getheader("Content-Security-Policy")
    assert response.getheader("X-Frame-Options") == frame_options
    assert response.getheader("X-Content-Type-Options") == "nosniff"
    assert response.getheader("Referrer-Policy") == "same-origin"
    policy = response.getheader("Permissions-Policy")
    for feature in ("camera", "microphone", "geolocation", "payment", "usb"):
        assert f"{feature}=()" in policy, policy


# ----------------------------------------------------------------------------- the tests

def test_the_readme_shows_the_config_that_is_tested():
    readme = (ROOT / "README.md").read_text()
    blocks = re.findall(r"```nginx\n(.*?)```", readme, flags=re.S)
    assert TEMPLATE.read_text() in blocks, "README's nginx block differs from deploy/nginx/workbench.conf"


def test_the_app_page_carries_every_security_header_and_is_not_cached(proxy):
    response, body = request(proxy, "GET", "/")
    assert response.status == 200 and b"<html" in body
    assert_security_headers(response)
    assert response.getheader("Cache-Control") == "no-store"
    assert response.getheader("Server") == "nginx"  # no version


def test_errors_and_assets_carry_them_too(proxy):
    missing, _ = request(proxy, "GET", "/no-such-page-anywhere.js")
    assert_security_headers(missing)
    _, index = request(proxy, "GET", "/")
    script = re.search(rb'src="\./(static/js/[^"]+\.js)"', index).group(1).decode()
    asset, _ = request(proxy, "GET", "/" + script)
    assert asset.status == 200
    assert_security_headers(asset)
    # Streamlit's hashed scripts keep their own caching, and only theirs.
    assert asset.headers.get_all("Cache-Control") == ["public, immutable, max-age=31536000"]


def test_only_streamlit_components_may_be_framed_and_only_by_the_app(proxy):
    # A v1 custom component's page, as the app would frame it.
    response, _ = request(proxy, "GET", "/component/some_package.some_component/index.html")
    assert_security_headers(response, frame="'self'", frame_options="SAMEORIGIN")


def test_health_answers_through_the_proxy_over_https(proxy):
    response, body = request(proxy, "GET", "/_stcore/health")
    assert (response.status, body) == (200, b"ok")
    assert response.getheader("Cache-Control") == "no-store"
    assert "Secure" in response.getheader("Set-Cookie")  # the app's cookie travels over https only


def test_plain_http_is_sent_to_https(proxy):
    conn = http.client.HTTPConnection("127.0.0.1", proxy["http_port"], timeout=30)
    try:
        conn.request("GET", "/Operations?x=1")
        response = conn.getresponse()
    finally:
        conn.close()
    assert response.status == 301
    assert response.getheader("Location") == f"https://{SERVER_NAME}/Operations?x=1"


@pytest.mark.parametrize("site", ["cross-site", "same-site", "none", None])
def test_media_is_refused_to_requests_not_from_the_apps_pages(proxy, site):
    headers = {"Cookie": signed_in_cookies(proxy)}
    if site:
        headers["Sec-Fetch-Site"] = site
    for method, path in [("GET", "/media/0123abcd.png"), ("HEAD", "/media/0123abcd.png"),
                         ("PUT", "/_stcore/upload_file/session/file")]:
        response, body = request(proxy, method, path, headers=headers, body=b"x" if method == "PUT" else None)
        assert response.status == 403, (method, path, site)
        assert method == "HEAD" or b"<center>nginx</center>" in body, body  # the proxy's answer, not the app's
        assert response.getheader("Cache-Control") == "no-store"


def test_media_from_the_apps_pages_reaches_the_app(proxy):
    same_origin = {"Sec-Fetch-Site": "same-origin"}
    without_cookie, _ = request(proxy, "GET", "/media/0123abcd.png", headers=same_origin)
    assert without_cookie.status == 403
    # A page that is not signed in has Streamlit's cookie but not the sign-in's.
    not_signed_in, _ = request(proxy, "GET", "/media/0123abcd.png",
                               headers={**same_origin, "Cookie": xsrf_cookie(proxy)})
    assert not_signed_in.status == 403
    response, body = request(proxy, "GET", "/media/0123abcd.png",
                             headers={**same_origin, "Cookie": signed_in_cookies(proxy)})
    assert (response.status, body) == (404, b"File not found")  # Streamlit's answer: passed through
    assert response.getheader("Cache-Control") == "no-store"
    assert_security_headers(response)


def test_an_oversized_upload_is_refused_with_413(proxy):
    headers = {"Sec-Fetch-Site": "same-origin", "Cookie": signed_in_cookies(proxy),
               "Content-Type": "multipart/form-data; boundary=x"}
    # Refused on its Content-Length, before a byte of the body is read.
    big = request_head_only(proxy, "PUT", "/_stcore/upload_file/session/file",
                            {**headers, "Content-Length": str(UPLOAD_MAX + 1)})
    assert big.startswith(b"HTTP/1.1 413"), big[:200]
    # Within the limit the upload reaches Streamlit, which wants its XSRF token.
    response, body = request(proxy, "PUT", "/_stcore/upload_file/session/file", headers=headers,
                             body=b"--x--\r\n")
    assert (response.status, body) == (403, b"XSRF token missing or invalid")
    # Everywhere else a body is small.
    elsewhere = request_head_only(proxy, "POST", "/", {"Content-Length": str(2 * 1024 * 1024)})
    assert elsewhere.startswith(b"HTTP/1.1 413"), elsewhere[:200]


def request_head_only(proxy, method: str, path: str, headers: dict[str, str]) -> bytes:
    """Send only the request's head (a Content-Length but no body) and read the answer."""
    context = ssl.create_default_context(cafile=str(proxy["cert"]))
    with socket.create_connection(("127.0.0.1", proxy["https_port"]), timeout=30) as raw, \
            context.wrap_socket(raw, server_hostname="127.0.0.1") as tls:
        lines = [f"{method} {path} HTTP/1.1", f"Host: 127.0.0.1:{proxy['https_port']}",
                 *(f"{k}: {v}" for k, v in headers.items()), "", ""]
        tls.sendall("\r\n".join(lines).encode())
        answer = b""
        while b"\r\n\r\n" not in answer:
            chunk = tls.recv(4096)
            if not chunk:
                break
            answer += chunk
        return answer


def assert_logged(proxy, line: str, *, wait_s: float = 10) -> None:
    deadline = time.monotonic() + wait_s
    while line not in proxy["access_log"].read_text():
        assert time.monotonic() < deadline, f"not in nginx's access log: {line}"
        time.sleep(0.1)


@contextmanager
def other_site(html: str) -> Iterator[str]:
    """A page of another site, served from the loopback while the block runs."""
    body = html.encode()

    class Page(BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 - http.server's name
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Page)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://localhost:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="module")
def chromium():
    if not Path(CHROMIUM).exists():
        pytest.skip(NO_CHROMIUM)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True,
                                     args=[*CHROMIUM_ARGS, f"--host-resolver-rules=MAP {SERVER_NAME} 127.0.0.1"])
        try:
            yield browser
        finally:
            browser.close()


def test_the_app_runs_in_a_browser_through_the_proxy(proxy, chromium):
    """The sign-in form is drawn by the script run over the WebSocket: it shows only when
    /_stcore/stream was upgraded through nginx. The browser uses the server's name and a
    port other than 443, as a clinic might: Streamlit accepts the WebSocket only when the
    Host it is given (with its port) matches the page's origin."""
    context = chromium.new_context(ignore_https_errors=True)
    try:
        page = context.new_page()
        refused, console = [], []
        page.on("response", lambda r: refused.append((r.status, r.url)) if r.status in (403, 413, 429) else None)
        page.on("console", lambda m: console.append(m.text) if m.type in ("error", "warning") else None)
        site = f"https://{SERVER_NAME}:{proxy['https_port']}"
        page.goto(site + "/")
        page.get_by_role("button", name="Sign in").wait_for(timeout=LOAD)
        page.get_by_role("textbox", name="User name").wait_for(timeout=LOAD)
        assert refused == [], refused  # a whole page load stays within the rate limit
        assert not [m for m in console if "Content Security Policy" in m or "Permissions-Policy" in m], console
        # The app's own page, not signed in yet, is refused by the proxy (the signed-in
        # page is let through: test_a_signed_in_clinician_uploads_through_the_proxy).
        status = page.evaluate("fetch('/media/0123abcd.png').then(r => r.status)")
        assert status == 403
        # The same file asked for by another site's page is refused, as an image and as a
        # link followed. That page is on http://localhost:<port>, another site on this
        # machine (so chromium's local-network checks let it ask).
        media = f"{site}/media/0123abcd.png"
        with other_site(f'<img src="{media}?as-image"><a id="link" href="{media}?as-link">the file</a>') as elsewhere:
            page.goto(elsewhere)
            # chromium hides the refused image's answer from the page (and from this test):
            # nginx's access log shows it.
            assert_logged(proxy, '"GET /media/0123abcd.png?as-image HTTP/1.1" 403 ')
            with page.expect_response(lambda r: r.url.endswith("?as-link")) as seen:
                page.click("#link")
        assert seen.value.status == 403
    finally:
        context.close()


def test_a_signed_in_clinician_uploads_through_the_proxy(proxy, app, chromium, tmp_path):
    """The gate lets the app's own upload through: a real file chooser, Streamlit's PUT
    with its XSRF token, from the page's origin."""
    context = chromium.new_context(ignore_https_errors=True)
    try:
        page = context.new_page()
        sign_in(page, f"https://{SERVER_NAME}:{proxy['https_port']}", REVIEWER, patient=app["patient"])  # an empty chart
        # Signed in, the page's own request reaches the app (no such file: Streamlit's 404).
        assert page.evaluate("fetch('/media/0123abcd.png').then(r => r.status)") == 404
        page.get_by_role("link", name="Documents", exact=True).click()
        page.get_by_text("No documents on this chart yet").wait_for(timeout=LOAD)
        upload = tmp_path / "through-the-proxy.pdf"
        upload.write_bytes(b"%PDF-1.4\n% stored only\n")
        with page.expect_response(lambda r: "/_stcore/upload_file/" in r.url and r.request.method == "PUT") as put:
            page.locator("input[type='file']").set_input_files(str(upload))
        assert put.value.status in (200, 204), put.value.status
        page.get_by_text("through-the-proxy.pdf").first.wait_for(timeout=LOAD)
    finally:
        context.close()


def test_a_flood_of_requests_is_limited(proxy):
    """Last in this module: it empties the client's allowance for a few seconds. The
    requests arrive together, on connections opened beforehand, so what passes does not
    depend on how fast the app answers: the burst of 100 (and a request or two the rate
    allows meanwhile), then 429."""
    context = ssl.create_default_context(cafile=str(proxy["cert"]))
    head = f"GET /_stcore/health HTTP/1.1\r\nHost: 127.0.0.1:{proxy['https_port']}\r\nConnection: close\r\n\r\n"
    connections = []
    try:
        for _ in range(160):
            raw = socket.create_connection(("127.0.0.1", proxy["https_port"]), timeout=30)
            connections.append(context.wrap_socket(raw, server_hostname="127.0.0.1"))
        for tls in connections:
            tls.sendall(head.encode())
        statuses = [int(read_all(tls).split(b" ", 2)[1]) for tls in connections]
    finally:
        for tls in connections:
            tls.close()
    assert 100 <= statuses.count(200) <= 120, statuses
    assert statuses.count(429) == len(statuses) - statuses.count(200), statuses
    time.sleep(6)  # the allowance refills at 20 a second


def read_all(tls: ssl.SSLSocket) -> bytes:
    answer = b""
    while chunk := tls.recv(65536):
        answer += chunk
    return answer
