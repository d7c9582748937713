"""HL7 messages held for review (issue 13): what a held message says of its patient and
the charts that agree with it, setting one aside as not for this clinic (who may, only a
held one, the original kept, audited), and the Review queue's tab for them (AppTest)."""

from __future__ import annotations

import hashlib

import pytest

from domain.errors import BadInput, Forbidden
from core.services.review.audit_log import decisions
from core.services.interfaces.held_messages import (attach_held_message, dismiss_held_message, held_count,
                                         held_for_review, held_messages)
from core.services.interfaces.mllp import acknowledge
from core.services.admin.patients import get_patient
from storage import access_repo, audit_repo, inbound_repo
from tests.support.app_support import run_home
from tests.support.hl7_messages import oru

TAB = "Messages waiting for a chart"


def hold(wb, control_id: str, **kwargs) -> int:
    """A message for a patient on no chart, as the MLLP listener stores it: held."""
    _, receipt = acknowledge(wb, oru(control_id, **{"mrn": "LAB-77", **kwargs}))
    assert receipt.code == "held", receipt
    return receipt.message_id


def message(wb, message_id: int) -> dict:
    with wb.db.cursor() as cur:
        return inbound_repo.by_id(cur, message_id)


# ---------------------------------------------------------------------------- the service


def test_a_held_message_shows_the_patient_it_names_and_the_charts_that_agree(wb, demo_patient):
    brannigan = get_patient(wb, mrn="DEMO-1002")
    first = hold(wb, "H1")  # Marisol Quintero-Vale's name and birth date, under the lab's own MRN
    hold(wb, "H2", name="SOMEONE^ELSE", dob="19481102")  # only the birth date agrees, with Brannigan
    hold(wb, "H3", name="UNKNOWN^UNKNOWN", dob="1961")  # a placeholder name, a year only
    listed = held_for_review(wb)
    assert [m["control_id"] for m in listed] == ["H1", "H2", "H3"]  # oldest first
    h1, h2, h3 = listed
    assert h1["id"] == first and h1["readable"]
    assert h1["stated"] == [{"name": "QUINTERO-VALE, MARISOL", "placeholder_name": False, "dob": "1961-03-14",
                             "dob_printed": None, "mrn": "LAB-77"}]
    assert h1["suggested"][0] == {"patient_id": demo_patient["id"], "agrees": ["name", "dob"], "differs": ["mrn"]}
    assert h2["suggested"] == [{"patient_id": brannigan["id"], "agrees": ["dob"], "differs": ["name", "mrn"]}]
    assert h3["stated"][0]["placeholder_name"] and h3["stated"][0]["dob"] is None
    assert h3["stated"][0]["dob_printed"] == "1961" and h3["suggested"] == []
    assert held_count(wb) == 3 and [m["control_id"] for m in held_for_review(wb, limit=2)] == ["H1", "H2"]


def test_the_holding_area_refuses_with_ae_when_full_and_keeps_every_held_message(wb, demo_patient):
    # Issue 21: held messages had no quota, so a sender could fill the disk and the tab.
    wb.settings = wb.settings.model_copy(update={"mllp_max_held_messages": 2})
    first, second = hold(wb, "F1"), hold(wb, "F2")
    full = oru("F3", mrn="LAB-78")
    ack, receipt = acknowledge(wb, full)
    msa = next(s for s in ack.decode().split("\r") if s.startswith("MSA|")).split("|")
    assert msa[1:3] == ["AE", "F3"] and "holding area" in msa[3] and "full" in msa[3]
    assert receipt.code == "holding_area_full" and receipt.message_id is None
    assert [m["id"] for m in held_messages(wb)] == [first, second]  # none dropped to make room
    assert all(wb.blobs.get(m["sha256"]) for m in held_messages(wb))
    assert not wb.blobs.path_for(hashlib.sha256(full).hexdigest()).exists()  # the refused one is not kept

    assert acknowledge(wb, oru("F4"))[1].code == "queued"  # a known patient's result still goes through
    assert acknowledge(wb, oru("F1", mrn="LAB-77"))[1].code == "duplicate"  # a resend of a held one: AA
    dismiss_held_message(wb, first, by="dr.reviewer")
    assert acknowledge(wb, full)[1].code == "held"  # room again once a reviewer decided one


def test_a_name_printed_the_other_way_round_still_suggests_its_chart(wb, demo_patient):
    hold(wb, "S1", name="MARISOL^QUINTERO-VALE", dob="20000101")  # the gate's rule for swapped names
    (listed,) = held_for_review(wb)
    assert listed["suggested"] == [{"patient_id": demo_patient["id"], "agrees": ["name"], "differs": ["dob", "mrn"]}]


