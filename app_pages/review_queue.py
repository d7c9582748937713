"""Review queue: identity decisions and findings that need a human, one item at a
time with keyboard shortcuts, plus the audit of every decision.

Thin over core.services.review.decisions / corrections / identity_review / audit_log. The "To
review" tab is one fragment: a decision reruns only it, not the page around it. A
reviewer's third tab lists the HL7 messages waiting for a chart (ui/held_messages.py)."""

from __future__ import annotations

import io
from typing import Callable

import streamlit as st
from streamlit.errors import StreamlitAPIException

from domain.errors import WorkbenchError
from domain.policy.access.permissions import Permission
from domain.policy.facts.review_rules import (KEEP_BOTH, KEEP_CHART, MIN_OVERRIDE_REASON, REPLACE, RESOLUTIONS,
                                             approval_needs_reason)
from core.services.admin.access_audit import VIEW_DOCUMENT
from core.services.review.corrections import page_of, set_fact_box
from core.services.review.document_view import page_image
from core.services.review.identity_review import identity_comparison
from core.services.review.decisions import (approval_preview, approve_facts, conflict_detail, decide_fact,
                                            decide_identity, filter_queue, keep_as_document_fact, queue_counts,
                                            queue_items)
from core.services.checks.alerts import patient_alerts
from ui import auth, chart_alerts, held_messages, labels, review_audit
from ui import correction_form as correction_form_ui
from ui.inert import md_text, plain, plain_text
from ui.runtime import patient_picker, workbench
from ui.viewer import drawn_box, render_citation, render_page_image

auth.require(Permission.READ)
wb = workbench()
patient = patient_picker()
st.title("Review queue")
if patient is None:
    st.stop()
# Decisions are made as the signed-in account; a viewer reads the queue without controls.
reviewer = auth.username()
may_decide = auth.can(Permission.DECIDE)
if not may_decide:
    st.caption(f"You can read the queue; decisions need the reviewer role (you are signed in as a "
               f"{auth.current_user().role.value}).")
PID = patient["id"]
VERDICT = {"match": "✓ matches", "mismatch": "✗ differs", "unclear": "? cannot tell",
           "not_read": "⚠ printed but not read", "absent": "— not on the document"}
ALL = "All"


def rerun_fragment() -> None:
    """Redraw only the fragment that made the decision; a full run when the fragment is
    running as part of one (Streamlit refuses a fragment rerun then)."""
    try:
        st.rerun(scope="fragment")
    except StreamlitAPIException:
        st.rerun()


def item_title(item: dict) -> str:
    if item["kind"] == "identity":
        scope = f" · {item['scope']}" if item["scope"] else ""
        return f"Patient match{scope}"
    fact = item["fact"]
    return ("CRITICAL · " if item["critical"] else "") + fact["fact_text"]


class ChoiceNeeded(Exception):
    """An approval met a chart value: the page asks the reviewer to choose."""


def run_decision(action, *args, success: str | Callable[[dict], str], quiet: set[str] = frozenset(),
                 **kwargs) -> bool:
    """Run one service call; a refusal is shown (an item someone else already decided
    as a warning), never swallowed. ``success`` may be worded from the call's result.
    A refusal whose code is in ``quiet`` raises ChoiceNeeded for the caller to handle."""
    try:
        result = action(wb, *args, **kwargs)
    except WorkbenchError as exc:
        if exc.code in quiet:
            raise ChoiceNeeded(exc.message) from None
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


