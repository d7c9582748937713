"""What the job's writes hand back without reading it again (issue 27, a typed page's
statements) is what reading it again would give: the identity checks as stored, the
finished job row, and one read standing for two (the facts a reading's fingerprints
name and the document's facts)."""

from __future__ import annotations

from datetime import date

from storage import documents_repo, facts_repo, jobs_repo, patients_repo


def _document(cur, patient_id: int, name: str) -> int:
    return documents_repo.insert(cur, patient_id=patient_id, category_id=None, filename=name, mime=None,
                                 sha256=name, size=1, stored_path="p", uploaded_by=None)["id"]


def _check(patient_id: int, document_id: int, scope, **changes) -> dict:
    base = dict(patient_id=patient_id, document_id=document_id, job_id=None, doc_type="lab_pdf", scope=scope,
                status="verified", identifiers=[{"kind": "mrn", "value": "M1", "z": 1, "a": [1, 2]}],
                matched={"mrn": True, "dob": False}, mismatch_reason=None, review_required=False, unread=None)
    return {**base, **changes}


def test_identity_checks_handed_back_are_the_rows_as_stored(wb, demo_patient):
    with wb.db.transaction() as cur:
        doc = _document(cur, demo_patient["id"], "checks.pdf")
        written = facts_repo.insert_identity_checks(cur, [
            _check(demo_patient["id"], doc, None),
            _check(demo_patient["id"], doc, "page:2", status="mismatch", mismatch_reason="dob differs",
                   review_required=True, job_id=7, unread=[{"page": 2, "text": "MRN"}]),
        ])
    with wb.db.cursor() as cur:
        cur.execute("SELECT * FROM identity_checks WHERE document_id = ? ORDER BY id", [doc])
        from storage.rows import IdentityCheckRow, fetch_all

        read = fetch_all(cur, IdentityCheckRow)
    assert [list(r.to_dict().items()) for r in written] == [list(r.to_dict().items()) for r in read]


def test_one_read_gives_the_fingerprints_facts_and_the_documents_facts(wb, demo_patient):
    def fact(doc: int, fp: str, fact_type: str = "lab_result") -> dict:
        return dict(patient_id=demo_patient["id"], document_id=doc, job_id=None, identity_check_id=None,
                    doc_type="lab_pdf", fact_type=fact_type, certainty="needs_review", fact_fingerprint=fp,
                    clinical_content_fingerprint=fp, fact_text="t", structured_value={}, citation={}, confidence=1.0,
                    active=False)

    with wb.db.transaction() as cur:
        doc, other = _document(cur, demo_patient["id"], "a.pdf"), _document(cur, demo_patient["id"], "b.pdf")
        rows = facts_repo.insert_facts(cur, [fact(doc, "fp-1"), fact(doc, "fp-2", "unread_content"),
                                             fact(other, "fp-3"), fact(other, "fp-1"), fact(other, "fp-4")])
    first = {}
    for row in rows:  # in id order: the first stored fact of each fingerprint
        first.setdefault(row.fact_fingerprint, row.id)
    with wb.db.cursor() as cur:
        for fingerprints in (["fp-1", "fp-3", "fp-9"], [], ["fp-2"]):
            found, of_document = facts_repo.facts_by_fingerprints_or_document(cur, fingerprints, doc)
            assert {fp: f.id for fp, f in found.items()} == {fp: first[fp] for fp in fingerprints if fp in first}
            assert of_document == facts_repo.facts_for_document(cur, doc)
        found, _ = facts_repo.facts_by_fingerprints_or_document(cur, ["fp-1"], other)
        assert found["fp-1"].document_id == doc  # the first stored, wherever it is


