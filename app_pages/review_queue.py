"""Review queue: identity decisions and findings that need a human, one item at a
time, laid out for eyes and keyboard, plus the audit of every decision.

An item is two columns that fit one screen: the cited page (zoomable, every box of that
page; the box moved or redrawn in place) on the left; the fields, the reason, the
chart's value and the decision buttons on the right, the last decision's notice beside
them. Every action has a key (ui/review_keys.py; `?` shows them). Below the item, the
queue list with its confidence column, rows approved together by reason group, and a
whole document's remaining findings approved in one step after a preview.

Thin over core.services.review.decisions / queue_groups / document_approval /
corrections / identity_review / audit_log. The "To review" tab is one fragment: a
decision reruns only it, not the page around it. A reviewer's third tab lists the HL7
messages waiting for a chart (ui/held_messages.py)."""

from __future__ import annotations

from typing import Callable

import pyarrow as pa
import streamlit as st
from streamlit.errors import StreamlitAPIException

from domain.errors import WorkbenchError
from domain.policy.access.permissions import Permission
from domain.policy.facts.chart_row_checks import approval_refusal
from domain.policy.facts.review_rules import (KEEP_BOTH, KEEP_CHART, MIN_OVERRIDE_REASON, REPLACE, RESOLUTIONS,
                                             approval_needs_reason)
from core.services.admin.access_audit import VIEW_DOCUMENT
from core.services.review.corrections import page_of, set_fact_box
from core.services.review.document_approval import approve_document, document_preview
from core.services.review.document_view import page_image
from core.services.review.fact_vectors import warm_up
from core.services.review.queue_groups import approve_group, group_counts, keep, with_groups
from core.services.review.identity_review import identity_comparison
from core.services.review.decisions import (approval_preview, conflict_detail, decide_fact,
                                            decide_identity, filter_queue, keep_as_document_fact, queue_counts,
                                            queue_items)
from core.services.checks.alerts import patient_alerts
from domain.policy.facts.review_groups import band_colour, confidence_band
from ui import auth, box_editor, chart_alerts, held_messages, labels, review_audit
from ui import correction_form as correction_form_ui
from ui.inert import md_text, plain, plain_text
from ui.review_keys import help_popover, listen, shortcut
from ui.runtime import patient_picker, workbench
from ui.viewer import ZOOMS, render_citation, render_page_image

auth.require(Permission.READ)
wb = workbench()
patient = patient_picker()
st.title("Review queue")
if patient is None:
    # No chart chosen: the messages waiting for a chart are no patient's, so a reviewer
    # still reaches them (opened only when looked at, as below).
    if auth.can(Permission.DECIDE):
        names = ["To review", held_messages.tab_label(wb)]
        held_messages.keep_tab_open(names[-1], "rq_tab")
        tabs = st.tabs(names, key="rq_tab", on_change="rerun")
        with tabs[0]:
            st.info("Choose a patient in the sidebar to review the findings of their documents.")
        with tabs[1]:
            if tabs[1].open:
                held_messages.section(wb)
    st.stop()
# Decisions are made as the signed-in account; a viewer reads the queue without controls.
reviewer = auth.username()
may_decide = auth.can(Permission.DECIDE)
if not may_decide:
    st.caption(f"You can read the queue; decisions need the reviewer role (you are signed in as a "
               f"{auth.current_user().role.value}).")
PID = patient["id"]
if may_decide:
    warm_up(wb, PID)  # a decision writes vectors: their table and model open before the first one
VERDICT = {"match": "✓ matches", "mismatch": "✗ differs", "unclear": "? cannot tell",
           "not_read": "⚠ printed but not read", "absent": "— not on the document"}
ALL = "All"
REJECT_REASON = "Reason (needed to reject)"
BAND_WORDS = {"low": "low", "medium": "medium", "high": "high", "unknown": "not given"}


def rerun_fragment() -> None:
    """Redraw only the fragment that made the decision; a full run when the fragment is
    running as part of one (Streamlit refuses a fragment rerun then)."""
    try:
        st.rerun(scope="fragment")
    except StreamlitAPIException:
        st.rerun()


def item_title(item: dict) -> str:
    if item["kind"] == "identity":
        return f"Does {item['scope'] or 'this document'} belong to this patient?"
    fact = item["fact"]
    return ("CRITICAL · " if item["critical"] else "") + fact["fact_text"]


def run_decision(action, *args, success: str | Callable[[dict], str], **kwargs) -> bool:
    """Run one service call; a refusal is shown (an item someone else already decided
    as a warning), never swallowed. ``success`` may be worded from the call's result.
    The last decision's notice goes first: what is shown next is this one's outcome."""
    st.session_state.pop("rq_notice", None)
    try:
        result = action(wb, *args, **kwargs)
    except WorkbenchError as exc:
        (st.warning if exc.code == "already_decided" else st.error)(md_text(exc.message))
        return False
    st.session_state["rq_notice"] = success(result) if callable(success) else success
    return True


