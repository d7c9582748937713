"""The review queue's keyboard: one table of keys (the buttons take theirs from it), the
help overlay on `?`, `/` to the reason box, and the box editor opened ready to move.

Streamlit's button shortcuts take letters, digits and named keys only, so the keys no
button can carry (`?`, `/`, Escape out of a text box) are read by a small inline
component in the page itself (a components v2 component, not an iframe). It listens once
per browser tab and reads what the latest run told it (which reason box, which keys),
so a rerun never adds a second listener. Nothing it does reaches the server: the help
overlay opens and closes in the browser, instantly."""

from __future__ import annotations

import functools
from typing import Any

import streamlit as st

# What each key does, in the order the help lists them. A button's ``shortcut=`` is
# looked up here, so the help and the buttons cannot disagree.
KEYS: dict[str, tuple[str, str]] = {
    "approve": ("a", "Approve: add the finding to the chart (or approve the patient match)"),
    "reject": ("x", "Reject (say why in the reason box first)"),
    "correct": ("e", "Correct the value, unit, date or flag"),
    "keep": ("d", "Keep it with its document, out of the chart"),
    "replace": ("1", "Conflict: replace the chart value"),
    "keep_both": ("2", "Conflict: keep both values"),
    "keep_chart": ("3", "Conflict: keep the chart value"),
    "next": ("j", "Next item"),
    "previous": ("k", "Previous item"),
    "next_document": ("n", "First item of the next document"),
    "previous_document": ("p", "First item of the previous document"),
    "box": ("b", "Move or resize the box on the page (or close the box editor)"),
    "save_box": ("s", "Save the box"),
    "approve_document": ("shift+a", "Approve the document's remaining findings (shows what changes first)"),
}
# Keys read in the browser, not by a button.
BROWSER_KEYS: tuple[tuple[str, str], ...] = (
    ("/", "Type in the reason box (Escape leaves it, so keys work again)"),
    ("?", "Show or hide this list of keys"),
)
READER_ACTIONS = ("next", "previous", "next_document", "previous_document")


def shortcut(action: str) -> str:
    return KEYS[action][0]


def help_rows(may_decide: bool) -> list[dict[str, str]]:
    """The keys a person can use on this page: a reader gets the moving keys only."""
    rows = [{"Key": key, "What it does": what} for action, (key, what) in KEYS.items()
            if may_decide or action in READER_ACTIONS]
    return rows + [{"Key": key, "What it does": what} for key, what in BROWSER_KEYS
                   if may_decide or key != "/"]


