"""Lab report extractor (doc_type ``lab_pdf``): rows of words -> cited lab results.

General rules, no templates:
- a results table starts at a header row recognised by its column labels or dates
  (``extract.lab.table``: side-by-side panels, one column per collection date,
  labels stacked over two rows, a unit or dates on a second header row); its layout
  stays in force (also across pages) until another header replaces it. A row's words
  are split between panels by x; each dated cell is a result with its own date and
  box; results are reported panel by panel;
- a flag key the page prints ("▲ high ▼ low ‼ critical") is read first and
  overrides the default flag vocabulary for the document; a sign it does not explain
  is still read as a printed flag, so the flag rule sends the result to review;
- a sentence printed under a table (one run of words across its column starts) is
  running text, and a table row no cell rule read is offered to the prose rule;
- a result written out with labelled parts ("Result: 6.2 mmol/L  Reference: 3.5 - 5.3
  mmol/L"), on its test's row or under its name on the rows below, is read as a whole
  line once the labels are left out (``extract.lab.rows.labelled_result``);
- a dotted line "WBC ....... 11.8 x10E3/uL (3.4-10.8) H" is a result anywhere (the
  leader may be dashes, underscores or other debris); outside a table, so is one whose
  leader OCR read as junk words ("WBC eos wae 11.8 ...") or lost altogether ("WBC 11.8
  x10E3/uL (3.4-10.8) H", read whole, an unknown test name sent to review), and a line
  of a known test whose value OCR garbled is kept, unread, for review;
- outside a table, results stated in running text ("... HDL cholesterol 22, LDL
  cholesterol 107.") are cited review items, never chart values (``extract.lab.prose``);
- panel headings, comments, page headers/footers and label rows are not results;
- patient name / DOB / MRN and the collection date come from labelled fields.
The row rules live in ``extract.lab.rows``; this module walks the pages, reads the
fields and turns each result into a cited fact.
Works on any ``NormalizedContent`` with pages (PDF text layer or OCR words).
OCR words carry a confidence, and a row read from them is held to more: a value
read with low confidence, a number OCR put letters in, a range it could not read
or words it could not place send the result to review with the reason; nothing
misread is ever corrected into a value (see ``_ocr_doubts``).
"""

from __future__ import annotations

import re

from domain.content import NormalizedContent, Word
from domain.models import (
    Citation, DocType, ExtractionResult, ExtractionWarning, FactProposal, IdentifierKind,
    IdentityCandidate, LabResultValue,
)
from domain.policy.facts.chart_row_checks import VALUE_PROBLEM
from domain.policy.facts.citations import quote_from_words
from domain.policy.facts.analytes import canonical_analyte, heading_specimen, with_specimen
from domain.policy.facts.lab_vocabulary import susceptibility_words
from domain.policy.facts.result_comments import comment_doubts, doubt_cue
from domain.policy.facts.ocr_readings import lookalike_known_name, ocr_name_reading, ocr_unit_reading
from extract.values import text_rules as tr
from extract.values import numbers as V
from extract.values.dates import DateMatch, document_date_order, find_date, numeric_date_order, settle
from extract.values.flags import FlagKey, FlagReading, derive_flag, fared_flag, read_flag_key, resolve_flag
from extract.values.ranges import printed_as_range
from extract.lab.flowsheet import Flowsheet, detect_flowsheet, flowsheet_results
from extract.lab.microbiology import MicroResult, micro_results
from extract.lab.prose import ProseResult, prose_results
from extract.lab.rows import (
    RowResult, dotted_result, has_result_label, is_comment, is_name_alone, is_note, labelled_result, line_result,
    ocr_leader_result, repeated_edge_rows, stacked_parts, table_results, unreadable_dotted, without_page_number,
)
from extract.lab.table import TableLayout, assign_columns, crosses_columns, detect_tables, extend_header, stacked_header
from extract.layout import (
    OCR_TRUSTED_CONF, LabelledValue, PhraseBook, Row, labelled_values, norm_token, page_rows, segments,
)
from extract.values.identity_labels import phrase_table, site_coded_number

SOURCE_TYPE = DocType.LAB_PDF.value

# Identity and collection labels by meaning, from the one vocabulary every reader uses.
# Other identifiers (account, visit, NHS...) and name parts are field rows the lab
# does not compare; labels that are *not* identity or collection fields ("other") are
# listed so that their values are never mistaken for one ("Ordering Physician: ...").
class _FieldLabels(PhraseBook):
    """A name label followed by a number is no name label: "PT: 13.2 s" is prothrombin
    time, "Pt: SURNAME, Given" the patient."""

    def match_at(self, words, start):
        hit = super().match_at(words, start)
        if hit is not None and hit.key in ("name", *NAME_PARTS) and hit.end < len(words) \
                and words[hit.end].text[:1].isdigit():
            return None
        return hit

    def vouches(self, hit, after):
        """"Born 06/21/1958", "MRN AW-481530", "Drawn 11/02/2026": a bare label is
        trusted when a date follows a date label, or a record-number-shaped word (letters
        or digits with at least three digits, not a date or a decimal) an identifier label."""
        if not after:
            return False
        if hit.key in ("dob", "collected"):
            found = find_date(" ".join(w.text for w in after[:4]))
            return found is not None and found.start == 0
        if hit.key in ("mrn", "other_id"):
            text = after[0].text.strip(" ,;")
            decimal = V.parse_number(text) is not None and any(c in text for c in ".,")
            return sum(c.isdigit() for c in text) >= 3 and find_date(text) is None and not decimal
        return False


