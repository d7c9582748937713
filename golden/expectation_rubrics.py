"""Expectation rubrics: compare what the workbench shows with what the case file says
it must show (facts, answers, refusals, promotions, review findings, guideline passages)."""

from __future__ import annotations

from typing import Any

from golden.fhir_expectations import fhir_export_problems
from golden.matching import STATE, describe, fact_matches, row_matches, same
from golden.observation import Observation
from golden.verdicts import SUPPORTING, Verdict, answer_citations, cited_document_id, folded_text, verdict_from


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


def _says(label: str, text: str, want: dict[str, Any]) -> list[str]:
    """What ``text`` fails of the expectation's ``contains`` / ``not_contains``."""
    text, problems = folded_text(text), []
    for piece in want.get("contains", []):
        if folded_text(piece) not in text:
            problems.append(f"{label} does not say {piece!r}")
    for piece in want.get("not_contains", []):
        if folded_text(piece) in text:
            problems.append(f"{label} says {piece!r}, which it must not")
    return problems


def _answer_problems(obs: Observation, want: dict[str, Any]) -> list[str]:
    got = next((a for a in obs.answers if a["step"] == want["step"]), None)
    if got is None:
        return [f"step {want['step']} gave no answer ({obs.step_errors.get(want['step'], 'not asked')})"]
    p, label = got["payload"], f"answer to step {want['step']}"
    problems = _says(label, p["text"], want)
    for section in want.get("sections_nonempty", []):
        if not p["sections"].get(section):
            problems.append(f"{label} has nothing under {section}")
    for section in want.get("sections_empty", []):
        if p["sections"].get(section):
            problems.append(f"{label} has {len(p['sections'][section])} items under {section}, expected none")
    for name in want.get("cites_documents", []):
        if obs.uploads[name].document_id not in {cited_document_id(c) for c in answer_citations(p)}:
            problems.append(f"{label} does not cite {name}")
    for name in want.get("not_cites_documents", []):
        if obs.uploads[name].document_id in {cited_document_id(c) for c in answer_citations(p)}:
            problems.append(f"{label} cites {name}, which it must not")
    for piece in want.get("missing_contains", []):
        if not any(folded_text(piece) in folded_text(i["text"]) for i in p["sections"].get("missing", [])):
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
        said = " ".join(str(w.get("message") or "") for w in job.get("warnings") or [] if isinstance(w, dict))
        for piece in want.get("warnings_contain", []):
            if folded_text(piece) not in folded_text(said):
                problems.append(f"{name}: no job warning says {piece!r}")
        if "unread_content" in want:  # results the coverage guard found that no fact reads
            got = (job.get("counts") or {}).get("unread_content", 0)
            if not _count_ok(got, want["unread_content"]):
                problems.append(f"{name}: {got} results not read, expected {want['unread_content']}")
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
            # "all" counts findings: the coverage guard's review item is counted only by its own name.
            n = sum(f["fact_type"] != "unread_content" for f in facts) if fact_type == "all" \
                else sum(f["fact_type"] == fact_type for f in facts)
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
    for want in e.get("briefs", []):
        problems += _brief_problems(obs, want)
    problems += fhir_export_problems(obs)
    return verdict_from(problems, "facts, jobs, answers, briefs and FHIR exports are as the case expects")


def _tokens(text: str) -> int:
    """Tokens of ``text`` counted afresh with the embedder's tokenizer file."""
    from tokenizers import Tokenizer

    from retrieve.embedder import find_minilm_files

    tokenizer = Tokenizer.from_file(str(find_minilm_files().tokenizer))
    tokenizer.no_truncation()
    return len(tokenizer.encode(text, add_special_tokens=False).ids)


