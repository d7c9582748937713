"""The one document viewer: a page image with every cited box drawn over it (an HTML
overlay, so choosing a fact never re-renders the page), the fact list beside it, and
native views of HL7, XLSX, DOCX and FHIR sources. Used by Documents, Review queue, Chat
citations and the Evals drill-down."""

from __future__ import annotations

import html
import io
from collections.abc import Mapping
from typing import Any

import pandas as pd
import streamlit as st

from domain.errors import WorkbenchError
from core.services.review import document_view as dv
from core.services.review import native_views
from core.services.admin.access_audit import VIEW_DOCUMENT
from core.services.workbench import Workbench
from core.services.review.outcome import page_matches
from ui import auth, glossary, labels
from ui.inert import md_text, plain, plain_text
from ui.media import data_url

BOX_COLOURS = {"verified": "#1a7f37", "document_fact": "#1f6feb", "needs_review": "#d97706", "held": "#6b7280",
               "cited": "#d1242f"}
ZOOMS = {"Fit": 100, "125 %": 125, "150 %": 150, "200 %": 200}
_HIGHLIGHT = "background-color: #fde68a; font-weight: 600"
_NEAR = "background-color: #fef3c7"

_OVERLAY_HTML = '<div class="cdw-scroll"><div class="cdw-page"><img class="cdw-img" alt="page"/>' \
                '<div class="cdw-layer"></div></div></div>'
_OVERLAY_CSS = """
.cdw-scroll { overflow: auto; max-height: 80vh; border: 1px solid #d0d7de; border-radius: 6px; }
.cdw-page { position: relative; width: 100%; }
.cdw-img { display: block; width: 100%; height: auto; user-select: none; }
.cdw-layer { position: absolute; inset: 0; }
.cdw-box { position: absolute; box-sizing: border-box; border: 2px solid; border-radius: 2px; cursor: pointer;
           background: rgba(255,255,255,0); }
.cdw-box:hover { background: rgba(255, 230, 0, .18); }
.cdw-box.cdw-selected { border-width: 3px; outline: 3px solid #d1242f; outline-offset: 2px;
                        background: rgba(255, 230, 0, .25); }
"""
# The default export runs on mount and again whenever the data changes; the image is
# only swapped when its source changes, the boxes are rebuilt (cheap).
_OVERLAY_JS = """
export default function (component) {
  const { data, parentElement, setTriggerValue } = component;
  const page = parentElement.querySelector(".cdw-page");
  const img = parentElement.querySelector(".cdw-img");
  const layer = parentElement.querySelector(".cdw-layer");
  if (!data || !page) return;
  if (img.getAttribute("src") !== data.src) img.setAttribute("src", data.src);
  page.style.width = (data.zoom || 100) + "%";
  layer.replaceChildren();
  let chosen = null;
  for (const b of data.boxes || []) {
    const el = document.createElement("div");
    el.className = "cdw-box cdw-" + b.cls + (b.selected ? " cdw-selected" : "");
    el.dataset.factId = String(b.id);
    el.title = b.label;
    el.style.left = (b.x * 100) + "%"; el.style.top = (b.y * 100) + "%";
    el.style.width = (b.w * 100) + "%"; el.style.height = (b.h * 100) + "%";
    el.style.borderColor = b.colour;
    el.onclick = (ev) => { ev.stopPropagation(); setTriggerValue("box", b.id); };
    layer.appendChild(el);
    if (b.selected) chosen = el;
  }
  if (chosen) chosen.scrollIntoView({ block: "nearest", inline: "nearest" });
}
"""


def _overlay_component():
    """The inline v2 component, or None where v2 components are unavailable."""
    try:
        return st.components.v2.component("cdw_page_overlay", html=_OVERLAY_HTML, css=_OVERLAY_CSS,
                                          js=_OVERLAY_JS)
    except Exception:  # noqa: BLE001 - an older runtime: fall back to st.image (a data: URL) + the list
        return None


_OVERLAY = _overlay_component()


