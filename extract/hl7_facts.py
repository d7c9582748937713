"""HL7 v2 facts: walks the segments ``extract.hl7.normalize_hl7`` stored and builds facts.

* PID -> identity candidates (name as "FAMILY, GIVEN MIDDLE", DOB as YYYY-MM-DD, the MR
  identifier or else the first CX id); in ADT messages also demographic document facts.
* OBR/OBX in result messages -> lab_result facts (``LabResultValue``) for NM, SN, ST, TX,
  FT, CE/CWE...; F/C results can be verified, P results are document facts labelled
  preliminary, I/R/O/S/X/D/W or empty results and orders without any OBX become
  needs-review items that never carry a value. Ask-at-order-entry answers (OBX-29
  QST/SCI, patient age, employment...) and lab comments become ``other`` document facts.
* AL1 -> allergy, DG1/PRB -> problem; in ADT messages these are document facts only.
* Everything in ADT, MDM, VXU and order messages is ``document_fact_only``.

Confidence starts from the result status (F 0.95, C 0.93, P 0.7, none 0.6) and is
multiplied down by what went wrong on the way (shifted fields, a malformed test code, a
re-assembled segment, a unit that does not fit the analyte...); each reason that should
stop promotion is also written into ``review_reason``.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field

from core.content import NormalizedContent, Section
from core.errors import ExtractionError
from core.models import (
    Citation,
    DocType,
    ExtractionResult,
    ExtractionWarning,
    FactProposal,
    IdentifierKind,
    IdentityCandidate,
    LabResultValue,
)
from core.policy.analytes import loinc_code_ok, usual_units_problem
from core.policy.context import hedge_cue
from extract import values as V
from extract.dates import hl7_date
from extract.flags import resolve_flag
from extract.hl7_parse import (
    Encoding,
    component,
    components,
    first_subcomponent,
    is_null,
    repetitions,
    segment_fields,
    unescape,
)
from extract.ranges import split_range_unit

SOURCE_TYPE = DocType.HL7V2_MESSAGE.value

_FINAL = {"F": 0.95, "C": 0.93, "A": 0.93, "U": 0.9, "B": 0.9}
_PENDING = {
    "I": "result pending",
    "R": "result pending (entered but not yet verified)",
    "O": "result pending (order detail only)",
    "S": "result pending (partial results)",
}
_NO_VALUE = {"D": "result deleted by the sender", "W": "result marked wrong by the sender",
             "N": "observation not performed"}
_CODE_SYSTEMS = {
    "LN", "LOINC", "L", "SCT", "SNM", "SNM3", "SNOMED", "SNOMED-CT", "I9", "I9C", "I9CDX", "I10",
    "I10C", "ICD9", "ICD10", "CPT", "CPT4", "UCUM", "ISO", "HL7", "CLIA", "NPI", "CDCREC",
    "PHINVS", "LAB_IN", "LOCAL", "MAYO", "AEL",
}
_AOE_CODES = {
    "35659-2", "21612-7", "30525-0", "11294-6", "95418-0", "95417-2", "95419-8", "95421-4",
    "65222-2", "82810-3", "77974-4", "76691-5", "11368-8", "8339-4", "49051-6", "57722-1",
}
_AOE_NAME = re.compile(
    r"\bage\b|employ|pregnan|symptom|onset|congregate|resides|first test|hospitali[sz]ed"
    r"|\bicu\b|health ?care (?:setting|worker)|occupation|birth ?weight|gestation|residence",
    re.IGNORECASE,
)
_COMMENT_NAME = re.compile(r"\bcomments?\b|\bnarrative\b|\bcomment-discussion\b|\bnotes?\b", re.IGNORECASE)
_SEE_COMMENTS = re.compile(r"^\s*see\s+(?:comments?|notes?|below|report|text)\b", re.IGNORECASE)
_PLACEHOLDER = re.compile(
    r"^(?:X{3,}|(?:FAKE[ _]?)?(?:LAST|FIRST|MIDDLE|GIVEN|FAMILY)[ _]?NAME|UNKNOWN|REDACTED|ANONYMOUS|NONE|NULL)$",
    re.IGNORECASE,
)
_RESULT_TYPES = {"ORU", "OUL", "ORF", "OUR"}
_SEVERITY = {"SV": "severe", "MO": "moderate", "MI": "mild", "U": "unknown"}
_SEX = {"F": "female", "M": "male", "U": "unknown", "O": "other", "A": "ambiguous", "N": "not applicable"}


@dataclass(slots=True)
class _Seg:
    name: str
    occ: int
    fields: list[str]
    loc: str  # "message 2 OBX[3]" or "OBX[3]"
    reassembled: bool
    split_inline: bool
    unknown: bool

    def raw(self, n: int) -> str:
        return self.fields[n] if n < len(self.fields) else ""


@dataclass(slots=True)
class _Msg:
    meta: dict
    enc: Encoding
    segs: list[_Seg]
    scope: str | None

    @property
    def kind(self) -> str:
        t = self.meta.get("type", "").upper()
        if t in _RESULT_TYPES:
            return "result"
        if t == "ADT":
            return "adt"
        if t in ("ORM", "OML", "OMG", "OMB", "OMD"):
            return "order"
        if t == "MDM":
            return "document"
        if t in ("VXU", "VXR"):
            return "vaccination"
        return "other"


@dataclass(slots=True)
class _Ctx:
    source_id: str
    sections: dict[str, Section]
    facts: list[FactProposal] = field(default_factory=list)
    identifiers: list[IdentityCandidate] = field(default_factory=list)
    warnings: list[ExtractionWarning] = field(default_factory=list)
    counts: Counter = field(default_factory=Counter)
    # (kind, value, scope) of every identifier kept: a scan of ``identifiers`` per PID
    # made a batch of n messages cost n^2.
    identifier_keys: set = field(default_factory=set)

    def path(self, collection: str) -> str:
        k = self.counts[collection]
        self.counts[collection] += 1
        return f"{collection}[{k}]"

    def cite(self, seg: _Seg, n: int, candidates: list[str], path: str) -> Citation | None:
        """A citation to field ``n`` of ``seg`` quoting the first candidate found in it."""
        section = self.sections.get(f"{seg.loc}-{n}")
        if section is None:
            return None
        quote = next((c.strip() for c in candidates if c and c.strip() and V.contains_normalized(section.text, c)), None)
        if quote is None:
            quote = section.text.strip()
        return Citation(
            source_type=SOURCE_TYPE, source_id=self.source_id, page_or_section=section.locator,
            field_or_chunk_id=path, quote_or_value=quote,
        )


@dataclass(slots=True)
class _Review:
    """Reasons to ask for review and factors that lower confidence, gathered per fact."""

    reasons: list[str] = field(default_factory=list)
    factors: list[float] = field(default_factory=list)

    def add(self, reason: str | None, factor: float = 1.0) -> None:
        """Record a reason (if any) and its confidence factor; no reason, no penalty."""
        if not reason:
            return
        if reason not in self.reasons:
            self.reasons.append(reason)
        self.factors.append(factor)

    def penalise(self, factor: float) -> None:
        self.factors.append(factor)

    @property
    def reason(self) -> str | None:
        return "; ".join(self.reasons) or None


def extract_facts(content: NormalizedContent, source_id: str, engine: str) -> ExtractionResult:
    """Facts and identity candidates from ``normalize_hl7`` output."""
    if content.source_kind != "hl7":
        raise ExtractionError(
            f"Expected HL7 content but got {content.source_kind!r} content.", code="wrong_content_kind")
    ctx = _Ctx(source_id, {s.locator: s for s in content.sections})
    ctx.warnings = [ExtractionWarning(code=w.code, message=w.message) for w in content.warnings]
    by_message: dict[int, list[Section]] = defaultdict(list)
    for s in content.sections:
        if s.kind == "segment":
            by_message[s.meta["message"]].append(s)
    multi = len(content.meta.get("messages", [])) > 1
    for meta in content.meta.get("messages", []):
        enc = Encoding.from_meta(meta["encoding"])
        segs = [
            _Seg(s.meta["segment"], s.meta["occurrence"], segment_fields(s.meta["raw"], enc),
                 s.locator, s.meta["reassembled"], s.meta["split_inline"], s.meta["unknown"])
            for s in by_message[meta["index"]]
        ]
        msg = _Msg(meta, enc, segs, f"message {meta['index']}" if multi else None)
        _extract_message(ctx, msg)
    if not ctx.facts and not ctx.identifiers:
        raise ExtractionError(
            "The HL7 file was read but holds no patient data (no PID, results, allergies or "
            "diagnoses were found).",
            code="no_clinical_content",
        )
    return ExtractionResult(
        doc_type=DocType.HL7V2_MESSAGE, facts=ctx.facts, identifiers=ctx.identifiers,
        warnings=ctx.warnings, engine=engine,
    )


# ---------------------------------------------------------------------------- per message


def _message_review(msg: _Msg) -> _Review:
    """Confidence factors that apply to every fact of a message."""
    r = _Review()
    if not msg.meta.get("structure_check", {}).get("ok", True):
        r.penalise(0.97)
    return r


def _seg_review(seg: _Seg, base: _Review) -> _Review:
    r = _Review(list(base.reasons), list(base.factors))
    if seg.reassembled:
        r.add("the segment was re-assembled from wrapped lines; check the source text", 0.8)
    elif seg.split_inline:
        r.penalise(0.9)
    return r


def _extract_message(ctx: _Ctx, msg: _Msg) -> None:
    base = _message_review(msg)
    pid = next((s for s in msg.segs if s.name == "PID"), None)
    if pid is not None:
        species = _species(pid, msg.enc, msg.meta.get("version", ""))
        if species:
            base.add(f"the subject of this message is not a person (species: {species})", 0.5)
            ctx.warnings.append(ExtractionWarning(
                code="hl7_non_human_subject",
                message=f"PID-35 names a species ({species}): this report is about an animal.",
            ))
        _identity(ctx, msg, pid, base)
    elif msg.kind in ("result", "adt"):
        ctx.warnings.append(ExtractionWarning(
            code="hl7_no_pid", message=f"Message {msg.meta['index']} has no PID segment: no patient identifiers."))

    doc_only = msg.kind != "result"
    for seg in msg.segs:
        if seg.name == "AL1":
            _allergy(ctx, msg, seg, base, doc_only)
        elif seg.name == "DG1":
            _diagnosis(ctx, msg, seg, base, doc_only)
        elif seg.name == "PRB":
            _problem(ctx, msg, seg, base, doc_only)
        elif seg.name == "RXA":
            _vaccination(ctx, msg, seg, base)
    _observations(ctx, msg, base)


_HUMAN = re.compile(r"homo sapiens|\bhuman\b|^337915000$", re.IGNORECASE)


def _species(pid: _Seg, enc: Encoding, version: str) -> str | None:
    """A non-human species from PID-35 (added in v2.5), e.g. "Beagle"; None for people."""
    if version[:3] < "2.5" or is_null(pid.raw(35)):
        return None
    comps = components(pid.raw(35), enc)
    text, _ = coded_text(comps)
    if not re.search(r"[A-Za-z]", text) or any(_HUMAN.search(c.strip()) for c in comps if c.strip()):
        return None
    return text


# ---------------------------------------------------------------------------- identity


def _name_parts(rep_comps: list[str], enc: Encoding) -> tuple[str, str, str]:
    family = first_subcomponent(rep_comps[0], enc) if rep_comps else ""
    given = rep_comps[1].strip() if len(rep_comps) > 1 else ""
    middle = rep_comps[2].strip() if len(rep_comps) > 2 else ""
    return V.normalize_ws(family), V.normalize_ws(given), V.normalize_ws(middle)


@dataclass(frozen=True, slots=True)
class PidName:
    """The patient's name as PID-5 gives it, the way the identity gate compares it."""

    printed: str  # "FAMILY, GIVEN MIDDLE"
    quote: str  # the components as received, for the citation
    placeholder: bool  # "UNKNOWN", "XXX", "LASTNAME"...: never used for identity


