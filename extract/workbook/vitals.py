"""Vital signs in a workbook: finding their tables and reading their rows into cited
``vital_sign`` facts.

Two layouts, found by their header row anywhere on a sheet:

- wide: one row per time a set of signs was taken, a column per sign
  ("Date | Time | BP | Pulse | Temp (°C) | SpO2"); a blood pressure may be printed in one
  column ("152/94") or two ("Systolic | Diastolic");
- long: one row per sign ("Sign | Value | Unit | Date"); a lab table's row whose test
  is a vital sign ("Pulse | 112 | bpm") is read the same way.

Each reading is cited by its row span (``Sheet!A3:F3``) and quotes its cell. A cell in a
sign's column that holds no reading, and a long-layout row naming no known sign, are
reported as warnings, never dropped in silence. What the signs are, their labels, units
and plausible ranges is ``domain.policy.facts.vital_signs``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from domain.content import Section
from domain.models import ExtractionWarning, FactProposal, VitalSignValue
from domain.policy.context.mentions import hedge_cue
from domain.policy.facts.vital_signs import VITAL_SIGNS, implausible, sign_of_label, vital_text
from extract.section_facts import SectionFacts
from extract.values import numbers as V
from extract.values.dates import parse_date, time_of_day
from extract.values.vital_readings import DATE_COLUMN, VitalReading, read_bp_parts, read_vital
from extract.workbook.labels import NULL_VALUE

# Header words of the long layout and of the columns saying when a reading was taken.
SIGN_COLUMN = ("sign", "vital sign", "vital signs", "vital", "vitals", "observation", "observations", "obs",
               "parameter", "measurement", "measure", "item")
VALUE_COLUMN = ("value", "reading", "result", "results", "recorded value", "measured value", "observed value",
                "level", "recorded")
UNIT_COLUMN = ("unit", "units", "uom", "unit of measure")
TIME_COLUMN = ("time", "time of reading", "clock time", "hour")
_SHEET_DATE_LABELS = ("date", "recorded", "recorded on", "taken", "taken on", "measured on", "seen on", "seen")
# "Clinic date", "Date of visit", "Date seen": a label about the date of the readings,
# unless it names another date (of birth, the next review, discharge, printing).
_DATE_LABEL = re.compile(r"^(?:[a-z]+\s+){0,2}date$|^date\s+(?:of\s+)?[a-z]+$")
_OTHER_DATES = frozenset({"birth", "dob", "due", "next", "review", "referral", "discharge", "admission", "admitted",
                          "print", "printed", "report", "reported", "request", "requested", "expiry", "booking",
                          "appointment", "death", "start", "end", "stop"})


def _sheet_date_label(text: str) -> bool:
    t = _norm(text)
    return t in _SHEET_DATE_LABELS or (bool(_DATE_LABEL.match(t)) and not set(t.split()) & _OTHER_DATES)


@dataclass(slots=True)
class VitalTable:
    header_row: int
    layout: str  # "wide" | "long"
    signs: dict[int, tuple[str, str, str]] = field(default_factory=dict)  # wide: col -> (kind, header unit, label)
    columns: dict[str, int] = field(default_factory=dict)  # long: sign, value, unit; both: date, time
    unknown: dict[int, str] = field(default_factory=dict)  # wide: col -> a header naming no sign


def _norm(text: str) -> str:
    return re.sub(r"[:#*.]+$", "", V.normalize_ws(text).lower()).strip()


def _role(text: str, names: tuple[str, ...]) -> bool:
    t = _norm(text)
    return t in names or re.sub(r"\s*\(.*?\)\s*", " ", t).strip() in names


def find_vital_header(cells: list[dict], row: int) -> VitalTable | None:
    """A header row of a vital-signs table, or None: two or more columns naming signs
    (wide), or a sign column beside a value column (long)."""
    table = VitalTable(row, "wide")
    for c in cells:
        if c["kind"] != "text":
            continue
        if _role(c["text"], DATE_COLUMN):
            table.columns.setdefault("date", c["col"])
        elif _role(c["text"], TIME_COLUMN):
            table.columns.setdefault("time", c["col"])
        elif (sign := sign_of_label(c["text"])) is not None:
            table.signs[c["col"]] = (sign[0], sign[1], V.normalize_ws(c["text"]))
        else:
            table.unknown[c["col"]] = V.normalize_ws(c["text"])
    kinds = {k for k, _, _ in table.signs.values()}
    # A chart of one sign by date ("Month | Weight (kg)") is one too, when its dates say so.
    one_dated = len(kinds) == 1 and "date" in table.columns and not kinds <= {"systolic", "diastolic"}
    if len(kinds) >= 2 or {"systolic", "diastolic"} <= kinds or one_dated:
        return table
    long = VitalTable(row, "long", columns={k: v for k, v in table.columns.items()})
    for c in cells:
        if c["kind"] != "text":
            continue
        for role, names in (("sign", SIGN_COLUMN), ("value", VALUE_COLUMN), ("unit", UNIT_COLUMN)):
            if role not in long.columns and _role(c["text"], names):
                long.columns[role] = c["col"]
                break
    return long if "sign" in long.columns and "value" in long.columns else None


def sheet_date_above(secs: list[Section], header_row: int) -> tuple[str | None, Section | None]:
    """A date the sheet prints above a table for all its readings ("Date: 2025-03-04",
    or "Recorded | 2025-03-04"), with its cell."""
    found: tuple[str | None, Section | None] = (None, None)
    cells = sorted((s for s in secs if s.section_type == "cell" and s.meta["row"] < header_row),
                   key=lambda s: (s.meta["row"], s.meta["col"]))
    for i, s in enumerate(cells):
        text = V.normalize_ws(s.text)
        inline = re.match(r"^([A-Za-z ]{2,25}?)\s*:\s*(\S.*)$", text)
        if inline and _sheet_date_label(inline.group(1)):
            parsed = parse_date(inline.group(2))
            if parsed and parsed.iso:
                found = (parsed.iso, s)
        elif _sheet_date_label(text) and i + 1 < len(cells) and cells[i + 1].meta["row"] == s.meta["row"]:
            nxt = cells[i + 1]
            iso = nxt.meta.get("iso") or ((p := parse_date(nxt.text)) and p.iso)
            if iso:
                found = (iso, nxt)
    return found


# ---------------------------------------------------------------------------- rows


@dataclass(slots=True)
class VitalRow:
    """One row being read: its span (the citation) and its cells by column."""

    section: Section
    by_col: dict[int, dict]
    fallback_date: str | None  # the sheet's date for readings whose row prints none


@dataclass(slots=True)
class VitalRows:
    """Reads the rows of vital-sign tables of one workbook into ``ctx``'s facts."""

    ctx: SectionFacts
    has_identity: bool
    # Systolic and diastolic printed on two rows of a long table, waiting for each other
    # by the time they were taken; ``finish`` joins them.
    pending: dict[tuple[str, str | None], dict[str, tuple[VitalRow, dict, list[str], Section | None]]] = \
        field(default_factory=dict)
    # Numbers under a header of a column-per-sign table that names no known sign
    # ("GCS", "Pain"): (sheet, header row, header label) -> cells, reported by ``finish``.
    unread_columns: dict[tuple[str, int, str], list[str]] = field(default_factory=dict)

    def wide(self, section: Section, by_col: dict[int, dict], table: VitalTable, fallback_date: str | None) -> None:
        """One row of a column-per-sign table: a reading per sign cell that holds one."""
        row = VitalRow(section, by_col, fallback_date)
        measured_at, doubts = _when(row, table.columns)
        parts: dict[str, dict] = {}
        for col, (kind, header_unit, label) in table.signs.items():
            cell = by_col.get(col)
            if cell is None or NULL_VALUE.match(cell["text"]):
                continue
            if kind in ("systolic", "diastolic"):
                parts[kind] = cell
                continue
            reading = read_vital(kind, cell["text"], header_unit)
            if reading is None:
                self._not_read(row, cell, f"{cell['text']!r} under {label!r} is not a "
                                          f"{VITAL_SIGNS[kind].display} reading")
                continue
            self._add(row, reading, label, cell["text"], measured_at, doubts)
        for col, label in table.unknown.items():
            cell = by_col.get(col)
            if cell is not None and cell["kind"] == "number" or (cell and V.is_numeric_result(cell["text"])):
                key = (section.meta["sheet"], table.header_row, label)
                self.unread_columns.setdefault(key, []).append(cell["coord"])
        if len(parts) == 1:
            (part, cell), = parts.items()
            self._not_read(row, cell, f"a {part} pressure ({cell['text']!r}) without its other number")
        elif parts:
            self._bp(row, parts["systolic"], parts["diastolic"], measured_at, doubts)

    def long(self, section: Section, by_col: dict[int, dict], columns: dict[str, int], fallback_date: str | None,
             *, strict: bool = True) -> bool:
        """One row of a row-per-sign table (``columns``: sign, value, unit, date, time).
        Returns whether the row names a vital sign. ``strict``: a row naming none is
        reported (in a vital-signs table); in a lab table it is a lab result instead."""
        row = VitalRow(section, by_col, fallback_date)
        sign_cell, value_cell = by_col.get(columns["sign"]), by_col.get(columns["value"])
        if sign_cell is None or sign_cell["kind"] != "text":
            return False
        sign = sign_of_label(sign_cell["text"])
        if sign is None:
            if strict and value_cell is not None:
                self._not_read(row, sign_cell, f"{sign_cell['text']!r} is not a vital sign the reader knows")
            return False
        if value_cell is None or NULL_VALUE.match(value_cell["text"]):
            return True
        kind, label_unit = sign
        unit_cell = by_col.get(columns["unit"]) if "unit" in columns else None
        unit = V.normalize_ws(unit_cell["text"]) if unit_cell else label_unit
        measured_at, doubts = _when(row, columns)
        self.one(row, kind, V.normalize_ws(sign_cell["text"]), value_cell, unit, measured_at, doubts)
        return True

    def one(self, row: VitalRow, kind: str, label: str, value_cell: dict, unit: str, measured_at: str | None,
            doubts: list[str], cite: Section | None = None) -> None:
        """One sign's value cell on ``row``, taken at ``measured_at``; cited by ``cite``
        (the cell, in a table with a column per date) or else by the row. A blood
        pressure half waits for its other half of the same time (``finish``)."""
        if kind in ("systolic", "diastolic"):
            key = (row.section.meta["sheet"], measured_at)
            self.pending.setdefault(key, {})[kind] = (row, value_cell, doubts, cite)
            return
        reading = read_vital(kind, value_cell["text"], unit)
        if reading is None:
            self._not_read(row, value_cell, f"{value_cell['text']!r} is not a {VITAL_SIGNS[kind].display} reading")
            return
        cited = row if cite is None else VitalRow(cite, row.by_col, row.fallback_date)
        self._add(cited, reading, label, value_cell["text"], measured_at, doubts)

    def finish(self) -> None:
        """Join the systolic and diastolic rows of one time into one blood pressure,
        cited by both rows (``joined_rows``); a half without its other number is reported."""
        for (_, measured_at), halves in self.pending.items():
            if len(halves) == 1:
                (part, (row, cell, _, _)), = halves.items()
                self._not_read(row, cell, f"a {part} pressure ({cell['text']!r}) without its other number")
                continue
            row, sys_cell, doubts, sys_cite = halves["systolic"]
            dia_row, dia_cell, dia_doubts, dia_cite = halves["diastolic"]
            reading = read_bp_parts(sys_cell["text"], dia_cell["text"])
            if reading is None:
                self._not_read(row, sys_cell, f"blood pressure {sys_cell['text']!r}/{dia_cell['text']!r} is not a "
                                              f"reading")
                continue
            joined = joined_cells(sys_cite, dia_cite) if sys_cite is not None and dia_cite is not None else None
            section, quote = joined or joined_rows(row.section, sys_cell, dia_row.section, dia_cell)
            self._add(VitalRow(section, row.by_col, row.fallback_date), reading, "Systolic/Diastolic", quote,
                      measured_at, [*doubts, *dia_doubts])
        self.pending.clear()
        for (sheet, header_row, label), coords in self.unread_columns.items():
            self.ctx.warnings.append(ExtractionWarning(
                code="xlsx_vital_not_read",
                message=f"{sheet}!{', '.join(coords[:10])}: numbers under {label!r} (the vital-signs table of row "
                        f"{header_row}) are not a vital sign the reader knows; not read."))
        self.unread_columns.clear()

    def _bp(self, row: VitalRow, sys_cell: dict, dia_cell: dict, measured_at: str | None, doubts: list[str]) -> None:
        reading = read_bp_parts(sys_cell["text"], dia_cell["text"])
        if reading is None:
            self._not_read(row, sys_cell, f"blood pressure {sys_cell['text']!r}/{dia_cell['text']!r} is not a reading")
            return
        pair = f"{sys_cell['text']} | {dia_cell['text']}"
        quote = pair if V.contains_normalized(row.section.text, pair) else sys_cell["text"]
        self._add(row, reading, "Systolic/Diastolic", quote, measured_at, doubts)

    def _add(self, row: VitalRow, reading: VitalReading, label: str, quote: str, measured_at: str | None,
             doubts: list[str]) -> None:
        reasons = [*(reading.doubts or []), *doubts]
        factors = [0.8] * len(reasons)
        if problem := implausible(reading.kind, reading.value, reading.unit, reading.systolic, reading.diastolic):
            reasons.append(problem)
            factors.append(0.6)
        if cue := hedge_cue(f"{label} {quote}"):
            reasons.append(f"uncertain wording ({cue!r})")
            factors.append(0.7)
        if not self.has_identity:
            reasons.append("the workbook does not identify the patient")
            factors.append(0.7)
        if measured_at is None:
            factors.append(0.95)
        value = VitalSignValue(kind=reading.kind, label=label, value=reading.value, unit=reading.unit,
                               systolic=reading.systolic, diastolic=reading.diastolic, measured_at=measured_at)
        self.ctx.facts.append(FactProposal(
            fact_type="vital_sign", fact_text=vital_text(value.model_dump()), structured_value=value.model_dump(),
            citation=self.ctx.cite(row.section, quote, self.ctx.path("vital_signs")),
            confidence=V.confidence(0.92, factors),
            wants_review=bool(reasons), review_reason="; ".join(dict.fromkeys(reasons)) or None,
        ))

    def _not_read(self, row: VitalRow, cell: dict, what: str) -> None:
        self.ctx.warnings.append(ExtractionWarning(
            code="xlsx_vital_not_read", message=f"{row.section.meta['sheet']}!{cell['coord']}: {what}; not read."))