NAME_PARTS = ("first_name", "last_name", "middle_name")

FIELD_LABELS = _FieldLabels(phrase_table(
    {"name": "name", "first_name": "first_name", "last_name": "last_name", "middle_name": "middle_name",
     "dob": "dob", "record_number": "mrn", "other_identifier": "other_id", "collected": "collected",
     "not_identity": "other"},
    fold=lambda phrase: tuple(t for t in map(norm_token, phrase.split()) if t),
))

# Confidence weights: what was matched, how cleanly (see _confidence).
W_BASE, W_VALUE, W_UNIT, W_RANGE, W_DATE, W_FLAG, W_ALIGN = 0.40, 0.20, 0.10, 0.10, 0.08, 0.06, 0.06


def extract_lab(content: NormalizedContent, source_id: str) -> ExtractionResult:
    """Every lab result on every page, with identifiers and a collection date."""
    rows_by_page = [page_rows(p) for p in content.pages if p.words]
    all_rows = [r for rows in rows_by_page for r in rows]
    fields = labelled_values(all_rows, FIELD_LABELS)
    field_rows = {id(f.row) for f in fields if f.key != "other" or f.label[-1].text.endswith(":")}
    # Rows that print "Result:": results written out with labelled parts, never field or label rows.
    labelled_rows = {id(r) for r in all_rows if has_result_label(r.words)}
    field_rows -= labelled_rows
    boilerplate = repeated_edge_rows(rows_by_page)
    key, key_rows = _flag_key(all_rows)

    results: list[RowResult] = []
    order: dict[int, tuple[int, int, int]] = {}  # id(result) -> (table, panel, position): panel by panel
    running_text: list[tuple[Row, list[Word]]] = []  # rows outside tables no row rule read
    tables: list[TableLayout] = []
    flag_column = False  # some table of the report has a flag column
    header: Row | None = None
    flow: Flowsheet | None = None  # a table with a column per test and a row per date
    headings: list[tuple[int, Row, str | None]] = []  # (group, row, specimen it names) of rows read as headings
    group = 0
    for rows in rows_by_page:
        group += 1
        skip = -1
        for n, row in enumerate(rows):
            if id(row) in key_rows or n <= skip:
                continue
            if flow is not None and same_page_size(flow.layout.page_width, row.page.width):
                read = flowsheet_results(flow, row, without_page_number(row.words), key)
                if read is not None:
                    for r in read:
                        order[id(r)] = (group, 0, len(results))
                        results.append(r)
                    continue
            flow = None
            if header is not None and row.index == header.index + 1 and extend_header(tables, row, header):
                header = row if row.page is header.page else header
                continue  # the second row of a two-row header (units, dates, "Range" under "Reference")
            found_tables = detect_tables(row)
            if (not found_tables and n + 1 < len(rows) and not detect_tables(rows[n + 1])
                    and (stacked := stacked_header(row, rows[n + 1]))):
                found_tables = detect_tables(stacked)  # labels over two rows: "Unit of" / "Measure"
                if found_tables:
                    skip, row = n + 1, rows[n + 1]
            if found_tables:  # checked first: a repeated table header is still a header
                tables, header, group = found_tables, row, group + 1
                flag_column = flag_column or any(t.has("flag") for t in tables)
                continue
            if (flow := detect_flowsheet(row)) is not None:
                tables, header, group = [], None, group + 1
                continue
            if id(row) in boilerplate or id(row) in field_rows:
                continue
            words = without_page_number(row.words)
            if not words:
                continue
            in_table = bool(tables) and same_page_size(tables[0].page_width, row.page.width)
            if in_table and crosses_columns(words, tables[0] if len(tables) == 1 else _spanning(tables)):
                running_text.append((row, words))  # a sentence under the table, not a row of it
                continue
            if is_note(_without_flag_cells(words, tables) if in_table else words) and id(row) not in labelled_rows:
                _heading(headings, group, row, words)
                if not in_table and not is_comment(words):
                    running_text.append((row, words))  # "Labs: LDL 107, HDL 22" is prose
                continue
            if in_table:
                # Cells first: a "---" in a dated column marks a date without a result, not a leader.
                read = []
                for k, t in enumerate(tables):
                    for r in table_results(row, [w for w in words if t.holds(w)], t, key):
                        order[id(r)] = (group, k, len(results) + len(read))
                        read.append(r)
                if not read and (found := dotted_result(row, words, key)) is not None:
                    order[id(found)] = (group, 0, len(results))
                    read = [found]
                results.extend(read)
                if not read and n and results and _wrapped_name(results[-1], rows[n - 1], words, tables):
                    _join_name(results[-1], words)  # "Gamma-glutamyl" over "transferase (GGT)"
                    continue
                if not read:
                    _heading(headings, group, row, words)
                    running_text.append((row, words))  # no cell read: prose may still state a result
                continue
            found = dotted_result(row, words, key)
            if found is not None:
                order[id(found)] = (group, 0, len(results))
                results.append(found)
                continue
            # The test's name alone, its labelled parts on the next row ("POTASSIUM" over
            # "Result: 6.2 mmol/L  Reference: 3.5 - 5.3 mmol/L  ** HIGH **").
            below, used, between = stacked_parts(rows, n)
            if (below and is_name_alone(words)
                    and (found := labelled_result(row, below, key, name_words=words, between=between)) is not None):
                order[id(found)] = (group, 0, len(results))
                results.append(found)
                skip = n + used
                continue
            # No table here: a line whose parts are labelled ("Result: ...  Reference: ..."),
            # whose words between name and value are labels, never a leader; else a dotted
            # line whose dots OCR read as junk, or a line "WBC 11.8 x10E3/uL (3.4-10.8) H"
            # whose leader was lost altogether.
            if id(row) in labelled_rows:
                found = labelled_result(row, words, key)
            else:
                found = (ocr_leader_result(row, words, key) or line_result(row, words, key)
                         or unreadable_dotted(row, words))
            if found is not None:
                order[id(found)] = (group, 0, len(results))
                results.append(found)
            else:
                _heading(headings, group, row, words)
                running_text.append((row, words))

    # Side-by-side panels are read row by row; their results are reported panel by panel.
    results.sort(key=lambda r: order[id(r)])
    comments = _report_comments(rows_by_page, results, field_rows | boilerplate | key_rows)
    # The report's labelled dates (born, collected, reported...) say which way it prints
    # day and month: 22/07/1953 settles 03/12/2026 as 3 December.
    # A cumulative report's date columns count too: "19/11/26" beside "12/11/26" settles both.
    printed = [f.value_text for f in fields] + [r.column_date for r in results if r.column_date]
    day_first = document_date_order(printed)
    both_orders = _both_orders(printed)
    dates = _collection_dates(fields, day_first, both_orders)
    result = ExtractionResult(doc_type=DocType.LAB_PDF, engine=f"lab-rules+{content.engine or content.source_kind}")
    result.identifiers = _identifiers(fields, source_id, day_first)
    # A flag column, or a flag printed beside any result, says this report prints flags.
    flags_printed = flag_column or any(r.flag_text or r.reading.inline_flag for r in results)
    for i, r in enumerate(results):
        page = r.row.page.number
        if r.column_date and (m := find_date(r.column_date)):
            date, date_doubt = _report_date(m, r.column_date, "column date", day_first, both_orders)
        else:
            date, date_doubt = dates.get(page, dates.get(0, (None, None)))
        result.facts.append(_fact(r, i, date, source_id, key, flags_printed=flags_printed, date_doubt=date_doubt,
                                  specimen=_specimen_over(r, order[id(r)][0], headings),
                                  comments=comments, own=_own_words(r, results)))
    for i, mention in enumerate(prose_results(running_text)):
        result.facts.append(_prose_fact(mention, i, source_id))
    read_rows = {id(r.row) for r in results} | boilerplate | key_rows
    for i, m in enumerate(micro_results(rows_by_page, read_rows)):
        date, date_doubt = dates.get(m.page.number, dates.get(0, (None, None)))
        result.facts.append(_micro_fact(m, i, source_id, date, date_doubt))
    result.warnings = [ExtractionWarning(code=w.code, message=w.message, page=w.page) for w in content.warnings]
    if not result.facts:
        result.warnings.append(ExtractionWarning(code="no_results_found", message="No lab result rows were recognised."))
    elif not dates and not all(r.column_date for r in results):
        unread = next((f for f in fields if f.key == "collected" and f.value), None)
        message = (f"The collection date printed as {unread.value_text.strip()!r} could not be read as a date."
                   if unread is not None else "No collection date label was found.")
        result.warnings.append(ExtractionWarning(code="no_collection_date", message=message))
    return result


