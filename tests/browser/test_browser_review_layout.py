"""The review item laid out for eyes and keyboard, in headless chromium on a 1400 x 900
window (issue 26): the two columns keep the decision buttons above the fold; `j` then
`k` moves and comes back; `?` shows the keys; `/` reaches the reason box and `x` rejects
with it; the confidence column is coloured; a box is moved in place on the page; a click
on a box shows its fact. Screenshots go to $WORKBENCH_TEST_ARTIFACTS (default
<repo>/test-artifacts/screenshots), and the times measured are printed (-s shows them).

Its own server, started as `make run` starts it (production defaults: the job process,
the worker): its chart is filled before the server opens the data dir, in this process
(the database has one writer): the chart patient's lab report, a repeat whose first
result differs from the chart (a conflict) and three findings read by OCR, each with
its own confidence. The tests run in file order on one reviewer's tab."""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path
from typing import Any

import pytest

from tests.support.browser_support import (CHROMIUM, LOAD, NO_CHROMIUM, REVIEWER, ROOT, add_account, chromium_context,
                                           full_page_screenshot, open_signed_in, server_env, serving, settle, sign_in)
from tests.support.served_app import filling

pytestmark = pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=NO_CHROMIUM)
ARTIFACTS = Path(os.environ.get("WORKBENCH_TEST_ARTIFACTS") or ROOT / "test-artifacts" / "screenshots")
WIDTH, HEIGHT = 1400, 900
STEP = 30_000
FOLD = 900  # px: what the reviewer needs sits above it
OCR_SCORES = (0.41, 0.38, 0.72)
timings: dict[str, list[float]] = {}



def ocr_copies(wb, patient: dict) -> dict[str, Any]:
    """A scanned copy of the lab report whose first findings wait for review, each read
    by OCR with its own confidence (the reason says it, as a reader writes it)."""
    from golden.fixtures import LAB_CASES, render_lab
    from storage import facts_repo
    from tests.support.pipeline import ingest

    report = ingest(wb, patient, render_lab(LAB_CASES[0]), "lab_pdf", "scanned.pdf")
    with wb.db.transaction() as cur:
        for fact, score in zip(facts_repo.facts_for_document(cur, report["document_id"]), OCR_SCORES):
            facts_repo.update_fact(cur, fact.id, certainty="needs_review", active=False,
                                   promotion_status="needs_review", confidence=score,
                                   review_reason=f"value read by OCR with low confidence ({score:.2f})")
    return report


@pytest.fixture(scope="module")
def app(tmp_path_factory, cli_init):
    data = cli_init(tmp_path_factory.mktemp("review-layout") / "data")
    env = server_env(data)
    add_account(env, REVIEWER, "reviewer")
    with filling(data) as wb:
        from tests.support.accounts import seed_test_accounts
        from tests.support.pipeline import repeat_with_changed_value

        seed_test_accounts(wb)  # the builders act as the test workbench's reviewer
        patient, _, repeat = repeat_with_changed_value(wb)
        scanned = ocr_copies(wb, patient)
    with serving(env, log=data.parent / "server.log") as (url, _proc):
        yield {"url": url, "patient": patient["id"], "scanned": scanned["document_id"],
               "repeat": repeat["document_id"]}


@pytest.fixture(scope="module")
def tab(tmp_path_factory, app):
    with chromium_context(tmp_path_factory.mktemp("chromium"), width=WIDTH, height=HEIGHT) as context:
        page = context.new_page()
        sign_in(page, app["url"], REVIEWER, patient=app["patient"])
        yield page
        page.close()


def shot(page, name: str, *, full: bool = True) -> Path:
    path = ARTIFACTS / f"{name}.png"
    if full:
        return full_page_screenshot(page, path, width=WIDTH, height=HEIGHT)
    settle(page)
    path.parent.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(path))
    return path


def item_title(page) -> str:
    return page.locator(".st-key-rq_item_box strong").first.inner_text()


def wait_title_change(page, before: str) -> None:
    title = page.locator(".st-key-rq_item_box strong").first
    deadline = time.monotonic() + STEP / 1000
    while title.inner_text() == before:
        assert time.monotonic() < deadline, "the next item was not drawn"
        page.wait_for_timeout(10)