def test_the_finished_job_row_is_the_row_read_again(wb, demo_patient):
    with wb.db.transaction() as cur:
        doc = _document(cur, demo_patient["id"], "job.pdf")
        job = jobs_repo.enqueue(cur, patient_id=demo_patient["id"], document_id=doc, doc_type="lab_pdf")
        jobs_repo.claim_next(cur, "w1", job_id=job.id)
        assert jobs_repo.finished(cur, job.id, status="succeeded", holder="someone else") is None
        written = jobs_repo.finished(cur, job.id, status="succeeded", timings={"total": 1.5}, counts={"stored": 2},
                                     engine="pymupdf", warnings=[{"code": "x", "page": None}], holder="w1")
        read = jobs_repo.by_id(cur, job.id)
    assert written is not None and list(written.to_dict().items()) == list(read.to_dict().items())
    assert written.status == "succeeded" and written.timings == {"total": 1.5}


def _facts(cur, patient_id: int, document_id: int, n: int) -> list[int]:
    stored = facts_repo.insert_facts(cur, [dict(
        patient_id=patient_id, document_id=document_id, job_id=None, identity_check_id=None, doc_type="lab_pdf",
        fact_type="lab_result", certainty="verified", fact_fingerprint=f"fp{document_id}-{i}",
        clinical_content_fingerprint=f"cf{document_id}-{i}", fact_text=f"Sodium {130 + i} mmol/L",
        structured_value={"test_name": "Sodium", "value": str(130 + i)}, citation={"page": 1}, confidence=0.9,
        active=True) for i in range(n)])
    return [f.id for f in stored]


def test_marking_vectors_hands_back_each_rows_words_and_state_with_ids_as_numbers_or_as_a_list(
        wb, demo_patient, monkeypatch):
    """The vector pass's marks and a job's promotion statuses write the same rows whether
    the ids go into the statement as numbers or as one list parameter (beyond
    ``_LITERAL_IDS``), and marking hands back what reading the rows gives."""
    for literal_limit in (512, 2):
        monkeypatch.setattr(facts_repo, "_LITERAL_IDS", literal_limit)
        with wb.db.transaction() as cur:
            ids = _facts(cur, demo_patient["id"], _document(cur, demo_patient["id"], f"v{literal_limit}.pdf"), 4)
            facts_repo.update_fact(cur, ids[1], active=False)
            facts_repo.update_fact(cur, ids[2], fact_text="Sodium 141 mmol/L (corrected)")
            facts_repo.set_promotion_status(cur, {ids[0]: "promoted", ids[1]: "needs_review", ids[2]: "promoted"})
            marked = facts_repo.mark_vectors(cur, [*ids, 10 ** 9], True)  # an id no row has: nothing for it
            now = facts_repo.facts_by_ids(cur, ids)
        assert marked == {i: (now[i].fact_text, not now[i].active or now[i].retracted_at is not None) for i in ids}
        assert marked[ids[1]][1] and not marked[ids[0]][1] and "corrected" in marked[ids[2]][0]
        assert all(now[i].vector_indexed_at is not None for i in ids)
        assert [now[i].promotion_status for i in ids] == ["promoted", "needs_review", "promoted", None]
        with wb.db.transaction() as cur:
            assert facts_repo.mark_vectors(cur, ids[:3], False).keys() == set(ids[:3])
            assert facts_repo.mark_vectors(cur, [], False) == {}
            assert [f.vector_indexed_at for f in facts_repo.facts_by_ids(cur, ids[:3]).values()] == [None] * 3


def _changes(cur) -> list[tuple[int, str]]:
    cur.execute("SELECT patient_id, source FROM record_changes ORDER BY rowid")
    return cur.fetchall()


