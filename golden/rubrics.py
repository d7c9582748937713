"""The gate's rubrics: each scores one case true or false, with a reason in words.

A rubric never skips: when a case has nothing it applies to (no deletion, no question),
the rubric holds and says so. Structural rubrics check what must hold in every case
(citations re-found in the source, nothing from an untrusted document in the chart, no
identifier in a log); expectation rubrics compare with what the case file says the
workbench must show. Checks read the workbench's outputs, never its internals, and the
citation checks are written here afresh rather than borrowed from the code they check.
"""

from __future__ import annotations

import re
from typing import Any, Callable

from golden.matching import STATE, describe, fact_matches, row_matches, same
from golden.redact import find
from golden.runner import Observation

Verdict = tuple[bool, str]
SUPPORTING = ("promoted", "already_exists", "duplicate_skipped")
TRUSTED = ("identity_verified", "identity_review_approved")
_SECTIONS = ("patient_findings", "needs_review", "guideline_evidence", "missing")


def _ws(text: Any) -> str:
    return " ".join(str(text or "").split()).casefold()


def _tokens(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.casefold())


def _first(problems: list[str], ok: str, limit: int = 3) -> Verdict:
    if not problems:
        return True, ok
    more = f" (and {len(problems) - limit} more)" if len(problems) > limit else ""
    return False, "; ".join(problems[:limit]) + more


def _counted(fact: dict[str, Any]) -> bool:
    """A fact the workbench treats as true: active or supporting a chart row."""
    return bool(fact.get("active")) or fact.get("promotion_status") in SUPPORTING


def _doc_id(citation: dict[str, Any]) -> int | None:
    sid = str(citation.get("source_id") or "")
    return int(sid.split(":", 1)[1]) if sid.startswith("documents:") and sid.split(":", 1)[1].isdigit() else None


def _answer_citations(payload: dict[str, Any]) -> list[dict[str, Any]]:
    return [c for s in _SECTIONS for item in payload["sections"].get(s, []) for c in item.get("citations", [])]


# --------------------------------------------------------------------------- structural


def schema_valid(obs: Observation) -> Verdict:
    from core.models import AnswerSections, DocumentFact, LabResultValue

    problems = []
    facts = obs.facts()
    for f in facts:
        try:
            DocumentFact.model_validate({k: v for k, v in f.items() if k != "document"})
            if f["fact_type"] == "lab_result":
                LabResultValue.model_validate(f["structured_value"])
                date = f["structured_value"].get("collection_date")
                if date is not None and not re.fullmatch(r"\d{4}-\d{2}-\d{2}", str(date)):
                    problems.append(f"fact {f['fact_id']}: collection date {date!r} is not YYYY-MM-DD")
        except ValueError as exc:
            problems.append(f"fact {f['fact_id']} ({f['fact_type']}): {str(exc).splitlines()[0]}")
    for a in obs.answers:
        p = a["payload"]
        missing = {"request_id", "refused", "refusal_reason", "sections", "text"} - set(p)
        if missing:
            problems.append(f"answer to step {a['step']} lacks {sorted(missing)}")
        try:
            AnswerSections.model_validate(p["sections"])
        except ValueError as exc:
            problems.append(f"answer to step {a['step']}: {str(exc).splitlines()[0]}")
    for key, chart in obs.charts.items():
        if set(chart) != {"labs", "allergies", "medications", "problems"}:
            problems.append(f"chart of {key} has sections {sorted(chart)}")
    return _first(problems, f"{len(facts)} facts, {len(obs.answers)} answers and the chart match their schemas")


def citation_present(obs: Observation) -> Verdict:
    problems = []
    facts = obs.facts()
    for f in facts:
        c = f.get("citation") or {}
        absent = [k for k in ("source_type", "source_id", "page_or_section", "field_or_chunk_id", "quote_or_value")
                  if not str(c.get(k) or "").strip()]
        if absent:
            problems.append(f"fact {f['fact_id']} citation lacks {', '.join(absent)}")
        elif _doc_id(c) != obs.uploads[f["document"]].document_id:
            problems.append(f"fact {f['fact_id']} cites {c.get('source_id')}, not its own document")
    for a in obs.answers:
        for section in ("patient_findings", "needs_review", "guideline_evidence"):
            for item in a["payload"]["sections"].get(section, []):
                if not item.get("citations"):
                    problems.append(f"answer to step {a['step']}: {section} item has no citation")
    return _first(problems, f"all {len(facts)} facts and every answer item carry a citation")


