"""Microbiology on a lab report: what a culture grew and how it fared against antibiotics.

A culture report prints its finding under a label ("Culture: Escherichia coli >10^5
CFU/mL", "Organism isolated: Staphylococcus aureus", "Urine culture: No growth") and the
susceptibilities as a table ("Antibiotic | Result | MIC (mg/L)", rows "Amoxicillin  R
>32") or as a list on one line ("Sensitivities: amoxicillin R, nitrofurantoin S";
"Resistant to: trimethoprim, amoxicillin"). The results table reader reads neither: an
organism is no analyte and "R" is no value.

Each is read as an HL7 culture gives it: the culture named by its specimen ("Urine
culture") with the finding, as printed, for its value; each antibiotic as "<name>
[Susceptibility]" with its MIC for the value (the unit from the column's label) or,
without one, the interpretation as printed, whose code is kept as the printed flag so an
answer says "resistant". The words come from ``domain.policy.facts.lab_vocabulary``.
A finding is free text and a row of single letters is easily misplaced, so the extractor
sends every one to a person, cited with its box; none reaches the chart unseen.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from domain.content import PageContent, Word
from domain.policy.facts.analytes import specimen_named
from domain.policy.facts.lab_vocabulary import (
    ANTIBIOTIC_COLUMNS, CULTURE_LABELS, CULTURE_REPORT_LABELS, INTERPRETATION_COLUMNS, MIC_COLUMNS, SUSCEPTIBILITY_LIST_LABELS,
    susceptibility_code, susceptibility_test,
)
from extract.layout import Row, segments, text_of
from extract.values import numbers as V
from extract.values.lists import MEDICATION_COLUMNS

# A minimum inhibitory concentration as printed: "4", "0.25", ">32", "<=0.5", "≤ 1".
_MIC = re.compile(r"(?:[<>]=?|[≤≥])?\s*\d+(?:[.,]\d+)?")
# A specimen's label on the report ("Specimen: Mid-stream urine"), whose words name it.
_SPECIMEN_LABELS = ("specimen", "specimen type", "sample", "sample type", "source", "specimen source")
_MAX_LABEL_WORDS = 3
# A table row's antibiotic is a few words, its interpretation or MIC one or two ("Not
# tested"); more is a sentence under the table.
_MAX_NAME_WORDS = 4
_CLAUSE_ENDS = (".", ";", ":", "-", "\u2013", "\u2014")
_MAX_CELL_WORDS = 2
_MAX_ORGANISMS = 4
# Column labels other tables print too: "Drug | Result" is a drug level's table unless an
# MIC or an interpretation column ("S/I/R", "Sensitivity") says otherwise.
_GENERIC_LABELS = frozenset({"drug", "agent", "result", "reading"})
# A column of the lab's words on a row (every table's notes column): said with its result.
_NOTE_COLUMNS = frozenset(MEDICATION_COLUMNS["notes"])
# The one specimen the analyte vocabulary leaves unnamed (a blood test is just its name);
# a culture names it ("Blood culture").
_BLOOD = re.compile(r"\bblood\b", re.I)
_CULTURE_WORD = re.compile(r"\bcultures?\b", re.I)
_MAX_HEADING_WORDS = 4
# An antibiotic's name: letters first, then letters, digits and the joins names print
# ("Co-amoxiclav", "Piperacillin/tazobactam", "Cefuroxime (oral)").
_NAME = re.compile(r"[A-Za-z][A-Za-z0-9\-/(). ]*[A-Za-z)]")


@dataclass(slots=True)
class MicroResult:
    """A culture's finding or one antibiotic's susceptibility, with the words it cites."""

    page: PageContent
    words: list[Word]
    test_name: str
    value: str
    unit: str = ""
    code: str | None = None  # how the organism fared ("R", "S", "I"...), for a susceptibility
    doubts: list[str] = field(default_factory=list)  # what could not be read as printed
    culture: bool = False  # a culture's finding (free text), not a susceptibility
    organism: str = ""  # the organism column a susceptibility stands in, as labelled ("2", "E. coli")


@dataclass(slots=True)
class _Column:
    role: str  # "name", "interpretation", "mic", "organism" or "other"
    x0: float
    x1: float
    unit: str = ""
    label: str = ""  # an organism column's label as printed ("1", "E. coli")


def micro_results(rows_by_page: list[list[Row]], skip: set[int]) -> list[MicroResult]:
    """Every culture finding and susceptibility the pages print; rows in ``skip`` (read
    as results or fields already) are left alone."""
    out: list[MicroResult] = []
    for rows in rows_by_page:
        specimen = _specimen(rows)
        columns: list[_Column] | None = None  # a susceptibility table's header in force
        under: str | None = None  # the culture a heading names, until its report is read
        for n, row in enumerate(rows):
            if id(row) in skip:
                columns = None
                continue
            if (header := _susceptibility_header(row)) is not None:
                columns = header
                continue
            if columns is not None:
                if (found := _table_row(row, columns)) is not None:
                    out.extend(found)
                    continue
                columns = None  # the table ended ("S = sensitive, R = resistant")
            if (heading := _culture_heading(row)) is not None:
                under = heading  # "CULTURE, URINE": its "FINAL REPORT: ..." is the culture's finding
                continue
            culture = _culture(row, rows[n + 1] if n + 1 < len(rows) else None, specimen, under)
            if culture is not None:
                out.append(culture)
                under = None
                continue
            out.extend(_listed(row))
    return out


def _key(words: list[Word] | str) -> str:
    """Words (or a label's text) as a label to look up: lower case, punctuation around
    each word dropped."""
    text = words if isinstance(words, str) else text_of(words)
    return " ".join(w.lower().strip(":.,;()[]*") for w in text.split()).strip()


def _antibiotic(words: list[Word]) -> str | None:
    """The antibiotic's name a cell or list item prints ("Co-amoxiclav",
    "Piperacillin/tazobactam"), or None for what is no name (a key line, a sentence)."""
    name = text_of(words).rstrip(",;.")
    if len(words) > _MAX_NAME_WORDS or not _NAME.fullmatch(name) or sum(c.isalpha() for c in name) < 3:
        return None
    return name


def _leading_label(words: list[Word], labels) -> tuple[str, int] | None:
    """(label, words it takes) when ``words`` open with one of ``labels`` ended by a
    colon ("Organism isolated:", "Culture :"), longest first. OCR reads a colon as a
    full stop or drops it: a label of two words or more stands without one."""
    for k in range(min(_MAX_LABEL_WORDS, len(words)), 0, -1):
        head, last = words[:k], words[k - 1]
        alone = k < len(words) and words[k].text == ":"
        ended = last.text.endswith(":") or alone or (last.conf is not None and last.text.endswith("."))
        if (ended or (k >= 2 and last.text[-1:].isalpha())) and (label := _key(head)) in labels:
            return label, k + alone
    return None


def _specimen(rows: list[Row]) -> str | None:
    """The specimen the page's "Specimen:" label names ("Mid-stream urine" -> urine)."""
    for row in rows:
        for seg in segments(row.words):
            if (hit := _leading_label(seg, _SPECIMEN_LABELS)) is not None:
                text = text_of(seg[hit[1]:])
                return specimen_named(text) or ("blood" if _BLOOD.search(text) else None)
    return None


