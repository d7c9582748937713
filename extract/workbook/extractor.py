"""Clinical workbook extractor (doc_type ``clinical_workbook``): ``extract.formats.office.xlsx`` cells
and row spans -> cited lab results, medications, vital signs and identity.

The extractor finds table header rows anywhere on a sheet by their labels (test/analyte,
result/value, units, range, flag, date; medication/drug, dose, frequency, route), reads
patient identifiers from a label/value block above the table ("Patient:", "MRN:", "DOB:"),
and turns rows into ``lab_result`` and ``medication`` facts cited by their row span.
Tables of vital signs (a column per sign, or a row per sign; also a lab table's rows
that name a vital sign) become ``vital_sign`` facts (``extract.workbook.vitals``).
Tables whose headers say they are test plans ("Test Case #", "PASS/FAIL") or that carry
no result columns (data dictionaries) yield nothing.

Every visible sheet is read; a sheet of which nothing was read (no table the reader
knows, no patient details) is reported by name (``xlsx_sheet_not_read``), never
skipped in silence.

Column and identity labels are in ``extract.workbook.labels``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
import datetime

from domain.content import NormalizedContent, Section
from domain.models import (
    DocType,
    ExtractionResult,
    ExtractionWarning,
    FactProposal,
    IdentifierKind,
    IdentityCandidate,
    LabResultValue,
)
from domain.policy.facts.analytes import heading_specimen, loinc_code_ok, unitless_analyte, usual_units_problem, with_specimen
from domain.policy.facts.result_comments import comment_doubts
from domain.policy.facts.medication_schedule import says_as_needed
from domain.policy.facts.medication_status import status_in_note, status_with_stop
from domain.policy.context.mentions import hedge_cue
from extract.values import text_rules as tr
from extract.values import numbers as V
from extract.values.written_answers import is_yes_answer
from extract.values.dates import document_date_order, find_date, parse_date, settle
from extract.values.flags import resolve_flag
from extract.values.lists import parse_medication
from extract.values.ranges import split_range_unit
from extract.section_facts import SectionFacts
from extract.workbook.labels import (LAB_ROLES, MED_ROLES, NULL_VALUE, TEST_PLAN, column_role, id_kind,
                                     names_other_identifier)
from extract.workbook.allergy_rows import allergy_header, allergy_row, allergy_table_row
from extract.values.dated_results import DatedCell, DatedHeader, DatedRow
from extract.workbook.dated_columns import DatedRows, dated_header
from extract.workbook.vitals import VitalRows, VitalTable, find_vital_header, sheet_date_above
from extract.unread_identity import labelled_identity
from extract.workbook.wide_labs import WideLabRows
from extract.values.wide_results import WideCell, WideHeader, read_header, settle_dates
from extract.formats.office.xlsx import ENGINE

SOURCE_TYPE = DocType.CLINICAL_WORKBOOK.value


@dataclass(slots=True)
class _Table:
    kind: str  # lab | medication | vitals | wide_lab (a column per test) | dated (a column per date) | allergy
    header_row: int
    columns: dict[str, int]  # role -> column number
    header_units: str = ""  # "Result (mmol/L)"
    vitals: VitalTable | None = None
    sheet_date: str | None = None  # a date printed above a vitals table for all its rows
    wide: WideHeader | None = None
    dated: DatedHeader | None = None  # a column per date (``extract.workbook.dated_columns``)


_Ctx = SectionFacts


def extract_workbook(content: NormalizedContent, source_id: str) -> ExtractionResult:
    """Lab results, medications and identity from ``normalize_xlsx`` output."""
    ctx = _Ctx.for_content(content, "xlsx", SOURCE_TYPE, source_id)
    by_sheet: dict[str, list[Section]] = {}
    for s in content.sections:
        by_sheet.setdefault(s.meta["sheet"], []).append(s)
    # One workbook prints its dates one way: "16/09/2026" in a cell settles "02/08/1944".
    day_first = document_date_order(c.get("text") or "" for s in content.sections for c in _row_cells(s))
    plans = {sheet: _find_tables(ctx, sheet, secs, day_first) for sheet, secs in by_sheet.items()}
    sheet_dates: dict[str, str | None] = {}
    for sheet, secs in by_sheet.items():
        sheet_dates[sheet] = _identity_block(ctx, secs, plans[sheet], day_first)
    has_identity = bool(ctx.identifiers)
    vitals = VitalRows(ctx, has_identity)
    # Rows read as a table's structure (its header, a row of units under it) or already
    # reported by a table's reader, by sheet.
    accounted = {sheet: _rows(ctx, sheet, secs, plans[sheet], sheet_dates[sheet], has_identity, vitals, day_first)
                 for sheet, secs in by_sheet.items()}
    vitals.finish()
    _report_unread_sheets(ctx, by_sheet)
    _report_unread_rows(ctx, by_sheet, accounted)
    return ExtractionResult(doc_type=DocType.CLINICAL_WORKBOOK, facts=ctx.facts, identifiers=ctx.identifiers,
                            warnings=ctx.warnings, engine=ENGINE)


# ---------------------------------------------------------------------------- tables


def _row_cells(section: Section) -> list[dict]:
    return section.meta["cells"] if section.section_type == "row" else [section.meta | {"text": section.text}]


def _rows_of(secs: list[Section]) -> list[Section]:
    """One section per non-empty row: the row span, or the lone cell."""
    return [s for s in secs if s.section_type == "row" or s.meta.get("only_cell_in_row")]


def _report_unread_sheets(ctx: _Ctx, by_sheet: dict[str, list[Section]]) -> None:
    """Name every sheet with content of which nothing was read: no fact and no patient
    detail cites it, and no warning already says why."""
    used = {c.citation.page_or_section.rsplit("!", 1)[0] for c in ctx.identifiers if c.citation}
    used |= {f.citation.page_or_section.rsplit("!", 1)[0] for f in ctx.facts}
    said = " ".join(w.message for w in ctx.warnings)
    for sheet, secs in by_sheet.items():
        if sheet in used or f"{sheet}!" in said:
            continue
        cells = sum(s.section_type == "cell" for s in secs)
        ctx.warnings.append(ExtractionWarning(
            code="xlsx_sheet_not_read",
            message=f"Sheet {sheet!r} was not read: none of its {cells} filled cell(s) could be made sense of as "
                    f"lab results, medications, vital signs or patient details. Check it by eye.",
        ))


# A run of this many rows of two or more cells that nothing cites is content the reader
# could not place (a table of problems, of appointments), not a lone table header.
MIN_UNREAD_RUN = 2


def _report_unread_rows(ctx: _Ctx, by_sheet: dict[str, list[Section]], accounted: dict[str, set[int]]) -> None:
    """In a sheet of which something was read, name the runs of rows nothing was read
    from: a problem list on the sheet that carries the patient's details once went
    unread without a word. ``accounted`` holds the rows that need no word: a table's
    header and its row of units (read, as what its values are) and rows whose cells a
    table's reader already reported."""
    cited: dict[str, set[int]] = {}
    for section in ctx.cited:  # a row's span or one of its cells
        cited.setdefault(section.meta["sheet"], set()).add(section.meta["row"])
    for sheet, secs in by_sheet.items():
        if sheet not in cited:
            continue  # a sheet nothing was read from is named whole (_report_unread_sheets)
        # Two different texts at least: a merged title repeats one text in every cell.
        # A row printing another identifier of the patient ("NHS number") is the identity
        # sweep's to read and show.
        rows = sorted(s.meta["row"] for s in secs if s.section_type == "row"
                      and len({c["text"] for c in s.meta["cells"]}) >= 2 and s.meta["row"] not in cited[sheet]
                      and s.meta["row"] not in accounted.get(sheet, ())
                      and not names_other_identifier(str(s.meta["cells"][0]["text"])))
        runs: list[list[int]] = []
        for r in rows:
            if runs and r == runs[-1][-1] + 1:
                runs[-1].append(r)
            else:
                runs.append([r])
        for run in (r for r in runs if len(r) >= MIN_UNREAD_RUN):
            ctx.warnings.append(ExtractionWarning(
                code="xlsx_rows_not_read",
                message=f"Sheet {sheet!r}, rows {run[0]}-{run[-1]}: {len(run)} rows were not read as lab results, "
                        f"medications, allergies, vital signs or patient details. Check them by eye."))