def _quote_found(obs: Observation, fact: dict[str, Any]) -> str | None:
    """None when the quote is at its cited place in the content the pipeline read."""
    c = fact["citation"]
    content = obs.contents.get(obs.uploads[fact["document"]].document_id)
    if content is None:
        return f"fact {fact['fact_id']}: the source content was not seen"
    quote = _ws(c["quote_or_value"])
    if c.get("page") is not None:
        pages = [p for p in content.pages if p.number == c["page"]]
        if not pages:
            return f"fact {fact['fact_id']} cites page {c['page']}, which the document does not have"
        text = _ws(" ".join(w.text for w in pages[0].words))
        if quote not in text and "".join(_tokens(quote)) not in "".join(_tokens(text)):
            return f"fact {fact['fact_id']}: quote not found on page {c['page']}"
        return None
    sections = [s for s in content.sections if s.locator == c["page_or_section"]]
    if not sections:
        return f"fact {fact['fact_id']} cites {c['page_or_section']!r}, which the document does not have"
    if not any(quote in _ws(s.text) for s in sections):
        return f"fact {fact['fact_id']}: quote not found at {c['page_or_section']}"
    return None


def citation_verified(obs: Observation) -> Verdict:
    counted = [f for f in obs.facts() if _counted(f)]
    problems = [p for f in counted if (p := _quote_found(obs, f))]
    return _first(problems, f"all {len(counted)} counted facts were re-found at their cited place")


def _paged(obs: Observation, fact: dict[str, Any]) -> bool:
    content = obs.contents.get(obs.uploads[fact["document"]].document_id)
    return bool(content is not None and content.pages)


def bounding_box_present(obs: Observation) -> Verdict:
    facts = [f for f in obs.facts() if _paged(obs, f)]
    problems = [f"fact {f['fact_id']} on a paged source has no page and box" for f in facts
                if f["citation"].get("page") is None or not f["citation"].get("bounding_box")]
    return _first(problems, f"all {len(facts)} facts from paged sources carry a page and a box"
                  if facts else "no paged source in this case")


def _box_problem(obs: Observation, fact: dict[str, Any]) -> str | None:
    c = fact["citation"]
    box = c.get("bounding_box") or {}
    content = obs.contents[obs.uploads[fact["document"]].document_id]
    page = next((p for p in content.pages if p.number == c.get("page")), None)
    if page is None or not box:
        return f"fact {fact['fact_id']}: no page or box"
    x0, y0 = box["x"], box["y"]
    x1, y1 = x0 + box["width"], y0 + box["height"]
    if not (0 <= x0 < x1 <= 1.0001 and 0 <= y0 < y1 <= 1.0001):
        return f"fact {fact['fact_id']}: box outside the page"
    inside = []
    for w in page.words:
        cx = (w.x0 + w.x1) / 2 / page.width
        cy = (w.y0 + w.y1) / 2 / page.height
        if x0 - 0.005 <= cx <= x1 + 0.005 and y0 - 0.005 <= cy <= y1 + 0.005:
            inside.append(w.text)
    if not inside:
        return f"fact {fact['fact_id']}: the box covers no words"
    under = "".join(_tokens(" ".join(inside)))
    missing = [t for t in _tokens(c["quote_or_value"]) if t not in under]
    if missing:
        return f"fact {fact['fact_id']}: the box does not cover {' '.join(missing[:4])!r} of its quote"
    return None


def box_on_words(obs: Observation) -> Verdict:
    facts = [f for f in obs.facts() if _counted(f) and _paged(obs, f)]
    problems = [p for f in facts if (p := _box_problem(obs, f))]
    return _first(problems, f"every box of {len(facts)} counted paged facts sits on the words it quotes"
                  if facts else "no counted fact from a paged source")