def show_identifiers(item: dict, cited: list[tuple[str, dict]]) -> None:
    """Where the document prints the patient's name, DOB and MRN: every box on the first
    cited page at once (a source without pages shows its first citation)."""
    first = cited[0][1]
    page = page_of(first)
    same_page = [(label, c["bounding_box"]) for label, c in cited if c.get("bounding_box") and page_of(c) == page]
    key = f"id-src-{item['item_id']}"
    if page is None or not same_page:
        render_citation(wb, first, key=key)
        return
    auth.log_view(VIEW_DOCUMENT, PID, "document", item["document_id"], slot=key)
    boxes = [{"fact_id": -1 - i, "box": box, "box_class": "cited", "label": label}
             for i, (label, box) in enumerate(same_page)]
    render_page_image(page_image(wb, item["document_id"], page), boxes, key=key)
    st.caption(f"{md_text(labels.location(first))}: " + ", ".join(label for label, _ in same_page) + " boxed")


# ------------------------------------------------------------------ the item's two columns
def item_columns():
    """The item's page column and its decision column."""
    return st.columns([3, 2], gap="medium")


def zoom_choice(key: str) -> int:
    zoom = st.segmented_control("Zoom", list(ZOOMS), default="Fit", key=f"zoom-{key}",
                                label_visibility="collapsed") or "Fit"
    return ZOOMS[zoom]


def notice_here(deciding: bool = False) -> None:
    """The last decision's outcome, beside the buttons that made it; none while a new
    decision is being made (its own outcome or refusal takes the place). A refusal met
    in a button's callback is shown here once."""
    if deciding:
        st.session_state.pop("rq_notice", None)
    if notice := st.session_state.get("rq_notice"):
        st.success(notice)
    if problem := st.session_state.pop("rq_problem", None):
        (st.warning if problem[0] == "warning" else st.error)(md_text(problem[1]))


# A finding's plain decisions: (service, its arguments, the notice said after it).
FINDING_DECISIONS = {
    "approve": (decide_fact, {"approve": True}, "Finding approved: it is in the chart."),
    "reject": (decide_fact, {"approve": False}, "Finding rejected."),
    "keep": (keep_as_document_fact, {}, "Finding kept with its document (not added to the chart)."),
}


def decide_now(action: str, fid: int) -> None:
    """A finding's decision taken in its button's callback, before the page is drawn, so
    the one run that follows draws the next item (not a run to decide and a second to
    draw). A refusal stays on the item and is said beside its buttons."""
    st.session_state.pop("rq_notice", None)
    reason = (st.session_state.get(f"why-f-{fid}") or "").strip()
    if action == "reject" and not reason:
        st.session_state["rq_problem"] = ("error", "Say why the finding is rejected (press / to type the reason).")
        return
    service, arguments, done = FINDING_DECISIONS[action]
    try:
        service(wb, fid, by=reviewer, reason=reason or None, **arguments)
    except WorkbenchError as exc:
        if action == "approve" and exc.code == "resolution_required":
            # Approving it would change a chart value: the same item asks which way, side by side.
            st.session_state[f"rq_choose-{fid}"] = True
            return
        st.session_state["rq_problem"] = ("warning" if exc.code == "already_decided" else "error", exc.message)
        return
    st.session_state["rq_notice"] = done
    st.session_state["rq_current"] = None  # the next item opens at the same place


def confidence_words(confidence: float | None) -> str:
    """A reading's confidence as a coloured word and a percentage, never a raw score."""
    band = confidence_band(confidence)
    percent = f" ({round(100 * float(confidence))} %)" if band != "unknown" else ""
    return (f'<span style="background:{band_colour(confidence)};padding:1px 8px;border-radius:10px">'
            f"{BAND_WORDS[band]}{percent}</span>")


def confidence_mark(item: dict) -> tuple[str, str] | None:
    """A finding's confidence as the queue list shows it: (words, colour)."""
    if item["kind"] != "fact":
        return None
    band = item["band"]
    words = BAND_WORDS[band] + (f" {round(100 * float(item['confidence']))} %" if band != "unknown" else "")
    return words, band_colour(item["confidence"])