def _find_tables(ctx: _Ctx, sheet: str, secs: list[Section], day_first: bool | None = None) -> list[_Table]:
    tables: list[_Table] = []
    for s in _rows_of(secs):
        cells = _row_cells(s)
        if len(cells) < 2:
            continue
        dated = dated_header(cells, day_first)
        if dated is not None:
            tables.append(_Table("dated", s.meta["row"], {}, dated=dated))
            continue
        allergies = allergy_header(cells)
        if allergies is not None:
            tables.append(_Table("allergy", s.meta["row"], allergies))
            continue
        texts = [c["text"] for c in cells]
        header_roles = {column_role(c["text"], LAB_ROLES) for c in cells if c["kind"] == "text"}
        vitals = find_vital_header(cells, s.meta["row"])
        # A column per sign wins unless the row is a lab header (a test column); a row per
        # sign only when it is no lab or medication header.
        if vitals is not None and vitals.layout == "wide" and "test" not in header_roles:
            tables.append(_Table("vitals", s.meta["row"], {}, vitals=vitals,
                                 sheet_date=sheet_date_above(secs, s.meta["row"])[0], wide=_labs_beside(vitals, cells)))
            continue
        # one test column is enough beside a date ("Date | INR | Target range | Warfarin dose")
        wide = read_header([(c["col"], c["text"]) for c in cells]) if not header_roles & {"test", "value"} else None
        if wide is not None:
            tables.append(_Table("wide_lab", s.meta["row"], {}, wide=wide))
            continue
        lab = {}
        med = {}
        for c in cells:
            if c["kind"] != "text":
                continue
            r = column_role(c["text"], LAB_ROLES)
            if r and r not in lab:
                lab[r] = c["col"]
            m = column_role(c["text"], MED_ROLES)
            if m and m not in med:
                med[m] = c["col"]
        is_lab = "test" in lab and "value" in lab and len(lab) >= 3
        is_med = "name" in med and ("dose" in med or "frequency" in med)
        if not (is_lab or is_med):
            if vitals is not None:
                tables.append(_Table("vitals", s.meta["row"], {}, vitals=vitals,
                                     sheet_date=sheet_date_above(secs, s.meta["row"])[0]))
            continue
        if any(TEST_PLAN.search(t) for t in texts):
            ctx.warnings.append(ExtractionWarning(
                code="xlsx_not_patient_results",
                message=f"{s.locator}: the table's headers describe a test plan (test cases, pass/fail), "
                        f"not a patient's results; its rows were not read as results.",
            ))
            continue
        if is_lab and (not is_med or len(lab) >= len(med)):
            value_header = next(c["text"] for c in cells if c["col"] == lab["value"])
            unit = re.search(r"\((.+?)\)", value_header)
            tables.append(_Table("lab", s.meta["row"], lab, unit.group(1) if unit else ""))
        else:
            tables.append(_Table("medication", s.meta["row"], med))
    return tables


