"""HL7 messages the MLLP listener stored but held (their patient is on no chart, or not
certainly one), as a reviewer decides them: the list, what each says of its patient
next to the charts that agree with it, putting one on a chart, or setting it aside.

Receiving and holding them is ``core.services.interfaces.mllp``.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from core import telemetry
from domain.errors import BadInput
from domain.models import DocType, IdentifierKind, IdentityCandidate
from domain.policy.access.permissions import Permission
from domain.policy.identity.gate import check_identity, mrn_key, name_parts
from core.services.admin.accounts import authorize
from core.services.interfaces.mllp import CHANNEL, message_filename
from core.services.interfaces.mllp_ack import Refused, pid_fields, pid_mrn, read_header
from core.services.admin.patients import get_patient, list_patients
from core.services.workbench import Workbench
# The extractor's own PID reader: show a reviewer the name the identity gate will compare.
from extract.hl7.identity import pid_name
from extract.formats.hl7.parse import Encoding, decode_bytes, unescape
from extract.sniff import MIME_TYPES
from extract.values.dates import hl7_date
from storage import audit_repo, documents_repo, inbound_repo, jobs_repo

# ============================================================================ who a message names


@dataclass(frozen=True)
class StatedPatient:
    """Who one PID segment says the patient is, read by the extractor's own PID readers,
    so a reviewer sees what the identity gate will compare once the message is on a chart."""

    name: str | None  # "FAMILY, GIVEN MIDDLE", as the extractor prints it for the gate
    placeholder_name: bool  # PID-5 holds "UNKNOWN", "XXX"...: the gate ignores it
    dob: str | None  # YYYY-MM-DD
    dob_printed: str | None  # PID-7 as sent when it is not a date
    mrn: str | None

    def candidates(self) -> list[IdentityCandidate]:
        found = [(IdentifierKind.NAME, None if self.placeholder_name else self.name),
                 (IdentifierKind.DOB, self.dob), (IdentifierKind.MRN, self.mrn)]
        return [IdentityCandidate(kind=kind, value=value) for kind, value in found if value]


def stated_patients(text: str, enc: Encoding) -> list[StatedPatient]:
    """One ``StatedPatient`` per PID segment (none for a message without PID)."""
    out = []
    for fields in pid_fields(text, enc):
        raw = lambda n: fields[n] if n < len(fields) else ""  # noqa: E731
        name = pid_name(raw(5), enc)
        dob_raw = unescape(raw(7), enc).strip()
        dob = hl7_date(dob_raw) if dob_raw else None
        out.append(StatedPatient(name=name.printed if name else None,
                                 placeholder_name=bool(name and name.placeholder), dob=dob,
                                 dob_printed=dob_raw if dob_raw and not dob else None,
                                 mrn=pid_mrn(fields, enc) or None))
    return out


# ============================================================================ held messages


def held_messages(wb: Workbench) -> list[dict]:
    """Messages stored but on no chart yet, oldest first, for a reviewer."""
    with wb.db.cursor() as cur:
        return inbound_repo.held(cur)


def held_count(wb: Workbench) -> int:
    with wb.db.cursor() as cur:
        return inbound_repo.counts(cur).get("held", 0)


def holding_full(wb: Workbench, held: int | None = None) -> bool:
    """Whether the MLLP listener now refuses (AE) messages that would wait here: as many
    wait as WORKBENCH_MLLP_MAX_HELD_MESSAGES allows (the listener's own check is
    mllp._check_room, inside its write)."""
    return (held_count(wb) if held is None else held) >= wb.settings.mllp_max_held_messages


def held_for_review(wb: Workbench, *, limit: int | None = None) -> list[dict]:
    """The held messages, oldest first, as a reviewer decides them: each row with what
    its PID segments say of the patient (``stated``: one ``StatedPatient`` as a dict per
    PID, read from the stored original) and ``suggested``: the chart patients who agree
    with it on at least one identifier by the identity gate's rules, most agreeing first
    (``[{"patient_id", "agrees": ["name", "dob"], "differs": ["mrn"]}]``). ``readable``
    is False when the stored original cannot be read back (then nothing is stated)."""
    rows = held_messages(wb)[:limit]
    charts = _ChartIndex(list_patients(wb)) if rows else None
    out = []
    for row in rows:
        try:
            text, _ = decode_bytes(wb.blobs.get(row["sha256"]))
            stated = stated_patients(text, read_header(text).enc)
            readable = True
        except (OSError, Refused):  # a blob gone from disk, or (never expected) no header
            stated, readable = [], False
        out.append(row | {"readable": readable, "stated": [asdict(p) for p in stated],
                          "suggested": charts.suggest(stated)})
    return out


class _ChartIndex:
    """Chart patients by birth date, MRN (as ``same_mrn`` compares them) and family-name
    word, so suggesting charts for a message runs the gate's full comparison only on the
    few that can agree, not on every chart for every message."""

    def __init__(self, patients: list[dict]):
        self.by_dob: dict[str, list[dict]] = {}
        self.by_mrn: dict[str, list[dict]] = {}
        self.by_family: dict[str, list[dict]] = {}
        for p in patients:
            self.by_dob.setdefault(str(p["dob"]), []).append(p)
            self.by_mrn.setdefault(mrn_key(p["mrn"]), []).append(p)
            for word in set(_name_words(f"{p['last_name']}, {p['first_name']}")[1]):
                self.by_family.setdefault(word, []).append(p)

    def _maybe(self, person: "StatedPatient") -> list[dict]:
        # A name agrees (identity.names_match) only through a family-name word, printed
        # as the family name or, the other way round, as the given name.
        given, family = ([], []) if person.placeholder_name else _name_words(person.name)
        found = [p for word in set(given + family) for p in self.by_family.get(word, [])]
        found += self.by_dob.get(person.dob or "", []) + (self.by_mrn.get(mrn_key(person.mrn)) or [] if person.mrn
                                                          else [])
        return list({p["id"]: p for p in found}.values())

    def suggest(self, stated: list["StatedPatient"]) -> list[dict]:
        agrees: dict[int, set[str]] = {}
        differs: dict[int, set[str]] = {}
        for person in stated:
            candidates = person.candidates()
            for patient in self._maybe(person):
                matched = check_identity(candidates, patient).matched
                if any(matched.values()):
                    agrees.setdefault(patient["id"], set()).update(k for k, same in matched.items() if same)
                    differs.setdefault(patient["id"], set()).update(k for k, same in matched.items() if not same)
        order = ("name", "dob", "mrn")
        ranked = sorted(agrees.items(), key=lambda item: (-len(item[1]), item[0]))
        return [{"patient_id": pid, "agrees": [k for k in order if k in same],
                 "differs": [k for k in order if k in differs[pid] - same]} for pid, same in ranked]


def _name_words(name: str | None) -> tuple[list[str], list[str]]:
    return (name_parts(name) if name else None) or ([], [])


def _still_held(row: dict | None, message_id: int) -> dict:
    """The row, or a refusal that says who decided it and when."""
    if row is None:
        raise BadInput(f"Message {message_id} is not held: there is no such message.", code="not_held")
    if row["status"] != "held":
        done = {"attached": "put it on a chart", "dismissed": "set it aside as not for this clinic"}.get(
            row["status"], "decided it")
        when = f" at {row['decided_at']:%Y-%m-%d %H:%M} UTC" if row.get("decided_at") else ""
        raise BadInput(f"Message {message_id} is not held: {row['decided_by'] or 'someone'} already {done}{when}.",
                       code="not_held")
    return row


def attach_held_message(wb: Workbench, message_id: int, *, patient_id: int, by: str) -> dict:
    """A reviewer puts a held message on a chart: a document and a queued job, like an
    upload (the identity gate then checks it as any other). The decision is audited."""
    actor = authorize(wb, by, Permission.DECIDE).name
    patient = get_patient(wb, patient_id=patient_id)
    with wb.db.transaction() as cur:
        row = _still_held(inbound_repo.by_id(cur, message_id), message_id)
        cat = documents_repo.category_for_doc_type(cur, DocType.HL7V2_MESSAGE.value)
        if cat is None:
            raise BadInput("No active category reads HL7 v2 messages.", code="unknown_category")
        document = documents_repo.insert(
            cur, patient_id=patient["id"], category_id=cat["id"], filename=message_filename(row["control_id"]),
            mime=MIME_TYPES.get("hl7"), sha256=row["sha256"], size=row["size"], stored_path=row["stored_path"],
            uploaded_by=actor)
        job = jobs_repo.enqueue(cur, patient_id=patient["id"], document_id=document["id"],
                                doc_type=DocType.HL7V2_MESSAGE.value)
        done = inbound_repo.mark_attached(cur, message_id, patient_id=patient["id"], document_id=document["id"],
                                          job_id=job.id, by=actor)
        audit_repo.add_review_decision(
            cur, item_type=AUDIT_ITEM, item_id=message_id, decision="attach", actor=actor, reason=None,
            before={"status": "held", "hold_reason": row["hold_reason"]},
            after={"status": "attached", "patient_id": patient["id"], "document_id": document["id"],
                   "job_id": job.id})
    telemetry.emit("mllp_message_decided", settings=wb.settings, patient_id=patient["id"], channel=CHANNEL,
                   status="attached", document_id=document["id"], job_id=job.id, user=actor)
    return done


def dismiss_held_message(wb: Workbench, message_id: int, *, by: str, reason: str | None = None) -> dict:
    """A reviewer sets a held message aside as not for this clinic. The stored original
    and the row stay (a resend is still recognised and answered AA, stored once); only
    its status moves from held to dismissed, with who and when, and the decision is
    audited."""
    actor = authorize(wb, by, Permission.DECIDE).name
    with wb.db.transaction() as cur:
        row = _still_held(inbound_repo.by_id(cur, message_id), message_id)
        done = inbound_repo.mark_dismissed(cur, message_id, by=actor)
        audit_repo.add_review_decision(
            cur, item_type=AUDIT_ITEM, item_id=message_id, decision="dismiss", actor=actor,
            reason=(reason or "").strip() or DISMISS_REASON,
            before={"status": "held", "hold_reason": row["hold_reason"]}, after={"status": "dismissed"})
    telemetry.emit("mllp_message_decided", settings=wb.settings, channel=CHANNEL, status="dismissed", user=actor)
    return done


AUDIT_ITEM = "inbound_message"  # review_decisions.item_type of a decision on a held message
DISMISS_REASON = "not for this clinic"