def pid_name(raw: str, enc: Encoding) -> PidName | None:
    """PID-5's legal (else first usable) name; None when no repetition names anyone."""
    picked = _pick_name(raw, enc)
    if picked is None:
        return None
    family, given, middle, quote = picked
    return PidName(printed=f"{family}, {' '.join(p for p in (given, middle) if p)}".strip().rstrip(","),
                   quote=quote, placeholder=any(_PLACEHOLDER.match(p) for p in (family, given) if p))


def _pick_name(raw: str, enc: Encoding) -> tuple[str, str, str, str] | None:
    """(family, given, middle, quote) from the legal-name repetition or the first usable one."""
    best = None
    for i, rep in enumerate(repetitions(raw, enc)):
        comps = components(raw, enc, i)
        family, given, middle = _name_parts(comps, enc)
        if not family and not given:
            continue
        name_type = comps[6].strip().upper() if len(comps) > 6 else ""
        last = max(k for k, c in enumerate(comps) if c.strip())
        quote = enc.component.join(comps[: min(last, 2) + 1]).rstrip(enc.component)
        candidate = (family, given, middle, quote)
        if name_type == "L":
            return candidate
        best = best or candidate
    return best


def pick_identifier(raw: str, enc: Encoding) -> str | None:
    """The MRN-typed identifier of a CX field (PID-3 style), else its first one."""
    ids = []
    for i, _ in enumerate(repetitions(raw, enc)):
        comps = components(raw, enc, i)
        value = comps[0].strip() if comps else ""
        if not value:
            continue
        id_type = comps[4].strip().upper() if len(comps) > 4 else ""
        authority = first_subcomponent(comps[3], enc).upper() if len(comps) > 3 else ""
        ids.append((value, id_type in ("MR", "MRN") or authority.endswith("MRN")))
    for value, is_mr in ids:
        if is_mr:
            return value
    return ids[0][0] if ids else None


