"""The eval gate: the golden set is whole, the rubrics can fail, the verdict follows
thresholds and the baseline, canaries never reach an artifact, and a plain run never
moves the baseline."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

from golden.cases import load_cases
from golden.documents import build
from golden.gate import BASELINE_PATH, MIN_CASES, THRESHOLDS_PATH, judge, pass_rates, run_gate
from golden.redact import find, leaks_in_files, redact
from golden.rubrics import RUBRICS

REPO = Path(__file__).resolve().parents[2]
# The scenarios of DESIGN §7, as cases label them.
SCENARIOS = {"clean lab", "scanned lab", "image-only lab", "typed intake", "scanned intake",
             "note in an unexpected place", "uncertain allergy", "incomplete date", "irrelevant cited preference",
             "duplicate upload", "wrong-document deletion", "missing data", "out-of-corpus question",
             "PHI logging trap", "follow-up question", "DOCX", "XLSX", "TIFF", "HL7 ADT", "HL7 ORU"}
DOC_TYPES = {"lab_pdf", "intake_form", "referral_docx", "clinical_workbook", "fax_packet", "hl7v2_message",
             "fhir_bundle"}


@pytest.fixture
def in_process(monkeypatch, tmp_path):
    """Cases run in this process change the settings' data dir; put it back after."""
    from domain.settings import reload_settings

    monkeypatch.setenv("WORKBENCH_DATA_DIR", str(tmp_path / "unused"))
    monkeypatch.setenv("WORKBENCH_APP_SECRET", "test")
    yield tmp_path
    monkeypatch.undo()
    reload_settings()


def test_the_golden_set_is_whole():
    cases = load_cases()
    assert len(cases) >= MIN_CASES
    assert len({c.id for c in cases}) == len(cases)
    covered = {t for c in cases for t in c.doc_types}
    assert DOC_TYPES <= covered, f"no case for {DOC_TYPES - covered}"
    scenarios = {s for c in cases for s in c.scenarios}
    assert SCENARIOS <= scenarios, f"no case for {sorted(SCENARIOS - scenarios)}"
    for case in cases:
        asks = [i for i, s in enumerate(case.steps) if s.ask]
        declared = {a["step"] for a in case.expect.get("answers", []) if "refused" in a}
        assert set(asks) <= declared, f"{case.id}: every question must say whether it is refused"
        assert case.phi_strings(), f"{case.id} plants no identifier to watch for"


def test_every_rubric_has_a_threshold():
    thresholds = json.loads(THRESHOLDS_PATH.read_text())
    assert set(thresholds) == set(RUBRICS)
    assert len(RUBRICS) >= 10


def test_the_verdict_follows_thresholds_baseline_errors_and_leaks():
    ok = {name: {"passed": True, "reason": ""} for name in RUBRICS}
    leak = ok | {"no_phi_in_logs": {"passed": False, "reason": "canary #1 found in logs/x.jsonl"}}
    results = [{"case_id": "a", "status": "ran", "rubrics": ok},
               {"case_id": "b", "status": "ran", "rubrics": leak},
               {"case_id": "c", "status": "error", "error": "boom", "rubrics": {}}]
    rates = pass_rates(results)
    assert rates["schema_valid"] == pytest.approx(2 / 3, abs=1e-3)
    reasons = judge(rates, {"schema_valid": 0.5}, {"schema_valid": 0.75}, results)
    kinds = {(r["kind"], r["case_id"] or r["rubric"]) for r in reasons}
    assert ("regressed", "schema_valid") in kinds  # 75% -> 67% is more than 5 points
    assert ("case_error", "c") in kinds and ("canary_leak", "b") in kinds
    assert not any(r["kind"] == "below_threshold" and r["rubric"] == "schema_valid" for r in reasons)
    assert judge({"schema_valid": 0.72}, {}, {"schema_valid": 0.75}, []) == []  # within 5 points


def test_canaries_are_found_in_files_and_redacted_from_artifacts(tmp_path):
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "t.jsonl").write_text('{"event": "x", "note": "Zephyrine was here"}\n')
    (tmp_path / "logs" / "clean.jsonl").write_text('{"event": "zephyrines"}\n')
    leaks = leaks_in_files(tmp_path, ["logs/*"], ["Zephyrine", "CNRY-0042"])
    assert leaks == [{"file": "logs/t.jsonl", "canary": "canary #1"}]
    assert "Zephyrine" not in json.dumps(leaks)
    cleaned = redact({"quote": "ZEPHYRINE Q, MRN CNRY-0042", "n": 3}, ["Zephyrine", "CNRY-0042"])
    assert cleaned == {"quote": "[redacted] Q, MRN [redacted]", "n": 3}
    assert find(json.dumps(cleaned), ["Zephyrine", "CNRY-0042"]) == []


