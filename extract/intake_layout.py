"""Intake form pages -> fields: which words are labels and which answers are theirs.

Works on ``Word`` boxes only (text layer or OCR), never on a known form. Labels
are recognised by what they say (the vocabulary is data in
``extract.intake_labels``), not by one form's words or layout:

* a *label* is a run of label words ending in ":" / "?" / "#" or followed by dot
  leaders at the start of a row segment, or - written without a colon - a whole
  segment made only of label vocabulary ("Meds you take", "Birthday") that sits in
  the form's label column, has its answer beside it, or has it right under it (one
  label alone on its row, or a row of box headings);
* a field's answer stops at the next label, also inside one line ("DOB: 07/22/1958
  Chart #: QX-20417" is two fields), and otherwise runs on to the next segment of
  the row and the rows below it (in its own column) until the next label, a heading
  or a wide gap; answers under a row of box headings go to the heading above them;
* fields about someone else - under an "Emergency contact" / "Next of kin" /
  "Policy holder" heading or label, or after such a label on the same line - are
  marked with that person (``Field.owner``) and never identify the patient.

Text that belongs to no field (far to the right of the answers) is returned as a
loose note with the field it sits beside.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from core.content import PageContent, Word
from core.policy.context_scope import opens_a_question
from extract import intake_labels as labels
from extract import intake_text as it
from extract.intake_labels import LabelMeaning
from extract.layout import Row, segments, text_of

__all__ = ["Field", "Loose", "read_page", "label_text"]

MAX_LABEL_WORDS = 12
# An answer continues onto the next row only if the vertical gap is at most this
# share of the text height (answers are single-spaced; fields are set apart).
CONTINUATION_GAP = 1.0
# A segment starting this share of the page width right of the answer column is
# outside the field: a margin note.
MARGIN_SHIFT = 0.3
# A block about another person opened by a label with its answer ("Next of kin: Ana
# Ruiz", then her phone) ends at a vertical gap of more than this many text heights:
# the form has moved on. One opened by a heading ends only at the next heading or a
# label about the patient.
BLOCK_GAP = 3.0


_SEPARATORS = frozenset({":", "-", "\u2013", "\u2014", "=", "#", "#:"})


@dataclass(slots=True)
class Field:
    kind: str  # a key of intake_text field kinds, or "other"
    label: list[Word]
    page: PageContent
    rows: list[list[Word]] = field(default_factory=list)  # answer words per row
    last_y1: float = 0.0
    label_x0: float = 0.0
    crowded: bool = False  # stray text sat beside the answer (it was set aside as a margin note)
    owner: str | None = None  # the person the field is about when not the patient
    text_height: float = 0.0  # print size of the answer's last row

    @property
    def label_text(self) -> str:
        return label_text(self.label).rstrip(":? ")

    @property
    def value_x0(self) -> float | None:
        """Where the answer starts (its first row's first word)."""
        return self.rows[0][0].x0 if self.rows else None

    def add(self, words: list[Word], row: Row) -> None:
        if not self.rows:
            # A colon or dash set apart from the label, in front of the answer
            # ("Name     : Theo Marchbanks"), belongs to the label.
            while words and words[0].text in _SEPARATORS and row.page is self.page:
                self.label = self.label + [words[0]]
                words = words[1:]
            if not words:
                return
        self.rows.append(words)
        self.last_y1 = row.y1
        self.text_height = row.height


@dataclass(slots=True)
class Loose:
    """Text outside every field: a margin note, with the field it sits beside."""

    words: list[Word]
    page: PageContent
    near: Field | None


# --------------------------------------------------------------------------- labels

# Label words that end a label when written without a colon mid-line ("Name Ann
# Lee DOB 07/22/1958"): only these capitalised abbreviations are that unambiguous.
_BARE_MID_LABELS = frozenset({"DOB", "D.O.B.", "D.O.B", "MRN"})


@dataclass(slots=True)
class _Piece:
    """A run of one segment: a label and the words after it up to the next label,
    or plain words (``label`` empty)."""

    label: list[Word]
    value: list[Word]
    kind: str | None = None
    meaning: LabelMeaning | None = None
    bare: bool = False  # the whole segment reads as a label written without a colon
    seg: int = 0
    # Words that looked like a question label but are a doubt written as free text
    # ("Lips tingled after a prawn curry - shellfish?"): never dropped.
    query: bool = False

    @property
    def words(self) -> list[Word]:
        return self.label + self.value

    @property
    def x0(self) -> float:
        return self.words[0].x0


def _ends_label(word: Word) -> bool:
    """A word that closes a label: "DOB:", "to?", "Chart #", or a colon standing apart
    ("Name : Theo")."""
    t = word.text
    return t.endswith((":", "?", "#", "#:")) and (any(c.isalpha() or c == "#" for c in t) or t == ":")


# Dot leaders and blank lines between a label and its answer ("Surname ........ Kowalczyk").
_LEADER = r"(?:\.{3,}|_{3,}|\u2026+|\u00b7{3,}|-{4,})"
_LEADER_SHAPES = (("only", re.compile(rf"^{_LEADER}$")), ("ends", re.compile(rf"^[^\W\d_].*?{_LEADER}$")),
                  ("opens", re.compile(rf"^{_LEADER}(?=\w)")))


def _leader(word: Word) -> str | None:
    """How a leader sits in a word: "only" ("......"), "ends" ("Surname.....") or
    "opens" ("...Cough": the answer typed straight after the dots)."""
    return next((how for how, pattern in _LEADER_SHAPES if pattern.match(word.text)), None)


def _leading_label(seg: list[Word]) -> int:
    """How many words of ``seg`` form a label written with a colon or "?", followed by
    dot leaders, or (a "Chart #" kind of label) ending in "#"; 0 when the segment
    starts with none. A leader counts with the label; an answer glued to the dots
    ("...Cough") stays the answer. A label in two languages is one label
    ("¿Toma medicamentos? / Do you take any medicines?")."""
    n = _first_label(seg)
    while 0 < n < len(seg) - 1 and seg[n].text == "/":
        more = _first_label(seg[n + 1:])
        if not more:
            break
        n += 1 + more
    return n


def _first_label(seg: list[Word]) -> int:
    for k, w in enumerate(seg[:MAX_LABEL_WORDS]):
        if w.text.startswith("?"):
            return 0  # "? sulfa": a hedge, not a question
        lead = _leader(w)
        if lead is not None:
            if lead == "ends" or (k > 0 and any(c.isalpha() for c in text_of(seg[:k]))):
                return k if lead == "opens" else k + 1
            return 0
        if _ends_label(w) and any(c.isalpha() for c in text_of(seg[: k + 1])):
            if w.text.endswith("#") and it.classify_label(text_of(seg[: k + 1])) in (None, "other"):
                continue
            return k + 1
    if seg and seg[0].text in _BARE_MID_LABELS and len(seg) > 1:
        return 1
    return 0


def _mid_label(seg: list[Word], j: int, lo: int) -> tuple[int, int] | None:
    """A label inside an answer that ends at ``seg[j]`` ("DOB: 07/22/1958 Chart #:
    QX-20417", "Kowalczyk First name ..... Aniela"): (first word, word after the
    label) for the longest run of label words, starting with a capital, that names a
    field of the form; ``None`` when ``seg[j]`` ends no such label."""
    w = seg[j]
    if w.text in _BARE_MID_LABELS and j + 1 < len(seg):
        return j, j + 1
    lead = _leader(w)
    if lead in ("only", "opens"):
        last, end = j - 1, (j + 1 if lead == "only" else j)
    elif lead == "ends" or (_ends_label(w) and not w.text.startswith("?")):
        last, end = j, j + 1
    else:
        return None
    for i in range(max(lo, last - 5), last + 1):
        words = text_of(seg[i: last + 1])
        if lead == "ends":
            words = re.sub(rf"{_LEADER}$", "", words)
        if not seg[i].text[:1].isupper() or not labels.is_bare_label(words, bilingual=False):
            continue
        meaning = labels.read_label(words)
        if meaning.kind not in (None, "ignore") or meaning.owner is not None:
            return _translation_before(seg, i, lo), end
    return None


# A label's translation in front of it ("Parentesco / Relationship:") is at most this long.
MAX_TRANSLATION_WORDS = 4


def _translation_before(seg: list[Word], i: int, lo: int) -> int:
    """Where a label starting at ``seg[i]`` really starts when a translation and "/"
    precede it: at the last word before the "/" that does not start in lower case
    ("Rogelio Baeza Parentesco / Relationship:" -> "Parentesco"), never taking a
    word with a digit or the first word of the answer before it."""
    if i - 2 < lo or seg[i - 1].text != "/":
        return i
    for j in range(i - 2, max(lo, i - 1 - MAX_TRANSLATION_WORDS) - 1, -1):
        t = seg[j].text
        if any(c.isdigit() for c in t):
            return i
        if not t[:1].islower():
            return j
    return i


def _cut(seg: list[Word], si: int) -> list[_Piece]:
    """A segment as pieces: plain words before any label, then each label with the
    words up to the next label ("DOB: 07/22/1958 Chart #: QX-20417" is two fields)."""
    n = _leading_label(seg)
    bare = False
    if (n == 0 or (n == 1 and seg[0].text in _BARE_MID_LABELS)) and labels.is_bare_label(text_of(seg)):
        n, bare = len(seg), True  # "Meds you take", "D.O.B. (dd/mm/yyyy)": the whole segment
    cuts: list[tuple[int, int]] = [(0, n)] if n else []  # (first word, label length)
    j = n + 1 if n else 1  # an answer keeps at least one word before the next label
    while j < len(seg):
        found = _mid_label(seg, j, lo=1 if not cuts else cuts[-1][0] + cuts[-1][1] + 1)
        if found is None:
            j += 1
            continue
        i, end = found
        cuts.append((i, end - i))
        j = end + 1
    pieces: list[_Piece] = []
    if not cuts or cuts[0][0] > 0:
        pieces.append(_Piece([], seg[: cuts[0][0] if cuts else len(seg)], seg=si))
    for k, (start, length) in enumerate(cuts):
        stop = cuts[k + 1][0] if k + 1 < len(cuts) else len(seg)
        label = seg[start: start + length]
        text = label_text(label)
        pieces.append(_Piece(label, seg[start + length: stop], it.classify_label(text) or "other",
                             labels.read_label(text), bare=bare, seg=si))
    return pieces


def label_text(label: list[Word]) -> str:
    """A label's words without its dot leader."""
    return re.sub(rf"\s*{_LEADER}$", "", text_of(label)).strip()


def _is_heading(row: Row, gap: float) -> bool:
    """A section heading ("MEDICAL INFORMATION") set apart from the answer above: words
    in capitals, more letters than digits (not "06/19/1991 RF-0048213")."""
    letters = [c for c in row.text if c.isalpha()]
    digits = sum(c.isdigit() for c in row.text)
    return len(row.words) >= 2 and len(letters) > digits and all(c.isupper() for c in letters) \
        and gap > 0.6 * row.height


def _is_title(row: Row, current: Field) -> bool:
    """A short line in larger print than the answer above it ("Your health"): the next
    section's title, not more of the answer."""
    text = row.text
    return (current.text_height > 0 and row.height > 1.12 * current.text_height and len(row.words) <= 5
            and not any(c.isdigit() for c in text) and text[:1].isupper() and text[-1:] not in ",.;:")


def _names_someone_else(row: Row) -> str | None:
    """The person a title row ("Emergency Contact", "NEXT OF KIN") is about."""
    text = row.text.rstrip(":")
    if len(segments(row.words)) != 1 or not labels.is_bare_label(text):
        return None
    meaning = labels.read_label(text)
    return meaning.owner if meaning.kind is None else None


@dataclass(slots=True)
class _Owner:
    """Whose fields the rows are about while a block of another person is open."""

    person: str | None = None  # None: the patient
    strong: bool = False  # opened by a heading or a label without its own answer

    def claim(self, kind: str, meaning: LabelMeaning, row_owner: str | None) -> str | None:
        """Who a new field is about, updating the open block."""
        if kind in it.PATIENT_ONLY_KINDS or meaning.kind in it.PATIENT_ONLY_KINDS:
            self.person = None
            return None
        if meaning.kind == "relationship":  # "Relationship to patient": of whoever the block is about
            return row_owner or self.person or meaning.owner
        if meaning.owner is not None:
            return meaning.owner
        if meaning.names_patient or (meaning.speaks_to_reader and not self.strong):
            self.person = None
            return None
        if row_owner is not None:
            return row_owner
        if self.person is not None and (self.strong or kind in _CONTACT_KINDS):
            return self.person
        self.person = None
        return None

    def open(self, person: str, strong: bool) -> None:
        self.person, self.strong = person, strong


# Fields that may follow a "Next of kin: Ana Ruiz" answer and still be about her.
_CONTACT_KINDS = frozenset({"phone", "email", "address"})


def read_page(rows: list[Row], fields: list[Field], margins: list[Loose]) -> None:
    """The fields of one page's rows, appended to ``fields``; text outside every
    field to ``margins``."""
    _PageReader(rows, fields, margins).read()


class _PageReader:
    """One pass over a page's rows, holding what the rows above left open: the field
    being answered, a row of box headings, a block about another person."""

    def __init__(self, rows: list[Row], fields: list[Field], margins: list[Loose]):
        self.rows, self.fields, self.margins = rows, fields, margins
        self.cut_rows = [[p for si, seg in enumerate(segments(row.words)) for p in _cut(seg, si)] for row in rows]
        self.label_x0s = self._label_column()
        self.owner = _Owner()
        self.current: Field | None = None
        self.columns: list[Field] = []  # a row of labels whose answers are written under them

    def _below_ok(self, i: int, x0: float) -> bool:
        """Row ``i + 1`` holds answers right under ``x0`` (a label above its answer)."""
        if i + 1 >= len(self.rows):
            return False
        row, below = self.rows[i], self.rows[i + 1]
        if below.page is not row.page or below.y0 - row.y1 > CONTINUATION_GAP * below.height:
            return False
        if any(p.label and not p.bare for p in self.cut_rows[i + 1]) or _label_row(self.cut_rows[i + 1]):
            return False
        return x0 - 0.5 * row.height <= below.x0 <= x0 + 4 * row.height

    def _label_column(self) -> list[float]:
        """Where the recognised labels start. Unknown labels ("Mother: ...") and labels
        written without a colon only count when they line up with these (or sit right
        before or above their answer), so an answer never becomes a label."""
        x0s = []
        for i, pieces in enumerate(self.cut_rows):
            heads = _label_row(pieces) and self._below_ok(i, pieces[0].x0)
            for k, p in enumerate(pieces):
                if p.label and p.kind not in ("other", "ignore") and p.label[0] is p.words[0] and (
                        not p.bare or _answer_follows(pieces, k) or heads) and (k == 0 or p.seg != pieces[k - 1].seg):
                    x0s.append(p.x0)
        return x0s

    def _aligned(self, x0: float, h: float) -> bool:  # same label column, give or take OCR jitter
        return any(abs(x0 - x) <= 0.35 * h for x in self.label_x0s)

    def _far_right(self, x0: float, row: Row) -> bool:
        """Far to the right of the form's label column: a margin note."""
        return bool(self.label_x0s) and x0 - min(self.label_x0s) > 0.5 * row.page.width

    def set_aside(self, words: list[Word], row: Row, near: Field | None) -> None:
        self.margins.append(Loose(words, row.page, near))
        if near is not None:
            near.crowded = True

    def read(self) -> None:
        previous: Row | None = None
        for i, (row, pieces) in enumerate(zip(self.rows, self.cut_rows)):
            if previous is not None and not self.owner.strong \
                    and row.y0 - previous.y1 > BLOCK_GAP * max(row.height, previous.height):
                self.owner.person = None  # a block opened by an answer ends where the form moves on
            previous = row
            gap = row.y0 - self.current.last_y1 if self.current else float("inf")
            in_notes = self.current is not None and self.current.kind == "notes" \
                and gap <= CONTINUATION_GAP * row.height and _under(self.current, row.words, row)
            pieces = _accept_labels(pieces, lambda x0: self._aligned(x0, row.height), lambda x0: self._below_ok(i, x0),
                                    in_notes=in_notes)
            if any(p.label for p in pieces):
                self._labelled_row(row, pieces, gap)
            else:
                self._plain_row(row, gap, noted=any(p.query for p in pieces))

    def _plain_row(self, row: Row, gap: float, noted: bool = False) -> None:
        """A row without labels: answers under box headings, more of the answer above,
        a title (perhaps of a block about someone else), or a margin note."""
        current = self.current
        if self.columns:
            top = max(f.last_y1 for f in self.columns)
            if row.y0 - top <= CONTINUATION_GAP * row.height and not _is_heading(row, row.y0 - top):
                _distribute(self.columns, segments(row.words), row, self.set_aside)
                return
            self.columns = []
        segs = segments(row.words)
        person = _names_someone_else(row)
        if current is not None and gap <= CONTINUATION_GAP * row.height and not _is_heading(row, gap) \
                and not _is_title(row, current) and person is None and _under(current, segs[0], row):
            _continue(current, segs, row, self.set_aside)
            return
        # Outside any field: titles and instructions on the left are not findings,
        # but text far to the right of the form's label column is a margin note.
        near = current if current is not None and row.page is current.page else None
        self.current = None
        if person is not None:
            self.owner.open(person, strong=True)
        elif _is_heading(row, gap) or len(row.words) <= 6:
            self.owner.person = None  # a new section ("Patient Information")
        if self._far_right(row.x0, row) or noted:
            self.set_aside(row.words, row, near)  # a margin note, or a doubt written outside the fields

    def _labelled_row(self, row: Row, pieces: list[_Piece], gap: float) -> None:
        """A row with labels: a field per label, its answer the words after it (or the
        next piece, or the rows below); other words continue the field above or are
        set aside."""
        self.columns = []
        created: list[Field] = []
        awaiting = False
        row_owner: str | None = None
        for k, p in enumerate(pieces):
            current = self.current
            if p.label:
                meaning = p.meaning or labels.read_label(label_text(p.label))
                person = self.owner.claim(p.kind or "other", meaning, row_owner)
                if meaning.owner is not None and p.kind not in it.PATIENT_ONLY_KINDS and person == meaning.owner:
                    self.owner.open(meaning.owner, strong=not p.value)
                    row_owner = meaning.owner
                self.current = Field(p.kind or "other", p.label, row.page, last_y1=row.y1, label_x0=p.x0,
                                     owner=person)
                self.fields.append(self.current)
                created.append(self.current)
                if p.value:
                    self.current.add(p.value, row)
                awaiting = not p.value
            elif awaiting and current is not None:
                current.add(p.value, row)
                awaiting = False
            elif k == 0 and current is not None and gap <= CONTINUATION_GAP * row.height \
                    and _under(current, p.value, row):
                _continue(current, [p.value], row, self.set_aside)
            elif k > 0 or p.query or self._far_right(p.x0, row):
                self.set_aside(p.value, row, current)
        if len(created) >= 2 and not any(f.rows for f in created):
            self.columns = created  # box headings: their answers come in the rows below


def _label_row(pieces: list[_Piece]) -> bool:
    """Several labels side by side and no answers: the headings of a row of boxes."""
    return len(pieces) >= 2 and all(p.label and not p.value for p in pieces)


def _under(current: Field, seg: list[Word], row: Row) -> bool:
    """Whether a segment on a later row can continue ``current``: not left of its label."""
    return seg[0].x0 >= current.label_x0 - 0.5 * row.height


def _distribute(columns: list[Field], segs: list[list[Word]], row: Row, set_aside) -> None:
    """Answers under a row of box headings: each segment to the heading it sits under."""
    for seg in segs:
        home = None
        for f in columns:  # left to right
            if seg[0].x0 >= f.label_x0 - 0.5 * row.height:
                home = f
        if home is None:
            set_aside(seg, row, columns[0])
        else:
            home.add(seg, row)


def _answer_follows(pieces: list[_Piece], k: int) -> bool:
    """Whether piece ``k`` has plain words after it on its row (its answer)."""
    return k + 1 < len(pieces) and not pieces[k + 1].label


def _accept_labels(pieces: list[_Piece], aligned, below, *, in_notes: bool = False) -> list[_Piece]:
    """Keep a piece as a label only when the row supports it; others become plain words.

    A label written with a colon counts when it names a known field or another
    person, or sits in the label column ("Mother: diabetes" inside a family history
    answer does not). A phrase without a colon counts in the label column, or when
    its answer follows it on the row or sits right under it (one label alone on its
    row, or a row of box headings). A phrase ending in "?" counts only when it asks
    like a form's question (``_asks``); otherwise its "?" is a doubt written as free
    text and the piece is kept as a note (``query``). Labels found inside an answer
    were already checked word by word. ``in_notes``: the row goes on with a Notes
    box's answer, where only a real question starts a new field.
    """
    out: list[_Piece] = []
    awaiting = False
    heads = _label_row(pieces) and below(pieces[0].x0)
    for k, p in enumerate(pieces):
        if p.label and p.label[0] is p.words[0] and (k == 0 or p.seg != pieces[k - 1].seg) and not p.bare \
                and p.label[-1].text.endswith("?") \
                and not _asks(label_text(p.label), answered=bool(p.value) or _answer_follows(pieces, k),
                              in_notes=in_notes):
            p = _Piece([], p.words, seg=p.seg, query=True)
        if p.label and p.label[0] is p.words[0] and (k == 0 or p.seg != pieces[k - 1].seg):
            if p.bare:
                # Right after a label still waiting for its answer, a label-like phrase
                # is that answer ("Preferred contact | Email") unless it names a field
                # no answer would be ("Last Name | First Name" on a blank form).
                ok = heads or ((not awaiting or _never_an_answer(p)) and (
                    aligned(p.x0) or _answer_follows(pieces, k) or (len(pieces) == 1 and below(p.x0))))
            else:
                ok = aligned(p.x0) or (p.meaning is not None and (
                    p.meaning.kind is not None or p.meaning.owner is not None))
            if not ok:
                p = _Piece([], p.words, seg=p.seg)
        out.append(p)
        awaiting = bool(p.label) and not p.value
    return out


# A label without a question word, ending in "?", is a form's question ("Smoker? No",
# "Latex allergy? Yes") only when it is this short and answered on its row.
MAX_QUESTION_LABEL_WORDS = 4


def _asks(text: str, *, answered: bool, in_notes: bool = False) -> bool:
    """Whether a label ending in "?" asks one of the form's questions rather than
    doubting something written as free text: it opens like a question ("Are you
    pregnant?", "¿Toma medicamentos?", "Anything you're allergic to?"), names a field
    in label words only ("Pregnant?", "Any allergies?"), or is a short phrase answered
    on its row ("Smoker? No"). "Lips tingled after a prawn curry - shellfish?",
    "Allergic to shellfish?" or "shellfish?" alone ask nothing of the reader: they
    are notes, and their "?" a hedge. Inside a Notes box every line is the
    patient's note, a question too ("Is parking free?")."""
    if in_notes:
        return False  # what the patient wrote in a Notes box is a note, questions included
    if opens_a_question(text) or labels.is_bare_label(text.rstrip("? ")):
        return True
    return answered and 0 < len(text.rstrip("? ").split()) <= MAX_QUESTION_LABEL_WORDS


def _never_an_answer(p: _Piece) -> bool:
    return p.kind in it.IDENTITY_KINDS or (p.meaning is not None and p.meaning.owner is not None)


def _continue(current: Field, segs: list[list[Word]], row: Row, set_aside) -> None:
    """A row below an answer: the answer goes on if it starts in the answer's column."""
    start = current.value_x0 if current.value_x0 is not None else current.label_x0
    first = segs[0]
    if first[0].x0 - start > MARGIN_SHIFT * row.page.width:
        set_aside([w for s in segs for w in s], row, current)
        return
    current.add(first, row)
    for seg in segs[1:]:
        set_aside(seg, row, current)


