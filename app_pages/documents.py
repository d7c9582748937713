"""Documents: upload (several files at once), pick a document, see how it was read and
every cited box in the viewer, and delete it with a preview of what is retracted."""

import streamlit as st

from domain.errors import WorkbenchError
from domain.policy.access.permissions import Permission
from core.services.ingest import operations
from core.services.admin.access_audit import VIEW_DOCUMENT
from core.services.review.document_view import document_choices
from core.services.ingest.ingestion import attach_and_extract, job_progress, list_categories, suggest_category
from core.services.review.outcome import outcomes, patient_outcomes
from core.services.review.retraction import deletion_impact, delete_document
from ui import auth, glossary, labels
from ui.inert import md_text, plain_text
from ui.runtime import patient_picker, workbench
from ui.viewer import render_document

PENDING = ("pending", "running")
STAGE = {None: (0.34, "stored, waiting to be read"), "pending": (0.34, "stored, waiting to be read"),
         "running": (0.67, "being read"), "succeeded": (1.0, "read"), "failed": (1.0, "could not be read"),
         "retracted": (1.0, "deleted")}

auth.require(Permission.READ)
wb = workbench()
patient = patient_picker()
st.title("Documents")
if patient is None:
    st.info("Choose a patient in the sidebar to see their documents.", icon=":material/person_search:")
    st.stop()
pid = patient["id"]
uploads = st.session_state.setdefault("doc_uploads", {}).setdefault(pid, {})  # document id -> upload record


# ----------------------------------------------------------------------------- upload


def upload_form() -> None:
    categories = list_categories(wb)
    names = [c["name"] for c in categories]
    round_ = st.session_state.setdefault("upload_round", 0)  # a new key empties the uploader after a submit
    files = st.file_uploader("Choose files", accept_multiple_files=True, key=f"uploader-{round_}",
                             help="PDF, scanned image or TIFF, DOCX, XLSX, HL7 v2 or FHIR JSON. Each file is stored first, "
                                  "then read in the background.")
    if not files:
        return
    chosen = {}
    for i, f in enumerate(files):
        data = f.getvalue()
        guess = suggest_category(f.name, data, categories)
        c1, c2 = st.columns([3, 2], vertical_alignment="center")
        c1.markdown(f"**{md_text(f.name)}** · {len(data) / 1024:.0f} kB")
        chosen[i] = c2.selectbox("Category", names, index=names.index(guess) if guess in names else 0,
                                 key=f"upload-cat-{round_}-{i}", label_visibility="collapsed", format_func=plain_text,
                                 help="Suggested from the file; change it if it is wrong.")
    if st.button(f"Upload {len(files)} file{'s' if len(files) > 1 else ''}", type="primary"):
        for i, f in enumerate(files):
            bar = st.progress(0.1, text=f"{md_text(f.name)}: storing…")
            try:
                attached = attach_and_extract(wb, patient_id=pid, source=f.name, data=f.getvalue(),
                                              filename=f.name, category=chosen[i], by=auth.username())
            except WorkbenchError as exc:
                bar.progress(1.0, text=f"{md_text(f.name)}: not stored")
                st.error(f"{md_text(f.name)} was not stored: {md_text(exc.message)}", icon=":material/error:")
                continue
            # A batch read in parts is followed through its parts (the parent has no job).
            for d in [p.document for p in attached.parts] or [attached.document]:
                uploads[d["id"]] = {"filename": d["filename"], "announced": False}
            bar.progress(STAGE[None][0], text=f"{md_text(f.name)}: {STAGE[None][1]}")
        st.session_state["upload_round"] = round_ + 1
        st.session_state["doc_id"] = max(uploads) if uploads else st.session_state.get("doc_id")
        st.rerun()


def unread_of(state: dict) -> int:
    """Results printed on the document that no finding reads (the coverage guard's count)."""
    return int((state.get("counts") or {}).get("unread_content") or 0)