def _labs_beside(vitals: VitalTable, cells: list[dict]) -> WideHeader | None:
    """Tests among a column-per-sign table's columns ("Date | Weight | BP | HbA1c"): read
    as results of the row's date. The vitals reader keeps reporting the columns that
    name neither a sign nor a test; those the tests take are no longer its to report."""
    if not vitals.unknown:
        return None
    date_col = vitals.columns.get("date")
    labs = read_header([(c["col"], c["text"]) for c in cells if c["col"] in vitals.unknown or c["col"] == date_col])
    if labs is None:
        return None
    labs.unknown = {}
    for col in [*labs.analytes, labs.date_col]:
        vitals.unknown.pop(col, None)
    return labs


def _table_for(row: int, tables: list[_Table]) -> _Table | None:
    current = None
    for t in tables:
        if t.header_row < row:
            current = t
    return current


# ---------------------------------------------------------------------------- identity


def _identity_block(ctx: _Ctx, secs: list[Section], tables: list[_Table], day_first: bool | None = None) -> str | None:
    """Label/value cells above the first table (or anywhere on a sheet without one).

    Only short rows count (at most two label/value pairs), so a data dictionary whose first
    column says "Patient" is not mistaken for a patient header block. Returns a sheet-level
    collection date when one is given ("Collected: 2024-03-12").
    """
    first_table = min((t.header_row for t in tables), default=None)
    cells_by_row: dict[int, list[Section]] = {}
    for s in secs:
        if s.section_type == "cell" and (first_table is None or s.meta["row"] < first_table):
            cells_by_row.setdefault(s.meta["row"], []).append(s)
    collected = None
    parts: dict[str, tuple[str, Section]] = {}
    for row, cells in sorted(cells_by_row.items()):
        cells.sort(key=lambda s: s.meta["col"])
        kinds = [id_kind(c.text) if c.meta["kind"] == "text" else None for c in cells]
        labels = [k is not None for k in kinds]
        # A label/value block: "Label:" cells, a bare two-cell row, or label|value|label|value.
        pairs_ok = len(cells) == 2 or (len(cells) == 4 and labels[0] and labels[2])
        for i, cell in enumerate(cells):
            text = cell.text.strip()
            inline = re.match(r"^([A-Za-z .'#]{2,30}?)\s*:\s*(\S.*)$", text)
            if inline and id_kind(inline.group(1)):
                kind, value_cell, value = id_kind(inline.group(1)), cell, inline.group(2).strip()
            elif len(cells) == 1 and cell.meta["kind"] == "text" and (titled := labelled_identity(text)):
                # A title cell printing them among other words ("Anticoagulation clinic -
                # Margaret Hargreaves - MRN K1183307 - DOB 14/03/1951"): its birth date and
                # number; a name without its label is not guessed.
                for meaning, _, value in titled:
                    _identifier(ctx, "dob" if meaning == "dob" else "mrn", value, cell, day_first)
                continue
            elif (labels[i] and i + 1 < len(cells) and cell.meta["kind"] == "text"
                  and (text.endswith(":") or pairs_ok) and i % 2 == 0):
                kind, value_cell = kinds[i], cells[i + 1]
                value = value_cell.text.strip()
            else:
                continue
            if NULL_VALUE.match(value):
                continue
            if kind in ("first_name", "middle_name", "last_name"):
                parts.setdefault(kind, (value, value_cell))  # a name written in parts
                continue
            if kind == "collected":
                collected = value_cell.meta.get("iso") or _text_date(value, day_first)[0]
                continue
            _identifier(ctx, kind, value, value_cell, day_first)
    if "first_name" in parts and "last_name" in parts:
        (last, last_cell), (first, _) = parts["last_name"], parts["first_name"]
        middle = parts["middle_name"][0] if "middle_name" in parts else ""
        name = f"{last}, {first}" + (f" {middle}" if middle else "")
        if _reads_as_name(name):
            # Cited by the surname's cell (a citation holds one cell); the name is both parts.
            _identifier(ctx, "name", name, last_cell)
    return collected


