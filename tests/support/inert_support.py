"""What the inert-rendering tests feed the pages and how they read what was drawn:
payloads a document may carry (an image, a link, HTML, a script, LaTeX, a colour
directive, all pointing at a dead loopback address) and bidirectional controls, carried
by a document of each format (``payload_documents``); every string of an AppTest page that Streamlit reads as Markdown (``shown_markdown``), every
string it sends at all (``every_string``), and the checks on them. Used by
tests/ui/test_inert_rendering.py, tests/browser/test_browser_inert.py and the
held-messages tests."""

from __future__ import annotations

import dataclasses
import re

from google.protobuf.message import Message
from streamlit.testing.v1 import AppTest

from ui.inert import BIDI_CONTROLS, md_text

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


def payload_documents(patient: dict[str, str] = MARISOL) -> dict[str, tuple[bytes, str]]:
    """Each format carrying the payloads, naming ``patient`` (its identity is verified on
    that patient's chart), and another patient's report: key -> (bytes, doc_type)."""
    from golden import fixtures as fx
    from golden.documents import build_spec

    person = fx.Patient(**patient)
    y, m, d = patient["dob"].split("-")
    named = (f"Patient: {patient['first']} {patient['last']}", f"Date of birth: {d}/{m}/{y}", f"MRN: {patient['mrn']}")
    pid = (f"PID|1||{patient['mrn']}^^^CLINIC^MR||{patient['last'].upper()}^{patient['first'].upper()}||{y}{m}{d}|"
           f"{patient['sex']}")
    docx, _ = build_spec({"kind": "docx", "paragraphs": [
        "Referral letter", *named,
        f"Reason for referral: {IMG} {LINK}", f"Allergies: {HTML} - {SCRIPT}", "Current medications:",
        f"Metformin 500 mg twice daily {TEX} {RED}"]}, {})
    xlsx, _ = build_spec({"kind": "xlsx", "sheets": {
        "Patient": [["Patient name", f"{patient['first']} {patient['last']}"], ["Date of birth", patient["dob"]],
                    ["MRN", patient["mrn"]]],
        "Lab trend": [["Date", "Test", "Result", "Units", "Reference range"],
                      ["2026-04-10", f"Hemoglobin A1c {IMG}", 7.9, "%", f"<5.7 {SCRIPT}"]]}}, {})
    hl7, _ = build_spec({"kind": "hl7", "segments": [
        "MSH|^~\\&|LAB|HARBOUR LAB|EHR|CLINIC|20261020101500||ORU^R01^ORU_R01|DEMO0001|P|2.5.1",
        pid,
        "OBR|1|ORD1|FIL1|80048^Basic metabolic panel^C4|||20261020083000|||||||||||||||20261020101000|||F",
        f"OBX|1|TX|2823-3^Potassium {IMG}^LN||6.8 {LINK} {TEX}|mmol/L|3.5-5.1|HH|||F|||20261020083000"]}, {})
    base = fx.LAB_CASES[0]
    first = base.panels[0][1][0]
    panels = ((base.panels[0][0], (dataclasses.replace(first, test_name=f"{first.test_name} {IMG}"),)
               + base.panels[0][1][1:]),) + base.panels[1:]
    lab = fx.render_lab(dataclasses.replace(base, patient=person, panels=panels))
    intake = fx.render_intake(dataclasses.replace(
        fx.INTAKE_CASES[0], patient=person, chief_concern=f"{IMG} {LINK} {HTML}",
        allergies_printed=f"Penicillin (hives); {SCRIPT} {TEX} {RED}",
        notes=(f"Thinks she might be pregnant {SCRIPT} {TEX} {RED}",)))
    wrong = fx.render_lab(base)  # another patient's report filed to this chart
    return {"docx": (docx, "referral_docx"), "xlsx": (xlsx, "clinical_workbook"), "hl7": (hl7, "hl7v2_message"),
            "lab": (lab, "lab_pdf"), "intake": (intake, "intake_form"), "wrong": (wrong, "lab_pdf")}


def ingest_payload_documents(wb, patient: dict[str, str] = MARISOL) -> tuple[dict, dict[str, int]]:
    """``payload_documents`` filed to ``patient``'s chart (by MRN) under the FILES names, each
    read now; the chart's patient and the documents' ids by key."""
    from core.services.ingest.ingestion import attach_and_extract
    from core.services.admin.patients import get_patient
    from core.services.ingest.worker import Worker

    chart_patient = get_patient(wb, mrn=patient["mrn"])
    ids = {}
    for key, (data, doc_type) in payload_documents(patient).items():
        attached = attach_and_extract(wb, patient_id=chart_patient["id"], source=FILES[key], data=data,
                                      filename=FILES[key], doc_type=doc_type, by="dr.alice")
        job = Worker(wb).run_specific(attached.job["id"])
        assert job["status"] == "succeeded", (key, job["error_code"], job["error_message"])
        ids[key] = attached.document["id"]
    return chart_patient, ids


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