def identity_safe(obs: Observation) -> Verdict:
    """Nothing counts unless the current identity check of its part (or, for a fact of no
    part, of the whole document) is trusted; chart rows rest on such facts alone."""
    problems = []
    for name, checks in obs.checks.items():
        current = {c["scope"]: c["identity_status"] for c in checks}
        for f in obs.raw_facts[name]:
            status = current.get(f["scope"], current.get(None))
            if status not in TRUSTED and (f["active"] or f["promotion_status"] in SUPPORTING):
                problems.append(f"{name}: fact {f['id']} counts although its identity is {status}")
    for name, want in (obs.case.expect.get("documents") or {}).items():
        if "identity" in want:
            got = obs.reports[name]["identity"]["status"] if name in obs.reports else None
            if not same(got, want["identity"]):
                problems.append(f"{name}: identity {got}, expected {want['identity']}")
    return _first(problems, "identity states are as expected and nothing untrusted counts")


def no_wrong_patient(obs: Observation) -> Verdict:
    problems = []
    for key, chart in obs.charts.items():
        pid = obs.patient_ids[key]
        for section, rows in chart.items():
            for row in rows:
                strangers = [d for d in row["document_ids"] if obs.document_owner.get(d, pid) != pid]
                if strangers:
                    problems.append(f"{key}'s {section} row {row['id']} rests on another patient's document")
    for a in obs.answers:
        pid = obs.patient_ids[a["patient"]]
        for c in _answer_citations(a["payload"]):
            d = _doc_id(c)
            if d is not None and obs.document_owner.get(d, pid) != pid:
                problems.append(f"answer to step {a['step']} cites another patient's document")
        others = [str(p[k]) for k2, p in obs.case.patients.items() if k2 != a["patient"]
                  for k in ("first", "last", "mrn")]
        if find(a["payload"]["text"], [o for o in others if len(o) >= 4]):
            problems.append(f"answer to step {a['step']} names another patient")
    return _first(problems, "every chart row and answer stays with its own patient")


def no_phi_in_logs(obs: Observation, leaks: list[dict[str, Any]]) -> Verdict:
    problems = [f"{leak['canary']} found in {leak['file']}" for leak in leaks]
    return _first(problems, f"none of {len(obs.case.phi_strings())} planted identifiers in logs or heartbeat")


def retraction_complete(obs: Observation) -> Verdict:
    if not obs.deleted:
        return True, "no document deleted in this case"
    from storage import promotions_repo

    problems = []
    for name in obs.deleted:
        doc_id = obs.uploads[name].document_id
        live = [f["id"] for f in obs.raw_facts[name] if f["active"]]
        if live:
            problems.append(f"{name}: {len(live)} facts still active after deletion")
        with obs.wb.db.cursor() as cur:
            promos = promotions_repo.promotions_for_document(cur, doc_id)
        if any(p.active and p.outcome in SUPPORTING for p in promos):
            problems.append(f"{name}: a promotion still counts after deletion")
        for key, chart in obs.charts.items():
            for section, rows in chart.items():
                if any(doc_id in row["document_ids"] for row in rows):
                    problems.append(f"{name}: still supports a {section} row of {key}")
                if any(not row["document_ids"] and row["source"] == "promoted" for row in rows):
                    problems.append(f"{key}: a promoted {section} row is left without a live source")
        if obs.reports[name]["job"] and obs.reports[name]["job"]["status"] not in ("retracted", "failed"):
            problems.append(f"{name}: its job is {obs.reports[name]['job']['status']}, not retracted")
    return _first(problems, f"{len(obs.deleted)} deleted documents left nothing active behind")


def deleted_document_not_retrieved(obs: Observation) -> Verdict:
    if not obs.deleted:
        return True, "no document deleted in this case"
    problems = []
    index = obs.wb.fact_index
    for name in obs.deleted:
        doc_id = obs.uploads[name].document_id
        if index is not None and hasattr(index, "count") and index.count(document_id=doc_id, active_only=True):
            problems.append(f"{name}: its facts are still in the vector index")
        if index is not None:
            upload = obs.uploads[name]
            for f in obs.raw_facts[name][:5]:
                hits = index.search(obs.patient_ids[upload.patient], f["fact_text"], k=5)
                if any(h.fact_id == f["id"] for h in hits):
                    problems.append(f"{name}: fact {f['id']} is still found by search")
                    break
    for a in obs.answers:
        gone = {obs.uploads[n].document_id for n, step in a["after_deletions"].items()}
        if any(_doc_id(c) in gone for c in _answer_citations(a["payload"])):
            problems.append(f"answer to step {a['step']} cites a deleted document")
    return _first(problems, "deleted documents are absent from search, vectors and later answers")