def joined_rows(first: Section, first_cell: dict, second: Section, second_cell: dict) -> tuple[Section, str]:
    """The span over two rows of a reading printed on both (a systolic row and a diastolic
    row just below it), and a quote holding both values: from the upper row's value to
    the lower row's with every cell between, as the rows' texts read joined by " | " (the
    way the citation verifier reads a range over several rows). Rows further apart are
    cited by ``first`` alone, quoting its value: the quote would run through other rows."""
    (top, top_cell), (low, low_cell) = sorted([(first, first_cell), (second, second_cell)],
                                             key=lambda pair: pair[0].meta["row"])
    if low.meta["row"] - top.meta["row"] != 1:
        return first, first_cell["text"]
    top_cells, low_cells = top.meta["cells"], low.meta["cells"]
    quote = " | ".join([c["text"] for c in top_cells if c["col"] >= top_cell["col"]]
                       + [c["text"] for c in low_cells if c["col"] <= low_cell["col"]])
    both = top_cells + low_cells
    left = min(both, key=lambda c: c["col"])["coord"]
    right = max(both, key=lambda c: c["col"])["coord"]
    sheet = top.meta["sheet"]
    span = f"{sheet}!{_letters(left)}{top.meta['row']}:{_letters(right)}{low.meta['row']}"
    return Section(span, f"{top.text} | {low.text}", "row", {"sheet": sheet, "row": top.meta["row"]}), quote


