"""Chart overview: who the patient is; first what needs attention now (the chart checks'
alerts, critical results, red flags, documents that keep failing); the counts the review
queue agrees with; each document and what happened to it; the findings in plain words.
Uploading lives on the Documents page."""

from datetime import date

import streamlit as st

from domain.errors import WorkbenchError
from domain.policy.access.permissions import Permission
from domain.models import IdentityStatus
from domain.policy.facts.chart_rules import CLOSED_PROMOTION_STATES, UNREAD_CONTENT, critical_result
from domain.policy.answers.relevance import context_of, context_tags
from core.services.admin.access_audit import VIEW_CHART
from core.services.checks.alerts import patient_alerts
from core.services.ingest.demo import demo_loaded
from core.services.ingest.job_health import failing_jobs
from core.services.review.attention import red_flag_findings
from core.services.review.facts import chart_view, latest_vital_signs, patient_facts
from core.services.review.outcome import chart_counts, patient_outcomes
from core.services.admin.patients import add_patient, chart_documents, list_patients
from core.services.ingest.processing import NOTHING_FOUND
from ui import auth, chart_alerts, glossary, labels
from ui.brief_tab import brief_tab
from ui.fhir_download import fhir_download
from ui.inert import md_text, plain
from ui.runtime import patient_picker, select_patient, workbench

DOCUMENTS_PAGE = "app_pages/documents.py"
GROUPS = {
    "verified": "Checked against the page and added to the chart",
    "document_fact": "Kept with their document (cited, not added to the chart)",
    "needs_review": "Needs review", "held": "On hold: the document's patient is not confirmed",
}

auth.require(Permission.READ)
wb = workbench()
patient = patient_picker()
st.title("Chart overview")
may_add = auth.can(Permission.ADD_PATIENT)


def welcome(*, has_patients: bool) -> None:
    loaded = demo_loaded(wb)
    st.info(
        "**Welcome to the review workbench.**\n\n"
        + ("" if has_patients else "1. Add a patient with the form below.\n" if may_add
           else "1. A reviewer adds the patient.\n")
        + f"{'1' if has_patients else '2'}. Upload the patient's documents on the **Documents** page; each one is "
          "read in the background and its findings appear here, cited to the page, cell or segment they came from.\n"
        + f"{'2' if has_patients else '3'}. Decide what needs a person on the **Review queue** page.\n\n"
        + ("The sample documents are loaded on the demo patients' charts (MRN DEMO-1001 to DEMO-1004): choose one "
           "in the sidebar to see them." if loaded else
           "To try it with sample documents for the demo patients, run `python -m core demo` "
           "(`make run` does it on an empty data dir)."),
        icon=":material/waving_hand:",
    )


def add_patient_form(*, expanded: bool) -> None:
    if not may_add:
        return
    with st.expander("Add a patient", expanded=expanded), st.form("add_patient", clear_on_submit=False):
        c1, c2 = st.columns(2)
        first = c1.text_input("First name")
        last = c2.text_input("Last name")
        mrn = c1.text_input("MRN", help="The chart number; it must be new.")
        dob = c2.date_input("Date of birth", value=None, min_value=date(1900, 1, 1), max_value=date.today(),
                            format="YYYY-MM-DD")
        sex = st.radio("Sex", ["F", "M", "U"], index=2, horizontal=True, format_func=labels.sex)
        if st.form_submit_button("Add patient"):
            try:
                added = add_patient(wb, mrn=mrn, first=first, last=last, dob=dob, sex=sex, by=auth.username())
            except WorkbenchError as exc:
                st.error(f"Patient not added: {md_text(exc.message)}")
            else:
                select_patient(added["id"])
                st.session_state["patient_added"] = added["id"]
                st.rerun()


if patient is None:
    has_patients = bool(list_patients(wb))
    if has_patients:  # none chosen yet: no chart is opened (and no view logged) for nobody's choice
        st.info("Choose a patient in the sidebar to open their chart.", icon=":material/person_search:")
    welcome(has_patients=has_patients)
    add_patient_form(expanded=not has_patients)
    st.stop()

auth.log_view(VIEW_CHART, patient["id"], "patient", patient["id"])
if st.session_state.pop("patient_added", None) == patient["id"]:
    st.success(f"Added {md_text(patient['first_name'])} {md_text(patient['last_name'])} (MRN {md_text(patient['mrn'])}); they are now "
               "the chosen patient.")
st.caption(md_text(labels.patient_line(patient)))
docs = chart_documents(wb, patient["id"])
if not docs:
    welcome(has_patients=True)
