"""Documents must not drive the browser: text that came from a document (fact text,
quotes, filenames, review reasons, answer items) is shown as inert text on every page,
while the database keeps it exactly as it was read.

Each format (lab PDF, intake PDF, DOCX referral, XLSX workbook, HL7 OBX, a filename)
carries image, link, HTML, script, LaTeX and colour-directive payloads, and some file
names a right-to-left override. The pages are rendered in AppTest and every
Markdown-bearing string (markdown, captions, alerts, labels, help, progress text,
st.table cells) is checked, and no string anywhere on the page (select options,
dataframe cells, JSON, the viewer's box labels too) carries a bidirectional control;
one headless-chromium test checks that the real page makes no request to the payloads'
address. An HL7 batch uploaded under such a name and read in parts names its parts, on
the buttons that open them, as the text it is (issue 21, item 5).
"""

from __future__ import annotations

import dataclasses
import os
import re
from pathlib import Path

import pytest
from google.protobuf.message import Message
from streamlit.testing.v1 import AppTest

from tests.support.app_support import app
from ui.inert import BIDI_CONTROLS, md_text, plain, plain_text

ROOT = Path(__file__).resolve().parents[2]
IMG = "![x](http://127.0.0.1:9/beacon.png)"
LINK = "[click](http://127.0.0.1:9/x)"
HTML = "<img src=http://127.0.0.1:9/y>"
SCRIPT = "<script>alert(1)</script>"
TEX = "$x^2$"
RED = ":red[alert]"
PAYLOADS = (IMG, LINK, HTML, SCRIPT, TEX, RED)
# What must never reach Markdown un-neutralised: the URL itself (a link or image needs
# it whole) and the opening of each construct without its escaping backslash.
UNSAFE = (re.compile(r"http://127\.0\.0\.1:9"), re.compile(r"(?<!\\)!(?<!\\)\["),
          re.compile(r"(?<!\\)\]\("), re.compile(r"(?<!\\)<(?:img|script)", re.I),
          re.compile(r"(?<!\\)\$x\^2"), re.compile(r"(?<!\\):red(?<!\\)\["))
RLO = "\u202e"  # RIGHT-TO-LEFT OVERRIDE: "x\u202efdp.hl7" reads as "x7lh.pdf"
BIDI = ("\u202a", "\u202b", "\u202c", "\u202d", RLO, "\u2066", "\u2067", "\u2068", "\u2069", "\u200e",
        "\u200f", "\u061c")
MARISOL = {"first": "Marisol", "last": "Quintero-Vale", "dob": "1961-03-14", "mrn": "DEMO-1001", "sex": "F"}

FILES = {
    "docx": f"referral {IMG}.docx",
    "lab": f"lab {LINK}.pdf",
    "intake": f"intake {TEX} {RED}.pdf",
    "xlsx": f"{SCRIPT} {RLO}fdp.xlsx",
    "hl7": "critical.hl7",
    "wrong": f"wrong patient {HTML}{RLO}xslx.pdf",
}


# ----------------------------------------------------------------------------- md_text


@pytest.mark.parametrize("payload", PAYLOADS + ("www.example.com a@b.org", ":material/home: :smile: :+1:",
                                                 "**b** _i_ `c` ~~s~~ | &lt;", "# h", "- item", "1. one", "> q",
                                                 # nested emphasis, entities spelling a tag, reference-style
                                                 # definitions and links, autolinks, footnotes, mixed case
                                                 "***bold _it_ x***", "&lt;img src=http://127.0.0.1:9/a&gt;",
                                                 "&#60;script&#62;", "[x]: http://127.0.0.1:9/r", "![a][x] [b][]",
                                                 "<http://127.0.0.1:9/a> <mail@127.0.0.1>", "note[^1] [^1]: x",
                                                 "HTTPS://Example.org WWW.Example.org", "mailto:a.b+c@example.org",
                                                 "10) item", "  # indented heading"))
def test_md_text_leaves_no_construct_open(payload):
    out = md_text(payload)
    for pattern in UNSAFE:
        assert not pattern.search(out), (payload, out)
    assert "://" not in out and "www." not in out and "@" not in out.replace("\u2060@", "")
    for mark in "*_`~|&<[]$":
        assert not re.search(r"(?<!\\)" + re.escape(mark), out), (mark, out)
    assert not re.search(r"(?<!\\):(?=[A-Za-z\[]|[\w+-]+:)", out)
    assert not re.match(r"\s*(?:[#>+=-]|\d+[.)])", out), out  # no block marker at the start
    # Read back (escapes dropped, joiners removed) it is the text itself.
    assert re.sub(r"\\(.)", r"\1", out).replace("\u2060", "") == payload


