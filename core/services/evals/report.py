"""What a reviewer reads of an eval run: plain labels, failures first, the gate's reasons.

Pure functions over a run artifact (docs/evals.md); storing and reading runs is
``core.services.evals.records``, starting them ``eval_runs``, reading a cited source
``eval_sources``.
"""

from __future__ import annotations

from typing import Any

# The gate's rule, stated here so the page can say it: a run fails when a rubric's pass rate
# falls more than this many points below the baseline (golden.gate applies it).
REGRESSION_POINTS = 5.0

# Plain words for every rubric the gate scores (DESIGN §7); unknown names still read.
RUBRIC_LABELS: dict[str, str] = {
    "schema_valid": "Facts and answers match their schemas",
    "citation_present": "Every fact and claim carries a citation",
    "citation_verified": "Every quote is found at its cited place",
    "bounding_box_present": "Paged citations carry a box on the page",
    "box_on_words": "Each box sits on the words it quotes",
    "factually_consistent": "Documents, jobs and facts are as expected",
    "identity_safe": "Nothing from an unverified document counts",
    "no_wrong_patient": "Nothing lands on or names the wrong patient",
    "safe_refusal": "Unsafe or unsupported questions are refused",
    "no_phi_in_logs": "No patient identifiers in logs",
    "retraction_complete": "Deleting a document retracts everything from it",
    "deleted_document_not_retrieved": "Deleted documents never come back as evidence",
    "no_duplicate_promotion": "No chart row is promoted twice",
    "promotion_expectations": "The right facts reach the chart, nothing else",
    "document_fact_expectations": "Review findings and document facts are as expected",
    "guideline_retrieval": "Guideline questions find the right guideline sections",
    "case_error": "The case ran to the end",
}
STAGE_LABELS: dict[str, str] = {
    "normalize": "Read document", "ocr": "OCR", "extract": "Extract facts", "verify": "Verify citations",
    "identity": "Identity check", "promote": "Promote to chart", "embed": "Embed facts",
    "retrieve": "Retrieve evidence", "rerank": "Rerank", "compose": "Compose answer", "draft": "Draft (model)",
}
# The gate names why a run failed in each reason's "kind" (docs/evals.md); in words:
GATE_REASON_LABELS: dict[str, str] = {
    "below_threshold": "Below its threshold",
    "regressed": "Worse than the baseline",
    "case_error": "A case could not run",
    "canary_leak": "A planted patient identifier leaked",
}
VERDICT_LABELS = {"pass": "Passed", "fail": "Failed"}
SECTION_LABELS = {
    "patient_findings": "Patient findings", "needs_review": "Needs human review",
    "guideline_evidence": "Guideline evidence", "missing": "Missing or not found",
}


def _sentence(text: str) -> str:
    return text[:1].upper() + text[1:]


def rubric_label(name: str) -> str:
    return RUBRIC_LABELS.get(name) or name.replace("_", " ").capitalize()


def stage_label(name: str) -> str:
    return STAGE_LABELS.get(name) or name.replace("_", " ").capitalize()


def verdict_label(verdict: str | None) -> str:
    return VERDICT_LABELS.get(verdict or "", "Unknown")


# --- what a reviewer reads first -------------------------------------------------------

def _failing(result: dict) -> list[tuple[str, str | None]]:
    return [(name, (o or {}).get("reason") if isinstance(o, dict) else None)
            for name, o in (result.get("rubrics") or {}).items()
            if (o.get("passed") if isinstance(o, dict) else o) is False]


def case_failed(result: dict) -> bool:
    return result.get("status") == "error" or bool(_failing(result))


def ordered_cases(run: dict) -> list[dict]:
    """The run's case results, failed cases first (each group in run order)."""
    results = run.get("results") or []
    return [r for r in results if case_failed(r)] + [r for r in results if not case_failed(r)]


def failure_rows(run: dict) -> list[dict[str, str]]:
    """One row per failed rubric (or error) of every failed case, in plain words."""
    out = []
    for result in ordered_cases(run):
        if not case_failed(result):
            break
        title = result.get("title") or ""
        if result.get("status") == "error":  # its rubrics all failed for this one reason
            out.append({"case_id": result["case_id"], "title": title, "rubric": "case_error",
                        "check": rubric_label("case_error"),
                        "reason": result.get("error") or "The case stopped with an error."})
            continue
        for rubric, reason in _failing(result):
            out.append({"case_id": result["case_id"], "title": title, "rubric": rubric,
                        "check": rubric_label(rubric), "reason": reason or "No reason was recorded."})
    return out