# ------------------------------------------------------------------ identity item
def identity_item(item: dict) -> bool:
    check = item["check"]
    compare = identity_comparison(wb, check["id"])
    st.markdown(f"**{md_text(item['filename'])}** — {labels.identity_status(check['identity_status'])}",
                help=labels.code_hint(check["identity_status"]))
    cited = [(labels.IDENTIFIER_KIND.get(f["kind"], f["kind"]), c) for f in compare["fields"] for c in f["citations"]]
    cited += [(f"not read: {labels.IDENTIFIER_KIND.get(u['row'], u['row'])}", u["citation"]) for u in compare["unread"]]
    page_col, side = item_columns() if cited else (None, st.container())
    if page_col is not None:
        with page_col:
            show_identifiers(item, cited)
    with side:
        return identity_decision(item, check, compare)


def identity_decision(item: dict, check: dict, compare: dict) -> bool:
    if check["mismatch_reason"]:
        st.caption(md_text(check["mismatch_reason"]))
    rows = [{"Field": labels.IDENTIFIER_KIND.get(f["kind"], f["kind"]),
             "On the document": md_text("; ".join(f["document"] or f["not_read"])) or "—",
             "In the chart": md_text(f["chart"]), "Result": VERDICT[f["verdict"]]} for f in compare["fields"]]
    st.table(rows)
    if compare["other_identifiers"]:
        st.caption("Other numbers printed (account, visit, NHS...), never taken for the MRN: "
                   + ", ".join(md_text(o["value"]) for o in compare["other_identifiers"]))
    if compare["unread"]:
        # Printed on the document but read by no reader: shown with where they are, never as absent.
        st.markdown("**Printed but not read** — compare these with the chart yourself:")
        st.table([{"Printed": md_text(u["value"]), "Label": md_text(u["label"] or "(no label)"),
                   "Where": md_text(labels.location(u["citation"])), "Why": md_text(u["reason"])}
                  for u in compare["unread"]])
    for part in compare["parts"]:
        st.caption(f"{md_text(part['scope'])}: {labels.identity_status(part['status'])}")
    if not may_decide:
        return False

    reason, confirmed = None, True
    mismatch = approval_needs_reason(check["identity_status"])
    needs_reason = compare["reason_required"]
    if needs_reason:
        question = ("Reason for approving a document that names another patient" if mismatch else
                    "Reason for approving a document whose printed identifiers were not all read")
        reason = st.text_input(question, key=f"why-{check['id']}",
                               help=f"At least {MIN_OVERRIDE_REASON} characters; kept in the audit.")
        st.session_state["rq_reason_label"] = question
        confirmed = st.checkbox("I have checked: this document belongs to this patient", key=f"sure-{check['id']}")
    c1, c2 = st.columns(2)
    approve = c1.button("Approve identity", key=f"ai-{check['id']}", shortcut=shortcut("approve"), type="primary")
    reject = c2.button("Reject identity", key=f"ri-{check['id']}", shortcut=shortcut("reject"))
    notice_here(approve or reject)
    if approve:
        if needs_reason and not confirmed:
            st.error("Approving this document needs a written reason and the confirmation ticked.")
        else:
            return run_decision(decide_identity, check["id"], approve=True, by=reviewer, reason=reason,
                                success=f"Confirmed: {md_text(item['filename'])} is this patient's.")
    if reject:
        return run_decision(decide_identity, check["id"], approve=False, by=reviewer, reason=reason,
                            success=f"{md_text(item['filename'])}: rejected as not this patient.")
    return False


# ------------------------------------------------------------------ finding item
def finding_item(item: dict) -> bool:
    fact = item["fact"]
    fid = fact["fact_id"]
    cit = fact["citation"]
    st.markdown(f"**{md_text(item_title(item))}**")
    st.caption(f"{labels.fact_type(fact['fact_type'])} · {md_text(labels.location(cit, fact))} · "
               f"{md_text(item['filename'])}",
               help=labels.code_hint(fact["fact_type"], fact["certainty"], fact["promotion_status"],
                                     md_text(cit.get("field_or_chunk_id"))))
    page_col, side = item_columns()
    editing = may_decide and st.session_state.get("rq_box_edit") == fid
    box = controls = None
    with page_col:
        if editing:  # the editor's controls sit above the page, in view, filled in by box_drawing
            controls = st.container()
            box = box_editor.edit_on_page(wb, fact, st.session_state.get(f"rq_box_mode-{fid}", box_editor.MOVE))
        else:
            render_citation(wb, cit, key=f"src-{fid}", fact=fact,
                            zoom=zoom_choice(f"src-{fid}") if page_of(cit) is not None else 100)
    with side:
        return finding_decision(item, fact, box, controls)


