"""The parser of ``python -m core``: every command, its options, and what it runs with
(``takes_wb``: a workbench; ``handover``: the app runs it for a CLI beside it)."""

from __future__ import annotations

import argparse
from typing import Callable

from core.commands import accounts, backfill, brief, documents, evaluation, exchange, operations, review

def build_parser(parser_class: type[argparse.ArgumentParser] = argparse.ArgumentParser) -> argparse.ArgumentParser:
    parser = parser_class(prog="python -m core", description="Clinical document review workbench")
    sub = parser.add_subparsers(dest="command", required=True)

    def add(name: str, fn: Callable, help_text: str, *, takes_wb: bool = False,
            handover: bool = False, reads_once: bool = False) -> argparse.ArgumentParser:
        """``reads_once``: the command reads its documents and ends (sandbox.read_lazily)."""
        p = sub.add_parser(name, help=help_text)
        p.add_argument("--json", action="store_true", help="print one JSON object on stdout")
        p.set_defaults(fn=fn, takes_wb=takes_wb or handover, handover=handover, reads_once=reads_once)
        return p

    add("init", operations.cmd_init, "create or upgrade the data dir, schema, demo patients and corpus index")
    patient = sub.add_parser("patient", help="chart patients").add_subparsers(dest="patient_command", required=True)
    p = patient.add_parser("add", help="add a chart patient")
    p.add_argument("--mrn", required=True)
    p.add_argument("--first", required=True)
    p.add_argument("--last", required=True)
    p.add_argument("--dob", required=True, help="YYYY-MM-DD")
    p.add_argument("--sex", default="U", choices=["F", "M", "U"])
    p.add_argument("--by", default=None, help=_BY_OPTIONAL)
    p.add_argument("--json", action="store_true")
    p.set_defaults(fn=documents.cmd_patient_add, takes_wb=True, handover=True)
    p = patient.add_parser("list", help="list chart patients")
    p.add_argument("--json", action="store_true")
    p.set_defaults(fn=documents.cmd_patient_list, takes_wb=True, handover=True)

    p = add("ingest", documents.cmd_ingest, "attach a document and extract it now", handover=True,
            reads_once=True)
    p.add_argument("file")
    p.add_argument("--patient", required=True, help="patient MRN")
    p.add_argument("--doc-type", dest="doc_type")
    p.add_argument("--category")
    p.add_argument("--by", default=None, help=_BY_OPTIONAL)

    p = add("delete-document", documents.cmd_delete_document,
            "delete a document and retract everything derived from it", handover=True)
    p.add_argument("document_id", type=int)
    p.add_argument("--by", default=None, help=_BY_OPTIONAL)
    p.add_argument("--reason")

    p = add("review", review.cmd_review, "record a review decision", handover=True)
    p.add_argument("action", choices=["approve-identity", "reject-identity", "approve-fact", "reject-fact",
                                      "correct-fact", "undo-identity", "undo", "alerts", "acknowledge-alert"])
    p.add_argument("--check", type=int, help="identity check id (identity actions)")
    p.add_argument("--document", type=int,
                   help="document id (identity actions; refused when the document has several checks)")
    p.add_argument("--fact", type=int, help="fact id (approve-fact / reject-fact / correct-fact)")
    p.add_argument("--decision", type=int, help="undo: the review decision id (as the audit and the review JSON show)")
    p.add_argument("--by", help="the deciding account (an active reviewer or admin); every action but alerts")
    p.add_argument("--patient", help="alerts: the patient's MRN")
    p.add_argument("--all", action="store_true", help="alerts: withdrawn alerts too (kept for the audit)")
    p.add_argument("--alert", type=int, help="acknowledge-alert: the alert id")
    p.add_argument("--note", help="acknowledge-alert: what the clinician noted (required)")
    p.add_argument("--reason", help="required to approve a document that names another patient or prints "
                                    "identifiers that were not read, to correct a finding and to undo an "
                                    "identity decision")
    p.add_argument("--value", help="correct-fact: the value as it should read (e.g. 7.9)")
    p.add_argument("--unit", help="correct-fact: the unit")
    p.add_argument("--analyte", help="correct-fact: the test name as it should read (checked against the lab "
                                     "vocabulary)")
    p.add_argument("--range", dest="reference_range", help="correct-fact: the reference range (e.g. 0.6-1.2)")
    p.add_argument("--date", help="correct-fact: the collection date, YYYY-MM-DD")
    p.add_argument("--flag", help="correct-fact: normal, high, low, critical_high, critical_low, abnormal or unknown")
    p.add_argument("--resolution", choices=["replace", "keep-both", "keep-chart"],
                   help="approve-fact / correct-fact on a finding that differs from the chart's value for the same "
                        "test and date: replace the chart value, keep both, or keep the chart value (required "
                        "then: approving alone never replaces a chart value)")

    p = add("chart", documents.cmd_chart, "the patient's active chart rows with their supporting documents",
            handover=True)
    p.add_argument("--patient", required=True, help="patient MRN")

    p = add("brief", brief.cmd_brief, "the cited patient brief, cut to a token budget", handover=True)
    p.add_argument("--patient", required=True, help="patient MRN")
    p.add_argument("--budget-tokens", dest="budget_tokens", type=int, default=None,
                   help="the brief's budget in tokens of the embedder's tokenizer (default 1500)")

    # Beside the running app the app builds the bundle and this process writes --out
    # (core.__main__._export_fhir_in_app): the app never writes a path a caller gave.
    p = add("export-fhir", exchange.cmd_export_fhir,
            "the patient's trusted chart as one FHIR R4 Bundle (collection) with Provenance", handover=True)
    p.add_argument("--patient", required=True, help="patient MRN")
    p.add_argument("--out", help="write the bundle to this file (else it is printed, or is the JSON answer's bundle)")
    p.add_argument("--include-review", dest="include_review", action="store_true",
                   help="also items waiting for review, marked unconfirmed / preliminary")
    p.add_argument("--bundle-id", dest="bundle_id",
                   help="the bundle's id (default: a new one); exporting the same id again sends what has left "
                        "the chart since as entered-in-error")

    p = add("worker", operations.cmd_worker, "run the intake-extractor loop headless")
    p.add_argument("--once", action="store_true")

    p = add("retry", documents.cmd_retry, "retry a failed job (attempts reset, audited) and process it now",
            handover=True, reads_once=True)
    p.add_argument("job_id", type=int)
    p.add_argument("--queue", action="store_true", help="only put it back in the queue (a running worker reads it)")
    p.add_argument("--by", default=None, help=_BY_OPTIONAL)

    p = add("mllp", operations.cmd_mllp, "receive HL7 v2 messages over MLLP; each is acknowledged once it is stored")
    p.add_argument("--host", default="127.0.0.1",
                   help="the address to listen on (default: loopback only); any other needs "
                        "WORKBENCH_MLLP_ALLOWED_PEERS and WORKBENCH_MLLP_ALLOWED_SENDERS")
    p.add_argument("--port", type=int, default=None, help="default: WORKBENCH_MLLP_PORT (2575); 0 picks a free one")

    add("health", operations.cmd_health, "database, worker heartbeat and queue")
    p = add("index-corpus", operations.cmd_index_corpus, "index the guideline corpus (idempotent)", takes_wb=True)
    p.add_argument("--force", action="store_true")

    p = add("ask", review.cmd_ask, "answer a question about a patient with cited evidence, or refuse",
            handover=True)
    p.add_argument("question")
    p.add_argument("--patient", required=True, help="patient MRN")
    p.add_argument("--previous", action="append", help="an earlier question of this conversation (repeatable)")

    p = add("search-guidelines", review.cmd_search_guidelines, "hybrid guideline retrieval", handover=True)
    p.add_argument("query")
    p.add_argument("--k", type=int, default=5)

    p = add("demo", operations.cmd_demo, "load the demo documents for the demo patients through the normal upload path",
            reads_once=True)
    p.add_argument("--queue", action="store_true", help="only queue the jobs (a running worker processes them)")
    p.add_argument("--auto", action="store_true",
                   help="skip when WORKBENCH_LOAD_DEMO is off or the data dir already holds documents")

    p = add("backfill", backfill.cmd_backfill,
            "read a manifest of documents (CSV: path, patient MRN, category or doc type) into the charts; resumable",
            takes_wb=True, reads_once=True)
    p.add_argument("manifest", help="the manifest CSV; relative paths are read from its folder")
    p.add_argument("--engine", choices=["local", "ray"], default="local",
                   help="local: readers on this machine (the baseline); ray: Ray tasks (a local Ray by default)")
    p.add_argument("--address", help="ray: join this existing Ray cluster (e.g. ray://head:10001 or auto)")
    p.add_argument("--jobs", type=int, default=1, help="local: documents read at once (default 1, as the worker)")
    p.add_argument("--by", default=None, help=_BY_OPTIONAL)

    p = add("eval", evaluation.cmd_eval, "run the golden eval gate (exit 1 when it fails)")
    p.add_argument("--case", action="append", help="run only this case (repeatable)")
    p.add_argument("--update-baseline", action="store_true", help="write this run's pass rates as the baseline")
    p.add_argument("--jobs", type=int, default=None, help="cases run at once (default: one per core, at most 4)")
    p.add_argument("--progress", help="rewrite this JSON file after every case (for the Evals page)")
    p.add_argument("--no-record", action="store_true", help="write the JSON artifact only, not the database")

    users = sub.add_parser("user", help="local accounts (passwords from a prompt or stdin)").add_subparsers(
        dest="user_command", required=True)
    change = accounts.user_command
    for name, fn, help_text in (
            ("add", change(accounts.user_add), "add an account; the password is read from stdin or a prompt"),
            ("list", accounts.cmd_user_list, "list the accounts"),
            ("disable", change(accounts.user_disable), "disable an account (it is kept, never deleted)"),
            ("enable", change(accounts.user_enable), "enable a disabled account; also clears a lockout"),
            ("reset-password", change(accounts.user_reset_password),
             "set a temporary password (stdin or a prompt); the user must change it at the next sign-in")):
        p = users.add_parser(name, help=help_text)
        if name == "add":
            p.add_argument("--username", required=True)
            p.add_argument("--role", required=True, choices=["viewer", "reviewer", "admin"])
        elif name != "list":
            p.add_argument("username")
        p.add_argument("--by", default=None, help="an admin account (default: the operating-system user)")
        p.add_argument("--json", action="store_true")
        # A password is typed at this terminal: the app cannot ask for it.
        p.set_defaults(fn=fn, takes_wb=True, handover=name not in ("add", "reset-password"))

    categories = sub.add_parser("category", help="document categories and the doc type each is read as")
    categories = categories.add_subparsers(dest="category_command", required=True)
    p = categories.add_parser("list", help="categories with their doc types")
    p.add_argument("--json", action="store_true")
    p.set_defaults(fn=accounts.cmd_category_list, takes_wb=True, handover=True)
    p = categories.add_parser("map", help="map a category (created when new) to a doc type, or none (admin)")
    p.add_argument("name")
    p.add_argument("--doc-type", dest="doc_type", required=True, help="a doc type, or none: stored without extraction")
    p.add_argument("--by", default=None, help="an admin account (default: the operating-system user)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(fn=accounts.cmd_category_map, takes_wb=True, handover=True)

    return parser



_BY_OPTIONAL = "the acting account (default: the operating-system user, os:<login>)"