def joined_cells(first: Section, second: Section) -> tuple[Section, str] | None:
    """The span down one column over two cells of adjacent rows ("Obs!C3:C4", a systolic
    and a diastolic row of a table with a column per date) and its text, the two values
    joined by " | " (as the citation verifier reads such a range); None for cells elsewhere."""
    (top, low) = sorted((first, second), key=lambda s: s.meta["row"])
    if low.meta["row"] - top.meta["row"] != 1 or top.meta["col"] != low.meta["col"]:
        return None
    sheet = top.meta["sheet"]
    text = f"{top.text} | {low.text}"
    span = f"{sheet}!{top.meta['coord']}:{low.meta['coord']}"
    return Section(span, text, "cells", {"sheet": sheet, "row": top.meta["row"]}), text


def _letters(coord: str) -> str:
    return re.sub(r"\d+$", "", coord)


def _when(row: VitalRow, columns: dict[str, int]) -> tuple[str | None, list[str]]:
    """(measured_at, doubts) from the row's date and time cells, else the sheet's date."""
    doubts: list[str] = []
    date_cell = row.by_col.get(columns["date"]) if "date" in columns else None
    time_cell = row.by_col.get(columns["time"]) if "time" in columns else None
    day = clock = None
    if date_cell is not None:
        text = V.normalize_ws(date_cell["text"])
        if date_cell.get("iso"):
            day = date_cell["iso"]
        else:
            parsed = parse_date(text)
            if parsed is not None and parsed.iso is None:
                doubts.append(f"the date {text!r} names no day: check when it was measured")
            elif parsed is None or parsed.iso is None:
                doubts.append(f"date {text!r} could not be read")
            else:
                day = parsed.iso
                if parsed.ambiguous:
                    doubts.append(f"ambiguous date {text!r} (read as {parsed.iso})")
        m = re.search(r"\b(\d{1,2}[:.]\d{2})\s*(am|pm)?$", text, re.IGNORECASE)
        clock = time_of_day(m.group(0)) if m and day else None
    if time_cell is not None:
        clock = time_of_day(V.normalize_ws(time_cell["text"])) or clock
    if day is None and not doubts:
        day = row.fallback_date
    return (f"{day} {clock}" if day and clock else day), doubts