def finding_decision(item: dict, fact: dict, box: dict | None, controls=None) -> bool:
    fid = fact["fact_id"]
    st.markdown(f"Quote: “{md_text(fact['citation']['quote_or_value'])}”")
    st.markdown(f"Why it is here: {md_text(labels.review_reason(item['reason_group']))}")
    if item["kind"] == "fact" and fact["fact_type"] != "unread_content":
        st.markdown(f"How sure the reading is: {confidence_words(item['confidence'])}", unsafe_allow_html=True)
    if item["conflict"] and (detail := conflict_detail(wb, fid)):
        sources = ", ".join(md_text(s["filename"]) for s in detail["sources"]) or ("entered by hand" if detail["manual"] else "—")
        st.table(plain({"": [f["field"].replace("_", " ") for f in detail["fields"]],
                        "This document": [md_text(f["document"] if f["document"] is not None else "—")
                                          for f in detail["fields"]],
                        "The chart": [md_text(f["chart"] if f["chart"] is not None else "—") for f in detail["fields"]]}))
        st.caption(f"The chart's value comes from: {sources}")
    if not may_decide:
        return False

    if fact["fact_type"] == "unread_content":
        return unread_item(fact)
    reason = st.text_input(REJECT_REASON, key=f"why-f-{fid}", placeholder="press / to type here")
    st.session_state["rq_reason_label"] = REJECT_REASON
    if item["conflict"] or st.session_state.get(f"rq_choose-{fid}"):
        decided = conflict_choice(fid, reason)
        if decided:
            return True
    # A row that prints no single value ("haemolysed", "10-20") is corrected or kept, never approved as it is.
    refusal = approval_refusal(fact["fact_type"], fact.get("structured_value") or {})
    if refusal:
        st.caption(md_text(refusal))
    c1, c2 = st.columns(2)
    if not item["conflict"]:
        c1.button("Approve", key=f"af-{fid}", shortcut=shortcut("approve"), type="primary", disabled=bool(refusal),
                  help=refusal or "Adds the finding to the chart.", width="stretch", on_click=decide_now,
                  args=("approve", fid))
    c2.button("Reject", key=f"rf-{fid}", shortcut=shortcut("reject"), width="stretch", on_click=decide_now,
              args=("reject", fid))
    c3, c4 = st.columns(2)
    correct = c3.button("Correct", key=f"cf-{fid}", shortcut=shortcut("correct"), width="stretch")
    c4.button("Keep out of the chart", key=f"kf-{fid}", shortcut=shortcut("keep"), width="stretch",
              help="The finding stays with its document, for reading; the chart does not take it.",
              on_click=decide_now, args=("keep", fid))
    notice_here(correct)
    if correct:
        st.session_state["rq_correcting"] = fid
    if st.session_state.get("rq_correcting") == fid and correction_form(fact):
        return True
    return box_drawing(fact, box, controls)


def conflict_choice(fid: int, reason: str) -> bool:
    """The finding differs from the chart's value for the same test and date: approving
    it is one of three explicit choices, made beside both values (shown above)."""
    st.markdown("**This finding differs from the chart.** Choose what the chart should hold:")
    for resolution, label, done, action in (
            (REPLACE, "Replace the chart value", "The chart now holds this finding's value; the old value is kept "
                                                 "in the history.", "replace"),
            (KEEP_BOTH, "Keep both", "The chart now shows both values side by side.", "keep_both"),
            (KEEP_CHART, "Keep the chart value", "The chart keeps its value; this finding stays with its document.",
             "keep_chart")):
        if st.button(label, key=f"res-{resolution}-{fid}", type="primary" if resolution == KEEP_CHART else
                     "secondary", help=RESOLUTIONS[resolution], shortcut=shortcut(action), width="stretch"):
            st.session_state.pop(f"rq_choose-{fid}", None)
            return run_decision(decide_fact, fid, approve=True, by=reviewer, reason=reason or None,
                                resolution=resolution, success=done)
    return False


def unread_item(fact: dict) -> bool:
    """Results the readers did not read: a person reads them on the page. Acknowledging
    records that; it puts nothing in the chart (enter or correct results by hand)."""
    fid = fact["fact_id"]
    st.info("These results are printed on the document but no finding was read from them, so none of them is "
            "in the chart or in answers. Read them on the page. Acknowledging records that you read them; "
            "it adds nothing to the chart.", icon=":material/visibility:")
    label = "Note (needed to say they are not results)"
    reason = st.text_input(label, key=f"why-f-{fid}")
    st.session_state["rq_reason_label"] = label
    c1, c2 = st.columns(2)
    acknowledge = c1.button("Acknowledge: I read them on the page", key=f"af-{fid}", shortcut=shortcut("approve"),
                            type="primary")
    not_results = c2.button("Not results", key=f"rf-{fid}", shortcut=shortcut("reject"),
                            help="The guard took something that is not a result for one (say what it is).")
    notice_here(acknowledge or not_results)
    if acknowledge:
        return run_decision(decide_fact, fid, approve=True, by=reviewer, reason=reason or None,
                            success="Acknowledged: the results were read by a person.")
    if not_results:
        if not reason.strip():
            st.error("Say what these are, if not results.")
        else:
            return run_decision(decide_fact, fid, approve=False, by=reviewer, reason=reason,
                                success="Marked as not results.")
    return False