# ------------------------------------------------------------------ identity item
def identity_item(item: dict) -> bool:
    check = item["check"]
    compare = identity_comparison(wb, check["id"])
    st.markdown(f"**{md_text(item['filename'])}** — {labels.identity_status(check['identity_status'])}",
                help=labels.code_hint(check["identity_status"]))
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
    cited = [(labels.IDENTIFIER_KIND.get(f["kind"], f["kind"]), c) for f in compare["fields"] for c in f["citations"]]
    cited += [(f"not read: {labels.IDENTIFIER_KIND.get(u['row'], u['row'])}", u["citation"]) for u in compare["unread"]]
    if cited:
        show_identifiers(item, cited)
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
        confirmed = st.checkbox("I have checked: this document belongs to this patient", key=f"sure-{check['id']}")
    c1, c2 = st.columns(2)
    if c1.button("Approve identity", key=f"ai-{check['id']}", shortcut="a", type="primary"):
        if needs_reason and not confirmed:
            st.error("Approving this document needs a written reason and the confirmation ticked.")
        else:
            return run_decision(decide_identity, check["id"], approve=True, by=reviewer, reason=reason,
                                success=f"Patient match approved for {md_text(item['filename'])}.")
    if c2.button("Reject identity", key=f"ri-{check['id']}", shortcut="x"):
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
               f"{labels.certainty(fact['certainty'])} · {md_text(item['filename'])}",
               help=labels.code_hint(fact["fact_type"], fact["certainty"], fact["promotion_status"],
                                     md_text(cit.get("field_or_chunk_id"))))
    st.markdown(f"Quote: “{md_text(cit['quote_or_value'])}”")
    st.markdown(f"Why it is here: {md_text(labels.review_reason(item['reason']))}")
    render_citation(wb, cit, key=f"src-{fid}", fact=fact)
    if item["conflict"] and (detail := conflict_detail(wb, fid)):
        left, right = st.columns(2)
        for column, side, title in ((left, "document", "This document"), (right, "chart", "The chart")):
            column.markdown(f"**{title}**")
            column.table({f["field"].replace("_", " "): md_text(f[side] if f[side] is not None else "—")
                          for f in detail["fields"]})
        sources = ", ".join(md_text(s["filename"]) for s in detail["sources"]) or ("entered by hand" if detail["manual"] else "—")
        right.caption(f"Source: {sources}")
    if not may_decide:
        return False

    if fact["fact_type"] == "unread_content":
        return unread_item(fact)
    reason = st.text_input("Reason (needed to reject)", key=f"why-f-{fid}")
    if item["conflict"] or st.session_state.get(f"rq_choose-{fid}"):
        decided = conflict_choice(fid, reason)
        if decided:
            return True
    c1, c2, c3, c4 = st.columns(4)
    if not item["conflict"] and c1.button("Approve as verified", key=f"af-{fid}", shortcut="a", type="primary"):
        try:
            return run_decision(decide_fact, fid, approve=True, by=reviewer, reason=reason or None,
                                success="Finding approved as verified.", quiet={"resolution_required"})
        except ChoiceNeeded:
            # Approving it would change a chart value: the same item asks which way, side by side.
            st.session_state[f"rq_choose-{fid}"] = True
            rerun_fragment()
    if c2.button("Keep as document fact", key=f"kf-{fid}"):
        return run_decision(keep_as_document_fact, fid, by=reviewer, reason=reason or None,
                            success="Finding kept as a document fact (not added to the chart).")
    if c3.button("Reject", key=f"rf-{fid}", shortcut="x"):
        if not reason.strip():
            st.error("Say why the finding is rejected.")
        else:
            return run_decision(decide_fact, fid, approve=False, by=reviewer, reason=reason,
                                success="Finding rejected.")
    if c4.button("Correct", key=f"cf-{fid}", shortcut="e"):
        st.session_state["rq_correcting"] = fid
    if st.session_state.get("rq_correcting") == fid and correction_form(fact):
        return True
    return box_drawing(fact)


def conflict_choice(fid: int, reason: str) -> bool:
    """The finding differs from the chart's value for the same test and date: approving
    it is one of three explicit choices, made beside both values (shown above)."""
    st.markdown("**This finding differs from the chart.** Choose what the chart should hold:")
    c1, c2, c3 = st.columns(3)
    for column, (resolution, label, done) in zip((c1, c2, c3), (
            (REPLACE, "Replace the chart value", "The chart now holds this finding's value; the old value is kept "
                                                 "in the history."),
            (KEEP_BOTH, "Keep both", "The chart now shows both values side by side."),
            (KEEP_CHART, "Keep the chart value", "The chart keeps its value; this finding stays with its document."))):
        if column.button(label, key=f"res-{resolution}-{fid}", type="primary" if resolution == KEEP_CHART else
                         "secondary", help=RESOLUTIONS[resolution]):
            st.session_state.pop(f"rq_choose-{fid}", None)
            return run_decision(decide_fact, fid, approve=True, by=reviewer, reason=reason or None,
                                resolution=resolution, success=done)
    return False