def _identity(ctx: _Ctx, msg: _Msg, pid: _Seg, base: _Review) -> None:
    enc = msg.enc
    adt = msg.kind == "adt"
    review = _seg_review(pid, base)

    def ident(kind: IdentifierKind, value: str, n: int, quote: str, path: str) -> None:
        cit = ctx.cite(pid, n, [quote, value], path)
        key = (kind, value, msg.scope)
        if key in ctx.identifier_keys:
            return
        ctx.identifier_keys.add(key)
        ctx.identifiers.append(IdentityCandidate(kind=kind, value=value, citation=cit, scope=msg.scope))

    def demographic(fld: str, value: str, n: int, quote: str, extra: dict | None = None) -> None:
        cit = ctx.cite(pid, n, [quote, value], f"demographics.{fld}")
        if cit is None:
            return
        ctx.facts.append(FactProposal(
            fact_type="demographic", fact_text=f"Patient {fld.replace('_', ' ')}: {value}",
            structured_value={"field": fld, "value": value, **(extra or {})}, citation=cit,
            confidence=V.confidence(0.9, review.factors), wants_review=bool(review.reasons),
            review_reason=review.reason, document_fact_only=True, scope=msg.scope,
        ))

    name = pid_name(pid.raw(5), enc)
    if name:
        if name.placeholder:
            ctx.warnings.append(ExtractionWarning(
                code="hl7_placeholder_identity",
                message=f"PID-5 holds a placeholder name ({name.quote!r}); it was not used for identity.",
            ))
        else:
            ident(IdentifierKind.NAME, name.printed, 5, name.quote, "patient.name")
            if adt:
                demographic("name", name.printed, 5, name.quote)

    dob_raw = unescape(pid.raw(7), enc).strip()
    if dob_raw:
        dob = hl7_date(dob_raw)
        if dob:
            ident(IdentifierKind.DOB, dob, 7, dob_raw[:8], "patient.dob")
            if adt:
                demographic("date_of_birth", dob, 7, dob_raw[:8])
        else:
            ctx.warnings.append(ExtractionWarning(
                code="hl7_invalid_dob",
                message=f"PID-7 {dob_raw!r} is not a valid date of birth; it was not used for identity.",
            ))

    for n in (3, 2, 4):
        mrn = pick_identifier(pid.raw(n), enc)
        if mrn and not _PLACEHOLDER.match(mrn) and mrn.upper() not in ("MRN", "ID", "MR"):
            ident(IdentifierKind.MRN, mrn, n, mrn, "patient.mrn")
            break

    if adt:
        sex = component(pid.raw(8), enc, 1)
        if sex:
            demographic("sex", _SEX.get(sex.upper(), sex), 8, sex, {"code": sex})
        addr = components(pid.raw(11), enc)
        if any(c.strip() for c in addr):
            parts = [c.strip() for c in addr[:6]]
            street = ", ".join(p for p in parts[:2] if p)
            city_line = " ".join(p for p in (parts[2] if len(parts) > 2 else "", parts[3] if len(parts) > 3 else "",
                                             parts[4] if len(parts) > 4 else "") if p)
            printed = ", ".join(p for p in (street, city_line) if p)
            first = next(p for p in parts if p)
            demographic("address", printed, 11, first)