def correction_form(fact: dict) -> bool:
    done = correction_form_ui.show(wb, fact, by=reviewer)
    if done:
        st.session_state["rq_notice"] = done
        st.session_state.pop("rq_correcting", None)
    return bool(done)


def box_drawing(fact: dict, box: dict | None, controls=None) -> bool:
    """The box editor's controls: the page on the left becomes the editor (ui/box_editor.py)
    and ``box`` is the box it now holds; saving it records a decision, as any box does.
    The controls go in ``controls`` (above the page) while the editor is open."""
    cit = fact["citation"]
    fid = fact["fact_id"]
    if page_of(cit) is None and not cit.get("bounding_box"):
        return False
    editing = st.session_state.get("rq_box_edit") == fid
    label = ("Close the box editor" if editing else
             "Move or resize the box" if cit.get("bounding_box") else "Draw the box")
    if st.button(label, key=f"boxedit-{fid}", shortcut=shortcut("box")):
        st.session_state["rq_box_edit"] = None if editing else fid
        rerun_fragment()
    if not editing:
        return False
    with controls if controls is not None else st.container():
        mode_col, save_col = st.columns([3, 1], vertical_alignment="center")
        if cit.get("bounding_box") and box_editor.canvas_available():
            mode_col.segmented_control("On the page", [box_editor.MOVE, box_editor.DRAW], key=f"rq_box_mode-{fid}",
                                       default=box_editor.MOVE, label_visibility="collapsed")
        save = save_col.button("Save box", key=f"savebox-{fid}", shortcut=shortcut("save_box"), type="primary")
        anywhere = st.checkbox("Save it even if the quote is not inside the box", key=f"free-{fid}")
        st.caption("Drag the red box or its corners; Undo and Redo are in the bar over the page." if
                   st.session_state.get(f"rq_box_mode-{fid}", box_editor.MOVE) == box_editor.MOVE else
                   "Drag a rectangle around the value on the page.")
        if save and box:
            saved = run_decision(set_fact_box, fid, box=box, by=reviewer, confirm_free_box=anywhere,
                                 success="Box saved.")
            if saved:
                st.session_state["rq_box_edit"] = None
            return saved
    return False


# ------------------------------------------------------------------ the queue
def chosen_filter(key: str, present: dict) -> list:
    """A filter's options: the values the queue holds now, plus the one chosen, so a
    decision that empties it keeps the filter as the reviewer set it."""
    chosen = st.session_state.get(key)
    return [ALL, *sorted(set(present) | ({chosen} if chosen not in (None, ALL) else set()), key=str)]


def move(step: int, *, by_document: bool = False) -> None:
    """Open the item ``step`` places on (or the first item of the document ``step``
    documents on). A button's callback: it runs before the page is drawn, so Previous
    and Next are drawn for the item they lead from (after `j`, `k` works)."""
    keys, docs = st.session_state.get("rq_keys") or [], st.session_state.get("rq_docs") or []
    if not keys:
        return
    current = st.session_state.get("rq_current")
    index = keys.index(current) if current in keys else min(st.session_state.get("rq_index", 0), len(keys) - 1)
    if by_document:
        order = list(dict.fromkeys(docs))
        at = order.index(docs[index]) + step
        if not 0 <= at < len(order):
            return
        index = docs.index(order[at])
    else:
        index = max(0, min(len(keys) - 1, index + step))
    st.session_state["rq_current"], st.session_state["rq_index"] = keys[index], index
    st.session_state.pop("rq_notice", None)
    st.session_state["rq_box_edit"] = None