# ----------------------------------------------------------------------------- cached page data


# Every page image reaches the browser inline, as a data: URL, never as bytes given to
# st.image: those would be kept at a /media URL anyone could fetch (ui/media.py).


@st.cache_data(max_entries=64, show_spinner=False)
def _page_src(_wb: Workbench, sha256: str, document_id: int, page: int) -> str:
    """The page as a data: URL, cached per (sha256, page). Noisy scans are sent as JPEG:
    a 1 MB grey PNG per rerun is what makes a page feel slow."""
    png = dv.page_image(_wb, document_id, page)
    if len(png) > 400_000:
        from PIL import Image

        with Image.open(io.BytesIO(png)) as img:
            buf = io.BytesIO()
            img.convert("L").save(buf, format="JPEG", quality=82)
        return data_url(buf.getvalue(), "image/jpeg")
    return data_url(png, "image/png")


THUMB_WIDTH = 90


@st.cache_data(max_entries=256, show_spinner=False)
def _thumb_src(_wb: Workbench, sha256: str, document_id: int, page: int) -> str:
    """A page thumbnail as a data: URL, scaled down here (st.image scaled the bytes it
    was given; it sends a data: URL as it is)."""
    return data_url(dv.page_image(_wb, document_id, page), "image/png", width=THUMB_WIDTH)


# ----------------------------------------------------------------------------- helpers


def legend() -> None:
    st.markdown(" ".join(
        f'<span style="border:2px solid {BOX_COLOURS[c]};padding:0 6px;border-radius:3px;margin-right:6px">'
        f"{html.escape(labels.BOX_CLASS[c])}</span>" for c in dv.BOX_CLASSES), unsafe_allow_html=True)


def fact_status(fact: dict[str, Any]) -> str:
    """A fact's state in plain words, by its viewer class."""
    cls = fact.get("box_class")
    if cls == "held":
        return f"on hold — {labels.identity_status(fact.get('identity_status'))}"
    if cls is None:
        return labels.promotion(fact.get("promotion_status"))
    words = labels.BOX_CLASS.get(cls, cls)
    if fact.get("promotion_status") not in (None, "needs_review", "not_promotable"):
        words += f", {labels.promotion(fact['promotion_status'])}"
    if fact.get("corrected_by"):
        words += f", corrected by {fact['corrected_by']}"
    return words


def _fact_rows(facts: list[dict[str, Any]]) -> pd.DataFrame:
    return pd.DataFrame([{
        "what": labels.fact_type(f.get("fact_type")),
        "value": f.get("fact_text") or "",
        "where": labels.location(f.get("citation") or {}, f),
        "status": fact_status(f),
    } for f in facts], columns=["what", "value", "where", "status"])


def _state(key: str, name: str, default: Any = None) -> Any:
    return st.session_state.get(f"{key}:{name}", default)


def _set(key: str, name: str, value: Any) -> None:
    st.session_state[f"{key}:{name}"] = value


def _trigger(value: Any, name: str) -> Any:
    if value is None:
        return None
    if isinstance(value, Mapping):
        return value.get(name)
    return getattr(value, name, None)


# ----------------------------------------------------------------------------- documents