@pytest.mark.slow
def test_a_run_writes_its_artifact_without_canaries_and_leaves_the_baseline(in_process):
    baseline_before = BASELINE_PATH.read_bytes() if BASELINE_PATH.exists() else None
    results = in_process / "results"
    run = run_gate(case_ids=["lab-classic-clean"], results_dir=results, jobs=1,
                   progress_path=results / "p.progress.json")
    assert run["verdict"] == "pass", run["gate"]
    assert set(run["rubrics"]) == set(RUBRICS)
    path = results / f"{run['run_id']}.json"
    text = path.read_text()
    stored = json.loads(text)
    assert stored["results"][0]["actual"]["facts"], "the drill-down needs the actual facts"
    assert find(text, load_cases(only=["lab-classic-clean"])[0].phi_strings()) == []
    assert "[redacted]" in text  # the report's own patient name was there to redact
    assert json.loads((results / "p.progress.json").read_text())["finished"] is True
    assert {"normalize", "extract", "promote", "embed", "retrieve"} <= set(stored["latency"]["stages"])
    # the document the case uploaded is kept, content-addressed, for the Evals page's cited source
    kept = stored["results"][0]["kept_documents"]
    assert set(kept) == set(stored["results"][0]["actual"]["documents"]) == {"report"}
    data = (results / "documents" / kept["report"]["sha256"]).read_bytes()
    assert hashlib.sha256(data).hexdigest() == kept["report"]["sha256"] and data.startswith(b"%PDF")
    assert data == build("lab-classic-clean", "report")[0] and kept["report"]["filename"] == "report.pdf"
    assert (BASELINE_PATH.read_bytes() if BASELINE_PATH.exists() else None) == baseline_before


@pytest.mark.slow
def test_the_cli_prints_one_object_and_fails_on_an_unknown_case(tmp_path):
    env = {"WORKBENCH_DATA_DIR": str(tmp_path / "data"), "PATH": "/usr/bin:/bin"}
    out = subprocess.run([sys.executable, "-m", "core", "eval", "--case", "lab-classic-clean", "--json",
                          "--jobs", "1"], cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    payload = json.loads(out.stdout)
    assert {"run_id", "verdict", "cases", "rubrics", "failed_cases", "seconds"} <= set(payload)
    assert payload["verdict"] == "pass" and payload["cases"] == 1
    (artifact,) = (tmp_path / "data" / "eval-results").glob(f"{payload['run_id']}.json")
    kept = json.loads(artifact.read_text())["results"][0]["kept_documents"]
    assert (tmp_path / "data" / "eval-results" / "documents" / kept["report"]["sha256"]).is_file()
    bad = subprocess.run([sys.executable, "-m", "core", "eval", "--case", "no-such-case", "--json"], cwd=REPO,
                         env=env, capture_output=True, text=True, timeout=120)
    assert bad.returncode != 0 and "no-such-case" in bad.stderr


def test_the_gate_program_refuses_an_unknown_case_like_core_eval(tmp_path):
    env = {"WORKBENCH_DATA_DIR": str(tmp_path / "data"), "PATH": "/usr/bin:/bin"}
    bad = subprocess.run([sys.executable, "-m", "golden", "--case", "no-such-case", "--json"], cwd=REPO, env=env,
                         capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and bad.stdout == ""
    assert bad.stderr.strip() == "error: unknown_case: no golden case named no-such-case"


@pytest.mark.slow
def test_letting_an_uncertain_allergy_through_fails_the_gate_and_names_the_case(in_process, monkeypatch):
    """Break the certainty rule on purpose: a hedged allergy is treated as verified and
    promoted. The gate must fail and say which case and which rubric caught it."""
    import core.services.ingest.processing as processing
    import core.services.review.promotion as promotion
    from domain.models import Certainty
    from domain.policy.facts.certainty import Classification

    original = processing.classify

    def careless(proposal, **kwargs):
        decision = original(proposal, **kwargs)
        if proposal.fact_type == "allergy" and decision.certainty is Certainty.NEEDS_REVIEW:
            return Classification(Certainty.VERIFIED, None)
        return decision

    monkeypatch.setattr(processing, "classify", careless)
    monkeypatch.setattr(promotion, "held_for_item_review", lambda fact: None)
    run = run_gate(case_ids=["intake-typed-margin-sulfa"], results_dir=in_process / "results", jobs=1)
    assert run["verdict"] == "fail"
    assert run["failed_cases"] == ["intake-typed-margin-sulfa"]
    result = run["results"][0]
    failing = {name for name, v in result["rubrics"].items() if not v["passed"]}
    assert {"promotion_expectations", "document_fact_expectations"} & failing, result["rubrics"]
    assert any(g["kind"] == "below_threshold" for g in run["gate"])