def test_promotion_statuses_named_with_their_patients_write_the_change_rows_the_facts_name(wb, demo_patient):
    """A job names its facts' patients to set_promotion_status: the record's change rows
    are those the facts' own rows give (bump_rows), and none for no outcome at all."""
    written = {}
    for named in (False, True):
        with wb.db.transaction() as cur:
            other = patients_repo.add(cur, mrn=f"OTHER-{named}", first="Ann", last="Other", dob=date(1970, 1, 1))
            ids = _facts(cur, demo_patient["id"], _document(cur, demo_patient["id"], f"s{named}.pdf"), 2)
            ids += _facts(cur, other["id"], _document(cur, other["id"], f"o{named}.pdf"), 1)
        patients = {demo_patient["id"]: "mine", other["id"]: "other"}
        with wb.db.cursor() as cur:
            before = len(_changes(cur))
        with wb.db.transaction() as cur:
            by_id = facts_repo.facts_by_ids(cur, ids)
            facts_repo.set_promotion_status(cur, {i: "promoted" for i in ids},
                                            patient_ids=[by_id[i].patient_id for i in ids] if named else None)
        with wb.db.transaction() as cur:
            facts_repo.set_promotion_status(cur, {}, patient_ids=[demo_patient["id"]] if named else None)
        with wb.db.cursor() as cur:
            written[named] = sorted((patients[p], source) for p, source in _changes(cur)[before:])
    assert written[True] == written[False] == [("mine", "promotion_status"), ("other", "promotion_status")]


def test_a_documents_reading_state_says_whether_it_is_gone_and_what_earlier_readings_stored(wb, demo_patient):
    with wb.db.transaction() as cur:
        doc = _document(cur, demo_patient["id"], "with-patient.pdf")
    with wb.db.cursor() as cur:
        assert documents_repo.reading_state(cur, doc) == (False, False, False)
        assert documents_repo.reading_state(cur, 10 ** 9) == (True, False, False)
    with wb.db.transaction() as cur:
        facts_repo.insert_identity_checks(cur, [_check(demo_patient["id"], doc, "page:2")])
    with wb.db.cursor() as cur:
        assert documents_repo.reading_state(cur, doc) == (False, True, False)
    with wb.db.transaction() as cur:
        _facts(cur, demo_patient["id"], doc, 1)
        documents_repo.mark_deleted(cur, doc, "dr.a")
    with wb.db.cursor() as cur:
        assert documents_repo.reading_state(cur, doc) == (True, True, True)


def test_a_workers_first_beat_inserts_its_row_and_the_next_ones_update_it(wb):
    with wb.db.cursor() as cur:
        jobs_repo.upsert_worker(cur, "w-a", status="busy", current_job_id=4, processed=0, failed=0)
        jobs_repo.upsert_worker(cur, "w-b", status="idle", current_job_id=None, processed=0, failed=0)
        jobs_repo.upsert_worker(cur, "w-a", status="idle", current_job_id=None, processed=3, failed=1)
        found = {w["worker_id"]: w for w in jobs_repo.workers(cur)}
    assert sorted(found) == ["w-a", "w-b"]
    assert (found["w-a"]["status"], found["w-a"]["current_job_id"], found["w-a"]["processed"],
            found["w-a"]["failed"]) == ("idle", None, 3, 1)
    assert found["w-a"]["heartbeat_at"] >= found["w-b"]["heartbeat_at"]


def test_claiming_a_named_job_takes_it_only_while_it_is_pending(wb, demo_patient):
    with wb.db.transaction() as cur:
        first, second = (jobs_repo.enqueue(cur, patient_id=demo_patient["id"], document_id=_document(
            cur, demo_patient["id"], name), doc_type="lab_pdf") for name in ("named-1.pdf", "named-2.pdf"))
    with wb.db.cursor() as cur:
        claimed = jobs_repo.claim_next(cur, "w1", job_id=second.id, process="host:1:1")
        assert (claimed.id, claimed.status, claimed.worker_id, claimed.attempts) == (second.id, "running", "w1", 1)
        assert jobs_repo.claim_next(cur, "w2", job_id=second.id) is None  # running: not taken twice
        assert jobs_repo.claim_next(cur, "w2", job_id=10 ** 9) is None
        assert jobs_repo.by_id(cur, first.id).status == "pending"  # the named one only
        assert jobs_repo.by_id(cur, second.id).worker_id == "w1"