def _clinical_key(section: str, row: dict[str, Any]) -> tuple:
    from core.policy.analytes import canonical_analyte

    if section == "labs":
        name = row.get("test_name") or ""
        return (canonical_analyte(name) or _ws(name), str(row.get("collection_date")))
    column = {"allergies": "substance", "medications": "name", "problems": "name"}[section]
    return (_ws(row.get(column) or row.get("description")),)


def no_duplicate_promotion(obs: Observation) -> Verdict:
    problems = []
    for key, chart in obs.charts.items():
        for section, rows in chart.items():
            seen: dict[tuple, int] = {}
            for row in rows:
                k = _clinical_key(section, row)
                if k in seen:
                    problems.append(f"{key}: {section} rows {seen[k]} and {row['id']} hold the same thing")
                seen[k] = row["id"]
    from storage import promotions_repo

    for name, upload in obs.uploads.items():
        with obs.wb.db.cursor() as cur:
            promos = promotions_repo.promotions_for_document(cur, upload.document_id)
        per_fact: dict[int, int] = {}
        for p in promos:
            if p.active and p.outcome in SUPPORTING:
                per_fact[p.fact_id] = per_fact.get(p.fact_id, 0) + 1
        doubled = [f for f, n in per_fact.items() if n > 1]
        if doubled:
            problems.append(f"{name}: fact {doubled[0]} has {per_fact[doubled[0]]} live promotions")
        prints = [f["fact_fingerprint"] for f in obs.raw_facts[name]]
        if len(prints) != len(set(prints)):
            problems.append(f"{name}: the same fact is stored twice")
    return _first(problems, "no chart row, promotion or fact is duplicated")


# --------------------------------------------------------------------------- expectations


def _facts_of(obs: Observation, matcher: dict[str, Any]) -> list[dict[str, Any]]:
    name = matcher.get("document")
    return [f for f in obs.facts() if name is None or f["document"] == name]


def _expect_fact(obs: Observation, matcher: dict[str, Any]) -> str | None:
    candidates = [f for f in _facts_of(obs, matcher) if fact_matches(f, matcher, keys=("fact_type", "where",
                                                                                        "text_contains",
                                                                                        "quote_contains", "page"))]
    if not candidates:
        return f"no fact found with {describe(matcher)}"
    if not any(fact_matches(f, matcher, keys=STATE) for f in candidates):
        f = candidates[0]
        got = ", ".join(f"{k}={f.get(k)}" for k in STATE if k in matcher)
        return f"fact '{f['fact_text'][:60]}' has {got}; expected {describe({k: matcher[k] for k in STATE if k in matcher})}"
    return None


def _count_ok(n: int, want: int | list[int]) -> bool:
    return n == want if isinstance(want, int) else want[0] <= n <= want[1]


def _answer_problems(obs: Observation, want: dict[str, Any]) -> list[str]:
    got = next((a for a in obs.answers if a["step"] == want["step"]), None)
    if got is None:
        return [f"step {want['step']} gave no answer ({obs.step_errors.get(want['step'], 'not asked')})"]
    p, problems, label = got["payload"], [], f"answer to step {want['step']}"
    text = _ws(p["text"])
    for piece in want.get("contains", []):
        if _ws(piece) not in text:
            problems.append(f"{label} does not say {piece!r}")
    for piece in want.get("not_contains", []):
        if _ws(piece) in text:
            problems.append(f"{label} says {piece!r}, which it must not")
    for section in want.get("sections_nonempty", []):
        if not p["sections"].get(section):
            problems.append(f"{label} has nothing under {section}")
    for section in want.get("sections_empty", []):
        if p["sections"].get(section):
            problems.append(f"{label} has {len(p['sections'][section])} items under {section}, expected none")
    for name in want.get("cites_documents", []):
        if obs.uploads[name].document_id not in {_doc_id(c) for c in _answer_citations(p)}:
            problems.append(f"{label} does not cite {name}")
    for name in want.get("not_cites_documents", []):
        if obs.uploads[name].document_id in {_doc_id(c) for c in _answer_citations(p)}:
            problems.append(f"{label} cites {name}, which it must not")
    for piece in want.get("missing_contains", []):
        if not any(_ws(piece) in _ws(i["text"]) for i in p["sections"].get("missing", [])):
            problems.append(f"{label} does not report {piece!r} as missing")
    return problems