def render_document(wb: Workbench, document_id: int, *, facts: list[dict[str, Any]] | None = None,
                    selected_fact_id: int | None = None, key: str, show_fact_list: bool = True,
                    include_deleted: bool = False) -> int | None:
    """Show one document with every cited box and its fact list; returns the chosen
    fact id. ``selected_fact_id`` chooses a fact from outside (a link, the queue)."""
    try:
        view = dv.document_view(wb, document_id, facts, include_deleted=include_deleted)
    except WorkbenchError as exc:
        st.error(md_text(exc.message))
        return None
    if selected_fact_id is not None and _state(key, "outside") != selected_fact_id:
        _set(key, "outside", selected_fact_id)  # a new outside choice wins once, then clicks do
        _set(key, "fact", selected_fact_id)
        if view.page_of(selected_fact_id):
            _set(key, "page", view.page_of(selected_fact_id))
    by_id = {f["fact_id"]: f for f in view.facts}
    chosen = _state(key, "fact")
    if chosen not in by_id:
        chosen = None
    if view.deleted:
        st.warning(f"This document was {md_text(view.deleted)}.", icon=":material/delete:")
    for text in view.warnings:
        st.warning(md_text(text), icon=":material/warning:")
    if view.paged:
        if show_fact_list:
            page_col, list_col = st.columns([3, 2])
        else:
            page_col, list_col = st.container(), None
        with page_col:
            _paged(wb, view, chosen, key)
    else:
        list_col = st.container() if show_fact_list else None
    if list_col is not None:
        with list_col:
            chosen = _fact_list(view, chosen, key)
    if not view.paged:
        _non_paged(wb, view, by_id.get(chosen) or (view.facts[0] if view.facts else None), key)
    return _state(key, "fact") if _state(key, "fact") in by_id else chosen


def _fact_list(view: dv.DocumentView, chosen: int | None, key: str) -> int | None:
    st.markdown(f"**Facts ({len(view.facts)})**")
    if not view.facts:
        st.info("No facts were found in this document." + (" Its pages are shown with any warnings."
                                                            if view.paged else ""))
        return None
    ids = [f["fact_id"] for f in view.facts]
    # Keyed by the chosen fact, with that row as its default, so a click on a box moves
    # the table's tick too (a table keeps its own selection otherwise).
    table_key = f"{key}:table:{chosen}"
    default = {"selection": {"rows": [ids.index(chosen)]}} if chosen in ids else None

    def picked() -> None:
        rows = (st.session_state.get(table_key) or {}).get("selection", {}).get("rows") or []
        if rows:
            _set(key, "fact", ids[rows[0]])
            page = view.page_of(ids[rows[0]])
            if page:
                _set(key, "page", page)

    st.dataframe(plain(_fact_rows(view.facts)), hide_index=True, width="stretch", on_select=picked,
                 selection_mode="single-row", key=table_key, selection_default=default, height=min(420, 38 + 35 * len(view.facts)))
    chosen = _state(key, "fact")
    if chosen in ids:
        fact = view.facts[ids.index(chosen)]
        cit = fact.get("citation") or {}
        st.caption(f"Chosen: **{md_text(fact.get('fact_text'))}** · {md_text(labels.location(cit, fact))} · "
                   f"“{md_text(cit.get('quote_or_value'))}”"
                   + (f" · {md_text(glossary.reason(fact['review_reason']))}" if fact.get("review_reason") else ""),
                   help=labels.code_hint(fact.get("certainty"), fact.get("promotion_status"),
                                         md_text(cit.get("page_or_section")), md_text(cit.get("field_or_chunk_id"))))
        if fact["fact_id"] in view.unboxed and view.paged:
            st.caption("This fact has no box on the page.")
    return chosen


def _paged(wb: Workbench, view: dv.DocumentView, chosen: int | None, key: str) -> None:
    if view.page_count == 0:
        st.warning("The pages of this document cannot be shown.")
        return
    page = _state(key, "page") or view.page_of(chosen) or _first_page_with_boxes(view)
    page = max(1, min(int(page), view.page_count))
    nav, zoom_col = st.columns([1, 1], vertical_alignment="bottom")
    with nav:
        if view.page_count > 1:
            counts = {p.number: len(p.boxes) for p in view.pages}
            # One stable widget whose value is set before it is drawn and read in its
            # callback: a key built from the page lost every second turn.
            pill_key = f"{key}:pages"

            def turned() -> None:
                if st.session_state.get(pill_key):
                    _set(key, "page", st.session_state[pill_key])

            st.session_state[pill_key] = page
            st.pills("Page", list(range(1, view.page_count + 1)), key=pill_key, on_change=turned,
                     format_func=lambda n: f"{n} ({counts[n]})" if counts[n] else str(n),
                     help="Page number (boxes on it)")
    with zoom_col:
        zoom = st.segmented_control("Zoom", list(ZOOMS), default="Fit", key=f"{key}:zoom") or "Fit"
    current = view.pages[page - 1]
    page_banner(wb, view, page)
    for text in current.warnings:
        st.warning(f"Page {page}: {md_text(text)}", icon=":material/warning:")
    _draw_page(wb, view, page, current.boxes, chosen, key, zoom=ZOOMS[zoom])
    legend()
    if view.page_count > 1 and st.toggle("Page thumbnails", key=f"{key}:thumbs"):
        _thumbnails(wb, view, key)