def _culture_heading(row: Row) -> str | None:
    """The culture a heading names ("CULTURE, URINE", "Blood culture"): its test name."""
    text = text_of(row.words)
    if len(row.words) > _MAX_HEADING_WORDS or any(c.isdigit() or c == ":" for c in text) \
            or not _CULTURE_WORD.search(text):
        return None
    which = specimen_named(text) or ("blood" if _BLOOD.search(text) else None)
    return f"{which[0].upper()}{which[1:]} culture" if which else "Culture"


def _culture(row: Row, below: Row | None, specimen: str | None, under: str | None = None) -> MicroResult | None:
    """"Culture: Escherichia coli >10^5 CFU/mL" (or the label alone, its finding on the
    next row); "Urine culture:" names its own specimen; under a culture's heading, its
    report's label ("FINAL REPORT: ...") is the culture's."""
    words = row.words
    named = None
    if len(words) > 1 and (named := specimen_named(words[0].text.strip(":"))) is not None:
        words = words[1:]  # "Urine culture:", "MSU culture:"
    hit = _leading_label(words, CULTURE_LABELS)
    if hit is None and under is not None and (hit := _leading_label(row.words, CULTURE_REPORT_LABELS)):
        words, named = row.words, None
    if hit is None:
        return None
    finding = _first_sentence(_until_next_label(words[hit[1]:]))
    cited = words[:hit[1]] + finding
    if not finding and below is not None and not _labelled(below.words):
        finding = _first_sentence(_until_next_label(below.words))
        cited = cited + finding
    if not finding:
        return None
    if named is not None:
        cited = [row.words[0], *cited]
    what = CULTURE_LABELS.get(hit[0], "culture")
    which = named or specimen
    name = f"{which[0].upper()}{which[1:]} {what}" if which and what == "culture" else what.capitalize()
    if hit[0] in CULTURE_REPORT_LABELS:
        name = under or name
    value = text_of(finding)
    doubts = [V.no_result_words(value)[0]] if V.not_resulted(value) else []  # "Culture: to follow"
    return MicroResult(page=row.page, words=cited, test_name=name, value=value, doubts=doubts, culture=True)


