"""Where the labels are in an intake page's rows (the label rules of ``extract.intake.layout``).

Each row segment is cut into pieces: plain words, then each label with the words up to
the next label ("DOB: 07/22/1958 Chart #: QX-20417" is two pieces). A label ends in
":" / "?" / "#" or runs into dot leaders; written without a colon, a whole segment of
label vocabulary is one (``extract.values.labels``). Whether the row supports a piece as
a label - the label column, an answer beside or under it, a real question rather than
a doubt written with a "?" - is decided by ``accept_labels``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from domain.content import Word
from domain.policy.context.scope import opens_a_question
from extract.values import labels
from extract.values import text_rules as tr
from extract.values import written_answers as it
from extract.values.labels import LabelMeaning
from extract.layout import text_of

MAX_LABEL_WORDS = 12  # a leading label ends within this many words of its segment

# Label words that end a label when written without a colon mid-line ("Name Ann
# Lee DOB 07/22/1958"): only these capitalised abbreviations are that unambiguous.
_BARE_MID_LABELS = frozenset({"DOB", "D.O.B.", "D.O.B", "MRN"})


@dataclass(slots=True)
class Piece:
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


# What OCR makes of a colon on a faxed or scanned form: a full stop, semicolon or quote
# mark ("Allergies. Codeine", "Birth date' 1986-07-08", "Sex. F").
# Not a comma, which OCR also makes of one: real forms print commas among label words
# and answers ("123 Any Street, Any Town", "Obstetrician's name, address, and phone #:"),
# and taking them for colons cut those answers up on the real samples of ../shared/data.
_MISREAD_COLONS = (".", ";", "'", "\u2019")


def _misread_colon(word: Word) -> bool:
    """Whether ``word`` may close a label whose colon OCR read as another mark: an OCR
    word (a text layer's "Allergies." is the writer's full stop) ending in such a mark
    after a letter. Whether the words before it are a label is the caller's test, on
    their vocabulary (so "Stopped. Tablets" or "Dr. Eriksen" never become labels)."""
    t = word.text
    # after a letter, or after the bracket closing a format hint ("Date of birth (MM/DD/YYYY).")
    return word.conf is not None and len(t) >= 2 and t.endswith(_MISREAD_COLONS) and (t[-2].isalpha() or t[-2] == ")")


def _names_a_label(text: str, *, bilingual: bool = False) -> bool:
    """``text``, words OCR may have taken a label's colon from, is all label vocabulary
    naming a field or another person, not a title ("Dr. Hilde Marchetti", "Dr  Hilde"),
    and leaves no bracket open ("Current medicines (name, strength, how often)" is a
    heading). ``bilingual``: at the start of a row, where words before a " / " are the
    label's translation ("Alergias / Allergies."), not an answer's."""
    if text.count("(") > text.count(")") or tr.is_honorific(text):
        return False
    return labels.is_bare_label(text, bilingual=bilingual)


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
        if k + 1 < len(seg) and _misread_colon(w) and _names_a_label(text_of(seg[: k + 1])[:-1], bilingual=True):
            return k + 1
    if seg and seg[0].text in _BARE_MID_LABELS and len(seg) > 1:
        return 1
    return _label_before_a_lost_colon(seg)


# OCR can drop a colon altogether ("Medications   Sumatriptan 50 mg"); the space it
# took stays. A gap after the label this many times the segment's usual word gap is
# that colon's place (one word space is about half of a colon plus its space).
LOST_COLON_GAP = 1.6
MIN_GAPS = 3  # the usual gap needs a few gaps to be known


def _label_before_a_lost_colon(seg: list[Word]) -> int:
    """How many OCR words at the start of ``seg`` form a label whose colon was lost: all
    label vocabulary naming a field or another person, then a gap markedly wider than
    the segment's usual word gap, then the answer. 0 for a text layer (its writer
    left the colon out: the bare-label rules decide) and when nothing stands out."""
    if not seg or seg[0].conf is None or len(seg) <= MIN_GAPS:
        return 0
    gaps = [b.x0 - a.x1 for a, b in zip(seg, seg[1:])]
    usual = sorted(gaps)[len(gaps) // 2]
    if usual <= 0:
        return 0
    for k in range(min(len(gaps), labels.MAX_BARE_LABEL_WORDS)):
        if gaps[k] >= LOST_COLON_GAP * usual and _names_a_label(text_of(seg[: k + 1]), bilingual=True):
            return k + 1
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
    misread = False
    if lead in ("only", "opens"):
        last, end = j - 1, (j + 1 if lead == "only" else j)
    elif lead == "ends" or (_ends_label(w) and not w.text.startswith("?")):
        last, end = j, j + 1
    elif _misread_colon(w) and j + 1 < len(seg):  # an answer follows, or it is a full stop
        last, end, misread = j, j + 1, True
    else:
        return None
    for i in range(max(lo, last - 5), last + 1):
        words = text_of(seg[i: last + 1])
        if lead == "ends":
            words = re.sub(rf"{_LEADER}$", "", words)
        elif misread:
            words = words[:-1]
            if not _names_a_label(words):
                continue
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


def cut_segment(seg: list[Word], si: int) -> list[Piece]:
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
    pieces: list[Piece] = []
    if not cuts or cuts[0][0] > 0:
        pieces.append(Piece([], seg[: cuts[0][0] if cuts else len(seg)], seg=si))
    for k, (start, length) in enumerate(cuts):
        stop = cuts[k + 1][0] if k + 1 < len(cuts) else len(seg)
        label = seg[start: start + length]
        text = label_text(label)
        pieces.append(Piece(label, seg[start + length: stop], it.classify_label(text) or "other",
                             labels.read_label(text), bare=bare, seg=si))
    return pieces


def label_text(label: list[Word]) -> str:
    """A label's words without its dot leader."""
    return re.sub(rf"\s*{_LEADER}$", "", text_of(label)).strip()