def page_banner(wb: Workbench, view: dv.DocumentView, page: int) -> None:
    """A page checked on its own (a fax packet's) that names another patient carries a
    red banner; a page whose patient is unclear an orange one. A cover sheet is what it
    is, not a warning: it says so quietly; a page that was not read says that."""
    match = page_matches(wb, view.document_id).get(page)
    if match == "identity_mismatch_quarantined":
        st.error(f"**Page {page} names another patient.** Its findings are kept off this chart; the review queue "
                 "asks a reviewer to confirm.", icon=":material/person_off:")
    elif match == "identity_review_rejected":
        st.error(f"**Page {page} is not this patient's** (a reviewer decided): nothing on it is in this chart.",
                 icon=":material/person_off:")
    elif match == "identity_ambiguous_needs_review":
        st.warning(f"Page {page}: the patient match is unclear; its findings wait for a reviewer.",
                   icon=":material/person_search:")
    cls = view.pages[page - 1].page_class
    if cls == "cover":
        st.caption(f"Page {page}: {glossary.plain('page_cover')}.")
    elif cls:
        st.caption(f"Page {page}: {glossary.plain('page_' + cls)}.")


def _first_page_with_boxes(view: dv.DocumentView) -> int:
    return next((p.number for p in view.pages if p.boxes), 1)


def _draw_page(wb: Workbench, view: dv.DocumentView, page: int, boxes: list[dict[str, Any]], chosen: int | None,
               key: str, *, zoom: int = 100) -> None:
    try:
        src = _page_src(wb, view.sha256, view.document_id, page)
    except WorkbenchError as exc:
        st.warning(md_text(exc.message))
        return
    _overlay(src, boxes, chosen, key, zoom=zoom)


@st.cache_data(max_entries=32, show_spinner=False)
def _bytes_src(png: bytes) -> str:
    return data_url(png, "image/png")


def render_page_image(png: bytes, boxes: list[dict[str, Any]], *, key: str, emphasised: Any = -1) -> None:
    """A page that is not a stored document (e.g. an eval fixture rebuilt in memory)
    with boxes ``{fact_id, box{x,y,width,height}, box_class, label}`` drawn as the viewer
    draws them; ``box_class`` "cited" is the red box of a single citation."""
    _overlay(_bytes_src(png), boxes, emphasised, key)


def _overlay(src: str, boxes: list[dict[str, Any]], chosen: Any, key: str, *, zoom: int = 100) -> None:
    data = {"src": src, "zoom": zoom, "boxes": [
        {"id": b["fact_id"], "x": b["box"]["x"], "y": b["box"]["y"], "w": b["box"]["width"], "h": b["box"]["height"],
         "cls": b["box_class"], "colour": BOX_COLOURS.get(b["box_class"], "#d1242f"),
         "label": plain_text(b["label"]),  # a title attribute: no Markdown, but bidi applies
         "selected": b["fact_id"] == chosen} for b in boxes]}
    if _OVERLAY is not None:
        overlay_key = f"{key}:overlay"

        def clicked() -> None:
            fact_id = _trigger(st.session_state.get(overlay_key), "box")
            if fact_id is not None and int(fact_id) >= 0:
                _set(key, "fact", int(fact_id))

        _OVERLAY(key=overlay_key, data=data, on_box_change=clicked)
    else:
        st.image(src, width="stretch")


