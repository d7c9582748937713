"""What a reviewer may do, stated once (pure): override reasons, which fields a
correction may change, whether an item is already decided, and when a drawn box
holds a fact's quote. Services apply these; pages only show their answers."""

from __future__ import annotations

import re
import unicodedata
from itertools import accumulate
from datetime import date, datetime
from typing import Any, Iterable, Mapping, get_args

from domain.models import AbnormalFlag, IdentityStatus
from domain.policy.facts.analytes import known_name, usual_units_problem
from domain.policy.facts.critical_limits import critical_basis_text

# Approving a document that names another patient is an override, not a confirmation:
# the reviewer must say why, and the reason is kept in the audit.
MIN_OVERRIDE_REASON = 10
# An undo reverses a person's decision; the audit must say why.
MIN_UNDO_REASON = 5

ABNORMAL_FLAG_VALUES: tuple[str, ...] = get_args(AbnormalFlag)

# Correction parameter -> structured_value key, per fact type. A lab result may have
# every field it carries corrected (test, value, unit, reference range, date, flag);
# other chart facts only their subject text.
CORRECTABLE_FIELDS: dict[str, dict[str, str]] = {
    "lab_result": {"test_name": "test_name", "value": "value", "unit": "unit", "reference_range": "reference_range",
                   "collection_date": "collection_date", "abnormal_flag": "abnormal_flag"},
    "allergy": {"value": "substance"},
    "medication": {"value": "name"},
    "problem": {"value": "description"},
    "vital_sign": {"value": "value", "unit": "unit"},
}

# Decisions that close an item, and how a sentence says them.
DECIDED_WORDS: dict[str, str] = {
    "approve": "approved", "reject": "rejected", "correct": "corrected", "keep": "kept as a document fact",
    "acknowledge": "acknowledged as read by a person", "keep-chart": "kept out of the chart in favour of its value",
}
# A decision that reopens what the last closing decision closed.
REOPENING = frozenset({"undo"})


# Why a finding waits in the queue: a promotion conflict, or the rules' own review reason.
CONFLICT = "conflict_needs_review"


def queue_reason(promotion_status: str | None, review_reason: str | None) -> str:
    """The reason a finding waits for review, as the queue filters and groups on it (and
    bulk approval requires to be one): a conflict with the chart, else the review reason
    the rules wrote, else plain ``needs_review``."""
    return CONFLICT if promotion_status == CONFLICT else (review_reason or "needs_review")


# Approving a finding that differs from the chart's value for the same test and date is a
# choice a person makes explicitly, side by side with both sources (issue 26): approval
# alone never replaces a chart value.
REPLACE, KEEP_BOTH, KEEP_CHART = "replace", "keep-both", "keep-chart"
RESOLUTIONS: dict[str, str] = {
    REPLACE: "replace the chart value with this finding",
    KEEP_BOTH: "keep both (the chart shows the two values side by side)",
    KEEP_CHART: "keep the chart value (this finding stays with its document only)",
}


def check_resolution(resolution: str | None) -> str | None:
    """``resolution`` when it is one of RESOLUTIONS (or None); ValueError otherwise."""
    if resolution is not None and resolution not in RESOLUTIONS:
        raise ValueError(f"Unknown resolution {resolution!r}; use one of: {', '.join(RESOLUTIONS)}.")
    return resolution


def resolution_needed_message(chart_value: str, source: str) -> str:
    return (f"Approving this finding would change the chart, which holds {chart_value} (from {source}) for the "
            "same test and date. Choose one: " + "; ".join(f"{key}: {words}" for key, words in RESOLUTIONS.items())
            + ".")


def may_replace_in_bulk(review_reason: str | None, certainty: str | None) -> bool:
    """Whether a bulk approval may replace a chart value with this finding. Only a
    finding whose own reading was not in doubt (it waits solely because it differs from
    the chart) may; one held for its reading (OCR confidence, an unknown unit, a decimal
    separator...) never replaces a cleanly read value without a decision on it alone."""
    return certainty == "verified" and not review_reason


def approval_needs_reason(identity_status: str, unread: int = 0) -> bool:
    """Whether approving this identity check is an override that needs a written reason:
    a mismatch, or a document printing ``unread`` identity values no reader attributed
    (the person vouches for what the gate could not compare). A plain ambiguity (too
    few identifiers, all read) does not."""
    return identity_status == IdentityStatus.MISMATCH.value or unread > 0