def test_md_text_keeps_ordinary_clinical_text_readable():
    for text in ("LDL Cholesterol 148 mg/dL (ref 100-199) high, collected 2026-04-10", "Quintero-Vale",
                 "Penicillin (hives); shellfish?", "documents:21", "08:30", "page 1, row ‘WBC’"):
        assert md_text(text) == text
    assert md_text(None) == "" and md_text(7.9) == "7.9"
    assert md_text("line one\nline two\r\n  three") == "line one line two three"
    assert md_text("ref <5.7") == "ref \\<5.7"


@pytest.mark.parametrize("control", BIDI)
def test_bidi_controls_are_shown_as_a_mark_and_text_keeps_its_stored_order(control):
    name = f"**bold**[x](http://e){control}fdp.hl7"
    for shown in (md_text(name), plain_text(name)):
        assert not BIDI_CONTROLS.search(shown) and control not in shown
        # read back, the text is in the order it is stored, with the control as U+FFFD
        assert re.sub(r"\\(.)", r"\1", shown).replace("\u2060", "") == "**bold**[x](http://e)\ufffdfdp.hl7"
    assert md_text(name).startswith("\\*\\*bold\\*\\*\\[x\\]")


def test_plain_neutralises_rows_frames_and_json_without_touching_other_values():
    import pandas as pd

    rows = [{f"file{RLO}": f"a{RLO}b.pdf", "n": 3, "when": None, "nested": {"k": [f"q{RLO}"]}}]
    assert plain(rows) == [{"file\ufffd": "a\ufffdb.pdf", "n": 3, "when": None, "nested": {"k": ["q\ufffd"]}}]
    frame = plain(pd.DataFrame({f"value{RLO}": [f"x{RLO}y", 1.5]}, index=[f"r{RLO}", "s"]))
    assert list(frame.columns) == ["value\ufffd"] and list(frame.index) == ["r\ufffd", "s"]
    assert frame.iloc[0, 0] == "x\ufffdy" and frame.iloc[1, 0] == 1.5
    assert plain_text("Quintero-Vale 7.9 %") == "Quintero-Vale 7.9 %" and plain_text(None) == ""


def test_the_viewer_sets_box_labels_as_inert_text():
    from ui import viewer

    # A box's label (fact text) goes into a title attribute, never into HTML.
    assert "el.title = b.label" in viewer._OVERLAY_JS
    assert "innerHTML" not in viewer._OVERLAY_JS and "insertAdjacentHTML" not in viewer._OVERLAY_JS


# ----------------------------------------------------------------------------- a chart full of payloads


