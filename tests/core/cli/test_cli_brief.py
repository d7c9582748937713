"""`python -m core brief --patient MRN [--budget-tokens N] --json`: one JSON object in the
shape DESIGN §9 names, the text without --json, and a one-line error otherwise."""

from __future__ import annotations

from tests.support.cli_support import as_json, cli


def test_brief_command_answers_in_the_contracts_shape(tmp_path, cli_init):
    data = cli_init(tmp_path / "data")
    out = as_json(cli(data, "brief", "--patient", "DEMO-1002", "--budget-tokens", "600", "--json"))
    assert {"sections", "tokens", "budget", "cut"} <= set(out)
    assert out["budget"] == 600 and out["tokens"] <= 600 and out["patient_mrn"] == "DEMO-1002"
    keys = [s["key"] for s in out["sections"]]
    assert keys[:3] == ["identity", "critical", "alerts"]
    for section in out["sections"]:
        for line in section["lines"]:
            assert line["citations"] or line["sentinels"] or line["notice"]
    problems = next(s for s in out["sections"] if s["key"] == "problems")
    assert problems["lines"][0]["sentinels"] == ["[MISSING — not documented in the record]"]
    text = cli(data, "brief", "--patient", "DEMO-1002").stdout
    assert text.startswith("PATIENT BRIEF") and "Brannigan" in text
    bad = cli(data, "brief", "--patient", "NOBODY-9", "--json", check=False)
    assert bad.returncode == 2 and bad.stdout == "" and bad.stderr.count("\n") == 1
