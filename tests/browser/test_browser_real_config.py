"""The app in the configuration a clinic runs (issue 21), in headless Debian chromium.

Started as `make run` starts it, on a fresh data dir: `core init`, `core demo --queue
--auto --json`, `python -m ui.serve`, with only WORKBENCH_DATA_DIR and the port set and
every other WORKBENCH_* variable unset, so jobs are read in the forkserver child, the
worker thread and the CLI's endpoint run, and the demo documents are queued for that
worker. The first admin signs in with the one-time password `init` wrote and changes it,
then opens every page; after that, five files of five formats are uploaded through the
Documents page and one is handed over from the CLI, and every job must succeed, with each
document's facts drawn in the viewer.

Why this test exists: every job failed with resource_limit once any page had been opened,
because the job's forkserver child re-ran Home.py (Streamlit's ``__main__``) and opened
the database the app holds (fixed in core/services/ingest/sandbox.py). The suite stayed green
because its tests read documents in-process (WORKBENCH_JOB_PROCESS=off); tests/conftest.py
says which tests may still do so.

The tests run in file order and build on one another (one admin's browser session); a
test whose earlier step did not run is skipped with the reason. Screenshots of the viewer
go to the test's tmp dir and to <repo>/test-artifacts/real-config/.
"""

from __future__ import annotations

import io
import json
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.support.browser_support import (CHROMIUM, LOAD, NO_CHROMIUM, ROOT, choose, chromium_context, drawn_boxes,
                                           free_port, full_page_screenshot, grid_rows, server_env, serving, settle,
                                           signed_in_as, submit_sign_in)

pytestmark = pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=NO_CHROMIUM)  # browser: by folder
ARTIFACTS = ROOT / "test-artifacts" / "real-config"
STEP = 30_000
READ = 240_000  # ms: an upload waits behind the demo documents `make run` queued (a scan and a fax are OCR'd)
NEW_PASSWORD = "the-admins-own-password-21"
# Every page, by its sidebar link, and the title each shows.
PAGES = ("Chart overview", "Documents", "Review queue", "Chat", "Evals", "Operations")
# The uploads' patient (a demo patient with no demo documents) and the CLI's; each
# document prints its patient's name, birth date and MRN, so its identity is verified.
AYESHA = {"first": "Ayesha", "last": "Okonkwo", "dob": "1979-07-22", "mrn": "DEMO-1003", "sex": "F"}
LUCIAN = {"first": "Lucian", "last": "Featherstone", "dob": "1990-01-05", "mrn": "DEMO-1004", "sex": "M"}
LETTER = ["Harbourside Medical Practice, 12 Quay Street", "14 October 2026", "Referral to: Endocrinology Clinic",
          "Patient: Ayesha OKONKWO    Born: 22/07/1979    MRN: DEMO-1003", "Dear colleague,",
          "Please see Ms Okonkwo for type 2 diabetes; her HbA1c has risen over the past year.",
          "Allergies: penicillin - hives.", "Current medications:", "Metformin 500 mg twice daily",
          "Yours sincerely,", "Dr Oriel Haversham"]
# filename -> (golden document spec, the category the upload form should suggest, paged)
UPLOADS: dict[str, tuple[dict[str, Any], str, bool]] = {
    "okonkwo-lab-typed.pdf": ({"kind": "lab", "preset": "classic_cbc_lipids", "patient": "ayesha"}, "Lab Report",
                              True),
    "okonkwo-lab-scanned.png": ({"kind": "lab", "layout": "classic", "patient": "ayesha",
                                 "collection_date": "2026-10-01",
                                 "panels": [["Basic Metabolic Panel",
                                             [["Sodium", "139", "mmol/L", "134-144", "normal", ""],
                                              ["Glucose", "131", "mg/dL", "65-99", "high", "H"]]]],
                                 "scan": {"seed": 3, "dpi": 200, "format": "png"}}, "Lab Report", True),
    "okonkwo-referral.docx": ({"kind": "docx", "paragraphs": LETTER}, "Referral Document", False),
    "okonkwo-workbook.xlsx": ({"kind": "xlsx", "sheets": {
        "Patient": [["Patient name", "Ayesha Okonkwo"], ["Date of birth", "1979-07-22"], ["MRN", "DEMO-1003"]],
        "Lab trend": [["Date", "Test", "Result", "Units", "Reference range"],
                      ["2025-10-02", "Hemoglobin A1c", 7.1, "%", "<5.7"],
                      ["2026-04-10", "Hemoglobin A1c", 7.9, "%", "<5.7"]]}}, "Clinical Workbook", False),
    "okonkwo-potassium.hl7": ({"kind": "hl7", "segments": [
        "MSH|^~\\&|LAB|HARBOUR LAB|EHR|CLINIC|20261020101500||ORU^R01^ORU_R01|E2E00021|P|2.5.1",
        "PID|1||DEMO-1003^^^CLINIC^MR||OKONKWO^AYESHA||19790722|F",
        "OBR|1|ORD1|FIL1|80048^Basic metabolic panel^C4|||20261020083000|||||||||||||||20261020101000|||F",
        "OBX|1|NM|2823-3^Potassium^LN||4.4|mmol/L|3.5-5.1|N|||F|||20261020083000",
        "OBX|2|NM|2951-2^Sodium^LN||137|mmol/L|136-145|N|||F|||20261020083000",
    ]}, "HL7 v2 Message", False),
}
CLI_FILE = "featherstone-lab.pdf"
# ui/viewer.py: the cited cell of an HL7 or sheet table is painted #fde68a.
HIGHLIGHT = (0xFD, 0xE6, 0x8A)
done: dict[str, Any] = {}  # what the earlier steps did, for the later checks