def _documents() -> dict[str, tuple[bytes, str]]:
    from golden import fixtures as fx
    from golden.documents import build_spec

    marisol = fx.Patient(**MARISOL)
    docx, _ = build_spec({"kind": "docx", "paragraphs": [
        "Referral letter", "Patient: Marisol Quintero-Vale", "Date of birth: 14/03/1961", "MRN: DEMO-1001",
        f"Reason for referral: {IMG} {LINK}", f"Allergies: {HTML} - {SCRIPT}", "Current medications:",
        f"Metformin 500 mg twice daily {TEX} {RED}"]}, {})
    xlsx, _ = build_spec({"kind": "xlsx", "sheets": {
        "Patient": [["Patient name", "Marisol Quintero-Vale"], ["Date of birth", "1961-03-14"], ["MRN", "DEMO-1001"]],
        "Lab trend": [["Date", "Test", "Result", "Units", "Reference range"],
                      ["2026-04-10", f"Hemoglobin A1c {IMG}", 7.9, "%", f"<5.7 {SCRIPT}"]]}}, {})
    hl7, _ = build_spec({"kind": "hl7", "segments": [
        "MSH|^~\\&|LAB|HARBOUR LAB|EHR|CLINIC|20261020101500||ORU^R01^ORU_R01|DEMO0001|P|2.5.1",
        "PID|1||DEMO-1001^^^CLINIC^MR||QUINTERO-VALE^MARISOL||19610314|F",
        "OBR|1|ORD1|FIL1|80048^Basic metabolic panel^C4|||20261020083000|||||||||||||||20261020101000|||F",
        f"OBX|1|TX|2823-3^Potassium {IMG}^LN||6.8 {LINK} {TEX}|mmol/L|3.5-5.1|HH|||F|||20261020083000"]}, {})
    base = fx.LAB_CASES[0]
    first = base.panels[0][1][0]
    panels = ((base.panels[0][0], (dataclasses.replace(first, test_name=f"{first.test_name} {IMG}"),)
               + base.panels[0][1][1:]),) + base.panels[1:]
    lab = fx.render_lab(dataclasses.replace(base, patient=marisol, panels=panels))
    intake = fx.render_intake(dataclasses.replace(
        fx.INTAKE_CASES[0], patient=marisol, chief_concern=f"{IMG} {LINK} {HTML}",
        allergies_printed=f"Penicillin (hives); {SCRIPT} {TEX} {RED}",
        notes=(f"Thinks she might be pregnant {SCRIPT} {TEX} {RED}",)))
    wrong = fx.render_lab(base)  # another patient's report filed to this chart
    return {"docx": (docx, "referral_docx"), "xlsx": (xlsx, "clinical_workbook"), "hl7": (hl7, "hl7v2_message"),
            "lab": (lab, "lab_pdf"), "intake": (intake, "intake_form"), "wrong": (wrong, "lab_pdf")}


def _ingest_all(wb) -> tuple[dict, dict[str, int]]:
    from core.services.ingest.ingestion import attach_and_extract
    from core.services.admin.patients import get_patient
    from core.services.ingest.worker import Worker

    patient = get_patient(wb, mrn=MARISOL["mrn"])
    ids = {}
    for key, (data, doc_type) in _documents().items():
        attached = attach_and_extract(wb, patient_id=patient["id"], source=FILES[key], data=data,
                                      filename=FILES[key], doc_type=doc_type, by="dr.alice")
        job = Worker(wb).run_specific(attached.job["id"])
        assert job["status"] == "succeeded", (key, job["error_code"], job["error_message"])
        ids[key] = attached.document["id"]
    return patient, ids


@pytest.fixture
def chart(app_env):
    patient, ids = _ingest_all(app_env)
    return app_env, patient, ids


def _open(patient_id: int, page: str | None = None, **query) -> AppTest:
    at = app(timeout=90, **query)  # signed in as a reviewer: every control is drawn
    at.session_state["patient_id"] = patient_id
    at.run()
    if page:
        at.switch_page(page).run()
    assert not at.exception, at.exception
    return at


# Protos whose strings are shown as plain text: code, st.text, JSON, dataframes, the
# options of a select (Streamlit does not read them as Markdown), chat input.
_INERT_PROTOS = {"Code", "Text", "Json", "Arrow", "Selectbox", "MultiSelect", "ChatInput", "TextInput",
                 "BidiComponent", "Exception"}
_MARKDOWN_FIELDS = {"body", "label", "help", "text", "caption"}


def _strings(message, out: list[str]) -> None:
    if type(message).__name__ in _INERT_PROTOS:
        return
    for field, value in message.ListFields():
        if field.type == field.TYPE_MESSAGE:  # a repeated field is a container
            for item in [value] if isinstance(value, Message) else value:
                _strings(item, out)
        elif field.type == field.TYPE_STRING and field.name in _MARKDOWN_FIELDS:
            out.extend([value] if isinstance(value, str) else value)


def shown_markdown(at: AppTest) -> list[str]:
    """Every string of the rendered page that Streamlit reads as Markdown."""
    out: list[str] = []

    def walk(node) -> None:
        proto = getattr(node, "proto", None)
        if proto is not None:
            _strings(proto, out)
        for child in (getattr(node, "children", None) or {}).values():
            walk(child)

    walk(at._tree)
    for table in at.table:  # st.table renders its cells as Markdown
        frame = table.value
        out.extend(str(v) for v in frame.to_numpy().ravel().tolist() + list(frame.columns))
    return out


def _every_string(message, out: list[str]) -> None:
    for _field, value in message.ListFields():
        for item in [value] if isinstance(value, (str, bytes, int, float, Message)) else list(value):
            if isinstance(item, Message):
                _every_string(item, out)
            elif isinstance(item, str):
                out.append(item)