_NAME_PARTICLES = frozenset({"de", "da", "del", "della", "di", "du", "van", "von", "der", "den", "la", "le", "bin",
                             "binti", "al", "el", "ter", "ten", "y", "st"})
MAX_NAME_PART_WORDS = 3


def _reads_as_name(name: str) -> bool:
    """A name put together from its parts reads as a person's name: each part a few
    capitalised words ("FITZWILLIAM-OSEI, Ngozi"), not a data dictionary's description
    ("Family name of the patient, Given name")."""
    last, _, given = name.partition(",")
    words = name.replace(",", " ").split()
    return tr.parse_person_name(name) is not None \
        and len(last.split()) <= MAX_NAME_PART_WORDS and len(given.split()) <= MAX_NAME_PART_WORDS + 1 \
        and all(w[:1].isupper() or w.lower() in _NAME_PARTICLES for w in words)


def _text_date(value: str, day_first: bool | None) -> tuple[str | None, str | None]:
    """A date typed as text in a cell, settled day or month first by the workbook's other
    numeric dates (``dates.settle``): (iso or None, its day-first reading while open)."""
    parsed = parse_date(value)
    if parsed is None or parsed.iso is None:
        return None, None
    found = find_date(value) if parsed.ambiguous else None
    if found is None:
        return parsed.iso, None
    found = settle(found, day_first)
    return found.iso, found.day_first_iso


