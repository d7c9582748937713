"""Text that came from a file or a message, shown as inert text.

Every Streamlit string that is not st.text / st.code / st.json / a dataframe cell / a
select's options is Markdown: st.markdown and st.caption, alerts, st.table cells, widget
labels (buttons, toggles, checkboxes), expander labels, tabs, metrics, progress text and
help tooltips. A document line ``![x](http://host/b.png)`` shown there makes the browser
fetch that URL, ``$x^2$`` turns into LaTeX and ``:red[...]`` into coloured text.

Anywhere, Markdown or not, a bidirectional control character reorders what follows it:
a right-to-left override makes ``x\u202efdp.hl7`` read as ``x7lh.pdf``. Those are shown
as U+FFFD (a visible mark that something was there), so the text reads in the order it
is stored and the real extension is the one shown.

One helper per kind of place, all built on ``plain_text``:

- ``md_text(value)`` for a string read as Markdown (labels, captions, alerts, help);
- ``plain_text(value)`` for a string shown as plain text (a select's option, st.text, a
  tooltip attribute drawn by our own component);
- ``plain(data)`` for rows, a DataFrame or JSON handed to st.dataframe / st.json.

The stored value is never changed, only what is sent to the page.
"""

from __future__ import annotations

import re

# Characters that open an inline construct anywhere in a line: escape (\x), links and
# images ([ ] !), raw HTML and autolinks (<), entities (&), code (`), emphasis and
# strikethrough (* _ ~), LaTeX ($), table cells (|). CommonMark reads "\x" as a plain x.
# Ordinary punctuation (. , ; - ( ) / % ' ") stays as it is so values read normally.
_INLINE = re.compile(r"([\\`*_~\[\]<&$|!])")
# ":red[…]", ":small", ":material/icon:" (directives) and ":smile:" / ":+1:" (emoji). The
# escape stops a directive; icons and emoji are matched in the read text, so they also
# get the word joiner.
_COLON = re.compile(r":(?=[A-Za-z\[{]|[\w+-][\w+-]*:)")
# Block markers count at the start of the text (a caption or a line may begin with it):
# heading, list, quote, thematic break / setext underline, ordered list "1." or "1)".
_LEADING = re.compile(r"^([ \t]*)([>=]|[#+-](?=[ \t#+-]|$)|\d{1,9}(?=[.)](?:[ \t]|$)))")
_LINE_BREAKS = re.compile(r"[ \t]*(?:\r\n|\r|\n|\u2028|\u2029)[ \t]*")
# Streamlit links bare URLs and e-mail addresses by matching the text *after* escapes
# are read, so escaping cannot stop it: an invisible word joiner in the middle does.
_BARE_LINK = re.compile(r"(?i)(?<=:)(?=//)|(?<=www)(?=\.)|(?=@)")
_WORD_JOINER = "\u2060"
# Embeddings and overrides (U+202A-U+202E), isolates (U+2066-U+2069), the left-to-right
# and right-to-left marks (U+200E, U+200F) and the Arabic letter mark (U+061C).
BIDI_CONTROLS = re.compile("[\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c]")
BIDI_SHOWN_AS = "\ufffd"


def plain_text(value: object) -> str:
    """``value`` as text that reads in the order it is stored: every bidirectional
    control character is shown as U+FFFD. ``None`` is ""."""
    if value is None:
        return ""
    return BIDI_CONTROLS.sub(BIDI_SHOWN_AS, str(value))


def plain(data):
    """``plain_text`` over every string in rows (a list of dicts or lists), a dict, a
    pandas DataFrame (cells, column names and index) or JSON-like data, for st.dataframe,
    st.json and st.table; other values are returned as they are."""
    if isinstance(data, str):
        return plain_text(data)
    if isinstance(data, dict):
        return {plain(k): plain(v) for k, v in data.items()}
    if isinstance(data, (list, tuple)):
        return type(data)(plain(v) for v in data)
    try:
        import pandas as pd
    except ImportError:  # pragma: no cover - pandas ships with streamlit
        return data
    if isinstance(data, pd.DataFrame):
        cell = lambda v: plain_text(v) if isinstance(v, str) else v  # noqa: E731
        frame = data.map(cell)
        frame.columns = data.columns.map(cell)
        frame.index = data.index.map(cell)
        return frame
    return data


def md_text(value: object) -> str:
    """``value`` as Markdown that renders as its own characters: no image, link, HTML,
    emphasis, code, LaTeX, ``:colour[…]`` / ``:material/…:`` directive, emoji shortcode or
    list/heading marker survives, bare URLs and e-mail addresses are not linked, and line
    breaks become spaces (the text sits inside one line of the page); bidirectional
    controls are shown as U+FFFD (``plain_text``). ``None`` is ""."""
    if value is None:
        return ""
    text = _LINE_BREAKS.sub(" ", plain_text(value))
    text = _BARE_LINK.sub(_WORD_JOINER, text)
    text = _INLINE.sub(r"\\\1", text)
    text = _COLON.sub(r"\\:" + _WORD_JOINER, text)
    match = _LEADING.match(text)
    if match:
        marker = match.group(2)
        if marker.isdigit():  # "1." -> "1\." : the digits stay, the list marker goes
            end = match.end()
            text = text[:end] + "\\" + text[end:]
        else:
            text = match.group(1) + "\\" + text[match.start(2):]
    return text