def rubric_table(run: dict) -> list[dict[str, Any]]:
    """Each rubric's pass rate against its threshold and the baseline, with a plain status."""
    thresholds = run.get("thresholds") or {}
    baseline = run.get("baseline") or {}
    gate = {(g.get("kind"), g.get("rubric")) for g in run.get("gate") or []}  # (why, rubric)
    out = []
    for rubric, rate in sorted((run.get("rubrics") or {}).items(), key=lambda kv: (kv[1], kv[0])):
        threshold, base = thresholds.get(rubric), baseline.get(rubric)
        change = None if base is None else round((rate - base) * 100, 1)
        # The gate judged the run (golden.gate.judge); the page shows that verdict, never its own.
        problems = [word for why, word in (("below_threshold", "Below threshold"), ("regressed", "regressed"))
                    if (why, rubric) in gate]
        status = _sentence(", ".join(problems)) if problems else (
            "Meets threshold" + (", below baseline" if change is not None and change < 0 else ""))
        out.append({"rubric": rubric, "label": rubric_label(rubric), "pass_rate": rate, "threshold": threshold,
                    "baseline": base, "change_points": change, "status": status, "ok": not problems})
    return out


def gate_reasons(run: dict) -> list[dict[str, str]]:
    """The gate's reasons for a failed verdict in plain words, one ``{subject, reasons}``
    per rubric or case (a rubric below its threshold and regressed is one line)."""
    grouped: dict[tuple, dict[str, Any]] = {}
    for g in run.get("gate") or []:
        why = GATE_REASON_LABELS.get(g.get("kind"), (g.get("kind") or "gate").replace("_", " ").capitalize())
        subject = " · ".join(filter(None, [rubric_label(g["rubric"]) if g.get("rubric") else None,
                                           f"case {g['case_id']}" if g.get("case_id") else None])) or "The run"
        entry = grouped.setdefault((g.get("rubric"), g.get("case_id")), {"subject": subject, "parts": []})
        message = (g.get("message") or "").strip()
        entry["parts"].append(f"{why.lower()}" + (f" ({message})" if message else ""))
    return [{"subject": e["subject"], "reasons": _sentence("; ".join(e["parts"]))} for e in grouped.values()]


def ordered_facts(result: dict) -> list[dict]:
    """The case's facts, those a failing reason quotes first (the likely culprits)."""
    reasons = " ".join(reason or "" for _, reason in _failing(result)).lower()
    facts = list((result.get("actual") or {}).get("facts") or [])

    def named(fact: dict) -> bool:
        quote = str((fact.get("citation") or {}).get("quote_or_value") or "").strip().lower()
        return bool(quote) and quote in reasons

    return [f for f in facts if named(f)] + [f for f in facts if not named(f)]


# --- the coverage guard ------------------------------------------------------------------

def _pct(value: float | None) -> str:
    return "not measured" if value is None else f"{value:.1%}"


def coverage_guard_lines(scores: dict[str, Any] | None) -> list[str]:
    """The coverage guard's figures (``coverage_guard`` of a run, docs/evals.md) in plain
    lines: precision, recall, the share of results today's readers miss that it catches,
    and what it reported on the documents as read."""
    if not scores:
        return []
    lines = [f"Coverage guard: precision {_pct(scores.get('precision'))} ({scores.get('real_alarms', 0)} of "
             f"{scores.get('alarms', 0)} places it calls results are results, with no reader), recall "
             f"{_pct(scores.get('recall'))} ({scores.get('caught', 0)} of {scores.get('dropped', 0)} results "
             "caught when their reader is made to miss them)."]
    if scores.get("missed_results"):
        lines.append(f"Results today's readers do not read on the layouts written for it: "
                     f"{scores['missed_results']}; the guard reports {scores.get('missed_results_caught', 0)} "
                     f"({_pct(scores.get('missed_share_caught'))}).")
    expected = scores.get("expected_regions") or 0
    lines.append(f"Places reported as not read on the golden documents as read: {scores.get('regions', 0)}"
                 + (f" ({expected} of them expected by their cases)." if expected else "."))
    for r in scores.get("unread_regions") or []:
        if not r.get("expected"):
            lines.append(f"  not read, no case expects it: {r['document']} · {r['where']}: {r['text'][:90]}")
    for r in (scores.get("unexplained") or [])[:10]:
        lines.append(f"  called a result but not one a reader reads: {r['document']} · {r['where']}: "
                     f"{r['text'][:80]}")
    for r in (scores.get("not_caught") or [])[:10]:
        lines.append(f"  missed by the guard: {r['document']} · {r['where']}: {r['text'][:80]}")
    if scores.get("error"):
        lines.append(f"  (part of the measure could not run: {scores['error']})")
    return lines