def _thumbnails(wb: Workbench, view: dv.DocumentView, key: str) -> None:
    cols = st.columns(min(6, view.page_count))
    for p in view.pages:
        with cols[(p.number - 1) % len(cols)]:
            try:
                st.image(_thumb_src(wb, view.sha256, view.document_id, p.number), width=THUMB_WIDTH)
            except WorkbenchError:
                st.caption("no image")
            if st.button(f"Page {p.number}", key=f"{key}:thumb:{p.number}"):
                _set(key, "page", p.number)
                st.rerun()


# ----------------------------------------------------------------------------- non-paged sources


def _non_paged(wb: Workbench, view: dv.DocumentView, fact: dict[str, Any] | None, key: str) -> None:
    if fact is None:
        return
    show_source(wb, fact.get("citation") or {}, document_id=view.document_id, kind=view.kind, fact=fact)


def show_source(wb: Workbench, citation: dict[str, Any], *, document_id: int, kind: str,
                fact: dict[str, Any] | None = None) -> None:
    """A non-paged citation shown natively: HL7 segment table, XLSX grid, DOCX text or FHIR tree
    (``kind`` as ``document_view`` names the document's)."""
    try:
        if kind == "hl7":
            _hl7(native_views.hl7_segments(wb, citation, document_id=document_id), citation, fact)
        elif kind == "xlsx":
            _sheet(native_views.sheet_grid(wb, citation, document_id=document_id), citation, fact)
        elif kind == "docx":
            _docx(native_views.docx_context(wb, citation, document_id=document_id), citation, fact)
        elif kind == "fhir":
            _fhir(native_views.fhir_tree(wb, citation, document_id=document_id), citation, fact)
        else:
            st.caption(f"{md_text(labels.location(citation, fact))}: “{md_text(citation.get('quote_or_value'))}”")
    except WorkbenchError as exc:
        st.warning(md_text(exc.message))
        st.caption(f"Quote: “{md_text(citation.get('quote_or_value'))}”")


def _hl7(view: native_views.Hl7View, citation: dict[str, Any], fact: dict[str, Any] | None) -> None:
    st.markdown(f"**{md_text(labels.location(citation, fact))}** · value “{md_text(citation.get('quote_or_value'))}”")
    if view.test_name:
        st.caption(f"Test: {md_text(view.test_name)} · unit: {md_text(view.unit or 'not stated')} · reference range: "
                   f"{md_text(view.reference_range or 'not stated')}"
                   + (f" · flag: {md_text(view.flag)}" if view.flag else ""))
    # The cited segment first; the whole message one click away.
    order = list(dict.fromkeys((r["segment"], r["index"]) for r in view.rows))
    cited = next((i for i, r in enumerate(order) if any(x["cited_segment"] for x in view.rows
                                                        if (x["segment"], x["index"]) == r)), None)
    near = {order[cited]} if cited is not None else set(order)
    _hl7_table([r for r in view.rows if (r["segment"], r["index"]) in near])
    if cited is not None:
        with st.expander(f"Whole message ({len(order)} segments)"):
            _hl7_table(view.rows)


def _hl7_table(rows: list[dict[str, Any]]) -> None:
    frame = plain(pd.DataFrame([{"segment": f"{r['segment']} {r['index']}", "field": r["field"],
                                 "component": str(r["component"] or ""), "value": r["value"]} for r in rows],
                               columns=["segment", "field", "component", "value"]))
    marks = [(_HIGHLIGHT if r["cited"] else _NEAR if r["cited_segment"] else "") for r in rows]
    styled = frame.style.apply(lambda _col: marks, axis=0) if len(frame) else frame
    st.dataframe(styled, hide_index=True, width="stretch", height=min(520, 38 + 35 * max(1, len(frame))))