def _brief_problems(obs: Observation, want: dict[str, Any]) -> list[str]:
    got = next((b for b in obs.briefs if b["step"] == want["step"]), None)
    if got is None:
        return [f"step {want['step']} gave no brief ({obs.step_errors.get(want['step'], 'not asked')})"]
    p, problems, label = got["payload"], [], f"brief of step {want['step']}"
    budget = obs.case.steps[want["step"]].brief
    counted = _tokens(p["text"])
    if counted > budget and not want.get("over_budget"):
        problems.append(f"{label} is {counted} tokens, over its budget of {budget}")
    if bool(p["over_budget"]) != bool(want.get("over_budget", False)):
        problems.append(f"{label}: over_budget {p['over_budget']}, expected {want.get('over_budget', False)}")
    problems += _says(label, p["text"], want)
    lines = {s["key"]: s["lines"] for s in p["sections"]}
    for key, pieces in (want.get("sections") or {}).items():
        for piece in pieces:
            if not any(folded_text(piece) in folded_text(line["text"]) for line in lines.get(key, [])):
                problems.append(f"{label}: no {key} line says {piece!r}")
    for sentinel in want.get("sentinels", []):
        if not any(sentinel in line["text"] for section in lines.values() for line in section):
            problems.append(f"{label} writes no {sentinel}")
    cut = {c["section"] for c in p["cut"] if c["lines_cut"]}
    if "cut_sections" in want and cut != set(want["cut_sections"]):
        problems.append(f"{label} cut {sorted(cut)}, expected {sorted(want['cut_sections'])}")
    cited = {cited_document_id(c) for section in lines.values() for line in section for c in line["citations"]}
    for name in want.get("cites_documents", []):
        if obs.uploads[name].document_id not in cited:
            problems.append(f"{label} does not cite {name}")
    return problems


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
    return verdict_from(problems, f"{len(obs.answers)} answers refuse exactly when they must")


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
    problems += _alert_problems(obs)
    if not any(k in e for k in ("chart", "chart_absent", "chart_counts", "promotions", "alerts", "no_alerts")):
        return True, "the case sets no chart expectation"
    return verdict_from(problems, "the chart holds what the case expects and nothing it forbids")


def _alert_problems(obs: Observation) -> list[str]:
    """The chart checks' alerts: each expected one raised (open unless the case says
    withdrawn), citing exactly the facts the case names; none of a forbidden rule open."""
    e, problems = obs.case.expect, []
    by_id = {f["fact_id"]: f for f in obs.facts()}
    for want in e.get("alerts", []):
        status = want.get("status", "open")
        found = [a for a in obs.alerts[want["patient"]] if a["rule_id"] == want["rule"] and a["status"] == status]
        if not found:
            problems.append(f"{want['patient']} has no {status} alert {want['rule']}")
            continue
        alert = found[0]
        cited = [by_id.get(f["fact_id"]) for f in alert["facts"]]
        for matcher in want.get("cites", []):
            if not any(f is not None and (matcher.get("document") in (None, f["document"]))
                       and fact_matches(f, matcher, keys=("fact_type", "text_contains")) for f in cited):
                problems.append(f"alert {want['rule']} does not cite {describe(matcher)}")
        if "cites" in want and len(cited) != len(want["cites"]):
            problems.append(f"alert {want['rule']} cites {len(cited)} facts, expected {len(want['cites'])}")
        for piece in want.get("contains", []):
            if folded_text(piece) not in folded_text(alert["message"]):
                problems.append(f"alert {want['rule']} does not say {piece!r}")
    for want in e.get("no_alerts", []):
        if any(a["rule_id"] == want["rule"] and a["status"] == "open" for a in obs.alerts[want["patient"]]):
            problems.append(f"{want['patient']} has an open alert {want['rule']}, which the case forbids")
    return problems


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
    return verdict_from(problems, "needs-review and document facts are visible as the case expects")


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
        blob = folded_text(" ".join(i["text"] + " " + " ".join(str(c.get("page_or_section", "")) + " "
                                                      + str(c.get("source_title", "")) for c in i.get("citations", []))
                            for i in items))
        for piece in want.get("guideline_contains", []):
            checked += 1
            if folded_text(piece) not in blob:
                problems.append(f"answer to step {want['step']}: no guideline evidence about {piece!r}")
        if want.get("guideline_not_found"):
            checked += 1
            if items:
                problems.append(f"answer to step {want['step']} cites {len(items)} guideline passages for an "
                                f"out-of-corpus question")
    return verdict_from(problems, f"{checked} guideline expectations hold; every cited chunk is in the corpus"
                  if obs.answers else "no question in this case")