def _heading(headings: list[tuple[int, Row, str | None]], group: int, row: Row, words: list[Word]) -> None:
    """Note a row that read as no result when it is a panel heading, with the specimen
    it names other than blood (``analytes.heading_specimen``). A heading set across two
    panels names the specimen of neither (it only ends the one above)."""
    is_heading, specimen = heading_specimen(" ".join(w.text for w in words))
    if is_heading:
        headings.append((group, row, specimen if len(segments(words)) == 1 else None))


def _specimen_over(r: RowResult, group: int, headings: list[tuple[int, Row, str | None]]) -> str | None:
    """The specimen the last heading above a result names, within its table (a new
    table's header ends a heading's reach, as does the next heading)."""
    above = [(row.index, specimen) for g, row, specimen in headings
             if g == group and row.page is r.row.page and row.index < r.row.index]
    return max(above)[1] if above else None


def _wrapped_name(last: RowResult, above: Row, words: list[Word], tables: list[TableLayout]) -> bool:
    """Whether a row is the rest of the test name above it, wrapped within the test
    column ("Gamma-glutamyl" over "transferase (GGT)"): right under the row of the last
    result (one result on it, not a cumulative row), every word in that table's test
    column, opening in lower case or with a bracket, and no digit-only word."""
    if last.row is not above or last.column_date is not None or not words:
        return False
    table = next((t for t in tables if all(t.holds(w) for w in words)), None)
    if table is None or table.cumulative:
        return False
    cells = assign_columns(words, table)
    test_col = [k for k, c in enumerate(table.columns) if c.role == "test"]
    if not test_col or any(ws for k, ws in enumerate(cells.by_column) if k not in test_col):
        return False
    first = words[0].text
    # A name the vocabulary knows whole ("Potassium") takes only a bracket after it ("(K+)"):
    # lower-case words under it are a note ("see comment"), not more of its name.
    if not (first[:1] == "(" or (first[:1].islower() and canonical_analyte(last.test_name) is None)):
        return False
    return not any(w.text.isdigit() for w in words) and words[0].y0 - above.y1 < 0.8 * above.height


