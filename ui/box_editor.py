"""A finding's box moved and resized in place, on the page the review item shows: the
page becomes a drawing canvas holding the saved box (and the page's other boxes, grey
and fixed), its edit toggle pressed, with the canvas's Undo and Redo beside it; or a
new box is drawn on it. Four numbers stand in while nothing is drawn on the canvas."""

from __future__ import annotations

import io
from typing import Any

import streamlit as st

from core.services.review.corrections import page_of
from core.services.review.document_view import document_view, page_image
from core.services.workbench import Workbench
from ui.viewer import drawn_box

CANVAS_WIDTH = 520  # the page column's width on a 1400 px window
FIXED = "#8c959f"  # the outline of a box shown for orientation, never read back
MOVE, DRAW = "Move or resize the box", "Draw a new box"


def _rect(box: dict[str, float], width: int, height: int, *, editable: bool) -> dict[str, Any]:
    """A Fabric.js rectangle at ``box`` (fractions of the page) on a width x height canvas."""
    return {"type": "rect", "left": box["x"] * width, "top": box["y"] * height, "width": box["width"] * width,
            "height": box["height"] * height, "originX": "left", "originY": "top", "scaleX": 1, "scaleY": 1,
            "angle": 0, "fill": "rgba(220, 30, 30, 0.1)" if editable else "rgba(0,0,0,0)",
            "stroke": "#d22" if editable else FIXED, "strokeWidth": 2, "selectable": editable,
            "evented": editable, "lockRotation": True, "hasRotatingPoint": False}


def _canvas():
    try:  # the drawing canvas (a components v2 component)
        from streamlit_drawable_canvas import st_canvas
    except Exception:  # noqa: BLE001 - not installed: the numbers stand in
        return None
    return st_canvas


def canvas_available() -> bool:
    return _canvas() is not None


def edit_on_page(wb: Workbench, fact: dict[str, Any], mode: str) -> dict[str, float] | None:
    """The page with the fact's box on a canvas (``mode`` MOVE: the saved box, ready to
    move and resize; DRAW: a new rectangle); returns the box as it now stands, as a
    fraction of the page, or None when there is none."""
    st_canvas = _canvas()
    cit = fact["citation"]
    page = page_of(cit)
    if st_canvas is None or page is None:
        return number_box(fact)
    from PIL import Image

    image = Image.open(io.BytesIO(page_image(wb, fact["document_id"], page)))  # cached by the viewer
    width = CANVAS_WIDTH
    height = round(width * image.height / image.width)
    image = image.resize((width, height))  # the canvas sends its background on every run: send it small
    saved = cit.get("bounding_box")
    others = [b["box"] for b in _page_boxes(wb, fact, page) if b.get("fact_id") != fact["fact_id"]]
    objects = [_rect(b, width, height, editable=False) for b in others]
    if saved:  # moved in MOVE mode; in DRAW mode shown, fixed, beside the new one
        objects.append(_rect(saved, width, height, editable=mode == MOVE))
    result = st_canvas(background_image=image, drawing_mode="rect", stroke_width=2, stroke_color="#d22",
                       fill_color="rgba(220, 30, 30, 0.1)", width=width, height=height,
                       initial_drawing={"version": "4.4.0", "objects": objects},
                       key=f"canvas-{mode == MOVE}-{fact['fact_id']}")
    drawn = [o for o in (result.json_data or {}).get("objects", []) if o.get("stroke") != FIXED]
    box = drawn_box({"objects": drawn}, width, height)
    if box is None:  # nothing drawn (or a canvas that has not reported yet): the numbers stand in
        with st.expander("Or type the box (percent of the page)"):
            return number_box(fact)
    st.caption("Drawn: left {x:.1%}, top {y:.1%}, width {width:.1%}, height {height:.1%} of the page".format(**box))
    return box


def _page_boxes(wb: Workbench, fact: dict[str, Any], page: int) -> list[dict[str, Any]]:
    view = document_view(wb, fact["document_id"])
    return list(view.pages[page - 1].boxes) if 1 <= page <= len(view.pages) else []


def number_box(fact: dict[str, Any]) -> dict[str, float] | None:
    old = fact["citation"].get("bounding_box") or {}
    fid = fact["fact_id"]
    cols = st.columns(4)
    values = [cols[i].number_input(f"{name} (% of page)", 0.0, 100.0, round(100 * old.get(k, 0.0), 2),
                                   key=f"box-{k}-{fid}")
              for i, (k, name) in enumerate((("x", "Left"), ("y", "Top"), ("width", "Width"), ("height", "Height")))]
    if values[2] <= 0 or values[3] <= 0:
        return None
    return dict(zip(("x", "y", "width", "height"), (v / 100 for v in values)))