@st.fragment
def to_review() -> None:
    items = with_groups(queue_items(wb, PID))
    counts = queue_counts(items) | group_counts(items)
    names = {i["document_id"]: i["filename"] for i in items}
    f1, f2, f3, f4, f5 = st.columns([3, 2, 3, 2, 2])
    document = f1.selectbox("Document", chosen_filter("rq_f_doc", names), key="rq_f_doc",
                            format_func=lambda d: d if d == ALL else plain_text(
                                f"{names.get(d, 'decided')} ({counts['document_id'].get(d, 0)})"))
    doc_type = f2.selectbox("Document type", chosen_filter("rq_f_type", counts["doc_type"]), key="rq_f_type",
                            format_func=lambda t: t if t == ALL
                            else f"{labels.doc_type(t)} ({counts['doc_type'].get(t, 0)})")
    reason = f3.selectbox("Reason", chosen_filter("rq_f_reason", counts["reason_group"]), key="rq_f_reason",
                          format_func=lambda r: r if r == ALL
                          else plain_text(f"{labels.review_reason(r)} ({counts['reason_group'].get(r, 0)})"))
    band = f4.selectbox("Confidence", chosen_filter("rq_f_band", counts["band"]), key="rq_f_band",
                        format_func=lambda b: b if b == ALL else f"{BAND_WORDS[b]} ({counts['band'].get(b, 0)})",
                        help="How sure the reading of a finding is: low below 50 %, high from 80 %.")
    critical_first = f5.toggle("Critical first", value=True, key="rq_f_critical")
    shown = filter_queue(keep(items, reason_group=None if reason == ALL else reason, band=None if band == ALL else band),
                         document_id=None if document == ALL else document,
                         doc_type=None if doc_type == ALL else doc_type, critical_first=critical_first)
    if not shown:
        st.markdown(f"**0 of {len(items)} items to review**")
        notice_here()
        st.info("Nothing waiting for review here." if items else "Nothing waiting for review on this chart.")
        return

    keys = [i["key"] for i in shown]
    st.session_state["rq_keys"], st.session_state["rq_docs"] = keys, [i["document_id"] for i in shown]
    current = st.session_state.get("rq_current")
    left = st.session_state.get("rq_item")
    if current and left and left["key"] == current and current not in {i["key"] for i in items}:
        # Someone else decided the open item meanwhile. It is shown once more, so a click
        # on it is answered ("already approved by …") instead of being lost.
        st.session_state["rq_current"] = None
        with st.container(border=True):
            st.info("This item has left the queue: it was decided elsewhere.")
            identity_item(left) if left["kind"] == "identity" else finding_item(left)
        st.button("Open the next item", key="rq_after_stale")
        return
    if current not in keys:  # decided (or filtered out): open the item now at its place
        current = keys[min(st.session_state.get("rq_index", 0), len(keys) - 1)]
    index = keys.index(current)
    st.session_state["rq_current"], st.session_state["rq_index"] = current, index
    item = {i["key"]: i for i in shown}[current]
    st.session_state["rq_item"] = item

    docs = list(dict.fromkeys(st.session_state["rq_docs"]))
    at_doc = docs.index(item["document_id"])
    n0, n1, n2, n3, n4, n5 = st.columns([2.6, 1.3, 1, 2, 1.8, 1.3], vertical_alignment="center")
    n0.markdown(f"**{len(shown)} of {len(items)} items to review** · item {index + 1}")
    n1.button("Previous", key="rq_prev", shortcut=shortcut("previous"), disabled=index == 0,
              on_click=move, args=(-1,))
    n2.button("Next", key="rq_next", shortcut=shortcut("next"), disabled=index == len(keys) - 1,
              on_click=move, args=(1,))
    n3.button("Previous document", key="rq_prev_doc", shortcut=shortcut("previous_document"), disabled=at_doc == 0,
              on_click=move, args=(-1,), kwargs={"by_document": True})
    n4.button("Next document", key="rq_next_doc", shortcut=shortcut("next_document"),
              disabled=at_doc == len(docs) - 1, on_click=move, args=(1,), kwargs={"by_document": True})
    with n5:
        help_popover(may_decide)
    st.caption(f"Item {index + 1} of {len(keys)} · document {at_doc + 1} of {len(docs)} · press ? for the keys")

    st.session_state["rq_reason_label"] = None
    with st.container(border=True, key="rq_item_box"):
        decided = identity_item(item) if item["kind"] == "identity" else finding_item(item)
    editing = st.session_state.get("rq_box_edit")
    listen(may_decide=may_decide, reason_label=st.session_state.get("rq_reason_label"),
           edit_canvas=f"move-{editing}" if editing == item["item_id"] and item["kind"] == "fact" and
           st.session_state.get(f"rq_box_mode-{editing}", box_editor.MOVE) == box_editor.MOVE else None)
    if decided:
        st.session_state["rq_current"] = None  # the next item opens at the same place
        rerun_fragment()
    if may_decide:
        document_approval(item)
    queue_list(shown, current)


