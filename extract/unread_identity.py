"""Identity values a document prints that its reader did not attribute.

A reader that cannot read a patient identifier must say so, never leave it "absent":
after any reader, this sweep looks at every page (or section) for

* a value under an identity label of the shared vocabulary
  (``extract.values.identity_labels``) that no identifier the reader returned
  covers ("Born 06/21/1958" when the reader took no "Born" label);
* a birth-date-like date or an identifier-like number under a label the vocabulary
  does not know ("Unit ref: 4471-22", "Geb.: 06/21/1958");
* a birth-date-like date standing alone in the rows around a printed person's name
  ("SURNAME, Given" over "06/21/1958").

Precision is kept by what is *not* counted: values under labels the vocabulary knows
are not identity (collection and report dates, accession, CLIA, phone, page), other
identifiers (account, visit, NHS: read, never compared), results-like numbers
(decimals, short integers), and dates close to the document's own dates (a birth
date is years older than the newest date the document prints).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import date

from domain.content import NormalizedContent, PageContent, Word
from domain.models import Citation, ExtractionResult, IdentifierKind, IdentityCandidate, UnreadIdentifier
from domain.policy.facts.citations import quote_from_words
from extract.layout import norm_token, page_rows, segments, text_of
from extract.values import text_rules as tr
from extract.values.dates import find_date
from extract.values.identity_labels import NAME_MEANINGS, VOCABULARY, record_label_words, site_coded_number
from extract.values.labels import PATIENT_WORDS, tokens

# --------------------------------------------------------------------------- vocabulary lookup


def _label_tokens(text: str) -> tuple[str, ...]:
    """A label's words as the sweep compares them: case and edge punctuation dropped,
    "#" kept as a word of its own ("Patient #" is not "Patient")."""
    out: list[str] = []
    for raw in text.replace("#", " # ").split():
        t = "#" if raw == "#" else norm_token(raw)
        if t:
            out.append(t)
    return tuple(out)


_MEANING: dict[tuple[str, ...], str] = {}
for _meaning, _phrases in VOCABULARY.items():
    for _p in _phrases:
        _MEANING.setdefault(_label_tokens(_p), _meaning)
_MAX_LABEL = max(len(k) for k in _MEANING)

_BRACKETED = re.compile(r"\s*[(\[][^)\]]*[)\]]?\s*(?=:?\s*$)")


def _meaning_of(label: str) -> str | None:
    """The vocabulary's meaning of a label, read without a note in brackets after it when
    the whole is unknown ("Age(y//d):", a fax's "Age(y/m/d)", is an age; "Patient ID
    (internal)" a record number)."""
    found = _MEANING.get(_label_tokens(label))
    if found is None and (bare := _BRACKETED.sub("", label)) != label:
        found = _MEANING.get(_label_tokens(bare))
    return found


# A birth date is at least this many days older than the newest date the document prints.
DOB_MIN_AGE_DAYS = 730
# A label the vocabulary does not know is at most this many words ("Hosp ref #").
MAX_UNKNOWN_LABEL_WORDS = 3
# A printed name and a bare birth date belong together within this many rows, in the
# top share of the page where reports print who they are about.
NAME_DATE_ROWS = 2
HEADER_SHARE = 0.3

_PHONE = re.compile(r"^\(?\d{3}\)?[-. ]?\d{3}[-. ]\d{4}$")
_DECIMAL = re.compile(r"^[<>]?\d+[.,]\d+$")
_DECIMAL_PART = re.compile(r"\d\.\d")  # "1.005-1.030" is a range, never a record number
_ID_SHAPE = re.compile(r"^(?=.*\d)[A-Za-z0-9]+(?:[-/.][A-Za-z0-9]+)*$")


def _ends_label(word: Word) -> bool:
    t = word.text
    return t.endswith((":", "#", "#:")) and any(c.isalpha() or c == "#" for c in t)


def _known_label(seg: Sequence[Word], i: int) -> tuple[str, int] | None:
    """The longest vocabulary label starting at ``seg[i]``: (meaning, words used)."""
    for n in range(min(_MAX_LABEL + 1, len(seg) - i), 0, -1):
        tokens = _label_tokens(text_of(seg[i:i + n]))
        if tokens and tokens in _MEANING:
            return _MEANING[tokens], n
    return None


def identifier_like(text: str) -> bool:
    """A printed identifier's shape: letters and digits with separators ("4471-22",
    "QX-20417", "UR 0045871"), or six or more digits; never a decimal, a short count,
    a phone number or a date."""
    if text.strip().startswith(("(", "[")):
        return False  # a bracketed value is a range or a note: "(1.005-1.030)"
    t = text.strip(" ,;:()[]")
    if not t or _DECIMAL.match(t) or _PHONE.match(t) or find_date(t) is not None or _DECIMAL_PART.search(t):
        return False
    if not _ID_SHAPE.match(t):
        return False
    digits = sum(c.isdigit() for c in t)
    if t.isdigit():
        return digits >= 6
    return digits >= 3


def _leading_date(words: Sequence[Word]) -> tuple[str, list[Word]] | None:
    """The date the value starts with (ISO) and the words it spans."""
    text = ""
    for k, w in enumerate(words[:4]):
        text = (text + " " + w.text).strip()
        m = find_date(text)
        if m is not None and m.start == 0:
            return m.iso, list(words[:k + 1])
    return None


def _leading_identifier(words: Sequence[Word]) -> list[Word] | None:
    """The identifier the value starts with: one word, or two when OCR split it at a
    separator ("CR-" "760144")."""
    if not words:
        return None
    if identifier_like(words[0].text):
        return [words[0]]
    if len(words) > 1 and words[0].text[-1:] in "-/:" and identifier_like(words[0].text + words[1].text):
        return list(words[:2])
    return None


def _value_words(seg: Sequence[Word], start: int) -> list[Word]:
    """The words after a label up to the next label-like word."""
    out: list[Word] = []
    for k in range(start, len(seg)):
        if out and (_ends_label(seg[k]) or _known_label(seg, k) is not None and _ends_label_soon(seg, k)):
            break
        out.append(seg[k])
    return out


def _ends_label_soon(seg: Sequence[Word], k: int) -> bool:
    found = _known_label(seg, k)
    if found is None:
        return False
    return _ends_label(seg[k + found[1] - 1])


# --------------------------------------------------------------------------- what was read


# Facts that attribute a printed value to someone or something (an emergency contact's
# date of birth, a demographic answer, a reading "BP: 128/82"): what they cite was read,
# whoever or whatever it is about, and is no identifier left unread.
ATTRIBUTING_FACTS = frozenset({"demographic", "other", "referral", "vital_sign"})


class _Read:
    """What the reader attributed: its identifiers' (and attributing facts') boxes per
    page, their values and quotes."""

    def __init__(self, identifiers: Iterable[IdentityCandidate], facts: Iterable = ()):
        self.boxes: dict[int | None, list] = {}
        self.values: set[str] = set()
        self.quotes: list[str] = []
        self.name_words: set[str] = set()  # a name read whole covers its printed parts
        for c in identifiers:
            self.values.add(_norm(c.value))
            if c.kind is IdentifierKind.NAME:
                self.name_words |= {_norm(w) for w in re.split(r"[\s,]+", c.value) if _norm(w)}
            if c.kind is IdentifierKind.DOB:
                self.values.add(c.value)  # ISO
            self._cited(c.citation)
        for f in facts:
            # A note set down as written (a margin note: "Child's date of birth 03/14/2019",
            # its colon lost) attributes nothing: a birth date in it is still unread.
            if f.fact_type in ATTRIBUTING_FACTS and "note" not in (f.structured_value or {}):
                self._cited(f.citation)

    def _cited(self, citation: Citation | None) -> None:
        if citation is None:
            return
        self.quotes.append(_norm(citation.quote_or_value))
        if citation.bounding_box is not None:
            self.boxes.setdefault(citation.page, []).append(citation.bounding_box)

    def covers(self, page: PageContent | None, words: Sequence[Word], value: str, iso: str | None = None) -> bool:
        if iso is not None and iso in self.values:
            return True
        norm = _norm(value)
        if norm and (norm in self.values or any(norm in q for q in self.quotes)):
            return True
        if page is None:
            return False
        for w in words:
            x0, y0, x1, y1 = page.normalize(w.x0, w.y0, w.x1, w.y1)
            cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
            if not any(b.x <= cx <= b.x + b.width and b.y <= cy <= b.y + b.height
                       for b in self.boxes.get(page.number, [])):
                return False
        return bool(words)


def _norm(text: str) -> str:
    return re.sub(r"[^0-9a-z]", "", (text or "").lower())


# --------------------------------------------------------------------------- the sweep


@dataclass
class Sweep:
    unread: list[UnreadIdentifier] = field(default_factory=list)
    # Account, visit, NHS, health card numbers the reader left: read here, as identifiers
    # that may agree with the chart MRN but never contradict it.
    other_ids: list[IdentityCandidate] = field(default_factory=list)


def sweep_identity(content: NormalizedContent, result: ExtractionResult, source_id: str,
                   *, today: date | None = None) -> Sweep:
    """Identity values printed on the pages (or in the sections) of ``content`` that
    ``result``'s identifiers do not cover, each cited: unread ones, and other
    identifiers read by the vocabulary."""
    read = _Read(result.identifiers, result.facts)
    ids = _Read(result.identifiers)  # an other identifier is new unless an identifier holds it
    scope_of = _scopes(result)
    newest = _newest_date(content, today or date.today())
    out = Sweep()
    seen: set[tuple[str, str, str | None]] = set()

    def add(item: UnreadIdentifier | IdentityCandidate, scope: str | None) -> None:
        kind = item.kind if isinstance(item, UnreadIdentifier) else item.kind.value
        key = (kind, _norm(item.value), scope)
        if key in seen:
            return
        seen.add(key)
        item = item.model_copy(update={"scope": scope})
        (out.unread if isinstance(item, UnreadIdentifier) else out.other_ids).append(item)

    for page in content.pages:
        if page.words:
            for item in _page_unread(page, read, ids, newest, source_id, result.doc_type.value):
                add(item, scope_of.get(page.number))
    for section in content.sections:
        for item in _section_unread(section, read, ids, newest, source_id, result.doc_type.value):
            add(item, None)
    return out


def unread_identifiers(content: NormalizedContent, result: ExtractionResult, source_id: str,
                       *, today: date | None = None) -> list[UnreadIdentifier]:
    """The identity values ``content`` prints that ``result`` did not read."""
    return sweep_identity(content, result, source_id, today=today).unread


def _scopes(result: ExtractionResult) -> dict[int, str]:
    """The part (fax page) each page belongs to, from what the reader scoped."""
    out: dict[int, str] = {}
    for item in [*result.identifiers, *result.facts]:
        if item.scope is not None and item.citation is not None and item.citation.page is not None:
            out.setdefault(item.citation.page, item.scope)
    return out


def _newest_date(content: NormalizedContent, today: date) -> date:
    """The newest date the document prints (or today): birth dates are years older."""
    newest: date | None = None
    texts = [text_of(r.words) for p in content.pages if p.words for r in page_rows(p)]
    texts += [s.text for s in content.sections]
    for text in texts:
        for token in re.split(r"\s{2,}|\t|\|", text):
            m = find_date(token)
            if m is None:
                continue
            d = date.fromisoformat(m.iso)
            if d <= today and (newest is None or d > newest):
                newest = d
    return newest or today


def _dob_like(iso: str, newest: date) -> bool:
    d = date.fromisoformat(iso)
    return d.year >= 1900 and (newest - d).days >= DOB_MIN_AGE_DAYS


def _other_id(meaning: str | None, value: list[Word], read: _Read, page: PageContent | None) -> list[Word] | None:
    """The words of an account, visit or NHS number the reader did not take."""
    if meaning != "other_identifier" or not value:
        return None
    words = _leading_identifier(value)
    if words is None and len(value) >= 2 and all(w.text.isdigit() for w in value[:3]):
        words = list(value[:3])  # "943 476 5919": an NHS number printed in groups
    if words is None or read.covers(page, words, text_of(words)):
        return None
    return words


def _page_unread(page: PageContent, read: _Read, ids: _Read, newest: date, source_id: str,
                 source_type: str) -> list[UnreadIdentifier | IdentityCandidate]:
    rows = page_rows(page)
    out: list[UnreadIdentifier | IdentityCandidate] = []
    labelled: set[int] = set()  # ids of words that belong to a label or its value
    name_rows: list[int] = []

    def cite(words: list[Word], field: str) -> Citation:
        quote, box = quote_from_words(page, words)
        return Citation(source_type=source_type, source_id=source_id, page_or_section=f"page {page.number}",
                        field_or_chunk_id=field, quote_or_value=quote, page=page.number, bounding_box=box)

    for r, row in enumerate(rows):
        for seg in segments(row.words):
            for found in _labelled(seg):
                meaning, label, value = found
                labelled.update(id(w) for w in label + value)
                other = _other_id(meaning, value, ids, page)
                if other is not None:
                    out.append(IdentityCandidate(kind=IdentifierKind.OTHER_ID, value=text_of(other),
                                                 citation=cite(label + other, "patient.other_id")))
                    continue
                item = _judge(meaning, label, value, read, page, newest)
                if item is not None:
                    kind, shown, words, reason = item
                    out.append(UnreadIdentifier(kind=kind, label=text_of(label).rstrip(":# ") or None, value=shown,
                                                reason=reason, citation=cite(label + words, "unread.identity")))
                if meaning in NAME_MEANINGS and value and tr.parse_person_name(text_of(value)) is not None:
                    name_rows.append(r)
            if row.y0 <= HEADER_SHARE * page.height and tr.parse_person_name(text_of(seg)) is not None \
                    and _looks_like_printed_name(seg):
                name_rows.append(r)
    # A bare birth date beside a printed name ("SURNAME, Given" over "06/21/1958"), in
    # the page's header block (a cumulative table's old column dates are not).
    for r, row in enumerate(rows):
        if row.y0 > HEADER_SHARE * page.height or not any(abs(r - n) <= NAME_DATE_ROWS for n in name_rows):
            continue
        for seg in segments(row.words):
            if any(id(w) in labelled for w in seg):
                continue
            # The date alone, or after a few words that are no label the vocabulary
            # knows ("Geb.-Dat. 06/21/1958", written without a colon).
            for k in range(min(MAX_UNKNOWN_LABEL_WORDS, len(seg))):
                if any(c.isdigit() for w in seg[:k] for c in w.text):
                    break
                found = _leading_date(seg[k:])
                if found is not None:
                    break
            if found is None or k + len(found[1]) != len(seg) or not _dob_like(found[0], newest):
                continue
            iso, words = found
            if read.covers(page, words, text_of(words), iso):
                continue
            label = text_of(seg[:k]).rstrip(":# ") or None
            reason = (f"a date of birth-like date under an unknown label {label!r}" if label
                      else "a birth date printed without a label beside the patient's name")
            out.append(UnreadIdentifier(kind="dob", label=label, value=text_of(words), reason=reason,
                                        citation=cite(list(seg[:k]) + words, "unread.identity")))
    return out


_CLINICIAN = re.compile(r"^(?:dr|prof|professor|nurse|sister|mr\.? [A-Z]\w* frcs)\b\.?", re.IGNORECASE)


def _looks_like_printed_name(seg: Sequence[Word]) -> bool:
    """A header's name line: "SURNAME, Given" or two to four capitalised words."""
    text = text_of(seg)
    if "," in text:
        return text[:1].isupper()
    return 2 <= len(seg) <= 4 and all(w.text[:1].isupper() for w in seg)


def _labelled(seg: Sequence[Word]) -> list[tuple[str | None, list[Word], list[Word]]]:
    """(meaning or None for an unknown label, label words, value words) per label."""
    out: list[tuple[str | None, list[Word], list[Word]]] = []
    i = 0
    free_from = 0  # words before this belong to an earlier label's value
    while i < len(seg):
        known = _known_label(seg, i)
        if known is not None:
            meaning, n = known
            end = i + n
            while end < len(seg) and seg[end].text.strip() in (":", "#", "#:"):
                end += 1
            closed = _ends_label(seg[end - 1]) or seg[end - 1].text.strip() in (":", "#", "#:")
            # A label word without a colon counts at the start of a segment only, or
            # after the words that say it is the patient's ("Child's date of birth").
            before = [t for w in seg[:i] for t in tokens(w.text)]
            if closed or i == 0 or (before and all(t in PATIENT_WORDS for t in before)):
                value = _value_words(seg, end)
                out.append((meaning, list(seg[i:end]), value))
                i = free_from = end + max(len(value), 0)
                continue
        if _ends_label(seg[i]) and not any(c.isdigit() for c in seg[i].text):  # "L015:" is OCR of a value
            start = i
            while start > free_from and i - start + 1 < MAX_UNKNOWN_LABEL_WORDS \
                    and seg[start - 1].text[:1].isalpha() and not any(c.isdigit() for c in seg[start - 1].text):
                start -= 1
            label = list(seg[start:i + 1])
            value = _value_words(seg, i + 1)
            meaning = _meaning_of(text_of(label))
            out.append((meaning, label, value))
            i = free_from = i + 1 + len(value)
            continue
        i += 1
    return out


def _judge(meaning: str | None, label: list[Word], value: list[Word], read: _Read, page: PageContent | None,
           newest: date) -> tuple[str, str, list[Word], str] | None:
    """(kind, value shown, value words, reason) for a labelled value no identifier
    covers, or None when it is read, empty, or not an identity value."""
    if not value or meaning in ("collected", "not_identity", "other_identifier"):
        return None
    label_text = text_of(label).rstrip(":# ")
    if meaning == "dob":
        found = _leading_date(value)
        if found is None:
            words = value[:3]
            if not any(c.isdigit() for c in text_of(words)) or read.covers(page, words, text_of(words)):
                return None
            return "dob", text_of(words), words, f"the date of birth under {label_text!r} could not be read"
        iso, words = found
        if read.covers(page, words, text_of(words), iso):
            return None
        return "dob", text_of(words), words, f"printed under {label_text!r}, a label the reader did not take"
    if meaning == "record_number":
        again = value[:record_label_words([w.text for w in value])]  # "Medical record no.: MRN 6620915"
        value = value[len(again):]
        words = _leading_identifier(value) or ([value[0]] if any(c.isdigit() for c in value[0].text) else None) \
            or (list(value[:2]) if site_coded_number([w.text for w in value[:2]]) else None)
        if words is None or read.covers(page, words, text_of(words)):
            return None
        return ("record_number", text_of(words), again + words,
                f"printed under {label_text!r}, a label the reader did not take")
    if meaning in NAME_MEANINGS:
        words = value[:5]
        text = text_of(words)
        if meaning == "name" and (tr.parse_person_name(text) is None or not _looks_like_printed_name(words)):
            return None  # "patient. The patient was on aspirin" is prose, not a name
        if _CLINICIAN.match(text):
            return None  # "Name: Dr Ruairi Castellane" names a clinician, never the patient
        if meaning != "name" and not (words and words[0].text[:1].isalpha() and words[0].text[:1].isupper()):
            return None
        parts = {_norm(w.text) for w in words} - {""}
        if read.covers(page, words, text) or (parts and parts <= read.name_words):
            return None
        part = " (part of the name)" if meaning != "name" else ""
        return "name", text, words, f"printed under {label_text!r}{part}, a label the reader did not take"
    # A label the vocabulary does not know: only a birth-date-like date or an identifier.
    found = _leading_date(value)
    if found is not None:
        iso, words = found
        if not _dob_like(iso, newest) or read.covers(page, words, text_of(words), iso):
            return None
        return "dob", text_of(words), words, f"a date of birth-like date under an unknown label {label_text!r}"
    words = _leading_identifier(value)
    if words is None or read.covers(page, words, text_of(words)):
        return None
    return "identifier", text_of(words), words, f"an identifier-like number under an unknown label {label_text!r}"


# --------------------------------------------------------------------------- sections (DOCX, XLSX)

# Where a line of text (a sheet's title cell, a paragraph) is cut into the pieces a label
# may open: "Anticoagulation clinic - Margaret Hargreaves - MRN K1183307 - DOB 14/03/1951".
_TEXT_PIECE = re.compile(r"\s+[-\u2013\u2014|]\s+|\s{2,}|\t|;\s*")


def _text_labels(text: str) -> list[tuple[str, str, list[Word]]]:
    """(meaning, label, value words) for each label of the shared vocabulary that opens a
    piece of a line of text, with or without its colon ("MRN K1183307")."""
    out = []
    for piece in _TEXT_PIECE.split(text or ""):
        seg = [Word(t, 0, 0, 1, 1) for t in piece.split()]
        for meaning, label, value in _labelled(seg):
            if meaning is not None and value:
                out.append((meaning, text_of(label), value))
    return out


def labelled_identity(text: str) -> list[tuple[str, str, str]]:
    """(meaning, label, value as printed) of the patient's date of birth and record
    number that a line of text prints under labels of the shared vocabulary, with or
    without a colon: "DOB 14/03/1951" -> ("dob", "DOB", "14/03/1951"). A reader takes
    them from a line it has no other rule for; the sweep reports them when it does not."""
    out = []
    for meaning, label, value in _text_labels(text):
        if meaning == "dob" and (found := _leading_date(value)) is not None:
            out.append((meaning, label, text_of(found[1])))
        elif meaning == "record_number":
            again = value[:record_label_words([w.text for w in value])]
            if (words := _leading_identifier(value[len(again):])) is not None:
                out.append((meaning, label, text_of(words)))
    return out


_SECTION_LABEL = re.compile(r"(?:^|\s{2,}|\t|\|)\s*([A-Za-z][A-Za-z .'/#()-]{0,30}?)\s*[:#]\s*(\S[^:|\t]*?)"
                            r"(?=\s{2,}|\t|\||$)")


def _section_pairs(section) -> list[tuple[str, str, str, bool]]:
    """(label, value, quote, written as a label) pairs of a section: "Label: value" in a
    paragraph, a label cell beside its value cell in a sheet's row ("Hosp# | 4471-22")."""
    if section.section_type == "row":
        # A label cell beside its value: a row of two cells ("Hosp# | 4471-22"), or a cell
        # written as a label ("DOB:") anywhere; the cells of a table row are no labels.
        cells = [c.strip() for c in section.text.split(" | ")]
        pairs = [(a, b, section.text, a.endswith((":", "#"))) for a, b in zip(cells, cells[1:])
                 if a and b and not any(ch.isdigit() for ch in a) and len(a.split()) <= MAX_UNKNOWN_LABEL_WORDS + 1
                 and (len(cells) == 2 or a.endswith((":", "#")))]
    else:
        pairs = [(m.group(1).strip(), m.group(2).strip(), m.group(0).strip(), True)
                 for m in _SECTION_LABEL.finditer(section.text)]
    # and a birth date or record number under a known label without its colon, opening a
    # piece of the line ("... - MRN K1183307 - DOB 14/03/1951")
    return pairs + [(label, value, section.text, True) for _, label, value in labelled_identity(section.text)
                    if not any(label.rstrip(":# ") == p[0].rstrip(":# ") for p in pairs)]


def _section_unread(section, read: _Read, ids: _Read, newest: date, source_id: str,
                    source_type: str) -> list[UnreadIdentifier | IdentityCandidate]:
    """Labelled identity values in a paragraph or a sheet's row ("Hosp#: 4471-22")."""
    if section.section_type in ("segment", "field", "cell"):
        return []  # HL7 is read by segment and field; a sheet's cells are judged by their row
    out: list[UnreadIdentifier | IdentityCandidate] = []
    for label, value, quote, written in _section_pairs(section):
        meaning = _MEANING.get(_label_tokens(label.rstrip(":")))
        if meaning is None and not written and find_date(value) is None:
            continue  # a bare cell beside a number is a result row, not an identifier
        words = [Word(t, 0, 0, 1, 1) for t in value.split()]
        cite = Citation(source_type=source_type, source_id=source_id, page_or_section=section.locator,
                        field_or_chunk_id="unread.identity", quote_or_value=quote)
        other = _other_id(meaning, words, ids, None)
        if other is not None:
            out.append(IdentityCandidate(kind=IdentifierKind.OTHER_ID, value=text_of(other),
                                         citation=cite.model_copy(update={"field_or_chunk_id": "patient.other_id"})))
            continue
        item = _judge(meaning, [Word(label.rstrip(":") + ":", 0, 0, 1, 1)], words, read, None, newest)
        if item is not None:
            kind, shown, _, reason = item
            out.append(UnreadIdentifier(kind=kind, label=label.rstrip(":# ") or None, value=shown, reason=reason,
                                        citation=cite))
    return out