def _join_name(last: RowResult, words: list[Word]) -> None:
    """The wrapped rest of the name joins the test's name, and the quote runs on from the
    name's first word through the rows' last word (a run of the page's words)."""
    row_words = without_page_number(last.row.words)
    start = next((k for k, w in enumerate(row_words) if w is last.words[0]), 0)
    last.test_name = f"{last.test_name} {' '.join(w.text for w in words)}"
    last.words = row_words[start:] + words


# --------------------------------------------------------------------------- fields


def _collection_dates(fields: list[LabelledValue], day_first: bool | None,
                      both_orders: bool) -> dict[int, tuple[str, str | None]]:
    """(collection date, why it is in doubt or None) per page number; key 0 holds the
    document's first one."""
    dates: dict[int, tuple[str, str | None]] = {}
    for f in fields:
        if f.key != "collected":
            continue
        m, printed, doubt = find_date(f.value_text), None, None
        if m is not None:
            printed, doubt = f.value_text[m.start:m.end], _ocr_date_doubt(f, m)
        elif (rejoined := _rejoined_ocr_date(f)) is not None:
            m, printed, doubt = rejoined
        else:
            continue
        found = _report_date(m, printed, "collection date", day_first, both_orders)
        if found[1] is None and doubt:
            found = (found[0], doubt)
        dates.setdefault(f.row.page.number, found)
        dates.setdefault(0, found)
    return dates


# A space OCR put inside a date's number ("30/1 1/2026" for "30/11/2026"): between two
# digits, each next to a date separator or the date's start.
_SPLIT_DATE_DIGITS = re.compile(r"(?:(?<=[/.\-]\d)|(?<=^\d)) (?=\d[/.\-])")


def _rejoined_ocr_date(f: LabelledValue) -> tuple[DateMatch, str, str] | None:
    """A collection date OCR split with a space: (the date read with the space taken out,
    as printed, why a person must check it); None when the value is no OCR reading or is
    no date even so. Never charted on this reading alone."""
    if not any(w.conf is not None for w in f.value):
        return None
    printed = f.value_text.strip()
    joined = _SPLIT_DATE_DIGITS.sub("", printed)
    m = find_date(joined) if joined != printed else None
    if m is None or m.start > 0:
        return None
    read_as = printed[:m.end + len(printed) - len(joined)]
    return m, joined[:m.end], (f"the collection date was read by OCR as {read_as!r}, taken as "
                               f"{joined[:m.end]!r}: check the date on the page")


# Marks OCR makes of a rule or of a digit it split off ("| 1/27/2026" where "11/27/2026" was printed).
_STRAY_MARKS = frozenset("|!lI1[](){}/\\")


def _ocr_date_doubt(f: LabelledValue, m: DateMatch) -> str | None:
    """Why a collection date OCR read may be wrong, or None: its words were read below the
    readers' trust line, or a stray mark stands right before it, where a digit may have
    been split off (a fax read "11/27/2026" as "| 1/27/2026", both sure). Every result
    dated by it then goes to a person, whose page shows the date."""
    if not any(w.conf is not None for w in f.value):
        return None  # a text layer: the date is as printed
    # The words the date is made of (not a time or a note printed after it).
    confs = [w.conf for w in f.value_words_at(m.start, m.end) if w.conf is not None]
    printed = f.value_text[m.start:m.end]
    before = f.value_text[:m.start].replace(" ", "")
    if before and set(before) <= _STRAY_MARKS:
        return (f"the collection date was read by OCR as {printed!r} right after a stray mark {before!r}: a digit "
                "of it may be lost; check the date on the page")
    if confs and min(confs) < OCR_TRUSTED_CONF:
        return f"the collection date {printed!r} was read by OCR with low confidence ({min(confs):.2f})"
    return None


def _report_date(m: DateMatch, printed: str, what: str, day_first: bool | None,
                 both_orders: bool) -> tuple[str, str | None]:
    """A date the report prints, read as it prints its dates (``dates.settle``: no
    evidence, month first, the clinic's order), and why it is in doubt or None: open on
    a report that prints dates both ways, neither reading is sure."""
    m = settle(m, day_first)
    if m.day_first_iso and both_orders:
        return m.iso, (f"the {what} {printed!r} may be {m.iso} or {m.day_first_iso} "
                       "(this report prints dates day first and month first)")
    return m.iso, None


def _both_orders(texts: list[str]) -> bool:
    """Dates that can only be read day first and others only month first, side by side."""
    return any(numeric_date_order([t]) is True for t in texts) and any(numeric_date_order([t]) is False for t in texts)