_HTML = '<div class="cdw-keys" hidden></div>'
_JS = """
export default function (component) {
  const w = window;
  w.__cdwKeys = component.data || {};
  const helpId = "cdw-key-help";
  const closeHelp = () => { const el = document.getElementById(helpId); if (el) el.remove(); };
  const openHelp = (cfg) => {
    const box = document.createElement("div");
    box.id = helpId; box.setAttribute("role", "dialog"); box.setAttribute("aria-label", "Keyboard keys");
    box.style.cssText = "position:fixed;z-index:100000;top:12vh;left:50%;transform:translateX(-50%);" +
      "background:#fff;color:#1f2328;border:1px solid #d0d7de;border-radius:10px;padding:18px 22px;" +
      "box-shadow:0 12px 40px rgba(0,0,0,.25);font:14px/1.5 system-ui,sans-serif;max-width:560px;";
    const title = document.createElement("div");
    title.textContent = "Keyboard keys"; title.style.cssText = "font-weight:600;font-size:16px;margin-bottom:8px";
    const table = document.createElement("table");
    for (const [key, what] of cfg.keys || []) {
      const row = table.insertRow();
      const k = row.insertCell(); const d = row.insertCell();
      const kbd = document.createElement("kbd"); kbd.textContent = key;
      kbd.style.cssText = "border:1px solid #d0d7de;border-radius:4px;padding:0 6px;background:#f6f8fa";
      k.appendChild(kbd); k.style.cssText = "padding:2px 14px 2px 0;white-space:nowrap";
      d.textContent = what;
    }
    const foot = document.createElement("div");
    foot.textContent = "Press ? or Escape to close."; foot.style.cssText = "margin-top:8px;color:#59636e";
    box.append(title, table, foot);
    box.addEventListener("click", closeHelp);
    document.body.appendChild(box);
  };
  if (!w.__cdwKeysBound) {
    w.__cdwKeysBound = true;
    document.addEventListener("keydown", (ev) => {
      const cfg = w.__cdwKeys;
      if (!cfg) return;
      const t = ev.target;
      const typing = t && (t.tagName === "INPUT" || t.tagName === "TEXTAREA" || t.isContentEditable);
      if (typing) { if (ev.key === "Escape") t.blur(); return; }
      if (ev.key === "?") {
        document.getElementById(helpId) ? closeHelp() : openHelp(cfg);
        ev.preventDefault(); ev.stopPropagation();
      } else if (ev.key === "Escape") {
        closeHelp();
      } else if (ev.key === "/" && cfg.reason) {
        const input = [...document.querySelectorAll("input[type=text], input:not([type]), textarea")]
          .find((el) => el.getAttribute("aria-label") === cfg.reason);
        if (input) { input.focus(); ev.preventDefault(); ev.stopPropagation(); }
      }
    }, true);
  }
  // The box editor opens with the canvas's own edit toggle pressed: the saved box can be
  // moved and resized at once (its toolbar keeps Undo and Redo beside the toggle).
  if (w.__cdwKeys.edit_canvas) {
    let tries = 0;
    // The canvas draws in its own shadow root: look inside every open one.
    const deep = (root, selector) => {
      const found = root.querySelector(selector);
      if (found) return found;
      for (const el of root.querySelectorAll("*")) {
        if (el.shadowRoot) { const inner = deep(el.shadowRoot, selector); if (inner) return inner; }
      }
      return null;
    };
    const press = setInterval(() => {
      const toggle = deep(document, "button.dc-icon-button[aria-label='Edit']");
      if (toggle && toggle.getAttribute("aria-pressed") === "false" && toggle.dataset.cdwPressed !== w.__cdwKeys.edit_canvas) {
        toggle.dataset.cdwPressed = w.__cdwKeys.edit_canvas;
        toggle.click();
      }
      if ((toggle && toggle.dataset.cdwPressed) || ++tries > 50) clearInterval(press);
    }, 100);
  }
  return () => { w.__cdwKeys = null; closeHelp(); };
}
"""


def _component():
    try:
        return st.components.v2.component("cdw_review_keys", html=_HTML, js=_JS)
    except Exception:  # noqa: BLE001 - an older runtime: the buttons' own shortcuts still work
        return None


_KEYS = _component()


def listen(*, may_decide: bool, reason_label: str | None, edit_canvas: str | None = None) -> None:
    """Mount the page's key listener: ``reason_label`` is the label of the reason box `/`
    goes to; ``edit_canvas`` names the box editor to open ready to move (a new name
    presses the canvas's edit toggle once)."""
    if _KEYS is None:
        return
    data: dict[str, Any] = {"keys": [[r["Key"], r["What it does"]] for r in help_rows(may_decide)],
                            "reason": reason_label if may_decide else None, "edit_canvas": edit_canvas}
    _KEYS(key="rq_keys_listener", data=data)


def help_popover(may_decide: bool) -> None:
    """The same list for the mouse (and for a page that is not focused)."""
    with st.popover("Keys (?)", help="Keyboard keys for this page"):
        st.table(_help_table(may_decide))


@functools.cache
def _help_table(may_decide: bool):
    """The list as the Arrow table st.table would make of it, made once per process:
    it never changes, and making it again cost every key press a few ms."""
    import pandas as pd
    import pyarrow as pa

    return pa.Table.from_pandas(pd.DataFrame(help_rows(may_decide)))
