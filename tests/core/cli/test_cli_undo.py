"""`review undo --decision N` from the command line (issue 26): a conflict approved with
--resolution replace is undone and the chart shows the old value again; undoing twice
is refused with exit 2 and a message; `review correct-fact` takes --analyte and --range."""

from __future__ import annotations

from golden.fixtures import LAB_CASES
from tests.support.cli_support import as_json, cli, two_labs_in_conflict

CASE = LAB_CASES[0]


def lab_values(d, mrn, test_name):
    chart = as_json(cli(d, "chart", "--patient", mrn, "--json"))
    return sorted((r["value"], r.get("reference_range")) for r in chart["labs"] if r["test_name"] == test_name)


def test_undo_restores_the_replaced_value_and_refuses_a_second_undo(tmp_path, cli_init):
    d, reports, conflict, rows = two_labs_in_conflict(tmp_path, CASE, cli_init)
    p = CASE.patient
    name = rows[0].test_name

    decided = as_json(cli(d, "review", "approve-fact", "--fact", str(conflict["fact_id"]), "--by", "dr.cli",
                          "--resolution", "replace", "--json"))
    assert [v for v, _ in lab_values(d, p.mrn, name)] == ["12.9"]
    undone = as_json(cli(d, "review", "undo", "--decision", str(decided["decision_id"]), "--by", "dr.cli",
                         "--reason", "wrong choice", "--json"))
    assert undone["undone_decision_id"] == decided["decision_id"]
    assert undone["promotion_status"] == "conflict_needs_review"
    assert "from first.pdf is current again" in undone["summary"]
    assert [v for v, _ in lab_values(d, p.mrn, name)] == [rows[0].value]

    again = cli(d, "review", "undo", "--decision", str(decided["decision_id"]), "--by", "dr.cli", "--json",
                check=False)
    assert again.returncode == 2 and "already undone" in again.stderr

    corrected = as_json(cli(d, "review", "correct-fact", "--fact", str(conflict["fact_id"]), "--by", "dr.cli",
                            "--value", "12.8", "--range", "3.5-10.5", "--analyte", name, "--resolution", "keep-both",
                            "--reason", "value and range misread", "--json"))
    assert corrected["before"] == {"value": "12.9", "reference_range": rows[0].reference_range}
    assert ("12.8", "3.5-10.5") in lab_values(d, p.mrn, name)
    unknown = cli(d, "review", "correct-fact", "--fact", str(reports[1]["facts"][1]["fact_id"]), "--by", "dr.cli",
                  "--analyte", "Zorblium count", "--reason", "renamed", "--json", check=False)
    assert unknown.returncode == 2 and "lab vocabulary" in unknown.stderr