def _identifiers(fields: list[LabelledValue], source_id: str, day_first: bool | None = None) -> list[IdentityCandidate]:
    out: list[IdentityCandidate] = []
    seen: set[tuple[str, str]] = set()
    for f in fields:
        if f.key not in ("name", "dob", "mrn") or not f.value:
            continue
        value_words = f.value
        quoted = f.label  # the label and whatever the page prints between it and the value
        ocr = any(w.conf is not None for w in f.value)
        other = None  # a date of birth's day-first reading when nothing settles it
        if f.key == "name":
            if tr.parse_person_name(f.value_text, ocr=ocr) is None:
                continue
            value = " ".join(f.value_text.split())
        elif f.key == "dob":
            iso = find_date(f.value_text)
            if iso is None or iso.start > 0:
                continue
            iso = settle(iso, day_first)
            value, other = iso.iso, iso.day_first_iso
        else:
            number = _without_repeated_label(f.value)
            quoted = f.label + f.value[:len(f.value) - len(number)]
            value_words = _record_number_words(number)
            value = "".join(w.text for w in value_words).strip(" ,;")
            if not any(c.isdigit() for c in value):
                continue  # no number ("Collected:" under a label whose number is printed after it again)
        kind = IdentifierKind(f.key)
        if (kind.value, value) in seen:
            continue
        seen.add((kind.value, value))
        quote, box = quote_from_words(f.row.page, quoted + value_words)
        out.append(IdentityCandidate(kind=kind, value=value, other_reading=other, citation=Citation(
            source_type=SOURCE_TYPE, source_id=source_id, page_or_section=f"page {f.row.page.number}",
            field_or_chunk_id=f"patient.{kind.value}", quote_or_value=quote, page=f.row.page.number,
            bounding_box=box,
        )))
    if not any(c.kind is IdentifierKind.NAME for c in out) and (whole := _name_from_parts(fields, source_id)):
        out.insert(0, whole)
    return out


def _name_from_parts(fields: list[LabelledValue], source_id: str) -> IdentityCandidate | None:
    """"Surname: ABERNETHY-KOSKI  Given names: Wilhelmina Jo" as one name, "SURNAME, Given",
    when the parts sit side by side on one row (so that one quote cites them); anything
    else stays unread for the identity sweep to report, never half a name."""
    for last in (f for f in fields if f.key == "last_name" and f.value):
        row = [f for f in fields if f.row is last.row and f.value]
        first = next((f for f in row if f.key == "first_name"), None)
        if first is None:
            continue
        middle = next((f for f in row if f.key == "middle_name"), None)
        parts = sorted([p for p in (last, first, middle) if p is not None], key=lambda f: f.label[0].x0)
        words = [w for p in parts for w in p.label + p.value]
        if any(all(w is not r for r in last.row.words) for w in words):
            continue  # a value printed under its label: not one line to quote
        between = [w for w in last.row.words if parts[0].label[0].x0 <= w.x0 <= parts[-1].value[-1].x0 and w not in words]
        if between:
            continue  # something else printed among the parts: the quote would not be what the page prints
        value = f"{last.value_text.strip(' ,;')}, {first.value_text.strip(' ,;')}" + (
            f" {middle.value_text.strip(' ,;')}" if middle is not None else "")
        if tr.parse_person_name(value, ocr=any(w.conf is not None for w in words)) is None:
            continue
        page = last.row.page
        quote, box = quote_from_words(page, words)
        return IdentityCandidate(kind=IdentifierKind.NAME, value=" ".join(value.split()), citation=Citation(
            source_type=SOURCE_TYPE, source_id=source_id, page_or_section=f"page {page.number}",
            field_or_chunk_id="patient.name", quote_or_value=quote, page=page.number, bounding_box=box))
    return None


def _without_repeated_label(words: list[Word]) -> list[Word]:
    """A record number's words without a record-number label printed again before it
    ("Medical record no.: MRN 6620915"): the number was read as "MRN", which no chart
    holds, and a matching document was quarantined as another patient's."""
    hit = FIELD_LABELS.match_at(words, 0)
    if hit is not None and hit.key == "mrn" and FIELD_LABELS.vouches(hit, words[hit.end:]):
        return words[hit.end:]
    return words


def _record_number_words(words: list[Word]) -> list[Word]:
    """The words of a printed record number: the first, and the next one too when the
    first ends in a separator ("CR:" "760144": OCR read "CR-760144" as "CR:760144" or
    split it at the hyphen). Separators do not count when MRNs are compared, so the
    two words are one identifier, not a prefix that contradicts the chart. Likewise a
    facility's letter code and the number after it (``site_coded_number``)."""
    out = words[:1]
    if len(words) > 1 and out[0].text[-1:] in ":-/." and any(c.isalnum() for c in out[0].text) \
            and words[1].text[:1].isalnum():
        out = words[:2]
    elif site_coded_number([w.text for w in words[:2]]):
        out = words[:2]  # "RMH 0442917": a facility's code, then the number
    return out


# --------------------------------------------------------------------------- facts


def _own_words(r: RowResult, results: list[RowResult]) -> str:
    """The words a result's row prints besides its test's name, its numbers and units and
    the other results' cells (a comment column, a note after the flag): "haemolysed"
    under K in a flowsheet row is K's cell, not a word about the sodium beside it."""
    others = {id(w) for o in results if o is not r and o.row is r.row for w in o.words}
    words = [w.text for w in r.row.words if id(w) not in others
             and V.parse_number(w.text.strip("()[]<>=")) is None and not V.looks_like_unit(w.text)]
    return " ".join(words).replace(r.test_name, " ").strip()


def _report_comments(rows_by_page: list[list[Row]], results: list[RowResult], skip: set[int]) -> list[str]:
    """The report's lines, other than results, field and key rows, that say a result may
    not be valid; a line wrapped onto the next (which goes on in lower case) is one. They
    speak for the whole report: a lab prints its comments at the end, on whatever page
    that falls (a fax packet's reports are read part by part)."""
    result_rows = {id(r.row) for r in results}
    found: list[str] = []
    for rows in rows_by_page:
        lines: list[str] = []
        last = -2  # the row the last line came from
        for n, row in enumerate(rows):
            if id(row) in result_rows or id(row) in skip:
                continue
            text = " ".join(w.text for w in row.words)
            if last == n - 1 and text[:1].islower() and not lines[-1].endswith((".", ":", "!")):
                lines[-1] += " " + text
            else:
                lines.append(text)
            last = n
        found += [line for line in lines if doubt_cue(line)]
    return found