def test_an_mrn_written_differently_suggests_its_chart_by_the_gates_mrn_rule(wb, demo_patient):
    acknowledge(wb, oru("S1", value="1"))  # routed to its chart; the next reuses its control id: held
    _, receipt = acknowledge(wb, oru("S1", name="SOMEONE^ELSE", dob="19000101", mrn="demo1001"))
    assert receipt.hold_reason == "control_id_reused"
    (listed,) = held_for_review(wb)
    assert listed["suggested"] == [{"patient_id": demo_patient["id"], "agrees": ["mrn"], "differs": ["name", "dob"]}]


def test_a_message_naming_two_patients_states_both_and_suggests_both_charts(wb, demo_patient):
    brannigan = get_patient(wb, mrn="DEMO-1002")
    two = oru("T2").replace(b"\rOBR|", b"\rPID|2||DEMO-1002^^^CLINIC^MR||BRANNIGAN^THEODORE||19481102|M\rOBR|")
    _, receipt = acknowledge(wb, two)
    assert receipt.hold_reason == "ambiguous_patient"
    (listed,) = held_for_review(wb)
    assert [(p["name"], p["mrn"]) for p in listed["stated"]] == [("QUINTERO-VALE, MARISOL", "DEMO-1001"),
                                                                  ("BRANNIGAN, THEODORE", "DEMO-1002")]
    assert [(s["patient_id"], s["agrees"], s["differs"]) for s in listed["suggested"]] == [
        (demo_patient["id"], ["name", "dob", "mrn"], []), (brannigan["id"], ["name", "dob", "mrn"], [])]


def test_a_stored_original_gone_from_disk_says_so_instead_of_failing(wb):
    mid = hold(wb, "G1")
    wb.blobs.path_for(message(wb, mid)["sha256"]).unlink()
    (listed,) = held_for_review(wb)
    assert listed["readable"] is False and listed["stated"] == [] and listed["suggested"] == []


def test_a_message_naming_no_patient_states_nothing_and_suggests_nothing(wb):
    hold(wb, "N1", pid=False)
    (listed,) = held_for_review(wb)
    assert listed["hold_reason"] == "no_patient_id" and listed["stated"] == [] and listed["suggested"] == []


@pytest.mark.parametrize("who", ["dr.reviewer", "dr.admin"])
def test_a_reviewer_or_admin_sets_a_message_aside_the_original_kept_and_audited(wb, who):
    mid = hold(wb, "D1")
    sha = message(wb, mid)["sha256"]
    row = dismiss_held_message(wb, mid, by=who)
    assert row["status"] == "dismissed" and row["decided_by"] == who and row["decided_at"] is not None
    assert held_messages(wb) == [] and held_count(wb) == 0
    assert wb.blobs.get(sha) == oru("D1", mrn="LAB-77")  # the original, byte for byte
    with wb.db.cursor() as cur:
        (audit,) = audit_repo.review_decisions(cur, "inbound_message", mid)
    assert (audit["decision"], audit["actor"], audit["reason"]) == ("dismiss", who, "not for this clinic")
    assert audit["before_state"] == {"status": "held", "hold_reason": "unknown_patient"}
    assert audit["after_state"] == {"status": "dismissed"}
    assert audit["user_id"] is not None  # the account, resolved as the row was written
    (logged,) = [d for d in decisions(wb, actor=who) if d["item_type"] == "inbound_message"]
    assert logged["summary"] == f"{who} set aside message D1 from WESTFIELD LAB as not for this clinic"

    # The sender resends it (its ACK was lost): still answered AA, stored once, still set aside.
    _, again = acknowledge(wb, oru("D1", mrn="LAB-77"))
    assert again.code == "duplicate" and again.message_id == mid
    assert message(wb, mid)["status"] == "dismissed" and held_messages(wb) == []


def test_a_viewer_may_not_set_a_message_aside(wb):
    mid = hold(wb, "V1")
    with pytest.raises(Forbidden):
        dismiss_held_message(wb, mid, by="dr.viewer")
    with pytest.raises(BadInput):
        dismiss_held_message(wb, mid, by="nobody-of-that-name")
    assert message(wb, mid)["status"] == "held"
    with wb.db.cursor() as cur:
        assert audit_repo.review_decisions(cur, "inbound_message", mid) == []