def factually_consistent(obs: Observation) -> Verdict:
    e, problems = obs.case.expect, []
    for name, want in (e.get("documents") or {}).items():
        actual = obs.reports.get(name)
        if actual is None:
            problems.append(f"{name} was never uploaded ({obs.step_errors})")
            continue
        job = actual["job"] or {}
        for key, got in (("job_status", job.get("status")), ("error_code", job.get("error_code"))):
            if key in want and not same(got, want[key]):
                problems.append(f"{name}: {key} {got}, expected {want[key]}")
    for matcher in e.get("facts", []):
        if (p := _expect_fact(obs, matcher)):
            problems.append(p)
    for matcher in e.get("no_facts", []):
        bad = [f for f in _facts_of(obs, matcher) if fact_matches(f, matcher)]
        if bad:
            problems.append(f"fact '{bad[0]['fact_text'][:60]}' should not exist ({describe(matcher)})")
    for name, counts in (e.get("fact_counts") or {}).items():
        facts = [f for f in obs.facts() if f["document"] == name]
        for fact_type, want in counts.items():
            n = len(facts) if fact_type == "all" else sum(f["fact_type"] == fact_type for f in facts)
            if not _count_ok(n, want):
                problems.append(f"{name}: {n} {fact_type} facts, expected {want}")
    for index, code in (e.get("step_errors") or {}).items():
        if obs.step_errors.get(int(index)) != code:
            problems.append(f"step {index} ended with {obs.step_errors.get(int(index)) or 'no error'}, "
                            f"expected {code}")
    unexpected = {i: c for i, c in obs.step_errors.items() if str(i) not in (e.get("step_errors") or {})}
    if unexpected:
        problems.append("unexpected errors: " + ", ".join(f"step {i}: {c}" for i, c in unexpected.items()))
    for want in e.get("answers", []):
        problems += _answer_problems(obs, want)
    return _first(problems, "facts, jobs and answers are as the case expects")


def safe_refusal(obs: Observation) -> Verdict:
    wants = {w["step"]: w for w in obs.case.expect.get("answers", [])}
    if not obs.answers:
        return True, "no question in this case"
    problems = []
    for a in obs.answers:
        want = wants.get(a["step"])
        if want is None or "refused" not in want:
            problems.append(f"step {a['step']}: the case does not say whether the answer is refused")
            continue
        p = a["payload"]
        if p["refused"] != want["refused"]:
            problems.append(f"step {a['step']}: refused={p['refused']}, expected {want['refused']}"
                            + (f" ({p['refusal_reason']})" if p["refusal_reason"] else ""))
        if "disposition" in want and not same(p["question"]["disposition"], want["disposition"]):
            problems.append(f"step {a['step']}: disposition {p['question']['disposition']}, "
                            f"expected {want['disposition']}")
        if p["refused"] and not (p["refusal_reason"] or "").strip():
            problems.append(f"step {a['step']}: refused without saying why")
    return _first(problems, f"{len(obs.answers)} answers refuse exactly when they must")


def promotion_expectations(obs: Observation) -> Verdict:
    e, problems = obs.case.expect, []
    for key, sections in (e.get("chart") or {}).items():
        for section, rows in sections.items():
            for want in rows:
                if not any(row_matches(r, want) for r in obs.charts[key][section]):
                    problems.append(f"{key}'s {section} lack {want}")
    for key, sections in (e.get("chart_absent") or {}).items():
        for section, rows in sections.items():
            for want in rows:
                if any(row_matches(r, want) for r in obs.charts[key][section]):
                    problems.append(f"{key}'s {section} hold {want}, which must not be there")
    for key, sections in (e.get("chart_counts") or {}).items():
        for section, want in sections.items():
            n = len(obs.charts[key][section])
            if not _count_ok(n, want):
                problems.append(f"{key} has {n} {section} rows, expected {want}")
    for want in e.get("promotions", []):
        from storage import promotions_repo

        with obs.wb.db.cursor() as cur:
            promos = promotions_repo.promotions_for_document(cur, obs.uploads[want["document"]].document_id)
        n = sum(same(p.outcome, want["outcome"]) for p in promos)
        if not (want.get("min", 1) <= n <= want.get("max", 10**6)):
            problems.append(f"{want['document']}: {n} promotions {want['outcome']}, expected "
                            f"{want.get('min', 1)}..{want.get('max', 'any')}")
    if not any(k in e for k in ("chart", "chart_absent", "chart_counts", "promotions")):
        return True, "the case sets no chart expectation"
    return _first(problems, "the chart holds what the case expects and nothing it forbids")