# ----------------------------------------------------------------------------- the app as `make run` starts it


def _core(env: dict[str, str], *args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "core", *args], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=timeout)


def _core_json(env: dict[str, str], *args: str) -> dict[str, Any]:
    proc = _core(env, *args)
    assert proc.returncode == 0, f"core {' '.join(args)} failed ({proc.returncode}): {proc.stderr[-2000:]}"
    return json.loads(proc.stdout)


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    started = time.monotonic()
    for old in ARTIFACTS.glob("failed-*"):  # an earlier run's evidence
        old.unlink()
    root = tmp_path_factory.mktemp("real-config")
    data = root / "data"
    env = server_env(data, free_port())
    # Nothing but the data dir and the port: the production defaults, whatever this process has set.
    assert sorted(k for k in env if k.startswith(("WORKBENCH_", "STREAMLIT_"))) == ["STREAMLIT_SERVER_PORT",
                                                                                   "WORKBENCH_DATA_DIR"]
    # The three commands of `make run` (Makefile: init, then run).
    init = _core(env, "init")
    assert init.returncode == 0, init.stderr[-2000:]
    demo = _core_json(env, "demo", "--queue", "--auto", "--json")
    assert demo["documents"] and {d["job"]["status"] for d in demo["documents"]} == {"pending"}, demo
    log = root / "serve.log"
    with serving(env, log=log) as (url, proc):
        yield {"url": url, "env": env, "data": data, "proc": proc, "log": log, "root": root,
               "demo_documents": len(demo["documents"]), "started": started}
    print(f"\nreal-config app: {time.monotonic() - started:.1f} s from `core init` to the server's stop")


@pytest.fixture(scope="module")
def tab(app, tmp_path_factory):
    """One tab for the whole module: the admin's session, as one person would use it."""
    with chromium_context(tmp_path_factory.mktemp("chromium-profile")) as context:
        yield context.new_page()


@pytest.fixture(autouse=True)
def _keep_the_evidence(request, app, tab):
    """When a step fails, the page as it was and the server's log are kept beside the screenshots."""
    failed_before = request.session.testsfailed
    yield
    if request.session.testsfailed > failed_before and not tab.is_closed():
        name = request.node.name
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        errors = tab.locator("[data-testid='stException']").all_inner_texts()
        (ARTIFACTS / f"failed-{name}.txt").write_text(f"{tab.url}\n\n" + "\n\n".join(errors) + "\n\nserver log:\n"
                                                      + app["log"].read_text(errors="replace")[-6000:])
        try:
            full_page_screenshot(tab, ARTIFACTS / f"failed-{name}.png")
        except Exception:  # noqa: BLE001 - the evidence is a courtesy; the failure is what counts
            pass


def needs(*steps: str) -> None:
    missing = [s for s in steps if s not in done]
    if missing:
        pytest.skip("needs the earlier step(s) of this scenario: " + ", ".join(missing))


# ----------------------------------------------------------------------------- page helpers


def no_exception(page, where: str) -> None:
    settle(page)
    shown = page.locator("[data-testid='stException']")
    if shown.count():
        pytest.fail(f"{where} shows an exception:\n" + "\n\n".join(shown.all_inner_texts())[:4000])
    assert "Traceback" not in page.locator("body").inner_text(), where


