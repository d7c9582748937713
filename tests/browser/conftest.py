"""Fixtures of the browser tests: one served app per test worker, and one headless
chromium per module.

``served`` (session): the app as `make run` serves it, started once per test worker
(tests/support/served_app.py says what its data dir holds and whose each part is).
Shared by test_browser, test_browser_evals, test_browser_media, test_browser_inert,
test_browser_coverage and test_proxy_nginx (Debian's nginx in front of it, per the deploy/nginx recipe): each has
its own chart (and test_browser_evals the eval runs) in it, so none depends on what
another did or on their order.

Modules that start a server of their own, and why:
  test_browser_sign_in      a fresh `core init`: the first admin's one-time password signs in
                            and is changed; then the server is stopped to read the access
                            audit, and a second one runs with a short idle limit
  test_browser_workbench    the demo load read from the database before the server holds it,
                            and the decisions read from it after the server stops
  test_browser_real_config  the whole `make run` sequence (`core demo --queue --auto` too) on
                            a fresh data dir, its first admin, and the queue it leaves
  test_browser_held_messages the HL7 listener switched on (WORKBENCH_START_MLLP, off by
                            default), and the database read after the server stops
"""

from __future__ import annotations

import pytest

from tests.support.browser_support import chromium_context
from tests.support.served_app import served_app


@pytest.fixture(scope="session")
def served(tmp_path_factory, cli_init):
    with served_app(tmp_path_factory.mktemp("served-app"), cli_init) as app:
        yield app


@pytest.fixture
def server(served):
    """The shared app as a dict, as test_browser_evals reads it: url, env, data."""
    return {"url": served.url, "env": served.env, "data": served.data}


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    """A module's browser: one persistent headless chromium context (its own cookies)."""
    with chromium_context(tmp_path_factory.mktemp("chromium-profile")) as context:
        yield context