add_patient_form(expanded=False)
st.page_link(DOCUMENTS_PAGE, label="Upload or open documents on the Documents page", icon=":material/upload_file:",
             query_params={"patient": str(patient["id"])})

PENDING = ("pending", "running")
work_pending = any(d["job_status"] in PENDING for d in docs)

# ----------------------------------------------------------------- needs attention now
# What bears on any decision comes first, above the counts and the documents: jobs that
# keep failing, the chart checks' alerts, critical results, red flags.
failing = failing_jobs(wb)
if failing["failing"]:
    st.error(f"Health: documents keep failing to be read ({failing['failed']} of the last {failing['of']} failed). "
             "New uploads may not reach the chart; an admin sees why on the Operations page.",
             icon=":material/heart_broken:")
charted = chart_view(wb, patient["id"])
critical = [r for r in charted["labs"] if r["critical"]]
alerts = patient_alerts(wb, patient["id"])
flags = red_flag_findings(wb, patient["id"])
counts = chart_counts(wb, patient["id"])
urgent = [a for a in alerts if a["priority"] != "low"]
if urgent or critical or flags:
    st.subheader("Needs attention")
chart_alerts.show(urgent)
for row in critical:
    st.error(f"Critical: {md_text(row['test_name'])} {md_text(row['value'])} {md_text(row['unit'] or '')} (reference "
             f"{md_text(row['reference_range'] or 'not printed')}), collected "
             f"{md_text(row['collection_date'] or 'date not stated')}", icon=":material/emergency:")
for fact in flags:
    st.warning(f"Red flag: {md_text(fact['red_flag'])} — “{md_text(fact['fact_text'])}” "
               f"({md_text(labels.location(fact['citation'], fact))} of {md_text(fact['filename'])})",
               icon=":material/flag:")

c0, c1, c2, c3 = st.columns(4)
c0.metric("Chart alerts open", len(alerts),
          help=f"{sum(not a['acknowledged'] for a in alerts)} not acknowledged yet (Review queue)")
c1.metric("Critical lab results in the chart", len(critical))
c2.metric("Waiting in the review queue", counts["to_review"],
          help=f"{counts['patient_match']} patient-match checks and {counts['findings']} findings: the Review queue "
               "lists the same items")
c3.metric("Findings on hold", counts["held"],
          help="Findings of documents whose patient is not confirmed: they wait for a patient-match decision "
               "(rejected ones are decided, not counted)")
notes = [a for a in alerts if a["priority"] == "low"]
if notes:  # notes only (no documented indication): folded, so they never push the documents down
    with st.expander(f"Notes from the chart checks ({len(notes)})", icon=":material/sticky_note_2:"):
        chart_alerts.show(notes)
vitals = latest_vital_signs(charted)
if vitals:
    st.markdown("**Latest vital signs in the chart:** " + " · ".join(
        f"{md_text(v['summary'])} ({md_text(v['measured_at'] or 'date not stated')})" for v in vitals))


# Reruns on its own only while a document is being read; when the last one finishes
# the whole page reruns once so the facts below include what it found.
@st.fragment(run_every=2.0 if work_pending else None)
def documents_panel() -> None:
    current = chart_documents(wb, patient["id"])
    if work_pending and not any(d["job_status"] in PENDING for d in current):
        st.rerun(scope="app")
    st.subheader(f"Documents ({len(current)})")
    if not current:
        st.info("No documents on this chart yet.")
        return
    outcome = patient_outcomes(wb, patient["id"])
    st.dataframe(
        plain([{"id": d["id"], "file": d["filename"],
                "what happened": glossary.outcome_words(outcome[d["id"]]) if d["id"] in outcome else "—",
                "type": labels.doc_type(d["doc_type"]) if d["doc_type"] else "—",
                "status": labels.document_status(d["job_status"], d["found_nothing"],
                                                 int((d.get("counts") or {}).get("unread_content") or 0)),
                "patient match": labels.identity_status(d["identity_status"]) if d["job_status"] else "—",
                "problem": d["error_message"] or "", "uploaded": str(d["uploaded_at"])[:16]} for d in current]),
        hide_index=True, width="stretch",
        column_config={"id": st.column_config.NumberColumn("id", help="document id", format="%d"),
                       "what happened": st.column_config.TextColumn(
                           "what happened", width="large",
                           help="What reading the document did to the chart, as it stands now")},
    )
    glossary.details_for_support([(f"document {d['id']}", f"job {d.get('job_id')} {d['job_status']}, "
                                   f"{d['identity_status']}, {d.get('doc_type')}, {d.get('error_code') or ''}")
                                  for d in current])
    for d in current:
        if d["found_nothing"]:
            # The job's own "nothing found" warning is this sentence; the others say why.
            why = "; ".join(w["message"] for w in d["warnings"] if w.get("message") and w.get("code") != NOTHING_FOUND)
            st.warning(f"{md_text(d['filename'])} was read but nothing was found in it" + (f" ({md_text(why)})" if why else "")
                       + ": check it on the Documents page.", icon=":material/warning:")
        elif d["job_status"] == "failed":
            st.error(f"{md_text(d['filename'])} could not be read: {md_text(d['error_message'] or labels.error_code(d['error_code']))}",
                     icon=":material/error:")