def unread_item(fact: dict) -> bool:
    """Results the readers did not read: a person reads them on the page. Acknowledging
    records that; it puts nothing in the chart (enter or correct results by hand)."""
    fid = fact["fact_id"]
    st.info("These results are printed on the document but no finding was read from them, so none of them is "
            "in the chart or in answers. Read them on the page above. Acknowledging records that you read them; "
            "it adds nothing to the chart.", icon=":material/visibility:")
    reason = st.text_input("Note (needed to say they are not results)", key=f"why-f-{fid}")
    c1, c2 = st.columns(2)
    if c1.button("Acknowledge: I read them on the page", key=f"af-{fid}", shortcut="a", type="primary"):
        return run_decision(decide_fact, fid, approve=True, by=reviewer, reason=reason or None,
                            success="Acknowledged: the results were read by a person.")
    if c2.button("Not results", key=f"rf-{fid}", shortcut="x",
                 help="The guard took something that is not a result for one (say what it is)."):
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


def box_drawing(fact: dict) -> bool:
    """Draw the cited box on the page (canvas in a browser; four numbers otherwise)."""
    cit = fact["citation"]
    page = page_of(cit)
    if page is None and not cit.get("bounding_box"):
        return False
    # A toggle, not an expander: it stays open while the canvas sends its drawing.
    if st.toggle("Draw the box" if not cit.get("bounding_box") else "Redraw the box", key=f"draw-{fact['fact_id']}"):
        box = canvas_box(fact, page) or number_box(fact)
        free = st.checkbox("Save it even if the quote is not inside (free box)", key=f"free-{fact['fact_id']}")
        if st.button("Save box", key=f"savebox-{fact['fact_id']}") and box:
            return run_decision(set_fact_box, fact["fact_id"], box=box, by=reviewer, confirm_free_box=free,
                                success="Box saved.")
    return False


def canvas_box(fact: dict, page: int | None) -> dict | None:
    try:  # needs a running server (a components v2 manifest); AppTest gets the number inputs
        from streamlit_drawable_canvas import st_canvas
    except Exception:
        return None
    if page is None:
        return None
    from PIL import Image

    image = Image.open(io.BytesIO(page_image(wb, fact["document_id"], page)))  # cached by the viewer
    width = 700
    height = round(width * image.height / image.width)
    # The canvas sends its background on every run: a page scaled to the canvas, not the render.
    image = image.resize((width, height))
    result = st_canvas(background_image=image, drawing_mode="rect", stroke_width=2, stroke_color="#d22",
                       fill_color="rgba(220, 30, 30, 0.1)", width=width, height=height,
                       key=f"canvas-{fact['fact_id']}")
    box = drawn_box(result.json_data, width, height)
    if box is None:
        st.caption("Drag a rectangle around the value on the page.")
        return None
    st.caption("Drawn: left {x:.1%}, top {y:.1%}, width {width:.1%}, height {height:.1%} of the page".format(**box))
    return box


def number_box(fact: dict) -> dict | None:
    old = fact["citation"].get("bounding_box") or {}
    fid = fact["fact_id"]
    cols = st.columns(4)
    values = [cols[i].number_input(f"{name} (% of page)", 0.0, 100.0, round(100 * old.get(k, 0.0), 2),
                                   key=f"box-{k}-{fid}")
              for i, (k, name) in enumerate((("x", "Left"), ("y", "Top"), ("width", "Width"), ("height", "Height")))]
    if values[2] <= 0 or values[3] <= 0:
        return None
    return dict(zip(("x", "y", "width", "height"), (v / 100 for v in values)))