def every_string(at: AppTest) -> list[str]:
    """Every string the rendered page sends, Markdown or not: labels, select options,
    JSON, the viewer's data, and every cell, column and index of each dataframe and table."""
    out: list[str] = []

    def walk(node) -> None:
        proto = getattr(node, "proto", None)
        if proto is not None:
            _every_string(proto, out)
        for child in (getattr(node, "children", None) or {}).values():
            walk(child)

    walk(at._tree)
    for frame in [d.value for d in at.dataframe] + [t.value for t in at.table]:
        frame = getattr(frame, "data", frame)  # a Styler's frame
        out.extend(str(v) for v in frame.to_numpy().ravel().tolist() + list(frame.columns) + list(frame.index))
    return out


def assert_no_bidi(at: AppTest) -> None:
    live = [s for s in every_string(at) if BIDI_CONTROLS.search(s)]
    assert not live, f"bidirectional controls reach the page: {[s[:160] for s in live]}"


def assert_inert(strings: list[str]) -> None:
    for s in strings:
        for pattern in UNSAFE:
            assert not pattern.search(s), f"{pattern.pattern!r} live in {s!r}"


def assert_shown(strings: list[str], *payloads: str) -> None:
    text = "\n".join(strings)
    for payload in payloads:
        assert md_text(payload) in text, f"{payload!r} is not shown (escaped) on the page"


# ----------------------------------------------------------------------------- tests


def test_the_database_keeps_every_payload_verbatim(chart):
    from core.services.review.facts import document_report
    from storage import documents_repo

    wb, patient, ids = chart
    with wb.db.cursor() as cur:
        stored = {d["id"]: d["filename"] for d in documents_repo.for_patient(cur, patient["id"])}
    assert {stored[ids[k]] for k in FILES} == set(FILES.values())
    quotes = {k: " ".join(f["citation"]["quote_or_value"] + " " + f["fact_text"]
                          for f in document_report(wb, i)["facts"]) for k, i in ids.items()}
    assert IMG in quotes["docx"] and LINK in quotes["docx"] and SCRIPT in quotes["docx"] and RED in quotes["docx"]
    assert IMG in quotes["xlsx"] and SCRIPT in quotes["xlsx"]
    assert IMG in quotes["hl7"] and LINK in quotes["hl7"] and TEX in quotes["hl7"]
    assert IMG in quotes["lab"]
    assert IMG in quotes["intake"] and LINK in quotes["intake"] and SCRIPT in quotes["intake"] and TEX in quotes["intake"]
    # The chart row promoted from the HL7 message keeps the test name as read too.
    from core.services.review.facts import chart_view

    assert any(IMG in r["test_name"] for r in chart_view(wb, patient["id"])["labs"])


def test_overview_shows_payloads_as_text(chart):
    wb, patient, ids = chart
    at = _open(patient["id"])
    strings = shown_markdown(at)
    assert_inert(strings)
    assert_no_bidi(at)
    assert_shown(strings, *PAYLOADS, FILES["docx"], FILES["lab"], FILES["intake"])
    # The critical potassium line names the test as the message printed it, escaped.
    assert any(e.value.startswith("Critical: Potassium " + md_text(IMG)) for e in at.error)
    # A fact line: the text bold, the file named, nothing live.
    assert any(f"**{md_text('Referral reason: ' + IMG + ' ' + LINK)}**" in m.value for m in at.markdown)


@pytest.mark.parametrize("key", ["docx", "xlsx", "hl7", "lab", "intake", "wrong"])
def test_documents_page_and_viewer_show_payloads_as_text(chart, key):
    from core.services.review.facts import document_report

    wb, patient, ids = chart
    facts = document_report(wb, ids[key])["facts"]
    carrying = next((f for f in facts if any(p in f["citation"]["quote_or_value"] + f["fact_text"]
                                              for p in PAYLOADS)), facts[0])
    at = _open(patient["id"], "app_pages/documents.py", document=str(ids[key]), fact=str(carrying["fact_id"]))
    strings = shown_markdown(at)
    assert_inert(strings)
    assert_no_bidi(at)
    chosen = next(c.value for c in at.caption if c.value.startswith("Chosen: "))
    assert md_text(carrying["fact_text"]) in chosen
    if key in ("docx", "xlsx", "hl7"):  # the native view quotes the cited value
        assert_shown(strings, *(p for p in PAYLOADS if p in carrying["citation"]["quote_or_value"]))
    # The delete preview names the file, escaped; opening it deletes nothing.
    next(b for b in at.button if b.label == "Delete this document…").click().run()
    preview = next(w.value for w in at.warning if w.value.startswith("Deleting **"))
    assert f"**{md_text(FILES[key])}**" in preview
    assert_inert(shown_markdown(at))
    assert_no_bidi(at)
    assert document_report(wb, ids[key])["facts"]  # still there