def reason_long_enough(reason: str | None, minimum: int = MIN_OVERRIDE_REASON) -> bool:
    return len((reason or "").strip()) >= minimum


def undone_id(row: Mapping[str, Any]) -> int | None:
    """The id of the decision an undo row undid (None: an undo recorded before undo
    named its decision; it undid the item's closing decision)."""
    undoes = (row.get("after_state") or {}).get("undoes") if isinstance(row.get("after_state"), Mapping) else None
    return int(undoes) if undoes is not None else None


def closing_decision(decisions: Iterable[Mapping[str, Any]]) -> Mapping[str, Any] | None:
    """The decision that currently closes an item (its latest approve / reject /
    correct / keep not followed by an undo of it), or None when the item is open. An
    undo of another decision (a drawn box) leaves the item as it was."""
    current = None
    for row in decisions:
        if row["decision"] in DECIDED_WORDS:
            current = row
        elif row["decision"] in REOPENING and current is not None:
            undone = undone_id(row)
            if undone is None or undone == current.get("id"):
                current = None
    return current


def already_decided_message(decision: Mapping[str, Any], *, today: date | None = None) -> str:
    """"already approved by dr.alice at 10:42" (with the date when it was not today)."""
    when = decision.get("created_at")
    if isinstance(when, str):
        when = datetime.fromisoformat(when)
    words = DECIDED_WORDS.get(decision["decision"], f"decided ({decision['decision']})")
    text = f"already {words} by {decision['actor']}"
    if isinstance(when, datetime):
        today = today or datetime.now(when.tzinfo).date()
        text += f" at {when:%H:%M}" if when.date() == today else f" on {when:%Y-%m-%d} at {when:%H:%M}"
    return text


def correction_changes(fact_type: str, structured: Mapping[str, Any], requested: Mapping[str, Any]
                       ) -> tuple[dict[str, Any], list[str]]:
    """(the changed structured_value keys with their new values, problems). Blank or
    unchanged requests are dropped; a field the fact type cannot correct, a flag outside
    the DESIGN values or a date that is not YYYY-MM-DD is a problem."""
    allowed = CORRECTABLE_FIELDS.get(fact_type)
    problems: list[str] = []
    changes: dict[str, Any] = {}
    given = {k: v for k, v in requested.items() if v is not None}
    if allowed is None:
        return {}, [f"a {fact_type.replace('_', ' ')} cannot be corrected here; reject it instead"]
    for param, new in given.items():
        if param not in allowed:
            problems.append(f"{param.replace('_', ' ')} cannot be corrected on a {fact_type.replace('_', ' ')}")
            continue
        new = str(new).strip()
        if param in ("value", "test_name") and not new:
            problems.append(f"the corrected {'value' if param == 'value' else 'test name'} is blank")
            continue
        if param == "abnormal_flag" and new not in ABNORMAL_FLAG_VALUES:
            problems.append(f"flag {new!r} is not one of: {', '.join(ABNORMAL_FLAG_VALUES)}")
            continue
        if param == "collection_date" and new:
            try:
                date.fromisoformat(new)
            except ValueError:
                problems.append(f"date {new!r} is not a date written YYYY-MM-DD")
                continue
        key = allowed[param]
        if param in ("unit", "collection_date") and not new:
            new = "" if param == "unit" else None
        if (structured.get(key) or None) != (new or None):
            changes[key] = new
    if fact_type == "vital_sign" and "value" in changes and structured.get("kind") == "blood_pressure":
        # A blood pressure keeps its two numbers apart as well as together.
        parts = re.fullmatch(r"\s*(\d{2,3})\s*/\s*(\d{2,3})\s*", changes["value"])
        if parts is None:
            problems.append(f"a blood pressure is written systolic/diastolic (as 148/92), not {changes['value']!r}")
        else:
            changes.update(value=f"{parts.group(1)}/{parts.group(2)}", systolic=parts.group(1),
                           diastolic=parts.group(2))
    return changes, problems