def test_only_a_held_message_can_be_set_aside_or_attached_and_the_refusal_says_who(wb, demo_patient):
    attached, dismissed = hold(wb, "A1"), hold(wb, "A2")
    attach_held_message(wb, attached, patient_id=demo_patient["id"], by="dr.alice")
    dismiss_held_message(wb, dismissed, by="dr.bob")
    with pytest.raises(BadInput, match="not held: dr.alice already put it on a chart at") as refused:
        dismiss_held_message(wb, attached, by="dr.reviewer")
    assert refused.value.code == "not_held"
    with pytest.raises(BadInput, match="not held: dr.bob already set it aside as not for this clinic"):
        dismiss_held_message(wb, dismissed, by="dr.reviewer")
    with pytest.raises(BadInput, match="not held: dr.bob already set it aside"):
        attach_held_message(wb, dismissed, patient_id=demo_patient["id"], by="dr.reviewer")
    with pytest.raises(BadInput, match="no such message"):
        dismiss_held_message(wb, 9999, by="dr.reviewer")
    queued, _ = acknowledge(wb, oru("Q1"))  # routed to its chart at once: never held
    with pytest.raises(BadInput, match="not held"):
        dismiss_held_message(wb, msa_id(wb, "Q1"), by="dr.reviewer")
    assert message(wb, attached)["status"] == "attached" and message(wb, dismissed)["status"] == "dismissed"


def msa_id(wb, control_id: str) -> int:
    with wb.db.cursor() as cur:
        return cur.execute("SELECT id FROM inbound_messages WHERE control_id = ?", [control_id]).fetchone()[0]


def test_attaching_is_audited_on_the_chart_it_joined(wb, demo_patient):
    mid = hold(wb, "C1")
    row = attach_held_message(wb, mid, patient_id=demo_patient["id"], by="dr.reviewer")
    (logged,) = [d for d in decisions(wb, demo_patient["id"]) if d["item_type"] == "inbound_message"]
    assert logged["summary"] == "dr.reviewer put message C1 from WESTFIELD LAB on this chart"
    assert logged["document_id"] == row["document_id"] and logged["after"]["job_id"] == row["job_id"]


# ---------------------------------------------------------------------------- the page (AppTest)


def open_held(patient_id: int, user: str = "dr.reviewer"):
    at = run_home(user=user, patient_id=patient_id)
    at.switch_page("app_pages/review_queue.py")
    at.session_state["rq_tab"] = TAB  # as a click on the tab leaves it; the count is filled in
    at.run()
    assert not at.exception, at.exception
    return at


def tab_labels(at) -> list[str]:
    return [t.label for t in at.tabs]


def page_text(at) -> str:
    parts = [m.value for m in at.markdown] + [c.value for c in at.caption] + [str(t.proto) for t in at.table]
    return "\n".join(parts + [s.value for s in at.success] + [w.value for w in at.warning])


def views(wb) -> list[dict]:
    with wb.db.cursor() as cur:
        return access_repo.events(cur, event="view_message")


def test_the_tab_lists_the_message_with_the_patient_it_names_in_plain_words(app_env, demo_patient):
    mid = hold(app_env, "P1")
    at = open_held(demo_patient["id"])
    assert f"{TAB} (1)" in tab_labels(at)
    text = page_text(at)
    assert "Messages from interfaces waiting for a chart" in [s.value for s in at.subheader]
    assert "**Lab results** from WESTFIELD LAB (system LAB)" in text
    assert "the sender's message number P1" in text
    assert "The MRN in the message is on no chart here." in text
    assert "QUINTERO-VALE, MARISOL" in text and "14 Mar 1961" in text and "LAB-77" in text
    assert "unknown_patient" not in text and "ORU^R01" not in text  # codes only in tooltips
    chart = next(s for s in at.selectbox if s.label == "Chart")
    assert chart.options[0].startswith("Quintero-Vale, Marisol (DEMO-1001) — name and birth date agree")
    assert chart.options[0].endswith("name and birth date agree, MRN differs")

    # Shown once, written once: a rerun showing the same message adds nothing.
    at.run()
    assert [(v["actor"], v["object_type"], v["object_id"], v["patient_id"]) for v in views(app_env)] == [
        ("dr.reviewer", "inbound_message", str(mid), None)]


def test_put_on_this_chart_queues_a_job_and_the_message_leaves_the_list(app_env, demo_patient):
    first, second = hold(app_env, "P1"), hold(app_env, "P2", name="SOMEONE^ELSE")
    at = open_held(demo_patient["id"])
    attach = next(b for b in at.button if b.key == f"held-attach-{first}")
    assert attach.disabled  # nothing is put anywhere until a chart is chosen
    next(s for s in at.selectbox if s.key == f"held-chart-{first}").set_value(demo_patient["id"]).run()
    next(b for b in at.button if b.key == f"held-attach-{first}").click().run()
    assert not at.exception, at.exception

    row = message(app_env, first)
    assert row["status"] == "attached" and row["patient_id"] == demo_patient["id"]
    with app_env.db.cursor() as cur:
        job = cur.execute("SELECT status, doc_type, patient_id FROM processing_jobs WHERE id = ?",
                          [row["job_id"]]).fetchone()
    assert job == ("pending", "hl7v2_message", demo_patient["id"])
    assert any("put on the chart of Quintero-Vale, Marisol (DEMO-1001)" in s.value for s in at.success)
    # The list and the count come from the database again; the tab stays open at its new count.
    assert f"{TAB} (1)" in tab_labels(at)
    assert not any(b.key == f"held-attach-{first}" for b in at.button)
    assert any(b.key == f"held-attach-{second}" for b in at.button)
    assert "the sender's message number P1" not in page_text(at)