# ---------------------------------------------------------------------------- coded values


def _looks_like_system(text: str) -> bool:
    t = text.strip().upper()
    return t in _CODE_SYSTEMS or bool(re.fullmatch(r"99[A-Z0-9]+|HL7\d+|L\d?", t))


def coded_text(comps: list[str]) -> tuple[str, int]:
    """The human text of a CE/CWE value and the component it came from (1-based).

    Order: text (2), original text (9), alternate text (5), then any other wordy
    component that is not a coding-system name (senders misplace them), then the code.
    """
    def get(i: int) -> str:
        return comps[i - 1].strip() if 0 < i <= len(comps) else ""

    for i in (2, 9, 5):
        t = get(i)
        if t and not _looks_like_system(t):
            return t, i
    for i, c in enumerate(comps, start=1):
        t = c.strip()
        if i != 1 and len(t) > 6 and re.search(r"[A-Za-z].*\s", t) and not _looks_like_system(t):
            return t, i
    return get(1), 1


def _unit(raw: str, enc: Encoding) -> str:
    comps = components(raw, enc)
    ident = comps[0].strip() if comps else ""
    text = comps[1].strip() if len(comps) > 1 else ""
    original = comps[8].strip() if len(comps) > 8 else ""
    if ident and ident != "1":
        return ident
    return text or original or ident


def _range(raw: str, enc: Encoding) -> str:
    """OBX-7 as printed. Component forms (``^^10.000000``) are kept verbatim: which
    component is the low or high limit differs between senders, so no reading is forced."""
    return unescape(raw, enc).strip()


def _loinc(raw: str, enc: Encoding) -> str | None:
    """The LOINC code of an OBX-3 (CE/CWE): the identifier whose coding system is LN,
    first or alternate, with a valid check digit (a mistyped code is not guessed at)."""
    comps = components(raw, enc)
    for code_at, system_at in ((0, 2), (3, 5)):
        code = comps[code_at].strip() if len(comps) > code_at else ""
        system = comps[system_at].strip().upper() if len(comps) > system_at else ""
        if code and system in ("LN", "LOINC") and loinc_code_ok(code):
            return code
    return None


def _flags(raw: str, enc: Encoding) -> list[str]:
    return [component(raw, enc, 1, i) for i, _ in enumerate(repetitions(raw, enc)) if component(raw, enc, 1, i)]


@dataclass(slots=True)
class _Value:
    text: str
    quotes: list[str]
    problem: str | None = None