def _fhir(tree: native_views.FhirTree, citation: dict[str, Any], fact: dict[str, Any] | None) -> None:
    st.markdown(f"**{md_text(labels.location(citation, fact))}** · value “{md_text(citation.get('quote_or_value'))}”")
    # The cited resource as a tree: the element read (and what it holds) marked, the way to it shaded.
    frame = plain(pd.DataFrame([{"element": "\u2003" * r["depth"] + r["key"], "value": r["value"]}
                                for r in tree.rows], columns=["element", "value"]))
    marks = [(_HIGHLIGHT if r["cited"] else _NEAR if r["on_path"] else "") for r in tree.rows]
    styled = frame.style.apply(lambda _col: marks, axis=0) if len(frame) else frame
    st.dataframe(styled, hide_index=True, width="stretch", height=min(520, 38 + 35 * max(1, len(frame))))
    with st.expander(f"Whole file ({len(tree.resources)} resources)"):
        listing = plain(pd.DataFrame([{"resource": r["path"], "what": r["summary"],
                                       "read": "yes" if r["valid"] else "failed validation"} for r in tree.resources],
                                     columns=["resource", "what", "read"]))
        rows = [(_HIGHLIGHT if r["cited"] else "") for r in tree.resources]
        st.dataframe(listing.style.apply(lambda _col: rows, axis=0) if len(listing) else listing, hide_index=True,
                     width="stretch")


def _sheet(grid: native_views.SheetGrid, citation: dict[str, Any], fact: dict[str, Any] | None) -> None:
    st.markdown(f"**{md_text(labels.location(citation, fact))}** · value “{md_text(citation.get('quote_or_value'))}”")
    frame = plain(pd.DataFrame([cells for _, cells in grid.rows], columns=grid.columns,
                               index=[str(n) for n, _ in grid.rows]))
    cited_rows = {r for r, _ in grid.cited}

    def mark(row: pd.Series) -> list[str]:
        n = int(row.name)
        return [_HIGHLIGHT if (n, grid.first_col + i) in grid.cited else _NEAR if n in cited_rows else ""
                for i in range(len(row))]

    st.caption(f"Sheet {md_text(grid.sheet)}")
    st.dataframe(frame.style.apply(mark, axis=1), width="stretch")


def _docx(context: native_views.DocxContext, citation: dict[str, Any], fact: dict[str, Any] | None) -> None:
    st.markdown(f"**{md_text(labels.location(citation, fact))}**")
    with st.container(border=True):
        for item in context.items:
            text = item["text"]
            if item["cited"] and item["span"]:
                a, b = item["span"]
                body = f"{md_text(text[:a])}:orange-background[**{md_text(text[a:b])}**]{md_text(text[b:])}"
            elif item["cited"]:
                body = f":orange-background[{md_text(text)}]"
            else:
                body = f":gray[{md_text(text)}]"
            st.markdown(body, help=md_text(item["locator"]))


# ----------------------------------------------------------------------------- citations


def render_citation(wb: Workbench, citation: dict[str, Any], *, key: str, fact: dict[str, Any] | None = None,
                    zoom: int = 100) -> None:
    """One cited place: the cited page with its box emphasised (that page's other boxes
    drawn too, at ``zoom`` percent), the native view of a non-paged source, or a
    guideline section."""
    from core.services.review.source_review import source_view

    cit = dict(citation)
    source = str(cit.get("source_id") or "")
    if cit.get("source_type") == "guideline" or not source.startswith("documents:"):
        view = source_view(wb, cit)
        if view.source_text:
            st.markdown(f"**{md_text(view.title or view.location)}** · {md_text(view.location)}")
            st.code(plain_text(view.source_text), language=None, wrap_lines=True)
        st.caption(f"Quote: “{md_text(cit.get('quote_or_value'))}”" + (f" · {md_text(view.note)}" if view.note else ""))
        return
    document_id = int(source.split(":", 1)[1])
    try:
        doc = dv.document_view(wb, document_id, include_deleted=True)
    except WorkbenchError as exc:
        st.warning(md_text(exc.message))
        return
    # Pages cite only the chosen patient's documents (chat, review queue), so the view is
    # that patient's.
    auth.log_view(VIEW_DOCUMENT, st.session_state.get("patient_id"), "document", document_id, slot=key)
    st.caption(f"{md_text(doc.filename)} · {md_text(labels.location(cit, fact))} · “{md_text(cit.get('quote_or_value'))}”")
    if doc.deleted:
        st.warning(f"This source was {md_text(doc.deleted)}.", icon=":material/delete:")
    if fact is not None and fact.get("fact_type") == "unread_content":
        _unread_places(wb, doc, cit, fact, key)
        return
    if not doc.paged:
        show_source(wb, cit, document_id=document_id, kind=doc.kind, fact=fact)
        return
    page = cit.get("page")
    if not isinstance(page, int) or not 1 <= page <= doc.page_count:
        st.caption("The cited page is not available.")
        return
    boxes = [b for b in doc.pages[page - 1].boxes if not _same_box(b["box"], cit.get("bounding_box"))]
    if cit.get("bounding_box"):
        boxes.append({"fact_id": -1, "page": page, "box": dict(cit["bounding_box"]), "box_class": "cited",
                      "label": "the cited place"})
    else:
        st.caption("No box was recorded for this citation; the page is shown.")
    _draw_page(wb, doc, page, boxes, -1, key, zoom=zoom)