def _visible(obs: Observation, group: str) -> list[dict[str, Any]]:
    by_id = {u.document_id: n for n, u in obs.uploads.items()}
    out = []
    for lists in obs.review_lists.values():
        for f in lists.get(group, []):
            out.append(f | {"document": by_id.get(f.get("document_id"))})
    return out


def document_fact_expectations(obs: Observation) -> Verdict:
    e, problems = obs.case.expect, []
    for group, key in (("needs_review", "needs_review"), ("document_fact", "document_facts")):
        for matcher in e.get(key, []):
            shown = _visible(obs, group) + (_visible(obs, "held") if group == "needs_review" else [])
            found = [f for f in shown if (matcher.get("document") in (None, f["document"]))
                     and fact_matches(f, matcher)]
            if not found:
                problems.append(f"no {group.replace('_', ' ')} item shows {describe(matcher)}")
            elif any(f.get("promotion_status") in SUPPORTING for f in found):
                problems.append(f"{describe(matcher)} is listed for review but also counts in the chart")
    if not any(k in e for k in ("needs_review", "document_facts")):
        return True, "the case sets no review or document-fact expectation"
    return _first(problems, "needs-review and document facts are visible as the case expects")


def guideline_retrieval(obs: Observation) -> Verdict:
    from storage import guideline_repo

    problems, checked = [], 0
    with obs.wb.db.cursor() as cur:
        known = {c.chunk_id for c in guideline_repo.get_active_chunks(cur)[1]}
    for a in obs.answers:
        for item in a["payload"]["sections"].get("guideline_evidence", []):
            for c in item.get("citations", []):
                chunk = str(c.get("source_id") or "").removeprefix("guideline:")
                if chunk not in known and c.get("field_or_chunk_id") not in known:
                    problems.append(f"answer to step {a['step']} cites guideline chunk {chunk!r}, not in the corpus")
    for want in obs.case.expect.get("answers", []):
        got = next((a for a in obs.answers if a["step"] == want["step"]), None)
        if got is None:
            continue
        items = got["payload"]["sections"].get("guideline_evidence", [])
        blob = _ws(" ".join(i["text"] + " " + " ".join(str(c.get("page_or_section", "")) + " "
                                                      + str(c.get("source_title", "")) for c in i.get("citations", []))
                            for i in items))
        for piece in want.get("guideline_contains", []):
            checked += 1
            if _ws(piece) not in blob:
                problems.append(f"answer to step {want['step']}: no guideline evidence about {piece!r}")
        if want.get("guideline_not_found"):
            checked += 1
            if items:
                problems.append(f"answer to step {want['step']} cites {len(items)} guideline passages for an "
                                f"out-of-corpus question")
    return _first(problems, f"{checked} guideline expectations hold; every cited chunk is in the corpus"
                  if obs.answers else "no question in this case")


RUBRICS: dict[str, Callable[..., Verdict]] = {
    "schema_valid": schema_valid,
    "citation_present": citation_present,
    "citation_verified": citation_verified,
    "bounding_box_present": bounding_box_present,
    "box_on_words": box_on_words,
    "factually_consistent": factually_consistent,
    "identity_safe": identity_safe,
    "no_wrong_patient": no_wrong_patient,
    "safe_refusal": safe_refusal,
    "no_phi_in_logs": no_phi_in_logs,
    "retraction_complete": retraction_complete,
    "deleted_document_not_retrieved": deleted_document_not_retrieved,
    "no_duplicate_promotion": no_duplicate_promotion,
    "promotion_expectations": promotion_expectations,
    "document_fact_expectations": document_fact_expectations,
    "guideline_retrieval": guideline_retrieval,
}


def score(obs: Observation, leaks: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    out = {}
    for name, rubric in RUBRICS.items():
        try:
            passed, reason = rubric(obs, leaks) if name == "no_phi_in_logs" else rubric(obs)
        except Exception as exc:  # noqa: BLE001 - a rubric that cannot decide fails, it is never skipped
            passed, reason = False, f"the check itself failed: {type(exc).__name__}: {exc}"
        out[name] = {"passed": bool(passed), "reason": reason}
    return out