def render_value(value_type: str, raw: str, enc: Encoding) -> _Value:
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
        return _Value(text or full, [full, text, n1], problem)
    if vt == "NM":
        ok = V.is_numeric_result(full)
        return _Value(full, [full], None if ok else f"value {full!r} is not a number although its type is NM")
    if vt in ("CE", "CWE", "CNE", "CF"):
        texts = [coded_text(components(raw, enc, i))[0] for i, r in enumerate(repetitions(raw, enc)) if not is_null(r)]
        texts = [t for t in texts if t]
        return _Value("; ".join(texts), texts[:1])
    if vt in ("DT", "DTM", "TS"):
        iso = hl7_date(full)
        return _Value(iso or full, [full])
    if vt in ("ST", "TX", "FT", ""):
        texts = [unescape(r, enc).strip() for r in repetitions(raw, enc)]
        texts = [t for t in texts if t]
        return _Value("\n".join(texts), texts[:1] + [full])
    parts = [c.strip() for c in components(raw, enc) if c.strip()]
    return _Value(" ".join(parts), parts[:1] + [full], f"value type {vt} is not a usual result type")


# ---------------------------------------------------------------------------- OBR/OBX


@dataclass(slots=True)
class _Obx:
    seg: _Seg
    notes: list[str] = field(default_factory=list)


@dataclass(slots=True)
class _Group:
    obr: _Seg | None
    notes: list[str] = field(default_factory=list)
    obxs: list[_Obx] = field(default_factory=list)


def _note_text(seg: _Seg, enc: Encoding) -> str:
    return "\n".join(t for t in (unescape(r, enc).strip() for r in repetitions(seg.raw(3), enc)) if t)


def _groups(msg: _Msg) -> tuple[list[_Group], list[str]]:
    groups: list[_Group] = []
    message_notes: list[str] = []
    current: _Group | None = None
    last_obx: _Obx | None = None
    for seg in msg.segs:
        if seg.name == "OBR":
            current = _Group(seg)
            groups.append(current)
            last_obx = None
        elif seg.name == "OBX":
            if current is None:
                current = _Group(None)
                groups.append(current)
            last_obx = _Obx(seg)
            current.obxs.append(last_obx)
        elif seg.name == "NTE":
            note = _note_text(seg, msg.enc)
            if not note:
                continue
            if last_obx is not None:
                last_obx.notes.append(note)
            elif current is not None:
                current.notes.append(note)
            else:
                message_notes.append(note)
        elif seg.name in ("ORC", "SPM"):
            last_obx = None  # a note after these is about the order or specimen
    return groups, message_notes


def _shift(seg: _Seg, enc: Encoding) -> int:
    """Detect OBX fields shifted right (value in OBX-7, status in OBX-13...): 0 if none.

    Only accepted when OBX-5/6 are empty, OBX-11 holds no status, and OBX-(11+k) holds
    a one-letter result status while OBX-(5+k) holds a value.
    """
    if not is_null(seg.raw(5)) or not is_null(seg.raw(11)):
        return 0
    for k in (1, 2, 3):
        status = seg.raw(11 + k).strip().upper()
        if re.fullmatch(r"[FCPIRSXDWUOAN]", status) and not is_null(seg.raw(5 + k)):
            if all(is_null(seg.raw(n)) for n in range(5, 5 + k)):
                return k
    return 0


def _is_aoe(seg: _Seg, enc: Encoding, name: str) -> bool:
    if seg.raw(29).strip().upper() in ("QST", "SCI"):
        return True
    return component(seg.raw(3), enc, 1) in _AOE_CODES or bool(_AOE_NAME.search(name))


def _test_name(obx: _Seg, obr: _Seg | None, enc: Encoding) -> tuple[str, str | None]:
    """(name, review reason or None)."""
    comps = components(obx.raw(3), enc)
    text, idx = coded_text(comps) if comps else ("", 0)
    if idx in (2, 9, 5) and text:
        return text, None
    code = comps[0].strip() if comps else ""
    if obr is not None:
        ocomps = components(obr.raw(4), enc)
        otext, oidx = coded_text(ocomps) if ocomps else ("", 0)
        if otext and oidx != 1:
            same = code and ocomps and ocomps[0].strip() == code
            if same and oidx in (2, 9, 5):
                return otext, None
            return otext, ("the observation is not named in OBX-3; the name was taken from its order (OBR-4)"
                           if not same else "the test name sits in an unusual component of OBR-4; the coding looks malformed")
    if text and idx != 1:
        return text, "the test name sits in an unusual component of OBX-3; the coding looks malformed"
    if code:
        return code, "the observation is named only by its code"
    return "unnamed observation", "the observation has no name or code"


def _collection_date(obx: _Seg, obr: _Seg | None, enc: Encoding, shift: int) -> str | None:
    for raw in (obx.raw(14 + shift), obr.raw(7) if obr else ""):
        d = hl7_date(component(raw, enc, 1))
        if d:
            return d
    return None