def _identifier(ctx: _Ctx, kind: str, value: str, cell: Section, day_first: bool | None = None) -> None:
    other = None  # a date of birth's day-first reading when nothing settles it
    if kind == "name":
        if not re.search(r"[A-Za-z]", value) or len(value) > 80 or "_" in value:
            return
        ident_kind, ident_value, quote = IdentifierKind.NAME, V.normalize_ws(value), value
    elif kind == "dob":
        iso = cell.meta.get("iso")
        if iso is None:
            iso, other = _text_date(value, day_first)
            if other is not None:
                ctx.warnings.append(ExtractionWarning(
                    code="xlsx_ambiguous_date",
                    message=f"{cell.locator}: date of birth {value!r} could be read day- or month-first; read as {iso}."))
        if not iso:
            ctx.warnings.append(ExtractionWarning(
                code="xlsx_invalid_dob", message=f"{cell.locator}: {value!r} is not a complete date of birth."))
            return
        ident_kind, ident_value, quote = IdentifierKind.DOB, iso, value
    else:
        m = re.search(r"[A-Za-z0-9][A-Za-z0-9-]*\d[A-Za-z0-9-]*", value)
        if not m:
            return
        ident_kind, ident_value, quote = IdentifierKind.MRN, m.group(0), m.group(0)
    if any(c.kind == ident_kind and c.value == ident_value for c in ctx.identifiers):
        return
    ctx.identifiers.append(IdentityCandidate(
        kind=ident_kind, value=ident_value, citation=ctx.cite(cell, quote, f"patient.{ident_kind.value}"),
        other_reading=other))


# ---------------------------------------------------------------------------- rows


def _rows(ctx: _Ctx, sheet: str, secs: list[Section], tables: list[_Table], sheet_date: str | None,
          has_identity: bool, vitals: VitalRows, day_first: bool | None = None) -> set[int]:
    """Read the sheet's rows into facts; returns the rows read as tables' structure
    (headers, rows of units or ranges under them) and those whose cells a table's
    reader reported as not read."""
    header_rows = {t.header_row for t in tables}
    cell_sections = {c.locator: c for c in secs if c.section_type == "cell"}
    wide = {t.header_row: WideLabRows(sheet, t.wide, t.header_row) for t in tables if t.wide is not None}
    # A specimen other than blood that the sheet's name or a heading row inside a table
    # names ("Urine dipstick", "Urinalysis"): its results are that specimen's, never the
    # blood test of the same name (``analytes.with_specimen``). A heading naming none ends it.
    sheet_specimen = heading_specimen(sheet)[1]
    specimen_of: dict[int, str | None] = {}  # a table's header row -> the specimen of its rows now
    for t in tables:
        if t.wide is not None:
            settle_dates(t.wide, [c.text for c in secs if c.section_type == "cell" and c.meta["row"] > t.header_row
                                  and c.meta["col"] == t.wide.date_col])

    def emit(cell: Section, result: WideCell, date: str | None, problem: str | None, notes: list[str]) -> None:
        column = result.column
        # Only a header says this column is a test's: without any unit, a count under
        # "Iron" or "Magnesium" on a stock sheet would read the same, so a person checks.
        unsure = _no_unit(result.value, result.unit, column.test_name, column.label, "column")
        lab_fact(ctx, cell, result.text, LabReading(
            name=with_specimen(column.test_name, sheet_specimen),
            value=result.value, unit=result.unit, ref=result.reference_range,
            printed_flag=result.printed_flag, collected=date or (sheet_date if problem is None else None),
            date_problem=problem, notes=tuple(notes)), has_identity, unsure)

    dated = {t.header_row: DatedRows(sheet, t.dated, t.header_row) for t in tables if t.dated is not None}
    allergy_rows: dict[int, int] = {}  # an allergy table's header row -> its last row read

    def dated_result(cell_section: Section, row: DatedRow, cell: DatedCell) -> None:
        column = cell.column
        doubts = ((column.open_question,) if column.open_question else ()) + \
            _no_unit(cell.value, cell.unit, row.name, row.label, "row")
        lab_fact(ctx, cell_section, cell.text, LabReading(
            name=with_specimen(row.name, sheet_specimen), value=cell.value, unit=cell.unit, ref=row.reference_range, printed_flag=cell.flag,
            collected=column.iso, date_problem=column.problem), has_identity, doubts)

    for s in _rows_of(secs):
        row = s.meta["row"]
        if row in header_rows or allergy_row(ctx, s, _row_cells(s), has_identity):
            continue
        table = _table_for(row, tables)
        if table is None:
            continue
        if table.kind == "wide_lab":
            wide[table.header_row].row(s, _row_cells(s), cell_sections, emit)
            continue
        by_col = {c["col"]: c for c in _row_cells(s)}
        if table.kind == "allergy":  # an allergen alone on its row is still one; an empty row ends the table
            if row - allergy_rows.setdefault(table.header_row, table.header_row) == 1:
                allergy_rows[table.header_row] = row
                allergy_table_row(ctx, s, by_col, table.columns, has_identity)
            continue
        if len(by_col) < 2:
            if table.kind == "lab" and by_col:
                is_heading, specimen = heading_specimen(next(iter(by_col.values()))["text"])
                if is_heading:
                    specimen_of[table.header_row] = specimen or None
            continue  # a title or a note inside the table area
        if table.kind == "dated":
            dated[table.header_row].row(s, by_col, cell_sections, dated_result, vitals)
            continue
        if table.kind == "vitals":
            if table.wide is not None:
                wide[table.header_row].row(s, _row_cells(s), cell_sections, emit)
            date = table.sheet_date or sheet_date
            if table.vitals.layout == "wide":
                vitals.wide(s, by_col, table.vitals, date)
            else:
                vitals.long(s, by_col, table.vitals.columns, date)
        elif table.kind == "lab":
            # A lab table's row naming a vital sign ("Pulse | 112 | bpm") is a vital sign.
            as_vital = {"sign": table.columns["test"], "value": table.columns["value"],
                        **{r: table.columns[r] for r in ("unit", "date") if r in table.columns}}
            if not vitals.long(s, by_col, as_vital, sheet_date, strict=False):
                _lab_row(ctx, s, table, by_col, sheet_date, has_identity, day_first,
                         specimen_of.get(table.header_row, sheet_specimen))
        else:
            _med_row(ctx, s, table, by_col, has_identity, day_first)
    for reader in [*wide.values(), *dated.values()]:
        reader.finish(ctx)
    return header_rows.union(*(reader.accounted for reader in [*wide.values(), *dated.values()]))