def notice(filename: str, state: dict, outcome) -> None:
    """What happened to an uploaded file, outcome first: held as another patient's,
    conflicts, items to review, or what was added to the chart."""
    filename = md_text(filename)
    if state["status"] == "failed":
        st.error(f"{filename} could not be read: {md_text(labels.failure_sentence(state['error_message'], state['error_code']))}",
                 icon=":material/error:")
        return
    if state["status"] is None:
        st.info(f"{filename} was stored; its category is not read automatically.")
        return
    if outcome is None:
        return
    level = glossary.outcome_level(outcome)
    words = glossary.outcome_words(outcome)
    if state["found_nothing"] and level != "error":
        st.warning(f"{filename} was read, but nothing was found in it. Check it in the viewer below.",
                   icon=":material/warning:")
        return
    icon = {"error": ":material/block:", "warning": ":material/warning:", "success": ":material/check_circle:",
            "info": ":material/info:"}[level]
    hint = " (the review queue shows where)" if level == "warning" else ""
    getattr(st, level)(f"{filename}: {md_text(words)}{hint}.", icon=icon)


docs = document_choices(wb, pid)
# Documents queued elsewhere (another tab, `core demo --queue`, a retry) are watched too.
for d in docs:
    if d["job_status"] in PENDING and d["id"] not in uploads:
        uploads[d["id"]] = {"filename": d["filename"], "announced": False}
work_pending = any(r["announced"] is False for r in uploads.values())


# Reruns on its own only while a document is still being read; when the last one is done
# the whole page reruns once so the picker and the viewer show what it found.
@st.fragment(run_every=2.0 if work_pending else None)
def upload_progress() -> None:
    if not uploads:
        return
    states = job_progress(wb, list(uploads))
    done = outcomes(wb, [d for d, s in states.items() if s["status"] not in PENDING])
    still = False
    for doc_id, record in uploads.items():
        state = states[doc_id]
        value, text = STAGE.get(state["status"], (0.5, state["status"]))
        if state["status"] in PENDING:
            still = True
            st.progress(value, text=f"{md_text(record['filename'])}: {text}")
            continue
        if not record["announced"]:
            record["announced"] = True
        notice(record["filename"], state, done.get(doc_id))
    if not still and st.button("Clear these notices", key="clear-upload-notices"):
        uploads.clear()
        st.rerun(scope="app")
    if work_pending and not still:
        st.rerun(scope="app")


may_upload = auth.can(Permission.UPLOAD)
if may_upload:
    with st.expander("Upload documents", expanded=not docs, icon=":material/upload_file:"):
        upload_form()
upload_progress()
if not docs:
    st.info("No documents on this chart yet." + (" Upload one above." if may_upload else ""))
    st.stop()

# ----------------------------------------------------------------------------- picker


by_id = {d["id"]: d for d in docs}
outcome_of = patient_outcomes(wb, pid)
linked = str(st.query_params.get("document", ""))
if linked.isdigit() and int(linked) in by_id and st.session_state.get("doc_link_seen") != linked:
    st.session_state["doc_link_seen"] = linked  # a link (?document=) chooses once; the select rules after
    st.session_state["doc_id"] = int(linked)
if st.session_state.get("doc_id") not in by_id:
    st.session_state["doc_id"] = docs[0]["id"]


def doc_label(i: int) -> str:
    """A select's option (plain text, not Markdown): the file name as stored, read in order."""
    d = by_id[i]
    kind = labels.doc_type(d["doc_type"]) if d.get("doc_type") else (d.get("category") or "document")
    return plain_text(f"{d['filename']} · {kind} · {doc_state(d)}")


def read_in_parts(d: dict) -> bool:
    """A batch read in parts has no job of its own: its parts are listed as documents."""
    return bool(d.get("parts")) and d["job_status"] is None


def doc_state(d: dict) -> str:
    """What happened to it, as the overview says it ("held: names another patient")."""
    if not d["deleted_note"] and read_in_parts(d):
        return f"read in {d['parts']} parts, listed as documents of their own"
    if not d["deleted_note"] and d["job_status"] == "succeeded" and d["id"] in outcome_of:
        return glossary.outcome_words(outcome_of[d["id"]])
    return d["deleted_note"] or labels.document_status(d["job_status"], d["found_nothing"], unread_of(d))