def _observations(ctx: _Ctx, msg: _Msg, base: _Review) -> None:
    groups, message_notes = _groups(msg)
    for group in groups:
        if msg.kind == "result" and group.obr is not None and not group.obxs:
            _pending_order(ctx, msg, group, message_notes, base)
        for obx in group.obxs:
            if msg.kind == "result":
                _result(ctx, msg, group, obx, message_notes, base)
            else:
                _other_observation(ctx, msg, group, obx, base)


def _rejection_reason(status: str, notes: list[str]) -> str:
    if status == "X":
        if any("reject" in n.lower() for n in notes):
            return "specimen rejected"
        return "result cannot be obtained (status X)"
    return _NO_VALUE.get(status) or _PENDING.get(status) or "result pending"


def _pending_order(ctx: _Ctx, msg: _Msg, group: _Group, message_notes: list[str], base: _Review) -> None:
    obr, enc = group.obr, msg.enc
    assert obr is not None
    comps = components(obr.raw(4), enc)
    name, _idx = coded_text(comps) if comps else ("unnamed order", 0)
    status = obr.raw(25).strip().upper()
    notes = group.notes + message_notes
    reason = _rejection_reason("X", notes) if status == "X" else "result pending"
    path = ctx.path("results")
    cit = ctx.cite(obr, 4, [name], path) or ctx.cite(obr, 1, [], path)
    if cit is None:
        return
    review = _seg_review(obr, base)
    review.add(reason, 1.0)
    lab = LabResultValue(
        test_name=name, value="", collection_date=hl7_date(component(obr.raw(7), enc, 1)),
        result_status=status or None,
    ).model_dump()
    lab["pending"] = True
    lab["notes"] = group.notes
    ctx.facts.append(FactProposal(
        fact_type="lab_result",
        fact_text=f"{name}: {reason} - the message carries no result for this order"
        + (f" (order status {status})" if status else ""),
        structured_value=lab, citation=cit, confidence=V.confidence(0.9, review.factors),
        wants_review=True, review_reason=review.reason, scope=msg.scope,
    ))


def _result(ctx: _Ctx, msg: _Msg, group: _Group, obx_item: _Obx, message_notes: list[str], base: _Review) -> None:
    obx, obr, enc = obx_item.seg, group.obr, msg.enc
    shift = _shift(obx, enc)
    review = _seg_review(obx, base)
    name, name_problem = _test_name(obx, obr, enc)
    review.add(name_problem, 0.85)
    value_type = obx.raw(2).strip()
    comment_like = _COMMENT_NAME.search(name) and value_type.upper() in ("ST", "TX", "FT", "CE", "CWE")
    if _is_aoe(obx, enc, name) or comment_like:
        _other_observation(ctx, msg, group, obx_item, base)
        return
    value_field = 5 + shift
    status = obx.raw(11 + shift).strip().upper()
    notes = obx_item.notes
    if shift:
        review.add(
            f"OBX fields are shifted by {shift} position(s): the value was found in OBX-{value_field} "
            f"and the status in OBX-{11 + shift}", 0.6)
        ctx.warnings.append(ExtractionWarning(
            code="hl7_shifted_fields",
            message=f"{obx.loc}: fields appear shifted by {shift}; value read from OBX-{value_field}.",
        ))
    empty = is_null(obx.raw(value_field))
    value = None if empty else render_value(value_type, obx.raw(value_field), enc)
    if value is not None and not value.text:
        empty, value = True, None

    if value_type.upper() in ("TX", "FT") and empty and status in _FINAL:
        return  # a blank line of a narrative report, not a missing result
    ref, unit = split_range_unit(_range(obx.raw(7 + shift), enc), _unit(obx.raw(6 + shift), enc))
    printed_flags = _flags(obx.raw(8 + shift), enc)
    coll = _collection_date(obx, obr, enc, shift)

    if empty or status in _PENDING or status in _NO_VALUE or status == "X":
        all_notes = notes + (group.notes if group else []) + message_notes
        if empty and status in _FINAL:
            reason = "no result value given"
        else:
            reason = _rejection_reason(status, all_notes)
        path = ctx.path("results")
        cit = ctx.cite(obx, 3, [name], path) or ctx.cite(obx, 11 + shift, [status], path)
        if cit is None:
            return
        review.add(reason)
        lab = LabResultValue(test_name=name, value="", unit=unit, reference_range=ref,
                             collection_date=coll, result_status=status or None).model_dump()
        lab["pending"] = True
        lab["notes"] = notes
        ctx.facts.append(FactProposal(
            fact_type="lab_result",
            fact_text=f"{name}: {reason}" + (f" ({'; '.join(all_notes)[:200]})" if all_notes else ""),
            structured_value=lab, citation=cit, confidence=V.confidence(0.9, review.factors),
            wants_review=True, review_reason=review.reason, scope=msg.scope,
        ))
        return

    assert value is not None
    review.add(value.problem, 0.6)
    # Critical limits are labelled in OBX-7 or in the result's own notes.
    reading = resolve_flag(printed_flags, value.text, ref, notes=notes)
    flag, flag_derived = reading.flag, reading.derived
    for reason, factor in reading.doubts():
        review.add(reason, factor)
    loinc = _loinc(obx.raw(3), enc)
    review.add(usual_units_problem(name, unit, loinc), 0.7)
    if _SEE_COMMENTS.match(value.text):
        review.add("the result is given in the comments", 0.8)
    cue = hedge_cue(value.text) if value_type.upper() not in ("NM", "SN") else None
    if cue:
        review.add(f"uncertain wording in the result ({cue!r})", 0.8)
    if value_type.upper() in ("NM", "SN") and not unit:
        review.penalise(0.9)
    if coll is None:
        review.penalise(0.95)

    if status in _FINAL:
        base_conf, doc_only, label = _FINAL[status], False, ("Corrected result" if status == "C" else "")
    elif status == "P":
        base_conf, doc_only, label = 0.7, True, "Preliminary result"
    else:
        base_conf, doc_only, label = 0.6, False, ""
        review.add(f"result status {'missing' if not status else repr(status)}: not known to be final", 1.0)

    path = ctx.path("results")
    cit = ctx.cite(obx, value_field, value.quotes, path)
    if cit is None:
        return
    lab = LabResultValue(
        test_name=name, value=value.text, unit=unit, reference_range=ref, collection_date=coll,
        abnormal_flag=flag, flag_derived=flag_derived, result_status=status or None,
    ).model_dump()
    if printed_flags:
        lab["flags_as_printed"] = printed_flags
    if reading.critical_range:
        lab["critical_range"] = reading.critical_range
    code = component(obx.raw(3), enc, 1)
    if code:
        lab["code"] = code
    if loinc:
        lab["loinc"] = loinc
    if notes:
        lab["notes"] = notes
    text = _lab_text(label, lab)
    ctx.facts.append(FactProposal(
        fact_type="lab_result", fact_text=text, structured_value=lab, citation=cit,
        confidence=V.confidence(base_conf, review.factors), wants_review=bool(review.reasons),
        review_reason=review.reason, document_fact_only=doc_only, scope=msg.scope,
    ))