def _first_sentence(words: list[Word]) -> list[Word]:
    """The finding without the advice after it ("Mixed growth of doubtful significance.
    Please repeat if symptomatic."): up to a full stop before a capital, not the one of
    an abbreviation ("E. coli", "spp.")."""
    for k, w in enumerate(words[:-1]):
        if w.text.endswith(".") and len(w.text.strip(".")) > 3 and words[k + 1].text[:1].isupper():
            return words[:k + 1]
    return words


def _labelled(words: list[Word]) -> bool:
    return any(w.text.endswith(":") for w in words[:_MAX_LABEL_WORDS])


def _until_next_label(words: list[Word]) -> list[Word]:
    """The words up to another labelled part of the row ("... Colony count: ..." stays;
    "...   Reported: 03/12/2026" does not): a later segment opening with a label."""
    out: list[Word] = []
    for k, seg in enumerate(segments(words)):
        if k and _labelled(seg) and _key(seg[:1]) not in CULTURE_LABELS:
            break
        out.extend(seg)
    return out


def _susceptibility_header(row: Row) -> list[_Column] | None:
    """The columns of a susceptibility table's header row: an antibiotic's column first,
    then an interpretation or MIC column (others kept so their words stay apart)."""
    segs = segments(row.words)
    if len(segs) < 2 or _key(segs[0]) not in ANTIBIOTIC_COLUMNS:
        return None
    columns = [_Column("name", segs[0][0].x0, segs[0][-1].x1)]
    for seg in segs[1:]:
        key = _key(seg)
        if key in INTERPRETATION_COLUMNS:
            role, unit = "interpretation", ""
        elif _key(seg[:1]) in MIC_COLUMNS:
            role, unit = "mic", text_of(seg[1:]).strip("()[] ")  # "MIC (mg/L)": the values' unit
        else:
            role, unit = "other", ""
        columns.append(_Column(role, seg[0].x0, seg[-1].x1, unit, text_of(seg)))
    if any(c.role == "mic" for c in columns) or any(
            c.role == "interpretation" and _key(c.label) not in _GENERIC_LABELS for c in columns):
        return columns
    if _key(segs[0]) in _GENERIC_LABELS:
        return None  # "Drug | Result | Units | Range": drug levels, not how an organism fared
    if any(c.role == "interpretation" for c in columns):
        return columns
    if len(columns) <= _MAX_ORGANISMS + 1:
        # "Antibiotic | 1 | 2" or "Antibiotic | E. coli | Enterococcus": a column per
        # organism, each cell how that organism fared (rows without one end the table).
        for c in columns[1:]:
            c.role = "organism"
        return columns
    return None


def _cells(row: Row, columns: list[_Column]) -> list[list[Word]]:
    """The row's words column by column: a word belongs to the last column that starts
    left of its middle (a column starts half-way into the gap before its label)."""
    starts = [float("-inf")] + [(a.x1 + b.x0) / 2 if b.x0 > a.x1 else b.x0 for a, b in zip(columns, columns[1:])]
    cells: list[list[Word]] = [[] for _ in columns]
    for w in row.words:
        middle = (w.x0 + w.x1) / 2
        cells[max(i for i, s in enumerate(starts) if s <= middle)].append(w)
    return cells