def test_review_queue_shows_payloads_as_text(chart):
    wb, patient, ids = chart
    at = _open(patient["id"], "app_pages/review_queue.py")
    seen: list[str] = []
    for _ in range(30):  # every item of the queue, one after another
        strings = shown_markdown(at)
        assert_inert(strings)
        assert_no_bidi(at)
        seen += strings
        nxt = next(b for b in at.button if b.label == "Next")
        if nxt.disabled:
            break
        nxt.click().run()
        assert not at.exception, at.exception
    # The other patient's report (filename with HTML) and the hedged allergy (script,
    # LaTeX and colour payloads) are both items; their words are shown, escaped.
    assert_shown(seen, FILES["wrong"], SCRIPT, TEX, RED)
    assert any(s.startswith("Quote: “") and md_text(SCRIPT) in s for s in seen)


def test_chat_answers_citing_payloads_show_them_as_text(chart):
    wb, patient, ids = chart
    at = _open(patient["id"], "app_pages/chat.py")
    at.chat_input[0].set_value("What are her allergies?").run()
    assert not at.exception, at.exception
    at.chat_input[0].set_value("What is her latest potassium?").run()
    assert not at.exception, at.exception
    strings = shown_markdown(at)
    assert_inert(strings)
    assert_no_bidi(at)
    assert_shown(strings, SCRIPT, IMG)
    cited = [t for t in at.toggle if t.label.startswith("Source: ")]
    assert any(md_text(FILES["docx"]) in t.label for t in cited)
    for toggle in cited[:6]:  # open the cited sources in the viewer
        toggle.set_value(True)
    at.run()
    assert not at.exception, at.exception
    assert_inert(shown_markdown(at))
    assert_no_bidi(at)


def test_the_review_audit_shows_names_and_reasons_as_text(chart):
    from core.services.review.facts import document_report
    from core.services.review.decisions import decide_identity

    wb, patient, ids = chart
    check = document_report(wb, ids["wrong"])["identity"]["identity_check_id"]
    decide_identity(wb, check, approve=False, by="dr.alice", reason=f"not ours {LINK} {RLO}fdp.exe")
    at = _open(patient["id"], "app_pages/review_queue.py")
    assert_inert(shown_markdown(at))
    assert_no_bidi(at)  # the audit table, its JSON and the undo select's options
    audit = next(d.value for d in at.dataframe if "What happened" in d.value.columns)
    assert plain_text(FILES["wrong"]) in set(audit["Document"])
    assert f"not ours {LINK} \ufffdfdp.exe" in set(audit["Reason"])
    undo = at.selectbox(key="au_undo_pick")
    assert undo.options[0].startswith(plain_text(FILES["wrong"]))  # AppTest gives the options as shown


# An HL7 batch uploaded under a name that is Markdown and carries a right-to-left
# override before a fake extension: shown as "…‮fdp.hl7", it reads "…7lh.pdf".
BATCH_NAME = f"**bold**[x](http://e){RLO}fdp.hl7"


