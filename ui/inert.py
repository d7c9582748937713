"""Document text shown through Streamlit's Markdown as inert text.

Every Streamlit string that is not st.text / st.code / st.json / a dataframe cell is
Markdown: st.markdown and st.caption, alerts, st.table cells, widget and expander labels,
tabs, metrics, progress text and help tooltips. A document line
``![x](http://host/b.png)`` shown there makes the browser fetch that URL, ``$x^2$`` turns
into LaTeX and ``:red[...]`` into coloured text. ``md_text`` makes such a string read
literally; the stored value is never changed, only what is sent to the page.
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


def md_text(value: object) -> str:
    """``value`` as Markdown that renders as its own characters: no image, link, HTML,
    emphasis, code, LaTeX, ``:colour[…]`` / ``:material/…:`` directive, emoji shortcode or
    list/heading marker survives, bare URLs and e-mail addresses are not linked, and line
    breaks become spaces (the text sits inside one line of the page). ``None`` is ""."""
    if value is None:
        return ""
    text = _LINE_BREAKS.sub(" ", str(value))
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