documents_panel()
groups = patient_facts(wb, patient["id"])


# Promotion words that would only repeat what the certainty already says.
_SAID_BY_CERTAINTY = {"needs_review", "not_promotable", None}


def fact_status(fact: dict, group: str) -> str:
    if group == "held":
        return f"on hold until the patient is confirmed ({labels.identity_status(fact.get('identity_status'))})"
    words = [labels.certainty(fact["certainty"])]
    if fact.get("promotion_status") not in _SAID_BY_CERTAINTY:
        words.append(labels.promotion(fact["promotion_status"]))
    return ", ".join(words)


def fact_row(fact: dict, group: str) -> None:
    lead = "**Critical** · " if critical_result(fact["fact_type"], fact.get("structured_value")) else ""
    kind = labels.fact_type(fact["fact_type"])
    context = ", ".join(t for t in (t.strip("()") for t in context_tags(context_of(fact["fact_type"], fact.get("context"))))
                        if t != kind)
    text, link = st.columns([6, 1], vertical_alignment="center")
    text.markdown(
        f"{lead}**{md_text(fact['fact_text'])}** · {kind}"
        + (f" ({context})" if context else "")
        + f" · {md_text(labels.location(fact['citation'], fact))} of {md_text(fact['filename'])} · {fact_status(fact, group)}"
        + (f" · {md_text(glossary.reason(fact['review_reason']))}" if fact.get("review_reason") else ""),
        help=labels.code_hint(fact["certainty"], fact.get("promotion_status"),
                              md_text(fact["citation"].get("field_or_chunk_id")),
                              fact.get("identity_status")),
    )
    link.page_link(DOCUMENTS_PAGE, label="Show in viewer",
                   query_params={"patient": str(patient["id"]), "document": str(fact["document_id"]),
                                 "fact": str(fact["fact_id"])})


# On hold: waiting for a patient-match decision. A document rejected as not this
# patient's, or a finding a person closed, is decided, not held (the count above agrees).
groups["held"] = [f for f in groups["held"] if f.get("identity_status") != IdentityStatus.REJECTED.value
                  and f.get("promotion_status") not in CLOSED_PROMOTION_STATES and f["fact_type"] != UNREAD_CONTENT]
st.subheader("Findings")
for group, title in GROUPS.items():
    facts = groups[group]
    with st.expander(f"{title} — {len(facts)}", expanded=group in ("verified", "needs_review")):
        if not facts:
            st.caption("None.")
        for fact in facts:
            fact_row(fact, group)

CHART_COLUMNS = {"abnormal_flag": "flag", "collection_date": "collected", "test_name": "test", "kind": "sign",
                 "measured_at": "measured", "document_ids": "from", "critical_basis": "critical because"}
# Codes a clinician does not read in the table: they stay in the support details below it.
SUPPORT_COLUMNS = ("loinc", "code", "critical")
names = {d["id"]: d["filename"] for d in docs}


def _chart_value(key: str, value):
    if key == "abnormal_flag":
        return labels.abnormal_flag(value)
    if key == "source":
        return labels.chart_source(value)
    if key == "kind":
        return labels.vital_sign(value)
    if key == "document_ids":
        return glossary.document_names(value, names) if value else "entered by hand"
    return "—" if value is None else value


with st.expander("Active chart rows"):
    for section, rows in charted.items():
        st.markdown(f"**{labels.chart_section(section)}** ({len(rows)})")
        if rows:
            st.dataframe(plain([{CHART_COLUMNS.get(k, k.replace("_", " ")): _chart_value(k, v) for k, v in r.items()
                                 if k != "id" and k not in SUPPORT_COLUMNS} for r in rows]),
                         hide_index=True, width="stretch")
glossary.details_for_support(
    [(f"{section} row {r['id']}", ", ".join(f"{k}={r.get(k)}" for k in ("loinc", "code", "document_ids", "source")
                                             if k in r))
     for section, rows in charted.items() for r in rows])

brief_tab(wb, patient)
fhir_download(wb, patient)