# The choice lives in a plain key; the widget key changes with the labels, because a keyed
# select keeps showing an option's old words ("waiting to be read") after its job is done.
choices = list(by_id)
doc_id = st.selectbox("Document", choices, format_func=doc_label, index=choices.index(st.session_state["doc_id"]),
                      key=f"doc_pick-{st.session_state.get('doc_pick_round', 0)}-"
                          f"{hash(tuple(doc_label(i) for i in choices))}")
st.session_state["doc_id"] = doc_id
if st.query_params.get("document") != str(doc_id):
    st.query_params["document"] = str(doc_id)
    st.session_state["doc_link_seen"] = str(doc_id)  # our own write is not a new link
doc = by_id[doc_id]

# ----------------------------------------------------------------------------- status


def fact_cell(column, label: str, value: str, help_text: str | None = None) -> None:
    # Markdown rather than st.metric: a metric cuts "names another patient: held back" short.
    column.markdown(f"**{label}**  \n{value}", help=help_text)


def status_line() -> None:
    c1, c2, c3 = st.columns(3)
    if doc["deleted_note"]:
        fact_cell(c1, "Status", md_text(doc["deleted_note"]), labels.code_hint("deleted"))
    elif read_in_parts(doc):
        fact_cell(c1, "Status", md_text(doc_state(doc)))
    else:
        fact_cell(c1, "Status", labels.document_status(doc["job_status"], doc["found_nothing"], unread_of(doc)),
                  labels.code_hint(doc["job_status"], doc.get("error_code")))
    fact_cell(c2, "Patient match", labels.identity_status(doc["identity_status"]) if doc["job_status"] else "—",
              labels.code_hint(doc["identity_status"]))
    outcome = outcome_of.get(doc_id)
    fact_cell(c3, "What happened", glossary.outcome_words(outcome) if outcome and doc["job_status"] == "succeeded"
              else "—", "As the chart stands now: added, waiting for review, or held")
    if doc["job_status"] == "succeeded" and not doc["deleted_note"] and (unread := unread_of(doc)):
        st.warning(f"{unread} result{' was' if unread == 1 else 's were'} printed on this document but not read. "
                   "The review queue shows each one on the page; acknowledge them once you have read them.",
                   icon=":material/warning:")
    if doc.get("error_message"):
        st.error(md_text(labels.failure_sentence(doc["error_message"], doc.get("error_code"))), icon=":material/error:")
    glossary.details_for_support({
        "document id": doc_id, "job id": doc.get("job_id"), "job status": doc["job_status"],
        "patient match": doc["identity_status"], "error code": doc.get("error_code"), "read as": doc.get("doc_type"),
        "job counts": ", ".join(f"{k}={v}" for k, v in sorted((doc.get("counts") or {}).items())),
        "outcome": ", ".join(f"{k}={v}" for k, v in outcome.to_dict().items() if v) if outcome else None})
    if doc["job_status"] == "failed" and not doc["deleted_note"] and auth.can(Permission.RETRY_JOB):
        st.button("Retry reading it", key=f"retry-doc-{doc_id}", on_click=retry, args=(doc,),
                  help="Read this document again (the attempts start over; the retry is audited).")


def retry(d: dict) -> None:
    try:
        operations.retry_job(wb, d["job_id"], by=auth.username())
    except WorkbenchError as exc:
        st.session_state["retry_notice"] = ("error", exc.message)
    else:
        uploads[d["id"]] = {"filename": d["filename"], "announced": False}  # its progress shows above
        st.session_state["retry_notice"] = ("success", "It is back in the queue and will be read again.")
    if doc["found_nothing"]:
        st.warning("This document was read, but nothing was found in it.", icon=":material/warning:")