def _no_unit(value: str, unit: str, test_name: str, label: str, where: str) -> tuple[str, ...]:
    """Why a number read as a test's result without any unit goes to a person (a column or
    row whose label alone says it holds that test's results), or nothing."""
    if unit or not V.is_numeric_result(value) or unitless_analyte(test_name):
        return ()
    return (f"no unit printed for {label!r}: check the {where} holds the test's results",)


def _cell(by_col: dict[int, dict], table: _Table, role: str) -> dict | None:
    col = table.columns.get(role)
    return by_col.get(col) if col is not None else None


def _date_of(cell: dict | None, day_first: bool | None = None) -> tuple[str | None, str | None]:
    """(ISO date, problem) from a date cell: real dates, or text in common formats, day
    and month settled as the workbook's other dates (or the clinic's order) settle them."""
    if cell is None:
        return None, None
    if cell.get("iso"):
        return cell["iso"], None
    parsed = parse_date(cell["text"])
    if parsed is None:
        return None, f"date {cell['text']!r} could not be read"
    if parsed.iso is None:
        return None, f"incomplete date {cell['text']!r}"
    if parsed.ambiguous:
        found = find_date(cell["text"])
        four_digit_year = found is not None and re.search(r"\d{4}$", cell["text"][found.start:found.end])
        if four_digit_year and found.day_first_iso is not None and day_first is not None:
            return settle(found, day_first).iso, None  # a two-digit year stays a doubt
        return parsed.iso, f"ambiguous date {cell['text']!r} (read month-first as {parsed.iso})"
    return parsed.iso, None