def document_approval(item: dict) -> None:
    """The open item's document: its remaining findings approved in one step. The preview
    (what goes to the chart, what stays for a choice each) is worked out when asked for:
    it decides every finding in a transaction it rolls back, too much for every rerun."""
    document_id = item["document_id"]
    asked = st.session_state.get("rq_doc_preview") == document_id
    if not asked:
        if st.button(f"Approve all of {md_text(item['filename'])}'s remaining findings…",
                     key=f"rq_doc_ask-{document_id}", shortcut=shortcut("approve_document"),
                     help="Shows what it would change first; nothing is approved until you confirm."):
            st.session_state["rq_doc_preview"] = document_id
            rerun_fragment()
        return
    with st.container(border=True):
        st.markdown(f"**Approve all of {md_text(item['filename'])}'s remaining findings**")
        preview = document_preview(wb, PID, document_id)
        if preview["patient_match_waits"]:
            st.info("This document's patient match waits for a decision: decide it first.")
            return
        count = len(preview["approve"])
        lines = []
        if count:
            lines.append(f"**{count} finding(s) go to the chart**: "
                         + "; ".join(md_text(t) for t in preview["approve_texts"][:8])
                         + (" …" if count > 8 else ""))
        if preview["conflicts"]:
            lines.append(f"**{len(preview['conflicts'])} differ from the chart and stay for your choice, one by one**: "
                         + "; ".join(md_text(c["finding"]) for c in preview["conflicts"][:5]))
        if preview["meets_chart"]:
            lines.append(f"{len(preview['meets_chart'])} would change a chart value and stay for a decision on each.")
        if preview["refused"]:
            lines.append(f"{len(preview['refused'])} cannot be approved: "
                         + "; ".join(md_text(r["error"]) for r in preview["refused"][:3]))
        unread = sum(1 for left in preview["left"] if left["kind"] == "fact")
        if unread:
            lines.append(f"{unread} place(s) with results no reader read stay for a person to read.")
        st.markdown("\n".join(f"- {line}" for line in lines) or "Nothing left to approve in this document.")
        c1, c2 = st.columns(2)
        if c2.button("Cancel", key=f"rq_doc_cancel-{document_id}"):
            st.session_state.pop("rq_doc_preview", None)
            rerun_fragment()
        if count and c1.button(f"Approve {count} finding(s) of this document", key=f"rq_doc_approve-{document_id}",
                               shortcut=shortcut("approve_document"), type="primary"):
            try:
                done = approve_document(wb, PID, document_id, by=reviewer, expected=preview["approve"])
            except WorkbenchError as exc:
                st.error(md_text(exc.message))
                return
            left = done["conflicts_left"] + done["meets_chart_left"]
            st.session_state["rq_notice"] = (f"{done['approved']} finding(s) of {md_text(item['filename'])} "
                                             "approved: they are in the chart."
                                             + (f" {left} stay for your choice, one by one." if left else ""))
            st.session_state["rq_current"] = st.session_state["rq_item"] = None  # the reviewer's own decision
            st.session_state.pop("rq_doc_preview", None)
            rerun_fragment()


def list_table(shown: list[dict]) -> tuple[pa.Table, dict[str, str]]:
    """The queue list's rows (all but the Open column) as an Arrow table, and the
    confidence labels' colours. Made again only when what the rows say changes (a
    decision, a filter): a key press redraws the same 500 rows, and making them (plain
    text, a frame, Arrow) is most of a key's time otherwise."""
    said = [(i["filename"], item_title(i)[:90], i["reason_group"], confidence_mark(i), i["critical"]) for i in shown]
    made = st.session_state.get("rq_list_table")
    if made is not None and made[0] == said:
        return made[1], made[2]
    table = pa.table({
        "Document": pa.array([plain_text(r[0]) for r in said], pa.string()),
        "Item": pa.array([plain_text(r[1]) for r in said], pa.string()),
        "Why": pa.array([plain_text(labels.review_reason(r[2])) for r in said], pa.string()),
        "Confidence": pa.array([[plain_text(r[3][0])] if r[3] else [] for r in said], pa.list_(pa.string())),
        "Critical": pa.array(["yes" if r[4] else "" for r in said], pa.string())})
    colours = dict(r[3] for r in said if r[3])
    st.session_state["rq_list_table"] = (said, table, colours)
    return table, colours