def _lab_text(label: str, lab: dict) -> str:
    value = lab["value"] if len(lab["value"]) <= 300 else lab["value"][:297] + "..."
    parts = [f"{lab['test_name']}: {value}"]
    if lab["unit"]:
        parts.append(lab["unit"])
    if lab["reference_range"]:
        parts.append(f"(ref {lab['reference_range']})")
    if lab["abnormal_flag"] not in ("unknown", "normal"):
        parts.append(f"[{lab['abnormal_flag'].replace('_', ' ')}]")
    if lab["collection_date"]:
        parts.append(f"collected {lab['collection_date']}")
    text = " ".join(parts)
    return f"{label}: {text}" if label else text


def _other_observation(ctx: _Ctx, msg: _Msg, group: _Group, obx_item: _Obx, base: _Review) -> None:
    """Observations outside result messages, and ask-at-order-entry answers: document facts."""
    obx, enc = obx_item.seg, msg.enc
    value_type = obx.raw(2).strip()
    if is_null(obx.raw(5)):
        return
    value = render_value(value_type, obx.raw(5), enc)
    if not value.text:
        return
    review = _seg_review(obx, base)
    if msg.kind == "document":
        name = "Report text"
    else:
        name, problem = _test_name(obx, group.obr, enc)
        review.add(problem if msg.kind == "result" else None, 0.85)
    review.add(value.problem, 0.6)
    unit = _unit(obx.raw(6), enc)
    path = ctx.path("observations")
    cit = ctx.cite(obx, 5, value.quotes, path)
    if cit is None:
        return
    status = obx.raw(11).strip().upper()
    structured = {
        "observation": name, "value": value.text, "unit": unit,
        "code": component(obx.raw(3), enc, 1) or None, "value_type": value_type or None,
        "result_status": status or None, "date": hl7_date(component(obx.raw(14), enc, 1)),
        "message_type": msg.meta.get("type"),
    }
    text = f"{name}: {value.text}" + (f" {unit}" if unit else "")
    ctx.facts.append(FactProposal(
        fact_type="other", fact_text=text[:400], structured_value=structured, citation=cit,
        confidence=V.confidence(_FINAL.get(status, 0.75), review.factors),
        wants_review=bool(review.reasons), review_reason=review.reason,
        document_fact_only=True, scope=msg.scope,
    ))


# ---------------------------------------------------------------------------- AL1 / DG1 / PRB / RXA