if notice_ := st.session_state.pop("retry_notice", None):
    getattr(st, notice_[0])(md_text(notice_[1]))
status_line()
selected_fact = str(st.query_params.get("fact", ""))


auth.log_view(VIEW_DOCUMENT, pid, "document", doc_id, slot="documents-viewer")


@st.fragment
def viewer() -> None:
    render_document(wb, doc_id, key=f"doc-{doc_id}",
                    selected_fact_id=int(selected_fact) if selected_fact.isdigit() else None)


def open_document(document_id: int) -> None:
    st.session_state["doc_id"] = document_id
    # A new select, not the old one re-indexed: the browser would keep showing (and
    # send back) its own choice, undoing this one.
    st.session_state["doc_pick_round"] = st.session_state.get("doc_pick_round", 0) + 1
    for key in [k for k in st.session_state if str(k).startswith("doc_pick-")]:
        del st.session_state[key]


def parts_list() -> None:
    """A batch read in parts has no findings of its own: say where they are, one click each."""
    parts = sorted(i for i, d in by_id.items() if d.get("parent_document_id") == doc_id)
    st.info("This file was read in parts; each part's findings are on its own page. Open one:",
            icon=":material/call_split:")
    for i in parts:
        # A button's label is Markdown: the part's file name is shown as the text it is.
        st.button(md_text(f"{by_id[i]['filename']} · {doc_state(by_id[i])}"), key=f"open-part-{i}",
                  on_click=open_document, args=(i,))


if read_in_parts(doc):
    parts_list()
else:
    viewer()

# ----------------------------------------------------------------------------- delete


def impact_sentence(impact: dict) -> str:
    kept = impact["chart_rows_kept"]
    text = (f"Deleting **{md_text(impact['filename'])}** takes out its {impact['facts']} finding(s) "
            f"({impact['promotions']} of them added to the chart). {impact['chart_rows']} chart row(s) will be taken "
            "out of the chart")
    text += (": " + ", ".join(md_text(r["label"]) for r in impact["chart_rows_retracted"]) + ".") if impact["chart_rows"] else "."
    if kept:
        text += (f" {len(kept)} chart row(s) stay because another document still supports them: "
                 + ", ".join(f"{md_text(r['label'])} ({', '.join(md_text(by_id[d]['filename']) if d in by_id else f'document {d}' for d in r['kept_by_documents'])})"
                             for r in kept) + ".")
    return text + " The audit trail is kept."


def done_sentence(filename: str, result: dict) -> str:
    counts = result["retracted"]
    return (f"{md_text(filename)} was deleted. Its {counts['facts']} finding(s) were taken out "
            f"({counts['promotions']} had been added to the chart); {counts['chart_rows']} chart row(s) were taken "
            "out of the chart.")


st.divider()
if st.session_state.get("deleted_message", (None,))[0] == doc_id:
    st.success(st.session_state["deleted_message"][1], icon=":material/delete:")
if not doc["deleted_note"] and auth.can(Permission.DELETE_DOCUMENT):
    if st.button("Delete this document…", key="delete-start"):
        st.session_state["confirm_delete"] = doc_id
    if st.session_state.get("confirm_delete") == doc_id:
        try:
            impact = deletion_impact(wb, doc_id)
        except WorkbenchError as exc:
            st.error(md_text(exc.message))
        else:
            with st.container(border=True):
                st.warning(impact_sentence(impact), icon=":material/warning:")
                c1, c2 = st.columns(2)
                if c1.button("Yes, delete it and take out its findings", type="primary", key="delete-confirm"):
                    try:
                        result = delete_document(wb, doc_id, by=auth.username())
                    except WorkbenchError as exc:
                        st.error(md_text(exc.message))
                    else:
                        st.session_state.pop("confirm_delete", None)
                        st.session_state["deleted_message"] = (doc_id, done_sentence(doc["filename"], result))
                        st.rerun()
                if c2.button("Cancel", key="delete-cancel"):
                    st.session_state.pop("confirm_delete", None)
                    st.rerun()