def _unread_places(wb: Workbench, doc: dv.DocumentView, cit: dict[str, Any], fact: dict[str, Any], key: str) -> None:
    """Every place the coverage guard found results no finding reads: on a page, each
    one's box (red) over the page; elsewhere, the list of places, and the first shown."""
    regions = list((fact.get("structured_value") or {}).get("regions") or [])
    st.markdown("\n".join(f"- {md_text(r.get('locator'))}: “{md_text(str(r.get('text') or '')[:160])}”"
                           for r in regions))
    if not doc.paged:
        show_source(wb, cit, document_id=doc.document_id, kind=doc.kind, fact=fact)
        return
    pages = sorted({r["page"] for r in regions if isinstance(r.get("page"), int) and 1 <= r["page"] <= doc.page_count})
    for page in pages:
        here = [r for r in regions if r.get("page") == page and r.get("box")]
        boxes = [b for b in doc.pages[page - 1].boxes if b.get("fact_id") != fact.get("fact_id")]
        boxes += [{"fact_id": -1 - i, "page": page, "box": dict(r["box"]), "box_class": "cited",
                   "label": f"not read: {r.get('text') or ''}"} for i, r in enumerate(here)]
        st.caption(f"Page {page}: {len(here)} place{'s' if len(here) != 1 else ''} not read, boxed in red")
        _draw_page(wb, doc, page, boxes, -1, f"{key}-unread-{page}")


def _same_box(a: Mapping | None, b: Mapping | None) -> bool:
    return bool(a and b) and all(abs(float(a[k]) - float(b[k])) < 1e-6 for k in ("x", "y", "width", "height"))


# Fabric.js places an object by its origin point, which may be its centre or far edge.
_ORIGIN = {"left": 0.0, "top": 0.0, "center": 0.5, "right": 1.0, "bottom": 1.0}


def drawn_box(canvas_json: Mapping[str, Any] | None, width: int, height: int) -> dict[str, float] | None:
    """The last rectangle drawn on a ``width`` x ``height`` canvas (streamlit-drawable-canvas
    JSON) as a page-relative box, or None when none is drawn. Scaling and the origin
    point are undone, so a moved or resized rectangle reads where it is shown."""
    rects = [o for o in (canvas_json or {}).get("objects", []) if str(o.get("type")).lower() == "rect"]
    if not rects:
        return None
    r = rects[-1]
    w, h = r["width"] * r.get("scaleX", 1), r["height"] * r.get("scaleY", 1)
    left = r["left"] - _ORIGIN.get(r.get("originX", "left"), 0.0) * w
    top = r["top"] - _ORIGIN.get(r.get("originY", "top"), 0.0) * h
    return {"x": left / width, "y": top / height, "width": w / width, "height": h / height}