def _table_row(row: Row, columns: list[_Column]) -> list[MicroResult] | None:
    """The row's susceptibilities (one per organism column), or None for a row that is
    not the table's."""
    if columns[1].role != "organism":
        found = _one_susceptibility(row, columns)
        return [found] if found is not None else None
    cells = _cells(row, columns)
    if (name := _antibiotic(cells[0])) is None:
        return None
    out = []
    for column, cell in zip(columns[1:], cells[1:]):
        code = susceptibility_code(text_of(cell)) if 0 < len(cell) <= _MAX_CELL_WORDS else None
        if code is not None:
            # Cited from the name through its cell: "Ciprofloxacin R S" for organism 2, as printed.
            run = row.words[row.words.index(cells[0][0]):row.words.index(cell[-1]) + 1]
            out.append(MicroResult(page=row.page, words=run, test_name=susceptibility_test(name),
                                   value=text_of(cell), code=code, organism=column.label))
        elif cell:
            return None  # a word that is no interpretation: not a table of how organisms fared
    return out or None


def _one_susceptibility(row: Row, columns: list[_Column]) -> MicroResult | None:
    """The row's susceptibility, or None for a row that is not the table's (a key line
    "S = sensitive, R = resistant", a sentence). A cell that does not read as an
    interpretation or an MIC ("Not tested", OCR's "Ss") is kept as printed, with the
    doubt: a row of the table is never dropped unsaid."""
    cells = _cells(row, columns)
    if (name := _antibiotic(cells[0])) is None:
        return None
    code = interpretation = mic = None
    unit = ""
    doubts: list[str] = []
    for column, cell in zip(columns[1:], cells[1:]):
        text = text_of(cell)
        if cell and column.role == "other" and _key(column.label) in _NOTE_COLUMNS:
            doubts.append(f"the report's comment on it: {text!r}")  # "synergy lost": a person reads it
        if not cell or column.role == "other":
            continue
        if len(cell) > _MAX_CELL_WORDS:
            return None  # a sentence across the columns
        if column.role == "interpretation":
            code, interpretation = susceptibility_code(text), text
            if code is None:
                doubts.append(V.no_result_words(text)[0] if V.not_resulted(text)
                              else f"{text!r} does not read as sensitive, intermediate or resistant")
        elif _MIC.fullmatch(text):
            mic, unit = text, column.unit
        else:
            doubts.append(f"the MIC {text!r} does not read as a number")
            mic = text
    if interpretation is None and mic is None:
        return None
    cited = [w for cell, column in zip(cells, columns) if column.role != "other" for w in cell]
    return MicroResult(page=row.page, words=cited, test_name=susceptibility_test(name),
                       value=mic if mic is not None else interpretation, unit=unit if mic is not None else "",
                       code=code, doubts=doubts)


def _listed(row: Row) -> list[MicroResult]:
    """"Sensitivities: amoxicillin R, nitrofurantoin S" and "Resistant to: trimethoprim,
    amoxicillin": one susceptibility per antibiotic, cited by its own words."""
    # The label opens the row or a clause of it ("Also tested - Resistant to: tetracycline").
    for start in range(len(row.words)):
        if (start == 0 or row.words[start - 1].text.endswith(_CLAUSE_ENDS)) \
                and (hit := _leading_label(row.words[start:], SUSCEPTIBILITY_LIST_LABELS)) is not None:
            break
    else:
        return []
    told = SUSCEPTIBILITY_LIST_LABELS[hit[0]]
    out: list[MicroResult] = []
    item: list[Word] = []
    words = row.words[start:]
    for w in [*words[hit[1]:], None]:
        if w is not None and w.text.lower() != "and":
            item.append(w)
        ends = w is None or w.text.lower() == "and" or w.text.endswith((",", ";", "."))
        if not ends or not item:
            continue
        code = None if told else susceptibility_code(item[-1].text)
        name = _antibiotic(item if told else item[:-1])
        if (told or code) and name is not None:
            # A list that says how they fared in its label cites it with each name:
            # "Resistant to: trimethoprim, amoxicillin" (one run of the line's words).
            cited = words[:words.index(item[-1]) + 1] if told else list(item)
            out.append(MicroResult(page=row.page, words=cited, test_name=susceptibility_test(name),
                                   value=hit[0].split()[0] if told else item[-1].text.rstrip(",;."),
                                   code=told or code))
        item = []
    return out