def _allergy(ctx: _Ctx, msg: _Msg, seg: _Seg, base: _Review, doc_only: bool) -> None:
    enc = msg.enc
    substance, _ = coded_text(components(seg.raw(3), enc))
    if not substance:
        return
    review = _seg_review(seg, base)
    cue = hedge_cue(substance)
    if cue:
        review.add(f"uncertain wording in the allergen ({cue!r})", 0.7)
    reactions = [t for t in (unescape(r, enc).strip() for r in repetitions(seg.raw(5), enc)) if t and t != '""']
    severity_code = component(seg.raw(4), enc, 1).upper()
    severity = _SEVERITY.get(severity_code, severity_code.lower() or None)
    allergen_type, _ = coded_text(components(seg.raw(2), enc))
    path = ctx.path("allergies")
    cit = ctx.cite(seg, 3, [substance], path)
    if cit is None:
        return
    structured = {
        "substance": substance, "reaction": ", ".join(reactions) or None, "severity": severity,
        "allergen_type": allergen_type or None, "code": component(seg.raw(3), enc, 1) or None,
    }
    text = f"Allergy: {substance}" + (f" - reaction: {structured['reaction']}" if reactions else "") + (
        f" ({severity})" if severity else "")
    ctx.facts.append(FactProposal(
        fact_type="allergy", fact_text=text, structured_value=structured, citation=cit,
        confidence=V.confidence(0.9, review.factors), wants_review=bool(review.reasons),
        review_reason=review.reason, document_fact_only=doc_only, scope=msg.scope,
    ))


def _problem_fact(ctx: _Ctx, msg: _Msg, seg: _Seg, field_no: int, code: str, description: str,
                  system: str, base: _Review, doc_only: bool, extra: dict) -> None:
    if not (code or description):
        return
    review = _seg_review(seg, base)
    cue = hedge_cue(description)
    if cue:
        review.add(f"uncertain wording in the diagnosis ({cue!r})", 0.7)
    if not description:
        review.add("the diagnosis is given only as a code", 0.8)
    path = ctx.path("problems")
    cit = ctx.cite(seg, field_no, [description, code], path)
    if cit is None:
        return
    structured = {"code": code or None, "description": description or code, "coding_system": system or None, **extra}
    text = f"Problem: {description or code}" + (f" ({system} {code})" if code and description else "")
    ctx.facts.append(FactProposal(
        fact_type="problem", fact_text=text, structured_value=structured, citation=cit,
        confidence=V.confidence(0.88, review.factors), wants_review=bool(review.reasons),
        review_reason=review.reason, document_fact_only=doc_only, scope=msg.scope,
    ))


def _diagnosis(ctx: _Ctx, msg: _Msg, seg: _Seg, base: _Review, doc_only: bool) -> None:
    enc = msg.enc
    comps = components(seg.raw(3), enc)
    code = comps[0].strip() if comps else ""
    description = comps[1].strip() if len(comps) > 1 else ""
    system = comps[2].strip() if len(comps) > 2 else ""
    field_no = 3
    if not description:
        description = unescape(seg.raw(4), enc).strip().strip('"').strip()
        if description and not code:
            field_no = 4
    system = system or component(seg.raw(2), enc, 1)
    dtype = component(seg.raw(6), enc, 1).upper()
    extra = {"diagnosis_type": {"A": "admitting", "W": "working", "F": "final"}.get(dtype, dtype or None)}
    _problem_fact(ctx, msg, seg, field_no, code, description, system, base, doc_only, extra)


def _problem(ctx: _Ctx, msg: _Msg, seg: _Seg, base: _Review, doc_only: bool) -> None:
    enc = msg.enc
    comps = components(seg.raw(3), enc)
    code = comps[0].strip() if comps else ""
    description = comps[1].strip() if len(comps) > 1 else ""
    system = comps[2].strip() if len(comps) > 2 else ""
    if code and not description and not system:
        code, description = "", code  # PRB-3 holding plain text
    _problem_fact(ctx, msg, seg, 3, code, description, system, base, doc_only, {"source_segment": "PRB"})


def _vaccination(ctx: _Ctx, msg: _Msg, seg: _Seg, base: _Review) -> None:
    enc = msg.enc
    comps = components(seg.raw(5), enc)
    vaccine, idx = coded_text(comps) if comps else ("", 0)
    if not vaccine:
        return
    system = comps[2].strip() if len(comps) > 2 else ""
    label = vaccine if idx != 1 else f"{system} {vaccine}".strip()
    given = hl7_date(component(seg.raw(3), enc, 1))
    review = _seg_review(seg, base)
    path = ctx.path("observations")
    cit = ctx.cite(seg, 5, [vaccine], path)
    if cit is None:
        return
    ctx.facts.append(FactProposal(
        fact_type="other",
        fact_text=f"Vaccine administered: {label}" + (f" on {given}" if given else ""),
        structured_value={"observation": "vaccine administered", "value": label, "date": given,
                          "code": comps[0].strip() if comps else None, "coding_system": system or None},
        citation=cit, confidence=V.confidence(0.85, review.factors), wants_review=bool(review.reasons),
        review_reason=review.reason, document_fact_only=True, scope=msg.scope,
    ))