def _flag_key(rows: list[Row]) -> tuple[FlagKey, set[int]]:
    """The flag key the document prints ("▲ high  ▼ low  ‼ critical"), read from
    whole rows or their gap-separated pieces, and the rows that print it (not results)."""
    key: dict[str, str] = {}
    key_rows: set[int] = set()
    for row in rows:
        for piece in [row.words, *segments(row.words)]:
            found = read_flag_key(" ".join(w.text for w in piece))
            if found:
                key.update(found)
                key_rows.add(id(row))
                break
    return key, key_rows


def _without_flag_cells(words: list[Word], tables: list[TableLayout]) -> list[Word]:
    """A row's words less those in a flag column: a "*" flag at the far left does not
    make the row a footnote. (All of them when nothing else is left.)"""
    def in_flag_column(w: Word) -> bool:
        return any(t.holds(w) and t.has("flag") and assign_columns([w], t).words("flag") for t in tables)

    return [w for w in words if not in_flag_column(w)] or words


# A table runs on over pages of the same size. A scanned page's size varies by a few
# pixels with its deskew (the canvas grows to keep the corners): a page 2 px wider
# than the one the header was on is the same paper, while letter against A4 is 3%.
SAME_PAGE_WIDTH = 0.01


def same_page_size(width: float, other: float) -> bool:
    return abs(width - other) <= max(1.0, SAME_PAGE_WIDTH * max(width, other))


def _spanning(tables: list[TableLayout]) -> TableLayout:
    """Side-by-side panels as one layout of all their columns (to tell a sentence
    running across them from a row of cells)."""
    return TableLayout([c for t in tables for c in t.columns], tables[0].page_width)


def _flag(r: RowResult, key: FlagKey | None = None) -> FlagReading:
    """The one flag rule (``flags.resolve_flag``): printed flag, else the In/Out of Range
    column the value sits in, else the value against its range; critical limits (their
    own column, or labelled in the range) on top."""
    in_range = {"normal": True, "abnormal": False}.get(r.position_flag or "")
    return resolve_flag([r.flag_text or ""], r.reading.value, r.reading.reference_range,
                        critical_column=r.critical_text, in_range=in_range, key=key)


def _confidence(r: RowResult, has_date: bool, flag: str, derived: bool) -> float:
    """Weighted evidence: value parsed, unit, range, date, flag, column alignment.

    A fully matched printed row scores ~1.0 (capped at 0.99); a bare "test value"
    row without unit, range or date lands near 0.66, below the promotion bar; a row
    whose value could not be read stays under 0.5.
    OCR word confidence, when present, scales the whole score.
    """
    reading = r.reading
    qualitative = V.is_qualitative(reading.value)
    score = W_BASE
    if r.unreadable:  # nothing to promote: whatever else matched, keep it well below the bar
        score = W_BASE / 2
    else:
        score += W_VALUE if reading.leftovers == 0 else W_VALUE * 0.4
    score += W_UNIT if (r.unit_clean or (qualitative and not reading.unit)) else 0.0
    score += W_RANGE if r.range_clean else (W_RANGE * 0.4 if reading.reference_range else 0.0)
    score += W_DATE if has_date else 0.0
    score += W_FLAG if (flag != "unknown" and not derived) else (W_FLAG * 0.6 if derived else 0.0)
    score += W_ALIGN * r.alignment
    leader = {id(w) for w in r.leader}  # junk read in the dots says nothing about the result
    confs = [w.conf for w in r.words if w.conf is not None and id(w) not in leader]
    if confs:
        score *= 0.5 + 0.5 * (sum(confs) / len(confs))
    return round(min(score, 0.99), 3)


_FLAG_WORDS = {"critical_high": "critical high", "critical_low": "critical low", "unknown": ""}