def timed_key(page, key: str) -> float:
    """Press ``key`` on the page and return the seconds until another item is drawn."""
    before = page.locator(".st-key-rq_item_box strong").first.inner_text()
    start = time.perf_counter()
    page.keyboard.press(key)
    wait_title_change(page, before)
    settle(page)
    return time.perf_counter() - start


def open_queue(page, app) -> None:
    open_signed_in(page, app["url"], "review_queue", patient=app["patient"])
    page.get_by_text("items to review").first.wait_for(timeout=LOAD)
    page.locator(".cdw-box").first.wait_for(timeout=LOAD)
    settle(page)


def press_outside_inputs(page) -> None:
    """Give the page the keyboard (a click on the page's title, not in a text box)."""
    page.get_by_role("heading", name="Review queue").click()


# ----------------------------------------------------------------------------- the scenario


def test_the_item_fits_one_screen_with_the_page_left_and_the_buttons_right(app, tab):
    page = tab
    open_queue(page, app)
    approve = page.get_by_role("button", name=re.compile(r"^Approve(?! all| \d)"))
    reason = page.get_by_role("textbox", name="Reason (needed to reject)")
    image = page.locator(".cdw-page").first
    for needed in (approve, reason):
        box = needed.bounding_box()
        assert box is not None and box["y"] + box["height"] < FOLD, (needed, box)
    page_box, button_box = image.bounding_box(), approve.bounding_box()
    assert page_box["x"] + page_box["width"] <= button_box["x"] + 2  # the page left, the buttons right of it
    timings.setdefault("buttons top offset (px)", []).append(button_box["y"])
    shot(page, "review-layout-item-above-the-fold", full=False)
    shot(page, "review-layout-item")


def test_j_then_k_moves_to_the_next_item_and_back(app, tab):
    page = tab
    press_outside_inputs(page)
    first = item_title(page)
    previous = page.get_by_role("button", name=re.compile(r"^Previous(?! document)"))
    assert previous.is_disabled()
    for _ in range(3):
        timings.setdefault("key j / k to the next item drawn (s)", []).append(timed_key(page, "j"))
        assert previous.is_enabled()  # drawn for the item j opened
        timings["key j / k to the next item drawn (s)"].append(timed_key(page, "k"))
        assert item_title(page) == first


def test_question_mark_shows_the_keys_and_hides_them_again(app, tab):
    page = tab
    press_outside_inputs(page)
    page.keyboard.press("?")
    overlay = page.get_by_role("dialog", name="Keyboard keys")
    overlay.wait_for(timeout=5_000)
    text = overlay.inner_text()
    for words in ("Approve", "Reject", "Next item", "Previous item", "next document", "reason box", "Move or resize"):
        assert words in text, words
    shot(page, "review-layout-keys-help", full=False)
    page.keyboard.press("?")
    overlay.wait_for(state="detached", timeout=5_000)


def test_slash_reaches_the_reason_box_and_x_rejects_with_the_reason(app, tab):
    page = tab
    press_outside_inputs(page)
    first = item_title(page)
    page.keyboard.press("/")
    focused = page.evaluate("() => document.activeElement && document.activeElement.getAttribute('aria-label')")
    assert focused == "Reason (needed to reject)"
    page.keyboard.type("the value is a smudge, not a result")
    page.keyboard.press("Enter")  # a text box hands its value over on Enter (or on leaving it)
    settle(page)
    page.keyboard.press("Escape")  # out of the text box: the keys work again
    start = time.perf_counter()
    page.keyboard.press("x")
    page.get_by_text("Finding rejected.").wait_for(timeout=STEP)
    wait_title_change(page, first)
    timings.setdefault("decision (x) to the next item drawn (s)", []).append(time.perf_counter() - start)
    notice = page.get_by_text("Finding rejected.").bounding_box()
    assert notice["y"] < FOLD  # beside the buttons, in view
    shot(page, "review-layout-after-decision", full=False)


def test_the_confidence_column_is_coloured_and_filters(app, tab):
    page = tab
    page.get_by_text("All items in this view").scroll_into_view_if_needed()
    header = page.locator("[data-testid='stDataFrame']").last
    header.wait_for(timeout=STEP)
    shot(page, "review-layout-confidence-column")
    from tests.support.browser_support import choose

    choose(page, "Confidence", "low")
    page.get_by_text(re.compile(r"^1 of \d+ items to review")).first.wait_for(timeout=STEP)