def _lab_row(ctx: _Ctx, s: Section, table: _Table, by_col: dict[int, dict], sheet_date: str | None,
             has_identity: bool, day_first: bool | None = None, specimen: str | None = None) -> None:
    test, value_cell = _cell(by_col, table, "test"), _cell(by_col, table, "value")
    if test is None or value_cell is None or test["kind"] != "text":
        return
    value = V.normalize_ws(value_cell["text"])
    unit_cell, range_cell, flag_cell, critical_cell, loinc_cell, notes_cell = (
        _cell(by_col, table, r) for r in ("unit", "range", "flag", "critical", "loinc", "notes"))
    notes = V.normalize_ws(notes_cell["text"]) if notes_cell else ""
    unit = V.normalize_ws(unit_cell["text"]) if unit_cell else ""
    if not unit:
        value, unit = V.split_value_unit(value)  # "7.9 %" in one cell
    ref, unit = split_range_unit(V.normalize_ws(range_cell["text"]) if range_cell else "", unit)  # "3.5-5.0 mmol/L"
    coll, date_problem = _date_of(_cell(by_col, table, "date"), day_first)
    if coll is None and date_problem is None:
        coll = sheet_date
    lab_fact(ctx, s, value_cell["text"], LabReading(
        name=with_specimen(V.normalize_ws(test["text"]), specimen), value=value, unit=unit or table.header_units, ref=ref,
        printed_flag=V.normalize_ws(flag_cell["text"]) if flag_cell else "",
        critical=critical_cell["text"] if critical_cell else "",
        loinc=V.normalize_ws(loinc_cell["text"]) if loinc_cell else "",
        collected=coll, date_problem=date_problem, notes=(notes,) if notes else ()), has_identity)


@dataclass(slots=True)
class LabReading:
    """One result as a table prints it, before the rules judge it."""

    name: str
    value: str
    unit: str
    ref: str = ""
    printed_flag: str = ""
    critical: str = ""  # printed critical limits
    loinc: str = ""
    collected: str | None = None
    date_problem: str | None = None
    notes: tuple[str, ...] = ()  # the lab's comments on this result (its row's)


def lab_fact(ctx: _Ctx, s: Section, quote: str, r: LabReading, has_identity: bool,
             extra_reasons: tuple[str, ...] = ()) -> None:
    """A ``lab_result`` fact cited by ``s`` and ``quote``, with every doubt the rules find."""
    name, value, unit, ref, coll = r.name, r.value, r.unit, r.ref, r.collected
    factors: list[float] = [0.8] * len(extra_reasons)
    reasons: list[str] = list(extra_reasons)
    reading = resolve_flag([r.printed_flag], value, ref, critical_column=r.critical)
    flag, derived_flag = reading.flag, reading.derived
    for reason, factor in reading.doubts():
        factors.append(factor)
        reasons.append(reason)
    if r.date_problem:
        if r.date_problem.startswith("ambiguous"):
            factors.append(0.9)
        else:
            factors.append(0.8)
            reasons.append(r.date_problem)
    if not V.is_numeric_result(value):
        factors.append(0.95)
    elif not unit and not unitless_analyte(name, r.loinc or None):
        factors.append(0.9)  # INR, pH, specific gravity and ratios have no unit to miss
    loinc = r.loinc if loinc_code_ok(r.loinc) else ""
    implausible = usual_units_problem(name, unit, loinc or None)
    if implausible:
        factors.append(0.7)
        reasons.append(implausible)
    cue = hedge_cue(f"{name} {value}")
    if cue:
        factors.append(0.7)
        reasons.append(f"uncertain wording ({cue!r})")
    for doubt in comment_doubts(name, own=r.notes, loinc=loinc or None, unit=unit):
        factors.append(0.7)
        reasons.append(doubt)
    if not has_identity:
        factors.append(0.7)
        reasons.append("the workbook does not identify the patient")
    if coll is None:
        factors.append(0.95)
    lab = LabResultValue(test_name=name, value=value, unit=unit, reference_range=ref, collection_date=coll,
                         abnormal_flag=flag, flag_derived=derived_flag).model_dump()
    if r.printed_flag:
        lab["flags_as_printed"] = [r.printed_flag]
    if reading.critical_range:
        lab["critical_range"] = reading.critical_range
    if loinc:
        lab["loinc"] = loinc
    if r.notes:
        lab["notes"] = list(r.notes)
    path = ctx.path("results")
    text = f"{name}: {value}" + (f" {unit}" if unit else "") + (f" (ref {ref})" if ref else "") + (
        f" [{flag.replace('_', ' ')}]" if flag not in ("unknown", "normal") else "") + (
        f" collected {coll}" if coll else "")
    ctx.facts.append(FactProposal(
        fact_type="lab_result", fact_text=text, structured_value=lab,
        citation=ctx.cite(s, quote, path), confidence=V.confidence(0.92, factors),
        wants_review=bool(reasons), review_reason="; ".join(reasons) or None,
    ))