def open_from_sidebar(page, title: str) -> None:
    """Move within the session by the sidebar's link, as a person does, and wait for the page."""
    settle(page)
    page.get_by_test_id("stSidebarNav").get_by_role("link", name=title, exact=True).click()
    page.get_by_role("heading", name=title, exact=True).wait_for(timeout=LOAD)
    no_exception(page, title)


def show_document(page, name: str) -> int:
    """Choose ``name`` in the Documents page's select and wait until the page below is
    that document's (the address names it and no element of the previous one is left);
    returns its id."""
    shown = lambda: re.search(r"[?&]document=(\d+)", page.url)  # noqa: E731
    before = shown().group(1) if shown() else None
    if not page.get_by_role("combobox", name="Document").input_value().startswith(name):
        choose(page, "Document", name)
        page.wait_for_function("before => new URLSearchParams(location.search).get('document') !== before",
                               arg=before, timeout=STEP)
    page.wait_for_function("""() => document.querySelector("[data-testid='stApp']")?.dataset.testScriptState
                                    === 'notRunning' && !document.querySelector("[data-stale='true']")""",
                           timeout=STEP)
    return int(shown().group(1))


def cited_band_rows(grid) -> set[int]:
    """The data rows (0 first) of an st.dataframe the viewer painted with the cited cell's
    colour. The grid draws on a canvas, so its picture is read: header and rows are 35 px."""
    from PIL import Image

    grid.scroll_into_view_if_needed()
    image = Image.open(io.BytesIO(grid.screenshot())).convert("RGB")
    width, height = image.size
    pixels = image.load()
    painted = [y for y in range(height)
               if sum(all(abs(c - h) <= 8 for c, h in zip(pixels[x, y], HIGHLIGHT)) for x in range(0, width, 4))
               > width / 4 * 0.15]
    return {(y - 35) // 35 for y in painted if y >= 35}


def settled_grid_rows(page, grid, tries: int = 3) -> list[dict[str, str]]:
    """``grid_rows`` once the grid holds still: right after a document is chosen the page
    reruns, and a grid read during that redraw reports one table's size and another's
    cells. Read again, a moment later, up to ``tries`` times."""
    for attempt in range(tries):
        try:
            return grid_rows(grid)
        except AssertionError:
            if attempt == tries - 1:
                raise
            page.wait_for_timeout(1500)
    raise AssertionError("unreachable")


def upload_rows(page) -> dict[str, str]:
    """The upload form's files and the category suggested for each (file name -> category)."""
    rows = page.locator("[data-testid='stExpander'] [data-testid='stHorizontalBlock']")
    out = {}
    for i in range(rows.count()):
        row = rows.nth(i)
        name = row.locator("strong").first.inner_text()
        out[name] = row.get_by_role("combobox").input_value()
    return out


# ----------------------------------------------------------------------------- the scenario


def test_the_first_admin_signs_in_and_every_page_opens_without_an_exception(app, tab):
    page = tab
    password_file = app["data"] / "initial-admin-password.txt"
    one_time = re.search(r"^password: (\S+)$", password_file.read_text(), re.M).group(1)
    page.goto(app["url"])
    submit_sign_in(page, "admin", one_time)
    page.get_by_role("button", name="Change password").wait_for(timeout=STEP)
    page.get_by_label("Current password", exact=True).fill(one_time)
    page.get_by_label("New password", exact=True).fill(NEW_PASSWORD)
    page.get_by_label("New password again", exact=True).fill(NEW_PASSWORD)
    page.get_by_role("button", name="Change password").click()
    page.get_by_role("heading", name="Chart overview").wait_for(timeout=LOAD)
    signed_in_as(page, "admin").wait_for(timeout=STEP)
    no_exception(page, "Chart overview")

    # The uploads' patient, chosen in the sidebar; the address then names her chart.
    settle(page)
    page.locator("[data-testid='stSidebar'] [data-testid='stSelectbox']").click()
    # the select shows the MRN first, so a narrow sidebar never cuts it
    page.get_by_role("option", name=re.compile(f"^{AYESHA['mrn']} · {AYESHA['last']}, {AYESHA['first']}")).click()
    page.get_by_text(f"MRN {AYESHA['mrn']}").first.wait_for(timeout=STEP)
    settle(page)
    done["patient_id"] = int(re.search(r"[?&]patient=(\d+)", page.url).group(1))

    for title in PAGES:
        open_from_sidebar(page, title)
    done["pages"] = True


def test_five_formats_uploaded_on_the_documents_page_are_read_and_drawn(app, tab, tmp_path_factory):
    needs("pages")
    from golden.documents import build_spec

    folder = tmp_path_factory.mktemp("uploads")
    files = []
    for name, (spec, _, _) in UPLOADS.items():
        (folder / name).write_bytes(build_spec(spec, {"ayesha": AYESHA}, key=name)[0])
        files.append(folder / name)

    page = tab
    open_from_sidebar(page, "Documents")
    page.get_by_text("No documents on this chart yet").wait_for(timeout=STEP)
    page.locator("input[type='file']").set_input_files([str(f) for f in files])
    upload = page.get_by_role("button", name=f"Upload {len(files)} files")
    upload.wait_for(timeout=STEP)
    settle(page)
    assert upload_rows(page) == {name: category for name, (_, category, _) in UPLOADS.items()}
    upload.click()

    # Each file's notice: what reading it did ("<name>: read, 10 added to the chart", or what waits for a
    # person), or could not be read (which names why). A progress bar ("<name>: being read") is no notice.
    for name in UPLOADS:
        notices = page.locator("[data-testid='stAlert']")
        read = notices.filter(has_text=re.compile(rf"{re.escape(name)}(: | was read)"))
        failed = page.get_by_text(f"{name} could not be read")
        read.or_(failed).first.wait_for(timeout=READ)
        if failed.count():
            pytest.fail(f"the upload of {name} failed: {failed.first.inner_text()}")
    no_exception(page, "Documents after the uploads")

    shots = tmp_path_factory.mktemp("screenshots")
    drawn: dict[str, dict[str, Any]] = {}
    for name, (spec, _, paged) in UPLOADS.items():
        document_id = show_document(page, name)
        facts = page.get_by_text(re.compile(r"^Facts \(\d+\)$"))
        facts.wait_for(timeout=STEP)
        count = int(re.search(r"\d+", facts.inner_text()).group())
        assert count > 0, f"{name}: no facts"
        if paged:  # one box over the page per fact
            from playwright.sync_api import expect

            expect(page.locator(".cdw-box")).to_have_count(count, timeout=STEP)
            boxes = drawn_boxes(page)
            assert all(b["w"] > 0 and b["h"] > 0 for b in boxes.values()), boxes
            drawn[name] = {"document_id": document_id, "facts": count, "boxes": set(boxes)}
        elif name.endswith(".docx"):  # the quoted words highlighted in the letter's text
            marked = page.locator(".stMarkdownColoredBackground")
            marked.first.wait_for(timeout=STEP)
            text = marked.first.inner_text().strip()
            assert text and any(text in paragraph for paragraph in LETTER), text
            drawn[name] = {"document_id": document_id, "facts": count, "highlighted": text}
        else:  # HL7 segments or the sheet: the cited row painted, holding the quoted value
            quoted = page.get_by_text(re.compile(r" · value “[^”]+”$")).first
            quoted.wait_for(timeout=STEP)
            value = re.search(r"value “([^”]+)”", quoted.inner_text()).group(1)
            grid = page.locator("[data-testid='stDataFrame']").nth(1)  # the first is the fact list
            rows = settled_grid_rows(page, grid)
            page.wait_for_timeout(500)  # the grid redraws after being read
            painted = cited_band_rows(grid)
            assert painted, f"{name}: no cited row is highlighted"
            assert all(0 <= r < len(rows) for r in painted), (name, painted, len(rows))
            assert any(value in rows[r].values() for r in painted), (name, value, [rows[r] for r in painted])
            drawn[name] = {"document_id": document_id, "facts": count, "value": value}
        no_exception(page, f"the viewer of {name}")
        shot = full_page_screenshot(page, shots / f"documents-{Path(name).stem}.png")
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        shutil.copy(shot, ARTIFACTS / shot.name)
    done["uploads"] = drawn
    print(f"\nviewer screenshots: {shots} (copied to {ARTIFACTS})")


def test_a_file_handed_over_from_the_cli_after_the_pages_were_opened_is_read(app, tmp_path):
    needs("pages")
    from golden.documents import build_spec

    lab = tmp_path / CLI_FILE
    lab.write_bytes(build_spec({"kind": "lab", "preset": "dotted_cbc_urine", "patient": "lucian"},
                               {"lucian": LUCIAN}, key=CLI_FILE)[0])
    # The app holds the database: this command hands itself to the app's loopback endpoint,
    # and the app reads the file in its own job process.
    assert (app["data"] / "app-endpoint.json").exists()
    proc = _core(app["env"], "ingest", str(lab), "--patient", LUCIAN["mrn"], "--doc-type", "lab_pdf", "--json")
    out = json.loads(proc.stdout) if proc.stdout.strip() else {}
    assert proc.returncode == 0 and out["job"]["status"] == "succeeded", (proc.returncode, proc.stderr[-2000:],
                                                                         out.get("job"))
    assert out["identity"]["status"] == "identity_verified" and out["facts"], out["identity"]
    done["cli"] = {"document_id": out["document_id"], "job_id": out["job"]["job_id"],
                   "boxes": {f["fact_id"] for f in out["facts"] if f["citation"].get("bounding_box")}}


def test_every_job_succeeded_in_the_apps_forkserver_child(app, tab):
    needs("pages")
    import psutil

    # The jobs were read where production reads them: in the children of the app's forkserver.
    commands = []
    for child in psutil.Process(app["proc"].pid).children(recursive=True):
        try:
            commands.append(" ".join(child.cmdline()))
        except psutil.Error:  # a job's child that ended meanwhile
            pass
    assert any("multiprocessing.forkserver" in c for c in commands), commands

    # Operations, as the admin sees it: the queue drained and no job failed.
    page = tab
    open_from_sidebar(page, "Operations")
    metrics = page.locator("[data-testid='stMetric']")

    def metric(label: str) -> str:
        return metrics.filter(has_text=label).locator("[data-testid='stMetricValue']").inner_text().strip()

    deadline = time.monotonic() + READ / 1000
    while (metric("Waiting in the queue"), metric("Being read now")) != ("0", "0") and time.monotonic() < deadline:
        page.wait_for_timeout(1000)
    assert (metric("Waiting in the queue"), metric("Being read now")) == ("0", "0")
    if metric("Failed") != "0":
        page.get_by_text("Failed jobs").wait_for(timeout=STEP)
        pytest.fail(f"{metric('Failed')} job(s) failed:\n" + page.locator("[data-testid='stMain']").inner_text()
                    .split("Failed jobs", 1)[1][:3000])
    no_exception(page, "Operations")

    # The same from the CLI beside the app. It reads the counts the worker last wrote with
    # its heartbeat, which follow a job run for the CLI at the worker's next beat.
    expected = app["demo_documents"] + len(done.get("uploads") or {}) + ("cli" in done)
    deadline = time.monotonic() + 30
    while True:
        health = _core_json(app["env"], "health", "--json")
        queue = health["components"]["queue"]
        if (queue["pending"], queue["running"], queue["succeeded"]) == (0, 0, expected) or time.monotonic() > deadline:
            break
        time.sleep(1)
    assert health["status"] == "ok" and health["checks"]["worker_fresh"], health
    assert (queue["failed"], queue["pending"], queue["running"], queue["succeeded"]) == (0, 0, 0, expected), queue


def test_the_database_holds_what_the_browser_and_the_cli_saw(app):
    needs("pages", "uploads", "cli")
    import duckdb

    app["proc"].terminate()  # DuckDB admits one process: read once the app has let go
    app["proc"].wait(30)
    con = duckdb.connect(str(app["data"] / "workbench.duckdb"), read_only=True)
    try:
        jobs = con.execute("SELECT id, status, error_code FROM processing_jobs ORDER BY id").fetchall()
        boxed = {}
        for name, seen in done["uploads"].items():
            rows = con.execute("SELECT id, citation FROM document_facts WHERE document_id = ? AND retracted_at IS NULL",
                               [seen["document_id"]]).fetchall()
            boxed[name] = (len(rows), {i for i, c in rows if json.loads(c).get("bounding_box")})
    finally:
        con.close()
    assert [(s, e) for _, s, e in jobs] == [("succeeded", None)] * len(jobs), jobs
    assert len(jobs) == app["demo_documents"] + len(UPLOADS) + 1
    for name, seen in done["uploads"].items():
        assert boxed[name][0] == seen["facts"], (name, boxed[name], seen)
        if "boxes" in seen:  # the page drew exactly the boxes the document's facts cite
            assert seen["boxes"] == boxed[name][1], (name, seen["boxes"], boxed[name][1])
    assert done["cli"]["boxes"], "the handed-over lab's facts cite no box"