def test_a_batch_read_in_parts_names_itself_and_its_parts_as_text(app_env, demo_patient, monkeypatch):
    from core.services.review.document_view import document_choices
    from core.services.ingest.worker import Worker
    from domain.settings import reload_settings
    from tests.core.ingest.test_hl7_batch_split import batch

    monkeypatch.setenv("WORKBENCH_HL7_MESSAGES_PER_JOB", "2")  # 5 messages: read in 3 parts
    reload_settings()
    at = _open(demo_patient["id"], "app_pages/documents.py")
    at.file_uploader[0].set_value([(BATCH_NAME, batch(5), "text/plain")]).run()
    assert not at.exception, at.exception
    assert_inert(shown_markdown(at))
    assert_no_bidi(at)
    assert any(m.value.startswith(f"**{md_text(BATCH_NAME)}** · ") for m in at.markdown)  # the upload list
    next(b for b in at.button if b.label == "Upload 1 file").click().run()
    assert not at.exception, at.exception
    docs = {d["filename"]: d for d in document_choices(app_env, demo_patient["id"])}
    parent = docs[BATCH_NAME]
    parts = sorted((d for d in docs.values() if d.get("parent_document_id") == parent["id"]), key=lambda d: d["id"])
    assert [d["filename"] for d in parts] == [f"{BATCH_NAME} · messages 1–2", f"{BATCH_NAME} · messages 3–4",
                                              f"{BATCH_NAME} · message 5"]
    for d in parts:
        assert Worker(app_env).run_specific(d["job_id"])["status"] == "succeeded"
    at.run()  # the notices say each part was read
    assert not at.exception, at.exception
    assert_inert(shown_markdown(at))
    assert_no_bidi(at)

    next(s for s in at.selectbox if s.label == "Document").set_value(parent["id"]).run()
    assert not at.exception, at.exception
    assert_inert(shown_markdown(at))
    assert_no_bidi(at)
    buttons = [b for b in at.button if str(b.key).startswith("open-part-")]
    assert [b.label for b in buttons] == [md_text(f"{d['filename']} · read") for d in parts]
    # No bold, no link; the extension reads ".hl7 · messages 1–2" in the order it is stored,
    # the override shown as a visible mark.
    shown = re.sub(r"\\(.)", r"\1", buttons[0].label).replace("\u2060", "")
    assert shown == "**bold**[x](http://e)\ufffdfdp.hl7 · messages 1–2 · read"
    # The select names the upload the same way (its options are plain text, not Markdown).
    picker = next(s for s in at.selectbox if s.label == "Document")
    assert picker.options[picker.index].startswith("**bold**[x](http://e)\ufffdfdp.hl7 · ")


# ----------------------------------------------------------------------------- a real browser


@pytest.mark.browser
def test_a_real_browser_fetches_nothing_a_document_names(tmp_path_factory):
    import shutil
    import subprocess
    import sys

    from tests.support.browser_support import CHROMIUM, NO_CHROMIUM, launch_chromium, server_env, serving, sign_in
    from tests.conftest import TEST_PASSWORD

    if not Path(CHROMIUM).exists():
        pytest.skip(NO_CHROMIUM)
    data = tmp_path_factory.mktemp("inert") / "data"
    env = server_env(data)
    subprocess.run([sys.executable, "-m", "core", "init", "--json"], cwd=ROOT, env=env, check=True, capture_output=True)
    _ingest_in(data)
    with serving(env) as (url, _proc):
        from playwright.sync_api import sync_playwright

        requests: list[str] = []
        with sync_playwright() as pw:
            context = launch_chromium(pw, tmp_path_factory.mktemp("chromium-profile"))
            context.on("request", lambda r: requests.append(r.url))
            page = context.new_page()
            sign_in(page, url, "dr.reviewer", TEST_PASSWORD, patient=1)
            page.get_by_text("Extracted facts").wait_for(timeout=60_000)
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
    shutil.rmtree(data, ignore_errors=True)


def _assert_nothing_live(page, requests: list[str]) -> None:
    assert not [u for u in requests if "127.0.0.1:9/" in u], requests
    live = page.evaluate("""() => [...document.querySelectorAll('img[src], a[href], script[src]')]
        .map(e => e.getAttribute('src') || e.getAttribute('href')).filter(u => u.includes('127.0.0.1:9'))""")
    assert live == []


def _ingest_in(data: Path) -> None:
    """Fill a data dir before the server opens it (the database has one writer)."""
    from core.services.workbench import open_workbench
    from domain.settings import reload_settings
    from tests.conftest import seed_test_accounts

    old = os.environ.get("WORKBENCH_DATA_DIR")
    os.environ["WORKBENCH_DATA_DIR"] = str(data)
    try:
        wb = open_workbench(reload_settings())
        try:
            seed_test_accounts(wb)
            patient, _ = _ingest_all(wb)
            assert patient["id"] == 1
        finally:
            wb.close()
    finally:
        if old is None:
            os.environ.pop("WORKBENCH_DATA_DIR", None)
        else:
            os.environ["WORKBENCH_DATA_DIR"] = old
        reload_settings()