def queue_list(shown: list[dict], current: str) -> None:
    """The items grouped by document; rows of one reason group can be approved together.
    The confidence column is coloured low (red) to high (green): coloured labels, not a
    styled table (a Styler costs some 50 ms per run at 500 rows)."""
    rows, colours = list_table(shown)
    # The open item's marker first: a wide Item or Why column cannot push it out of view.
    rows = rows.add_column(0, "Open", pa.array(["▶" if i["key"] == current else "" for i in shown], pa.string()))
    # Coloured labels, one per value shown: the grid draws them, so 500 rows cost no styling.
    # Widths that fit the page's main column together (about 900 px), so none is cut off.
    config = {"Open": st.column_config.TextColumn("Open", width=44, help="The item shown above."),
              "Document": st.column_config.TextColumn("Document", width=120),
              "Item": st.column_config.TextColumn("Item", width=330),
              "Why": st.column_config.TextColumn("Why", width=220),
              "Critical": st.column_config.TextColumn("Critical", width=64),
              "Confidence": st.column_config.MultiselectColumn(
                  "Confidence", options=list(colours), color=list(colours.values()), width=100,
                  help="How sure the reading is: low below 50 %, high from 80 %.")}
    height = min(38 + 35 * rows.num_rows, 300)
    st.markdown("**All items in this view**")
    if not may_decide:
        st.dataframe(rows, key="rq_table", hide_index=True, height=height, column_config=config)
        return
    picked = st.dataframe(rows, key="rq_table", on_select="rerun", selection_mode="multi-row", hide_index=True,
                          column_config=config,
                          height=height)
    chosen = [shown[r] for r in (picked.selection.rows if picked else []) if r < len(shown)]
    if not chosen:
        st.caption("Select rows with the same reason to approve them together.")
        return
    facts = [i for i in chosen if i["kind"] == "fact"]
    if len({i["reason_group"] for i in facts}) != 1 or len(facts) != len(chosen):
        st.warning("Bulk approval takes findings that share one reason; the selection mixes reasons or "
                   "includes a patient-match check.")
        return
    ids = [i["item_id"] for i in facts]
    preview = approval_preview(wb, ids)
    replaces = preview["replaces"]
    if replaces:
        st.warning(f"Approving these replaces {len(replaces)} chart value(s): "
                   + "; ".join(f"{md_text(r['chart'])} (from {md_text(r['source'])}) by “{md_text(r['finding'])}”"
                               for r in replaces[:5]) + (" …" if len(replaces) > 5 else ""))
    if preview["own_decision"]:
        st.info(f"{len(preview['own_decision'])} selected finding(s) differ from the chart but their own reading is "
                "in doubt: they stay in the queue for a decision on each, and the chart keeps its values.")
    label = (f"Approve {len(facts)} selected findings ({md_text(labels.review_reason(facts[0]['reason_group']))})"
             + (f" — replaces {len(replaces)} chart value(s)" if replaces else ""))
    if st.button(label, key="rq_bulk"):
        try:
            results = approve_group(wb, facts, by=reviewer, replace_chart_values=bool(replaces))
        except WorkbenchError as exc:
            st.error(md_text(exc.message))
            return
        done = sum(r["ok"] for r in results)
        st.session_state["rq_notice"] = f"{done} of {len(results)} findings approved."
        for failed in (r for r in results if not r["ok"]):
            st.warning(f"Finding {failed['fact_id']}: {md_text(failed['error'])}")
        if done:
            # The reviewer's own decision took the open item: the next one opens, with no
            # "decided elsewhere"; the filters stay as they were set.
            st.session_state["rq_current"] = st.session_state["rq_item"] = None
            st.session_state.pop("rq_table", None)
            rerun_fragment()


# ------------------------------------------------------------------ chart alerts
@st.fragment
def alerts_to_acknowledge() -> None:
    """The chart checks' alerts no clinician has acknowledged yet, each with the facts
    it cites; a reviewer acknowledges one with a note and a click."""
    open_alerts = patient_alerts(wb, PID, unacknowledged_only=True)
    if notice := st.session_state.pop("rq_alert_notice", None):
        st.success(notice)
    if not open_alerts:
        st.info("No chart alert waits for acknowledgement on this chart.")
        return
    st.caption(f"{len(open_alerts)} alert(s) from the chart checks wait for a clinician: each cites the facts it "
               "rests on; acknowledge one with a note once you have looked at them.")
    for alert in open_alerts:
        with st.container(border=True):
            st.markdown(chart_alerts.alert_text(alert))
            if may_decide and chart_alerts.acknowledge_controls(wb, alert, by=reviewer, key=f"rq-alert-{alert['alert_id']}"):
                st.session_state["rq_alert_notice"] = f"Alert {alert['alert_id']} acknowledged."
                rerun_fragment()


# ------------------------------------------------------------------ audit
@st.fragment
def audit() -> None:
    review_audit.section(wb, PID, reviewer=reviewer, may_decide=may_decide)


# Reviewers also see the interface messages waiting for a chart (any patient's). That
# tab runs only while it is open (``on_change="rerun"``): what those messages say of
# their patient is then shown, and written to the access audit, only when looked at.
# The chart checks' alerts have a tab of their own, its label counting the ones not yet
# acknowledged, so they are never below a long queue of findings.
unacknowledged = len(patient_alerts(wb, PID, unacknowledged_only=True))
names = ["To review", f"Chart alerts ({unacknowledged})" if unacknowledged else "Chart alerts", "Audit"]
if may_decide:
    names.append(held_messages.tab_label(wb))
    held_messages.keep_tab_open(names[-1], "rq_tab")
tabs = st.tabs(names, key="rq_tab", on_change="rerun")
with tabs[0]:
    to_review()
with tabs[1]:
    alerts_to_acknowledge()
with tabs[2]:
    audit()
if may_decide:
    with tabs[3]:
        if tabs[3].open:
            held_messages.section(wb)