def test_not_for_this_clinic_sets_the_message_aside(app_env, demo_patient):
    mid = hold(app_env, "P1")
    at = open_held(demo_patient["id"])
    next(b for b in at.button if b.key == f"held-dismiss-{mid}").click().run()
    assert not at.exception, at.exception
    assert message(app_env, mid)["status"] == "dismissed" and message(app_env, mid)["decided_by"] == "dr.reviewer"
    assert any("set aside as not for this clinic" in s.value for s in at.success)
    assert f"{TAB} (0)" in tab_labels(at)
    assert any("No message from an interface is waiting" in i.value for i in at.info)


def test_a_message_someone_else_decided_meanwhile_leaves_the_list_and_says_so(app_env, demo_patient):
    mid, other = hold(app_env, "P1"), hold(app_env, "P2")
    at = open_held(demo_patient["id"])
    dismiss_held_message(app_env, mid, by="dr.alice")  # another reviewer, meanwhile
    next(b for b in at.button if b.key == f"held-dismiss-{other}").click().run()  # this one is ours
    assert any("1 message you were looking at left this list: decided by someone else" in i.value for i in at.info)
    assert not any(b.key and b.key.startswith("held-") for b in at.button)  # the list is fresh
    assert message(app_env, other)["decided_by"] == "dr.reviewer"
    at.run()
    assert not any("left this list" in i.value for i in at.info)  # said once


def test_a_viewer_sees_nothing_of_held_messages(app_env, demo_patient):
    hold(app_env, "P1")
    at = open_held(demo_patient["id"], user="dr.viewer")
    assert not any(label.startswith(TAB) for label in tab_labels(at))
    assert "QUINTERO-VALE" not in page_text(at) and "P1" not in page_text(at)
    assert not any(b.key and b.key.startswith("held-") for b in at.button)
    assert views(app_env) == []


def test_the_messages_are_not_shown_or_audited_until_the_tab_is_opened(app_env, demo_patient):
    hold(app_env, "P1")
    at = run_home(patient_id=demo_patient["id"])
    at.switch_page("app_pages/review_queue.py").run()
    assert not at.exception, at.exception
    assert f"{TAB} (1)" in tab_labels(at)  # the count is visible at a glance ...
    assert "QUINTERO-VALE" not in page_text(at) and views(app_env) == []  # ... the patient only when opened


def test_what_a_message_says_is_shown_as_inert_text(app_env, demo_patient):
    from tests.support.inert_support import HTML, IMG, LINK, RED, TEX, assert_inert, assert_shown, shown_markdown

    # Markup in every field an interface fills: the sender, the message number, the name, the MRN, the date.
    hostile = oru("X1", mrn=LINK, name=f"{IMG}^{RED}", dob=TEX).replace(b"|LAB|WESTFIELD LAB|",
                                                                       f"|LAB|{HTML}|".encode())
    _, receipt = acknowledge(app_env, hostile)
    assert receipt.code == "held"
    at = open_held(demo_patient["id"])
    strings = shown_markdown(at)
    assert_inert(strings)
    assert_shown(strings, IMG, RED, LINK, HTML)


def test_the_tab_says_when_the_holding_area_is_full(app_env, demo_patient, monkeypatch):
    from domain.settings import reload_settings

    hold(app_env, "P1")
    hold(app_env, "P2", name="SOMEONE^ELSE")
    monkeypatch.setenv("WORKBENCH_MLLP_MAX_HELD_MESSAGES", "2")
    reload_settings()  # the app's runtime opens its workbench with these settings
    at = open_held(demo_patient["id"])
    (full,) = [w.value for w in at.warning if "holding area is full" in w.value]
    assert "(2 messages)" in full and "refused" in full and "the senders keep" in full


def test_the_tab_says_nothing_of_room_while_there_is_some(app_env, demo_patient):
    hold(app_env, "P1")
    at = open_held(demo_patient["id"])
    assert not [w.value for w in at.warning if "holding area" in w.value]