def label_row(pieces: list[Piece]) -> bool:
    """Several labels side by side and no answers: the headings of a row of boxes."""
    return len(pieces) >= 2 and all(p.label and not p.value for p in pieces)


def answer_follows(pieces: list[Piece], k: int) -> bool:
    """Whether piece ``k`` has plain words after it on its row (its answer)."""
    return k + 1 < len(pieces) and not pieces[k + 1].label


def accept_labels(pieces: list[Piece], aligned, below, *, in_notes: bool = False) -> list[Piece]:
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
    out: list[Piece] = []
    awaiting = False
    heads = label_row(pieces) and below(pieces[0].x0)
    for k, p in enumerate(pieces):
        if p.label and p.label[0] is p.words[0] and (k == 0 or p.seg != pieces[k - 1].seg) and not p.bare \
                and p.label[-1].text.endswith("?") \
                and not _asks(label_text(p.label), answered=bool(p.value) or answer_follows(pieces, k),
                              boxed=_boxes_follow(pieces, k), in_notes=in_notes):
            p = Piece([], p.words, seg=p.seg, query=True)
        if p.label and p.label[0] is p.words[0] and (k == 0 or p.seg != pieces[k - 1].seg):
            if p.bare:
                # Right after a label still waiting for its answer, a label-like phrase
                # is that answer ("Preferred contact | Email") unless it names a field
                # no answer would be ("Last Name | First Name" on a blank form).
                ok = heads or ((not awaiting or _never_an_answer(p)) and (
                    aligned(p.x0) or answer_follows(pieces, k) or (len(pieces) == 1 and below(p.x0))))
            else:
                ok = aligned(p.x0) or (p.meaning is not None and (
                    p.meaning.kind is not None or p.meaning.owner is not None))
            if not ok:
                p = Piece([], p.words, seg=p.seg)
        out.append(p)
        awaiting = bool(p.label) and not p.value
    return out


# A label without a question word, ending in "?", is a form's question ("Smoker? No",
# "Latex allergy? Yes") only when it is this short and answered on its row.
MAX_QUESTION_LABEL_WORDS = 4


def _boxes_follow(pieces: list[Piece], k: int) -> bool:
    """Whether the answer after piece ``k`` on its row opens with a tick box."""
    after = pieces[k].value or (pieces[k + 1].words if k + 1 < len(pieces) else [])
    return it.starts_with_box([w.text for w in after])


def _asks(text: str, *, answered: bool, boxed: bool = False, in_notes: bool = False) -> bool:
    """Whether a label ending in "?" asks one of the form's questions rather than
    doubting something written as free text: it opens like a question ("Are you
    pregnant?", "¿Toma medicamentos?", "Anything you're allergic to?"), names a field
    in label words only ("Pregnant?", "Any allergies?"), or is a short phrase answered
    on its row ("Smoker? No"), or is answered by tick boxes printed on its row (a
    patient's doubt comes with no boxes). "Lips tingled after a prawn curry - shellfish?",
    "Allergic to shellfish?" or "shellfish?" alone ask nothing of the reader: they
    are notes, and their "?" a hedge. Inside a Notes box every line is the
    patient's note, a question too ("Is parking free?")."""
    if in_notes:
        return False  # what the patient wrote in a Notes box is a note, questions included
    if boxed or opens_a_question(text) or labels.is_bare_label(text.rstrip("? ")):
        return True
    return answered and 0 < len(text.rstrip("? ").split()) <= MAX_QUESTION_LABEL_WORDS


def _never_an_answer(p: Piece) -> bool:
    return p.kind in it.IDENTITY_KINDS or (p.meaning is not None and p.meaning.owner is not None)
