"""A finding that differs from the chart, decided from the command line (issue 26):
`review approve-fact` alone is refused with exit 2, naming the chart's value and the
three choices, and changes nothing; `--resolution keep-both` keeps both values."""

from __future__ import annotations

from golden.fixtures import LAB_CASES
from tests.support.cli_support import as_json, cli, two_labs_in_conflict

CASE = LAB_CASES[0]


def test_a_conflict_needs_an_explicit_resolution(tmp_path, cli_init):
    d, reports, conflict, rows = two_labs_in_conflict(tmp_path, CASE, cli_init)
    p = CASE.patient

    refused = cli(d, "review", "approve-fact", "--fact", str(conflict["fact_id"]), "--by", "dr.cli", "--json",
                  check=False)
    assert refused.returncode == 2
    assert "resolution_required" in refused.stderr and "first.pdf" in refused.stderr
    assert all(word in refused.stderr for word in ("replace", "keep-both", "keep-chart"))

    decided = as_json(cli(d, "review", "approve-fact", "--fact", str(conflict["fact_id"]), "--by", "dr.cli",
                          "--resolution", "keep-both", "--json"))
    assert decided["promotion_status"] == "promoted"
    chart = as_json(cli(d, "chart", "--patient", p.mrn, "--json"))
    labs = chart.get("labs") or chart.get("chart_lab_results") or []
    assert sorted(r["value"] for r in labs if r["test_name"] == rows[0].test_name) == sorted([rows[0].value, "12.9"])