def test_a_box_is_moved_in_place_on_the_page_and_saved(app, tab):
    page = tab
    open_queue(page, app)
    press_outside_inputs(page)
    page.keyboard.press("b")
    canvas = page.locator("[class*='st-key-canvas-True-'] canvas.upper-canvas")  # the moving canvas (ui/box_editor.py)
    canvas.wait_for(timeout=LOAD)
    edit = page.locator("button.dc-icon-button[aria-label='Edit']")
    from playwright.sync_api import expect

    expect(edit).to_have_attribute("aria-pressed", "true", timeout=STEP)  # opened ready to move
    assert page.locator(".cdw-page").count() == 0  # the page itself became the editor: no second copy
    caption = page.get_by_text("Drawn: left")
    caption.wait_for(timeout=STEP)
    before = caption.inner_text()
    saved = dict(zip(("x", "y", "w", "h"), map(float, re.findall(r"([\d.]+)%", before))))
    bb = canvas.bounding_box()
    # Drag the box's bottom-right corner 2 % of the page to the right and down: it grows.
    corner = (bb["x"] + (saved["x"] + saved["w"]) / 100 * bb["width"],
              bb["y"] + (saved["y"] + saved["h"]) / 100 * bb["height"])
    page.mouse.click(bb["x"] + (saved["x"] + saved["w"] / 2) / 100 * bb["width"],
                     bb["y"] + (saved["y"] + saved["h"] / 2) / 100 * bb["height"])  # select it
    page.mouse.move(*corner)
    page.mouse.down()
    for i in range(1, 9):
        page.mouse.move(corner[0] + i * 0.0025 * bb["width"], corner[1] + i * 0.0025 * bb["height"])
    page.mouse.up()
    expect(caption).not_to_have_text(before, timeout=STEP)
    after = dict(zip(("x", "y", "w", "h"), map(float, re.findall(r"([\d.]+)%", caption.inner_text()))))
    assert after["w"] > saved["w"] + 1 and abs(after["x"] - saved["x"]) < 0.3, (saved, after)
    shot(page, "review-layout-box-moved-in-place", full=False)
    settle(page)
    page.get_by_role("button", name=re.compile(r"^Save box")).click()
    page.get_by_text("Box saved.").wait_for(timeout=STEP)


def test_a_approves_and_the_next_item_is_drawn(app, tab):
    page = tab
    open_queue(page, app)
    press_outside_inputs(page)
    first = item_title(page)
    start = time.perf_counter()
    page.keyboard.press("a")
    wait_title_change(page, first)
    page.get_by_text("Finding approved: it is in the chart.").wait_for(timeout=STEP)
    timings.setdefault("decision (a) to the next item drawn (s)", []).append(time.perf_counter() - start)


def test_a_click_on_a_box_shows_its_fact(app, tab):
    page = tab
    open_signed_in(page, app["url"], "documents", patient=app["patient"], document=app["repeat"])
    page.get_by_text("Facts (").first.wait_for(timeout=LOAD)
    boxes = page.locator(".cdw-box")
    boxes.first.wait_for(timeout=LOAD)
    settle(page)
    chosen = page.get_by_text(re.compile(r"^Chosen: "))
    for n in (2, 5, 8):
        box = boxes.nth(n)
        fact_id = box.get_attribute("data-fact-id")
        start = time.perf_counter()
        box.click()
        page.locator(f".cdw-box.cdw-selected[data-fact-id='{fact_id}']").wait_for(timeout=STEP)
        chosen.first.wait_for(timeout=STEP)
        settle(page)
        timings.setdefault("click on a box to its fact shown (s)", []).append(time.perf_counter() - start)


def test_print_the_times(app):
    print("\nreview layout in chromium, 1400 x 900:")
    for name, values in timings.items():
        values = sorted(values)
        print(f"  {name:<44} median {values[len(values) // 2]:.3f} (min {values[0]:.3f}, max {values[-1]:.3f}, "
              f"n={len(values)})")
    (ARTIFACTS / "review-layout-times.json").write_text(json.dumps(timings, indent=1))