# ------------------------------------------------------------------ the queue
@st.fragment
def to_review() -> None:
    items = queue_items(wb, PID)
    counts = queue_counts(items)
    names = {i["document_id"]: i["filename"] for i in items}
    f1, f2, f3, f4, f5 = st.columns([3, 2, 3, 2, 2])
    document = f1.selectbox("Document", [ALL, *sorted(names, reverse=True)], key="rq_f_doc",
                            format_func=lambda d: d if d == ALL
                            else plain_text(f"{names[d]} ({counts['document_id'][d]})"))
    doc_type = f2.selectbox("Document type", [ALL, *sorted(counts["doc_type"])], key="rq_f_type",
                            format_func=lambda t: t if t == ALL else f"{labels.doc_type(t)} ({counts['doc_type'][t]})")
    reason = f3.selectbox("Reason", [ALL, *sorted(counts["reason"])], key="rq_f_reason",
                          format_func=lambda r: r if r == ALL
                          else plain_text(f"{labels.review_reason(r)} ({counts['reason'][r]})"))
    certainty = f4.selectbox("Certainty", [ALL, *sorted(counts["certainty"])], key="rq_f_certainty",
                             format_func=lambda c: c if c == ALL else f"{labels.certainty(c)} ({counts['certainty'][c]})")
    critical_first = f5.toggle("Critical first", value=True, key="rq_f_critical")
    shown = filter_queue(items, document_id=None if document == ALL else document,
                         doc_type=None if doc_type == ALL else doc_type, reason=None if reason == ALL else reason,
                         certainty=None if certainty == ALL else certainty, critical_first=critical_first)
    if notice := st.session_state.get("rq_notice"):  # kept until the reviewer moves on
        st.success(notice)
    st.markdown(f"**{len(shown)} of {len(items)} items to review**")
    if not shown:
        st.info("Nothing waiting for review here." if items else "Nothing waiting for review on this chart.")
        return

    keys = [i["key"] for i in shown]
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
    by_key = {i["key"]: i for i in shown}

    queue_list(shown, current)
    n1, n2, n3 = st.columns([1, 1, 4])
    if n1.button("Previous", key="rq_prev", shortcut="k", disabled=index == 0):
        index -= 1
        st.session_state.pop("rq_notice", None)
    if n2.button("Next", key="rq_next", shortcut="j", disabled=index == len(keys) - 1):
        index += 1
        st.session_state.pop("rq_notice", None)
    st.session_state["rq_current"], st.session_state["rq_index"] = keys[index], index
    n3.caption(f"Item {index + 1} of {len(keys)} · keys: "
               + ("a approve, x reject, e correct, " if may_decide else "") + "j next, k previous")

    item = by_key[keys[index]]
    st.session_state["rq_item"] = item
    with st.container(border=True):
        decided = identity_item(item) if item["kind"] == "identity" else finding_item(item)
    if decided:
        st.session_state["rq_current"] = None  # the next item opens at the same place
        rerun_fragment()


def queue_list(shown: list[dict], current: str) -> None:
    """The items grouped by document; rows with the same reason can be approved together."""
    rows = plain([{"Document": i["filename"], "Item": item_title(i)[:90], "Why": labels.review_reason(i["reason"]),
                   "Critical": "yes" if i["critical"] else "", "Open": "▶" if i["key"] == current else ""}
                  for i in shown])
    if not may_decide:
        st.dataframe(rows, key="rq_table", hide_index=True, height=min(38 + 35 * len(rows), 300))
        return
    picked = st.dataframe(rows, key="rq_table", on_select="rerun", selection_mode="multi-row", hide_index=True,
                          height=min(38 + 35 * len(rows), 300))
    chosen = [shown[r] for r in (picked.selection.rows if picked else []) if r < len(shown)]
    if not chosen:
        st.caption("Select rows with the same reason to approve them together.")
        return
    facts = [i for i in chosen if i["kind"] == "fact"]
    same = len({i["reason"] for i in facts}) == 1 and len(facts) == len(chosen)
    if not same:
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
    label = (f"Approve {len(facts)} selected findings ({md_text(labels.review_reason(facts[0]['reason']))})"
             + (f" — replaces {len(replaces)} chart value(s)" if replaces else ""))
    if st.button(label, key="rq_bulk"):
        try:
            results = approve_facts(wb, ids, by=reviewer, replace_chart_values=bool(replaces))
        except WorkbenchError as exc:
            st.error(md_text(exc.message))
            return
        done = sum(r["ok"] for r in results)
        st.session_state["rq_notice"] = f"{done} of {len(results)} findings approved."
        for failed in (r for r in results if not r["ok"]):
            st.warning(f"Finding {failed['fact_id']}: {md_text(failed['error'])}")
        if done:
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