def _med_row(ctx: _Ctx, s: Section, table: _Table, by_col: dict[int, dict], has_identity: bool,
             day_first: bool | None = None) -> None:
    name_cell = _cell(by_col, table, "name")
    if name_cell is None or name_cell["kind"] != "text":
        return
    parts = {role: V.normalize_ws(c["text"]) for role in ("dose", "frequency", "route", "status")
             if (c := _cell(by_col, table, role)) is not None}
    parsed = parse_medication(name_cell["text"])
    name = parsed["name"]
    dose = parts.get("dose") or parsed["dose"]
    frequency = parts.get("frequency") or parsed["frequency"]
    prn = _cell(by_col, table, "prn")
    if prn is not None and (is_yes_answer(prn["text"]) or says_as_needed(prn["text"])) \
            and not says_as_needed(frequency):
        # "PRN? | Yes": taken only when needed, which a frequency alone would not say
        frequency = f"{frequency} when needed" if frequency else "when needed"
    if not dose and frequency:
        dose = parse_medication(frequency)["dose"]
    start, date_problem = _date_of(_cell(by_col, table, "start"), day_first)
    status = parts.get("status") or None
    if status is None:
        # "Notes: stopped 03/2026 (rash)"; and a column no role names ("Duration | withheld
        # until review") may say it too: read as notes are, the notes column first.
        notes_col = table.columns.get("notes")
        others = [c["text"] for col, c in sorted(by_col.items(), key=lambda kv: (kv[0] != notes_col, kv[0]))
                  if (col == notes_col or col not in table.columns.values()) and c["kind"] == "text"]
        status = status_in_note(" ; ".join(others)) if others else None
    factors: list[float] = []
    reasons: list[str] = []
    stop_cell = _cell(by_col, table, "stop")
    stop, stop_problem = _date_of(stop_cell, day_first)
    stopped = stop_cell is not None and not NULL_VALUE.match(stop_cell["text"]) and V.normalize_ws(stop_cell["text"])
    if stopped:
        # A stop printed in its own column goes into the status the medication policy reads.
        before = status
        status, doubt = status_with_stop(status, stop or V.normalize_ws(stop_cell["text"]),
                                         datetime.date.today().isoformat())
        if doubt:
            reasons.append(doubt)
        elif status != before and stop_problem:
            reasons.append(stop_problem)
    structured = {"name": name, "dose": dose or None, "frequency": frequency or None,
                  "route": parts.get("route") or parsed["route"], "start_date": start,
                  "status": status}
    if stop is not None:
        structured["stop_date"] = stop
    if not dose:
        factors.append(0.8)
        reasons.append("dose not stated")
    if not frequency:
        factors.append(0.9)
    cue = hedge_cue(" ".join(c["text"] for c in by_col.values()))
    if cue:
        factors.append(0.6)
        reasons.append(f"uncertain wording ({cue!r})")
    if date_problem and not date_problem.startswith("ambiguous"):
        factors.append(0.9)
    if not has_identity:
        factors.append(0.7)
        reasons.append("the workbook does not identify the patient")
    path = ctx.path("medications")
    summary = " ".join(v for v in (name, dose, structured["route"], frequency) if v) + (
        f" ({status})" if stopped and status else "")
    ctx.facts.append(FactProposal(
        fact_type="medication", fact_text=f"Medication: {summary}", structured_value=structured,
        citation=ctx.cite(s, name_cell["text"], path), confidence=V.confidence(0.9, factors),
        wants_review=bool(reasons), review_reason="; ".join(reasons) or None,
    ))