def _fact(r: RowResult, i: int, date: str | None, source_id: str, key: FlagKey | None = None, *,
          flags_printed: bool = False, date_doubt: str | None = None, specimen: str | None = None,
          comments: list[str] | None = None, own: str = "") -> FactProposal:
    page = r.row.page
    quote, box = quote_from_words(page, r.words)
    citation = Citation(
        source_type=SOURCE_TYPE, source_id=source_id, page_or_section=f"page {page.number}",
        field_or_chunk_id=f"results[{i}]", quote_or_value=quote, page=page.number, bounding_box=box,
    )
    reading = r.reading
    unit = reading.unit or reading.range_unit
    unit_doubt = tr.ocr_unit_doubt(unit) if r.ocr else None
    name, name_doubts = r.test_name, []
    if r.ocr:
        unit = tr.repair_ocr_unit(unit)
        name, name_doubts = _vocabulary_reading(r.test_name)
        unit, unit_doubts = _vocabulary_unit(unit, name)
        name_doubts += unit_doubts
    name = with_specimen(name, specimen)  # "Glucose" under "URINALYSIS": the urine's
    if r.unreadable:
        value = LabResultValue(test_name=name, value=reading.value, unit=unit,
                               reference_range=reading.reference_range, collection_date=date)
        reason = "the row looks like a lab result but its value could not be read"
        text = f"{name}: result value unreadable ({reading.value!r})"
        # What the chart is told when a person approves the row as it is: no value to write.
        problem = f"its value could not be read ({reading.value!r})"
        if V.not_resulted(reading.value or ""):
            reason, problem = V.no_result_words(reading.value)
            text = f"{name}: no result ({reading.value})"
        elif printed_as_range(reading.value or ""):
            reason = f"the result is printed as a range ({reading.value}), not as one value: a person reads it"
            text = f"{name}: {reading.value} (printed as a range)"
            problem = f"the result is printed as a range ({reading.value})"
        elif tr.garbled_number(reading.value):
            reason = f"the value {reading.value!r} reads as a number with letters in it (an OCR misread?): not guessed"
        return FactProposal(
            fact_type="lab_result", fact_text=text,
            structured_value={**value.model_dump(), VALUE_PROBLEM: problem}, citation=citation,
            confidence=_confidence(r, date is not None, "unknown", False),
            wants_review=True, review_reason="; ".join([reason, *r.doubts, *name_doubts]),
        )
    reading_flag = _flag(r, key)
    flag, derived = reading_flag.flag, reading_flag.derived
    value = LabResultValue(
        test_name=name, value=reading.value, unit=unit, reference_range=reading.reference_range,
        collection_date=date, abnormal_flag=flag, flag_derived=derived,  # type: ignore[arg-type]
        result_status=r.status,
    ).model_dump()
    if reading_flag.critical_range:
        value["critical_range"] = reading_flag.critical_range
    text = f"{name} {reading.value}" + (f" {unit}" if unit else "")
    if reading.reference_range:
        text += f" (ref {reading.reference_range})"
    flag_word = _FLAG_WORDS.get(flag, flag)
    if flag_word:
        text += f" {flag_word}"
    if date:
        text += f", collected {date}"
    doubts = r.doubts + name_doubts + reading_flag.review_reasons() + (_ocr_doubts(r) if r.ocr else [])
    if (stray := _result_in_name(r.test_name)):
        doubts.append(f"the test name holds what reads as a result ({stray!r}): the columns were not read "
                      "as printed, so the value may belong to another date or column")
    if r.ocr and flags_printed:
        doubts += _lost_flag_doubts(r, flag, derived)
    if unit_doubt:
        doubts.append(unit_doubt)
    if date_doubt:
        doubts.append(date_doubt)
    if r.reading.leftovers:
        # Typed or scanned: an unread word beside a value may be a flag the rules do not know.
        doubts.append(f"{r.reading.leftovers} word(s) beside the value could not be read")
    # "Sample haemolysed - potassium may be falsely raised" in its row or anywhere in the report.
    doubts += comment_doubts(name, own=[own], scope=comments or [], unit=unit)
    return FactProposal(
        fact_type="lab_result", fact_text=text, structured_value=value, citation=citation,
        confidence=_confidence(r, date is not None, flag, derived),
        wants_review=bool(doubts), review_reason="; ".join(doubts) or None,
    )


def _vocabulary_reading(printed: str) -> tuple[str, list[str]]:
    """An OCR'd test name the vocabulary does not know, read as the test it is a letter
    or two from ("Cholestorol Total"), with the reason a person must confirm it; else
    the name as printed. The quote keeps what OCR read."""
    reading = ocr_name_reading(printed)
    if reading is None:
        near = lookalike_known_name(printed)
        if near is not None:
            return printed, [f"test name read by OCR as {printed!r}, close to {near!r}: check the printed name"]
        return printed, []
    return reading, [f"test name read by OCR as {printed!r}, taken as {reading!r}: check the printed name"]


def _vocabulary_unit(unit: str, name: str) -> tuple[str, list[str]]:
    """An OCR'd unit read as the test's own unit it is a letter or two from ("mye/dl" ->
    "mg/dL" for creatinine), with the reason a person must confirm it."""
    reading = ocr_unit_reading(unit, canonical_analyte(name)) if unit else None
    if reading is None:
        return unit, []
    return reading, [f"unit read by OCR as {unit!r}, taken as {reading!r}: check the printed unit"]


# A result stated in a sentence is a lead for a person, never a chart value.
PROSE_CONFIDENCE = 0.5
PROSE_REASON = ("stated in running text, not in a results table: no reference range or collection date "
                "goes with it; check the test, value and unit in the source before it enters the chart")


def _prose_fact(m: ProseResult, i: int, source_id: str) -> FactProposal:
    quote, box = quote_from_words(m.page, m.words)
    citation = Citation(
        source_type=SOURCE_TYPE, source_id=source_id, page_or_section=f"page {m.page.number}",
        field_or_chunk_id=f"text_results[{i}]", quote_or_value=quote, page=m.page.number, bounding_box=box,
    )
    value = LabResultValue(test_name=m.test_name, value=m.value, unit=m.unit).model_dump()
    if m.when:  # "Previous potassium 5.4 mmol/L on 21/11/2026": kept as printed, never a collection date
        value["stated_when"] = m.when
    text = f"{m.test_name} {m.value}" + (f" {m.unit}" if m.unit else "") + (f" ({m.when})" if m.when else "") \
        + " (stated in running text)"
    confs = [w.conf for w in m.words if w.conf is not None]
    confidence = PROSE_CONFIDENCE * ((0.5 + 0.5 * sum(confs) / len(confs)) if confs else 1.0)
    return FactProposal(
        fact_type="lab_result", fact_text=text, structured_value=value, citation=citation,
        confidence=round(confidence, 3), wants_review=True, review_reason=PROSE_REASON,
    )


