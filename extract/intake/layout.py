"""Intake form pages -> fields: which words are labels and which answers are theirs.

Works on ``Word`` boxes only (text layer or OCR), never on a known form. Labels
are recognised by what they say (the vocabulary is data in
``extract.values.labels``), not by one form's words or layout:

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
loose note with the field it sits beside. Where the labels are in a row is
``extract.intake.row_labels``'s; this module gives each label its answer.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from domain.content import PageContent, Word
from extract.values import labels
from extract.values import written_answers as it
from extract.values.labels import LabelMeaning
from extract.intake.row_labels import Piece, accept_labels, answer_follows, cut_segment, label_row, label_text
from extract.intake.tables import TABLE_COLUMNS, table_rows
from extract.layout import Row, segments, text_of
from extract.values.prose_vitals import vital_values_in

__all__ = ["Field", "Loose", "read_page"]

# An answer continues onto the next row only if the vertical gap is at most this
# share of the text height (answers are single-spaced; fields are set apart).
CONTINUATION_GAP = 1.0
# A text layer's word box is taller than the ink an OCR box hugs: about 1.35 times for
# the same print (10 pt Helvetica: a 13.7 pt box, 10 pt of ink at 200 dpi). An OCR'd
# row's gap is measured as a text layer would measure it, or a faxed form's wrapped
# answer (1.2 ink heights below its first row) was cut off at the wrap.
OCR_BOX_RATIO = 1.35


def _continues(gap: float, row: Row) -> bool:
    """Whether ``row``, ``gap`` below the answer above it, is near enough to go on with it."""
    h = row.height
    if any(w.conf is not None for w in row.words):
        extra = (OCR_BOX_RATIO - 1) * h  # what the text layer's box would add, half above, half below
        return gap - extra <= CONTINUATION_GAP * (h + extra)
    return gap <= CONTINUATION_GAP * h
# Fields whose answer is a list of items (one fact each).
LIST_KINDS = frozenset({"medications", "allergies", "family_history", "problems", "symptoms"})
# A segment starting this share of the page width right of the answer column is
# outside the field: a margin note.
MARGIN_SHIFT = 0.3
# A word space is about this share of a row's height (for whether a word would have
# fitted at the end of the row above).
SPACE_SHARE = 0.25
_LIST_SEPARATORS = frozenset(",;:/&+-")  # ":" announces the rows below ("Yes - list:")
_LIST_WORDS = frozenset({"and", "or", "with", "plus"})
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
    # A list printed as a table (extract.intake.tables): a row's cells, by the id of its first word.
    cells: dict[int, list[list[Word]]] = field(default_factory=dict)
    table: bool = False  # opened by a table's header row
    # Under a follow-up label with nothing after it ("Please list:"): its list comes on the rows below.
    awaits_list: bool = False
    asked: list[Word] = field(default_factory=list)  # follow-up labels' words ("If yes, list them:")

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
        self.awaits_list = False
        self.text_height = row.height


@dataclass(slots=True)
class Loose:
    """Text outside every field: a margin note, with the field it sits beside."""

    words: list[Word]
    page: PageContent
    near: Field | None
    # A row of a checklist whose answers head their columns ("Condition | Yes | No" over
    # "Asthma [X] [ ]"): each answer with whether its box is ticked, or None where no
    # box under it could be read; ``label`` the row's words before its boxes.
    checklist: tuple[tuple[str, bool | None], ...] | None = None
    label: list[Word] | None = None


# --------------------------------------------------------------------------- rows


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


def _asks_its_own_question(row: Row) -> bool:
    """A row that prints a question the form's labels do not know and ticks an answer to
    it ("Alcohol [X] None [ ] Weekly"): a field of its own, not more of the answer above
    nor a title; read as a note (``extract.intake.extractor``'s margin notes)."""
    texts = [w.text for w in row.words]
    if not it.question_before_boxes(texts):
        return False
    ticks = it.read_ticks(texts, [0] * len(texts))
    return ticks is not None and bool(ticks.boxes)


def _answered_in_boxes(f: Field) -> bool:
    """Whether a field's answer so far is options in tick boxes."""
    return it.first_box([w.text for r in f.rows for w in r]) is not None


def read_page(rows: list[Row], fields: list[Field], margins: list[Loose]) -> None:
    """The fields of one page's rows, appended to ``fields``; text outside every
    field to ``margins``."""
    _PageReader(rows, fields, margins).read()


class _PageReader:
    """One pass over a page's rows, holding what the rows above left open: the field
    being answered, a row of box headings, a block about another person."""

    def __init__(self, rows: list[Row], fields: list[Field], margins: list[Loose]):
        self.rows, self.fields, self.margins = rows, fields, margins
        self.cut_rows = [[p for si, seg in enumerate(segments(row.words)) for p in cut_segment(seg, si)] for row in rows]
        self.label_x0s = self._label_column()
        self.owner = _Owner()
        self.current: Field | None = None
        self.columns: list[Field] = []  # a row of labels whose answers are written under them
        self.table_headers, self.table_body = table_rows(rows)
        self.checklist: _Checklist | None = None  # the checklist whose rows are being read

    def _below_ok(self, i: int, x0: float) -> bool:
        """Row ``i + 1`` holds answers right under ``x0`` (a label above its answer)."""
        if i + 1 >= len(self.rows):
            return False
        row, below = self.rows[i], self.rows[i + 1]
        if below.page is not row.page or not _continues(below.y0 - row.y1, below):
            return False
        if any(p.label and not p.bare for p in self.cut_rows[i + 1]) or label_row(self.cut_rows[i + 1]):
            return False
        return x0 - 0.5 * row.height <= below.x0 <= x0 + 4 * row.height

    def _label_column(self) -> list[float]:
        """Where the recognised labels start. Unknown labels ("Mother: ...") and labels
        written without a colon only count when they line up with these (or sit right
        before or above their answer), so an answer never becomes a label."""
        x0s = []
        for i, pieces in enumerate(self.cut_rows):
            heads = label_row(pieces) and self._below_ok(i, pieces[0].x0)
            for k, p in enumerate(pieces):
                if p.label and p.kind not in ("other", "ignore") and p.label[0] is p.words[0] and (
                        not p.bare or answer_follows(pieces, k) or heads) and (k == 0 or p.seg != pieces[k - 1].seg):
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
                and _continues(gap, row) and _under(self.current, row.words, row)
            if self._checklist_row(i, row):
                continue
            if self._table_row(i, row, pieces, gap):
                continue
            if self._follow_up(row, pieces, gap):
                continue
            pieces = accept_labels(pieces, lambda x0: self._aligned(x0, row.height), lambda x0: self._below_ok(i, x0),
                                    in_notes=in_notes)
            if any(p.label for p in pieces):
                self._labelled_row(row, pieces, gap)
            else:
                self._plain_row(row, gap, noted=any(p.query for p in pieces))

    def _checklist_row(self, i: int, row: Row) -> bool:
        """A medical-history checklist whose answers head columns: the header ("Condition
        Yes No", the first heading optional, no question) opens it when the row under it
        is one of its rows, and each such row, a label and one box under each answer, is
        read as that label's answer (``Loose.checklist``). Read as labels and answers, the
        header was a question nobody answered and each row a margin note, "Seizures"
        with its box under "No" held as a reported symptom."""
        if (c := self.checklist) is not None:
            read = _grid_answers(row, c.columns, c.left)
            if read is not None and row.page is c.page and row.y0 - c.bottom <= 1.5 * row.height:
                self.margins.append(Loose(row.words, row.page, None, read[1], read[0]))
                c.bottom = row.y1
                return True
            self.checklist = None  # the checklist is over
        columns = _grid_header(row)
        if columns is None or i + 1 >= len(self.rows):
            return False
        first = _grid_answers(self.rows[i + 1], columns, None)
        if first is None or any(t is None for _, t in first[1]):
            return False  # the row under it must be one whole checklist row
        self.checklist = _Checklist(columns, first[0][0].x0, row.y1, row.page)
        return True

    def _follow_up(self, row: Row, pieces: list[Piece], gap: float) -> bool:
        """A row "If yes, list each and what happened: sulfa - hives" right under a list
        question answered above ("Any allergies to medicines? [ ] No [X] Yes"): what
        it lists is that question's answer, a row of it under the ticked box. Set
        apart, the list became a margin note and the question "yes, listed nothing"."""
        current = self.current
        if current is None or current.kind not in LIST_KINDS or row.page is not current.page \
                or not _continues(gap, row) or len(pieces) != 1:
            return False
        p = pieces[0]
        if not p.label or p.kind not in (None, "other"):
            return False
        # "[X] Yes []No _ If yes, list them:" read as one label off a scan: the boxes are
        # the answer, the rest the follow-up.
        boxes, label = _boxes_before(p.label)
        if not (current.rows or boxes) or not it.is_follow_up(label_text(label)):
            return False
        if (p.meaning or labels.read_label(label_text(label))).owner is not None:
            return False  # "If you have a carer, their name:" asks about someone else, not for the list
        if boxes:
            current.add(boxes, row)
        current.asked += label
        if p.value:
            current.add(p.value, row)
        else:
            current.last_y1, current.awaits_list = row.y1, True
        return True

    def _table_row(self, i: int, row: Row, pieces: list[Piece], gap: float) -> bool:
        """A medicines or allergies table's header or row (``extract.intake.tables``):
        a header opens the list (or goes on with the list label above it); a row whose
        cells line up goes into the open list as one item, its cells kept. False for
        any other row, and for a row that prints a label of the form's own."""
        kind = self.table_headers.get(i)
        current = self.current
        if kind is not None:
            self.columns = []
            if current is not None and current.kind == kind and not current.table \
                    and _continues(gap, row) and row.page is current.page:
                current.last_y1 = row.y1  # "Current medicines:" above the header: one list
            else:
                self.current = Field(kind, list(row.words), row.page, last_y1=row.y1, label_x0=row.x0,
                                     owner=self.owner.person)
                self.fields.append(self.current)
            self.current.table = True
            return True
        if i not in self.table_body or current is None or current.kind not in TABLE_COLUMNS \
                or not _continues(gap, row) or row.page is not current.page \
                or any(_form_label(p) and not (p.bare and k > 0) for k, p in enumerate(pieces)):
            # A label of the form's own; a later cell that only reads as one, with no
            # colon ("blood pressure": what the medicine is for), is a cell of the row.
            return False
        if not current.table and any(id(r[0]) not in current.cells for r in current.rows):
            return False  # the list's label was answered on its own row: rows in line below are other questions
        if any(it.starts_with_box([w.text]) for w in row.words) or row.words[-1].text.endswith("?"):
            return False  # a row of questions and their boxes is no table of medicines
        current.add(list(row.words), row)
        current.cells[id(row.words[0])] = segments(row.words)
        return True

    def _plain_row(self, row: Row, gap: float, noted: bool = False) -> None:
        """A row without labels: answers under box headings, more of the answer above,
        a title (perhaps of a block about someone else), or a margin note."""
        current = self.current
        if self.columns:
            top = max(f.last_y1 for f in self.columns)
            if _continues(row.y0 - top, row) and not _is_heading(row, row.y0 - top):
                _distribute(self.columns, segments(row.words), row, self.set_aside)
                return
            self.columns = []
        segs = segments(row.words)
        person = _names_someone_else(row)
        # A row of another question's boxes ends the answer above, unless that answer is
        # itself options in boxes: then a row "Heart disease [X] Thyroid" is more options,
        # one whose box OCR lost, for the tick reader to question.
        asks = _asks_its_own_question(row) and not (current is not None and _answered_in_boxes(current))
        if current is not None and _continues(gap, row) and not _is_heading(row, gap) and not asks \
                and not _is_title(row, current) and person is None and _under(current, segs[0], row):
            if _after_a_finished_answer(current, segs[0], row):
                # Not read as more of the answer, but not dropped either: a note beside
                # the field, which a person reviews (a sentence after the answers).
                self.set_aside(row.words, row, current)
                self.current = None
                return
            _continue(current, segs, row, self.set_aside)
            return
        # Outside any field: titles and instructions on the left are not findings,
        # but text far to the right of the form's label column is a margin note.
        near = current if current is not None and row.page is current.page else None
        self.current = None
        if asks:  # "Smoking [] Never [X] Former": no title, and no more of the answer above
            self.set_aside(row.words, row, near)
            return
        if person is not None:
            self.owner.open(person, strong=True)
        elif _is_heading(row, gap) or len(row.words) <= 6:
            self.owner.person = None  # a new section ("Patient Information")
        if self._far_right(row.x0, row) or noted or readings_row(text_of(row.words)):
            # a margin note, a doubt written outside the fields, or a row of readings
            # without labels of the form's own ("BP 146/92   Pulse 88   SpO2 97%")
            self.set_aside(row.words, row, near)

    def _labelled_row(self, row: Row, pieces: list[Piece], gap: float) -> None:
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
                value = p.value
                label = p.label
                if value and it.is_instruction(" ".join(w.text for w in value)):
                    # "(check all that apply)" says how to answer: the answer comes below.
                    label, value = label + value, []
                self.current = Field(p.kind or "other", label, row.page, last_y1=row.y1, label_x0=p.x0,
                                     owner=person)
                self.fields.append(self.current)
                created.append(self.current)
                if value:
                    self.current.add(value, row)
                awaiting = not value
            elif awaiting and current is not None:
                current.add(p.value, row)
                awaiting = False
            elif k == 0 and current is not None and _continues(gap, row) \
                    and _under(current, p.value, row):
                _continue(current, [p.value], row, self.set_aside)
            elif k > 0 and current is not None and created and current is created[-1] and current.rows \
                    and any(w is current.rows[-1][0] for w in row.words) and _more_options(current.rows[-1], p.value):
                current.rows[-1] = current.rows[-1] + p.value  # "☐ No     ☒ Yes - please list"
            elif k > 0 or p.query or self._far_right(p.x0, row):
                self.set_aside(p.value, row, current)
        if len(created) >= 2 and not any(f.rows for f in created):
            self.columns = created  # box headings: their answers come in the rows below


@dataclass(slots=True)
class _Checklist:
    """A checklist whose answers head its columns, while its rows are read."""

    columns: list[tuple[float, str]]  # each answer's column: (centre, answer)
    left: float  # where its rows' labels start
    bottom: float  # the bottom of its last row read
    page: PageContent


def _grid_header(row: Row) -> list[tuple[float, str]] | None:
    """The answer columns (centre, answer) a checklist's header row names: two or more
    answers ("Yes", "No"), after at most one column heading that asks nothing
    ("Condition"; not "Are you having shortness of breath?")."""
    segs = segments(row.words)
    answers = [s for s in segs if it.option_word(" ".join(w.text for w in s))]
    if len(answers) < 2 or len(segs) - len(answers) > 1 or segs[-len(answers):] != answers:
        return None
    if len(segs) > len(answers) and (segs[0][-1].text.endswith(("?", ":")) or len(segs[0]) > 3):
        return None
    return [((s[0].x0 + s[-1].x1) / 2, " ".join(w.text for w in s)) for s in answers]


def _grid_answers(row: Row, grid: list[tuple[float, str]],
                  left: float | None) -> tuple[list[Word], tuple[tuple[str, bool | None], ...]] | None:
    """(label words, each answer with its box ticked or not, None where no box under it
    was read) when ``row`` is a checklist row under ``grid``: a label, then a box under
    each answer. Once the checklist is known (``left``: where its labels start), a row at
    its label edge is its row however OCR read the boxes: what is no box ("Seizures fl
    in)", "Eczema [X] ]") or a box left out ("Seizures [X]") leaves its answer unread."""
    tol = 1.5 * row.height
    first_column = min(c for c, _ in grid) - tol
    label = [w for w in row.words if w.x1 < first_column]
    marks = row.words[len(label):]
    if not label or not marks or any(w.x1 < first_column for w in marks):
        return None
    if left is not None and abs(label[0].x0 - left) > tol:
        return None
    texts = [w.text for w in marks]
    ticked: dict[str, bool] = {}
    k, junk = 0, False
    while k < len(texts):
        box = it.box_at(texts, k)
        if box is None:
            junk, k = True, k + 1
            continue
        middle = (marks[k].x0 + marks[k + box[1] - 1].x1) / 2
        centre, answer = min(grid, key=lambda c: abs(c[0] - middle))
        if abs(centre - middle) > tol or answer in ticked:
            return None
        ticked[answer] = box[0]
        k += box[1]
    if left is None and (junk or len(ticked) != len(grid)):
        return None  # the row that opens a checklist is read whole
    return label, tuple((answer, ticked.get(answer)) for _, answer in grid)


def _boxes_before(label: list[Word]) -> tuple[list[Word], list[Word]]:
    """(tick-box options, the rest) of a label that opens with boxes ("[X] Yes []No _ If
    yes, list them:"): the options up to the first word from which the rest asks for
    more; ([], label) when it opens with no box. OCR debris between them ("_") is left
    out of both."""
    texts = [w.text for w in label]
    if not it.starts_with_box(texts):
        return [], label
    for k in range(1, len(label)):
        if it.is_follow_up(label_text(label[k:])):
            return [w for w in label[:k] if any(c.isalnum() or c in "[]" for c in w.text)], label[k:]
    return [], label


# A row of vital signs in a form's office-use box: two readings at least.
MIN_ROW_READINGS = 2


def readings_row(text: str) -> bool:
    """Whether a row prints vital-sign readings by their labels ("BP 146/92  Pulse 88")."""
    return len(vital_values_in(text)) >= MIN_ROW_READINGS


def _form_label(p: Piece) -> bool:
    return bool(p.label) and p.kind not in (None, "other")


def _more_options(answer: list[Word], seg: list[Word]) -> bool:
    """Whether a segment set apart on the answer's row is more of its tick-box options:
    both open with a box and one of them is ticked ("☐ No     ☒ Yes - please list"), or
    they are a yes and a no, boxes lost or not. Left apart, the unticked "No" was read as
    the answer. A row of boxes none of which is ticked stays as it was read."""
    texts = [w.text for w in answer + seg]
    if it.offers_yes_and_no(texts):
        return True  # "Yes" and "{Xl No" off a scan whose boxes OCR lost or garbled: the tick reader judges both
    # The whole of each, not its first word: "[ ]" prints as two words, "[" and "]".
    if not (it.starts_with_box([w.text for w in answer]) and it.starts_with_box([w.text for w in seg])):
        return False
    ticks = it.read_ticks(texts, [0] * len(texts))
    return ticks is not None and bool(ticks.answer) and not ticks.problem


def _under(current: Field, seg: list[Word], row: Row) -> bool:
    """Whether a segment on a later row can continue ``current``: not left of its label."""
    return seg[0].x0 >= current.label_x0 - 0.5 * row.height


def _after_a_finished_answer(current: Field, seg: list[Word], row: Row) -> bool:
    """A row starting left of the answer's last row (back under the label) whose first
    word would have fitted at the end of that row, before the text's right edge, when
    the row ended on no list separator or colon: the line was broken on purpose, not
    wrapped, so this is a new line of text ("Dr. Gruenwald reviewed the form." under
    "Allergies: Penicillin (hives); Latex"), not another item of the answer. A row in
    line with the answer's last row, a word too long for the room left, or a row above
    ending on ",", ";", "and" or ":" ("[X] Yes - list:") goes on with the answer."""
    if not current.rows or row.page is not current.page or current.awaits_list:
        return False
    line = current.rows[-1][0]  # the answer's last line starts at its leftmost item
    line_x0 = min(r[0].x0 for r in current.rows if abs(r[0].y0 - line.y0) <= 0.5 * row.height)
    if seg[0].x0 >= line_x0 - 0.5 * row.height:
        return False  # in line with the answer's last row: a list going on
    last = current.rows[-1][-1]
    if last.text[-1:] in _LIST_SEPARATORS or last.text.casefold() in _LIST_WORDS:
        return False
    first = seg[0]
    right = max(w.x1 for w in row.page.words)
    return last.x1 + SPACE_SHARE * row.height + (first.x1 - first.x0) <= right


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


def _continue(current: Field, segs: list[list[Word]], row: Row, set_aside) -> None:
    """A row below an answer: the answer goes on if it starts in the answer's column."""
    start = current.value_x0 if current.value_x0 is not None else current.label_x0
    first = segs[0]
    if first[0].x0 - start > MARGIN_SHIFT * row.page.width:
        set_aside([w for s in segs for w in s], row, current)
        return
    boxed = [it.starts_with_box([w.text for w in seg]) for seg in segs]
    grid = bool(current.rows) and any(it.starts_with_box([w.text]) for w in current.rows[-1]) \
        and first[0].x0 >= current.rows[-1][0].x0 - 0.5 * row.height  # not back at the label column
    if len(segs) > 1 and all(boxed[1:]) and (boxed[0] or grid):
        # A row of tick-box options, all of the answer (under a row of them, its first
        # box may be one OCR lost: the answer's reader then asks a person to look).
        current.add([w for seg in segs for w in seg], row)
        return
    if len(segs) > 1 and readings_row(text_of([w for seg in segs for w in seg])):
        current.add([w for seg in segs for w in seg], row)  # "B/P 132/84     HR 64": readings set apart, one row
        return
    current.add(first, row)
    previous = first
    for seg in segs[1:]:
        if current.kind in LIST_KINDS and it.is_follow_up(" ".join(w.text for w in seg)):
            # "[X] Yes  [ ] No      If yes, list them and what happened:" - the list is
            # written below (or after its colon): this question's answer, not a note.
            colon = next((k for k, w in enumerate(seg) if w.text.endswith(":")), len(seg) - 1)
            current.asked += seg[:colon + 1]
            if seg[colon + 1:]:
                current.add(seg[colon + 1:], row)
            else:
                current.last_y1, current.awaits_list = row.y1, True
            continue
        if _next_list_item(current, previous, seg, start, row):
            current.add(seg, row)  # "Amoxicillin - swollen lips.   Elastoplast - itchy skin."
            previous = seg
            continue
        set_aside(seg, row, current)


def _next_list_item(current: Field, previous: list[Word], seg: list[Word], start: float, row: Row) -> bool:
    """Whether a segment set apart on a list answer's row is the list's next item: the
    segment before it ended its item (".", ";", ","), and it starts a new one within the
    answer's part of the page. Anything else there stays a note beside the answer."""
    return current.kind in LIST_KINDS and previous[-1].text.endswith((".", ";", ",")) \
        and seg[0].text[:1].isalnum() and seg[0].x0 - start <= MARGIN_SHIFT * row.page.width