def corrected_lab_problem(value: Mapping[str, Any], changes: Mapping[str, Any]) -> str | None:
    """Why a corrected lab result cannot stand as a person typed it (fails closed: the
    correction is refused and the finding stays in review): a new test name the analyte
    vocabulary does not know, or a unit that does not fit the (new) test."""
    if not {"test_name", "unit"} & set(changes):
        return None
    name = str(value.get("test_name") or "").strip()
    if "test_name" in changes and not known_name(name):
        return (f"test {name!r} is not one the lab vocabulary knows, so it cannot be coded or unit-checked; "
                "check the spelling, or keep the finding with its document")
    return usual_units_problem(name, str(value.get("unit") or ""), value.get("loinc") or None)


def lab_text(value: Mapping[str, Any]) -> str:
    """A lab result's one-line text, rebuilt after a correction."""
    text = f"{value.get('test_name', '')} {value.get('value', '')}".strip()
    if value.get("unit"):
        text += f" {value['unit']}"
    if value.get("reference_range"):
        text += f" (ref {value['reference_range']})"
    flag = value.get("abnormal_flag")
    if flag and flag not in ("normal", "unknown"):
        text += f" {str(flag).replace('_', ' ')}"
    if value.get("collection_date"):
        text += f", collected {value['collection_date']}"
    if basis := critical_basis_text(value):
        text += f" ({basis})"
    return text


# ------------------------------------------------------------------ drawn boxes
def normalise_box(box: Mapping[str, Any]) -> dict[str, float] | None:
    """A box clamped to the page (0..1) with a positive size, or None when nothing of
    it is left on the page."""
    try:
        x, y, w, h = (float(box[k]) for k in ("x", "y", "width", "height"))
    except (KeyError, TypeError, ValueError):
        return None
    if w < 0:
        x, w = x + w, -w  # drawn right to left
    if h < 0:
        y, h = y + h, -h
    x0, y0 = min(max(x, 0.0), 1.0), min(max(y, 0.0), 1.0)
    x1, y1 = min(max(x + w, 0.0), 1.0), min(max(y + h, 0.0), 1.0)
    if x1 - x0 <= 1e-4 or y1 - y0 <= 1e-4:
        return None
    return {"x": round(x0, 6), "y": round(y0, 6), "width": round(x1 - x0, 6), "height": round(y1 - y0, 6)}


def _token(text: str) -> str:
    folded = unicodedata.normalize("NFKD", text).lower()
    return re.sub(r"[\W_]+", "", folded)


def words_inside(words: Iterable[Mapping[str, Any]], box: Mapping[str, float]) -> list[Mapping[str, Any]]:
    """Page words (normalised 0..1 boxes) whose centre lies inside ``box``."""
    inside = []
    for w in words:
        cx, cy = w["x"] + w["width"] / 2, w["y"] + w["height"] / 2
        if box["x"] <= cx <= box["x"] + box["width"] and box["y"] <= cy <= box["y"] + box["height"]:
            inside.append(w)
    return inside


def quote_missing_from_box(quote: str, words: Iterable[Mapping[str, Any]], box: Mapping[str, float]) -> list[str]:
    """The quote's tokens not found among the words inside the box (empty: the quote
    lies inside). Case and punctuation do not count. A token must be printed as whole
    words: it may span words the page split ("7.9%" against "7.9" "%", "Hemo-" "globin"
    across a line break), and a run of quote tokens may be one printed word ("HbA1c:7.9"),
    but "7.9" is not found inside "17.9" nor "7" inside "97"."""
    inside = [t for t in (_token(str(w.get("text") or "")) for w in words_inside(words, box)) if t]
    joined = "".join(inside)
    bounds = {0, *accumulate(len(t) for t in inside)}

    def printed(text: str) -> bool:
        start = joined.find(text)
        while start != -1:
            if start + len(text) in bounds and start in bounds:
                return True
            start = joined.find(text, start + 1)
        return False

    raw = quote.split()
    tokens = [_token(r) for r in raw]
    missing: list[str] = []
    i = 0
    while i < len(raw):
        if not tokens[i]:
            i += 1
            continue
        # The longest run of quote tokens from here that the page prints as whole words.
        end = next((j for j in range(len(raw), i, -1) if printed("".join(tokens[i:j]))), None)
        if end is None:
            missing.append(raw[i])
            i += 1
        else:
            i = end
    return missing
