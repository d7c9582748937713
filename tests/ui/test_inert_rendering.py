"""Documents must not drive the browser: text that came from a document (fact text,
quotes, filenames, review reasons, answer items) is shown as inert text on every page,
while the database keeps it exactly as it was read.

Each format (lab PDF, intake PDF, DOCX referral, XLSX workbook, HL7 OBX, a filename)
carries image, link, HTML, script, LaTeX and colour-directive payloads, and some file
names a right-to-left override. The pages are rendered in AppTest and every
Markdown-bearing string (markdown, captions, alerts, labels, help, progress text,
st.table cells) is checked, and no string anywhere on the page (select options,
dataframe cells, JSON, the viewer's box labels too) carries a bidirectional control
(that the real page in chromium makes no request to the payloads' address is
tests/browser/test_browser_inert.py). An HL7 batch uploaded under such a name and read in parts names its parts, on
the buttons that open them, as the text it is (issue 21, item 5).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from tests.support.app_support import app
from tests.support.inert_support import (BIDI, FILES, IMG, LINK, PAYLOADS, RED, RLO, SCRIPT, TEX, UNSAFE,
                                         assert_inert, assert_no_bidi, assert_shown, ingest_payload_documents,
                                         shown_markdown)
from ui.inert import BIDI_CONTROLS, md_text, plain, plain_text

ROOT = Path(__file__).resolve().parents[2]
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


@pytest.fixture
def chart(app_env):
    patient, ids = ingest_payload_documents(app_env)
    return app_env, patient, ids


def _open(patient_id: int, page: str | None = None, **query) -> AppTest:
    at = app(timeout=90, **query)  # signed in as a reviewer: every control is drawn
    at.session_state["patient_id"] = patient_id
    at.run()
    if page:
        at.switch_page(page).run()
    assert not at.exception, at.exception
    return at


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
    assert any(b.label == "Undo decision" for b in at.button)  # its row's words are in the markdown checked above


# An HL7 batch uploaded under a name that is Markdown and carries a right-to-left
# override before a fake extension: shown as "…‮fdp.hl7", it reads "…7lh.pdf".
BATCH_NAME = f"**bold**[x](http://e){RLO}fdp.hl7"


def test_a_batch_read_in_parts_names_itself_and_its_parts_as_text(app_env, demo_patient, monkeypatch):
    from core.services.review.document_view import document_choices
    from core.services.review.outcome import patient_outcomes
    from core.services.ingest.worker import Worker
    from domain.settings import reload_settings
    from tests.support.hl7_messages import batch
    from ui import glossary

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
    said = patient_outcomes(app_env, demo_patient["id"])  # what reading each part did, as the page words it
    assert [b.label for b in buttons] == [md_text(f"{d['filename']} · {glossary.outcome_words(said[d['id']])}")
                                          for d in parts]
    # No bold, no link; the extension reads ".hl7 · messages 1–2" in the order it is stored,
    # the override shown as a visible mark.
    shown = re.sub(r"\\(.)", r"\1", buttons[0].label).replace("\u2060", "")
    assert shown.startswith("**bold**[x](http://e)\ufffdfdp.hl7 · messages 1–2 · read, ")
    # The select names the upload the same way (its options are plain text, not Markdown).
    picker = next(s for s in at.selectbox if s.label == "Document")
    assert picker.options[picker.index].startswith("**bold**[x](http://e)\ufffdfdp.hl7 · ")
