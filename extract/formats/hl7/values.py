"""HL7 v2 field values as a reader would print them: the text of a coded (CE/CWE) value,
OBX-5 of each value type, units, reference ranges, LOINC codes and printed flags."""

from __future__ import annotations

import re
from dataclasses import dataclass

from domain.policy.facts.analytes import loinc_code_ok
from extract.values import numbers as V
from extract.values.dates import hl7_date
from extract.formats.hl7.parse import Encoding, component, components, is_null, repetitions, unescape

_CODE_SYSTEMS = {
    "LN", "LOINC", "L", "SCT", "SNM", "SNM3", "SNOMED", "SNOMED-CT", "I9", "I9C", "I9CDX", "I10",
    "I10C", "ICD9", "ICD10", "CPT", "CPT4", "UCUM", "ISO", "HL7", "CLIA", "NPI", "CDCREC",
    "PHINVS", "LAB_IN", "LOCAL", "MAYO", "AEL",
}


def _looks_like_system(text: str) -> bool:
    t = text.strip().upper()
    return t in _CODE_SYSTEMS or bool(re.fullmatch(r"99[A-Z0-9]+|HL7\d+|L\d?", t))


def coded_text(comps: list[str]) -> tuple[str, int]:
    """The human text of a CE/CWE value and the component it came from (1-based).

    Order: text (2), original text (9), alternate text (5), then any other wordy
    component that is not a coding-system name (senders misplace them), then the code.
    """
    def get(i: int) -> str:
        t = comps[i - 1].strip() if 0 < i <= len(comps) else ""
        # Separators and punctuation alone ("&", an empty subcomponent pair) name nothing:
        # a result whose test cannot be told must not be charted under the name "&".
        return t if any(ch.isalnum() for ch in t) else ""

    for i in (2, 9, 5):
        t = get(i)
        if t and not _looks_like_system(t):
            return t, i
    for i in range(1, len(comps) + 1):
        t = get(i)
        if i != 1 and len(t) > 6 and re.search(r"[A-Za-z].*\s", t) and not _looks_like_system(t):
            return t, i
    return get(1), 1


def unit_text(raw: str, enc: Encoding) -> str:
    """OBX-6: the unit's identifier (unless it is the placeholder "1"), else its text."""
    comps = components(raw, enc)
    ident = comps[0].strip() if comps else ""
    text = comps[1].strip() if len(comps) > 1 else ""
    original = comps[8].strip() if len(comps) > 8 else ""
    if ident and ident != "1":
        return ident
    return text or original or ident


def range_text(raw: str, enc: Encoding) -> str:
    """OBX-7 as printed. Component forms (``^^10.000000``) are kept verbatim: which
    component is the low or high limit differs between senders, so no reading is forced."""
    return unescape(raw, enc).strip()


def loinc_code(raw: str, enc: Encoding) -> str | None:
    """The LOINC code of an OBX-3 (CE/CWE): the identifier whose coding system is LN,
    first or alternate, with a valid check digit (a mistyped code is not guessed at)."""
    comps = components(raw, enc)
    for code_at, system_at in ((0, 2), (3, 5)):
        code = comps[code_at].strip() if len(comps) > code_at else ""
        system = comps[system_at].strip().upper() if len(comps) > system_at else ""
        if code and system in ("LN", "LOINC") and loinc_code_ok(code):
            return code
    return None


def flag_codes(raw: str, enc: Encoding) -> list[str]:
    """OBX-8: the abnormal flag of each repetition, as printed."""
    return [component(raw, enc, 1, i) for i, _ in enumerate(repetitions(raw, enc)) if component(raw, enc, 1, i)]


@dataclass(slots=True)
class Value:
    """A rendered OBX-5: its text, quotes a citation may use, and what looked wrong."""

    text: str
    quotes: list[str]
    problem: str | None = None


def render_value(value_type: str, raw: str, enc: Encoding) -> Value:
    """OBX-5 as a reader would print it: SN ``>^11.0`` -> ``>11.0``, CWE -> its text."""
    vt = value_type.upper().strip()
    full = unescape(raw, enc).strip()
    if vt == "SN" or (vt == "NM" and enc.component in raw):
        comps = [c.strip() for c in components(raw, enc)] + ["", "", "", ""]
        cmp_, n1, sep, n2 = comps[:4]
        if cmp_ == "=":
            cmp_ = ""
        text = f"{cmp_}{n1}{sep}{n2}".strip()
        problem = None if V.parse_number(n1) is not None else f"structured numeric value {full!r} has no number"
        return Value(text or full, [full, text, n1], problem)
    if vt == "NM":
        ok = V.is_numeric_result(full)
        return Value(full, [full], None if ok else f"value {full!r} is not a number although its type is NM")
    if vt in ("CE", "CWE", "CNE", "CF"):
        texts = [coded_text(components(raw, enc, i))[0] for i, r in enumerate(repetitions(raw, enc)) if not is_null(r)]
        texts = [t for t in texts if t]
        return Value("; ".join(texts), texts[:1])
    if vt in ("DT", "DTM", "TS"):
        iso = hl7_date(full)
        return Value(iso or full, [full])
    if vt in ("ST", "TX", "FT", ""):
        texts = [unescape(r, enc).strip() for r in repetitions(raw, enc)]
        texts = [t for t in texts if t]
        return Value("\n".join(texts), texts[:1] + [full])
    parts = [c.strip() for c in components(raw, enc) if c.strip()]
    return Value(" ".join(parts), parts[:1] + [full], f"value type {vt} is not a usual result type")