MICRO_CONFIDENCE = 0.7
MICRO_REASON = ("a microbiology result (a culture's finding or an antibiotic's susceptibility) read from the "
                "report's text: check it against the page")


def _micro_fact(m: MicroResult, i: int, source_id: str, date: str | None, date_doubt: str | None) -> FactProposal:
    quote, box = quote_from_words(m.page, m.words)
    citation = Citation(
        source_type=SOURCE_TYPE, source_id=source_id, page_or_section=f"page {m.page.number}",
        field_or_chunk_id=f"microbiology[{i}]", quote_or_value=quote, page=m.page.number, bounding_box=box,
    )
    value = LabResultValue(test_name=m.test_name, value=m.value, unit=m.unit, collection_date=date,
                           abnormal_flag=fared_flag(m.code)).model_dump()
    if m.code:
        value["flags_as_printed"] = [m.code]  # "R": answers say "resistant", not merely abnormal
    if m.organism:
        value["organism"] = m.organism  # "Antibiotic | 1 | 2": which organism of the culture
    fared = susceptibility_words(m.test_name, [m.code] if m.code else [])
    fared = f" ({fared})" if fared and fared != m.value.lower() else ""  # not "resistant (resistant)"
    sep = ": " if m.culture else " "  # "Urine culture: Escherichia coli ...", "Amoxicillin [Susceptibility] >32"
    text = f"{m.test_name}{sep}{m.value}" + (f" {m.unit}" if m.unit else "") + fared \
        + (f", organism {m.organism}" if m.organism else "")
    confs = [w.conf for w in m.words if w.conf is not None]
    confidence = MICRO_CONFIDENCE * ((0.5 + 0.5 * sum(confs) / len(confs)) if confs else 1.0)
    reasons = [MICRO_REASON, *m.doubts] + ([date_doubt] if date_doubt else [])
    return FactProposal(
        fact_type="lab_result", fact_text=text, structured_value=value, citation=citation,
        confidence=round(confidence, 3), wants_review=True, review_reason="; ".join(reasons),
    )


# A number with a flag after it, or a decimal number, standing as a word of a test name:
# "LDL Cholesterol 162 H" is a name cell that took a result cell. Names print numbers
# too ("Vitamin B12", "CA 125", "25-OH Vitamin D"), but not a flagged or decimal one.
_NAME_RESULT = re.compile(r"(?:^|\s)(\d+(?:[.,]\d+)?\s+(?:[HL]{1,2}|\*)|\d+[.,]\d+)(?=\s|$)")


def _result_in_name(name: str) -> str | None:
    m = _NAME_RESULT.search(name)
    return m.group(1) if m else None


def _lost_flag_doubts(r: RowResult, flag: str, derived: bool) -> list[str]:
    """A scanned report that prints flags can lose one to OCR: a "‼" dropped beside a
    potassium of 6.6 leaves a value merely past its range, a "▼" read as "*" an
    undirected abnormal. So on such a report (a flag column, or a flag beside any
    result) a value outside its range with no flag read, or with a flag read below the
    trusted confidence that says something else than the range does, goes to a person (a
    critical flag is never quietly lost). The one home of this rule: the table reader
    (rows._ocr_flag_doubts) only judges the ink of the flag words it read."""
    if derived and flag in ("high", "low", "abnormal"):
        return ["the value is outside its range but no flag was read beside it, though this report prints "
                "flags: a printed flag may have been lost in the scan"]
    if not r.flag_text:
        return []
    confs = [w.conf for w in r.words if w.conf is not None and w.text and w.text in r.flag_text]
    if not confs or min(confs) >= OCR_TRUSTED_CONF:
        return []
    by_range = derive_flag(r.reading.value, r.reading.reference_range)
    if by_range == flag:
        return []  # an "H" read faintly beside a value above its range says what the range says
    return [f"the printed flag {r.flag_text!r} was read with low confidence ({min(confs):.2f}) and says "
            f"{flag.replace('_', ' ')} where the range says {by_range or 'nothing'}"]


def _ocr_doubts(r: RowResult) -> list[str]:
    """Why an OCR reading of a row needs a person: the value itself was doubtful, or
    part of the row that was printed could not be read (a result promoted without
    its range might be missing what qualifies it)."""
    doubts = []
    confs = [w.conf for w in r.reading.value_words if w.conf is not None]
    if confs and min(confs) < OCR_TRUSTED_CONF:
        doubts.append(f"value read by OCR with low confidence ({min(confs):.2f})")
    # A misread name or unit charts a value under the wrong test or scale ("LOL
    # Cholesterol", "mig/dL"): their words are held to the same bar as the value's.
    skip = {id(w) for w in r.leader} | {id(w) for w in r.reading.value_words}
    for what, tokens in (("test name", set(r.test_name.split())), ("unit", set((r.reading.unit or "").split()))):
        confs = [w.conf for w in r.words if w.conf is not None and id(w) not in skip and w.text in tokens]
        if confs and min(confs) < OCR_TRUSTED_CONF:
            doubts.append(f"{what} read by OCR with low confidence ({min(confs):.2f})")
    if r.reading.reference_range and not r.range_clean:
        doubts.append(f"reference range {r.reading.reference_range!r} could not be read")
    elif r.range_expected and not r.reading.reference_range:
        doubts.append("no reference range was read in the range column")
    return doubts
