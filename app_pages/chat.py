"""Chat: questions about the selected patient, answered with cited evidence or refused."""

import streamlit as st

from domain.errors import WorkbenchError
from domain.policy.access.permissions import Permission
from core.services.admin.access_audit import VIEW_ANSWER
from core.services.answer.answering import SECTION_TITLES, ask
from core.services.answer.drafting import drafter_for
from core.services.answer.suggestions import suggested_questions
from ui import auth, labels
from ui.inert import md_text, plain
from ui.runtime import patient_picker, workbench
from ui.widgets import question_summary, show_citation

auth.require(Permission.READ)
wb = workbench()
patient = patient_picker()
st.title("Chat")
if patient is None:
    st.stop()
st.caption("Answers come only from this patient's chart, active documents and the guideline corpus. "
           "Diagnosis, treatment, dosing and medication changes are declined.")

turns = st.session_state.setdefault("chat_turns", {}).setdefault(patient["id"], [])


# Sections that fold: guideline passages are long reading, and an empty section is one line.
FOLDED = ("guideline_evidence",)


def _items(name: str, items: list[dict], turn: int) -> None:
    for i, item in enumerate(items):
        marker = {"needs_review": ":orange[Review:] ", "missing": ":gray[Missing:] "}.get(name, "")
        st.markdown(f"{marker}{md_text(item['text'])}")
        for j, citation in enumerate(item["citations"]):
            show_citation(wb, citation, key=f"c-{patient['id']}-{turn}-{name}-{i}-{j}")


def render_answer(payload: dict, turn: int) -> None:
    # An answer stays on the page as the chat grows; it is one view, written once.
    auth.log_view(VIEW_ANSWER, patient["id"], "answer", payload["request_id"], slot=f"answer-{payload['request_id']}")
    summary = payload.get("summary") or []
    if summary:  # two lines built from the answer's own cited items
        lines = "  \n".join(md_text(line["text"]) for line in summary)
        (st.warning if payload["refused"] else st.info)(lines, icon=":material/summarize:")
    if payload["refused"]:
        st.caption(md_text(payload["refusal_reason"]))
    elif payload.get("caveat"):
        st.caption(md_text(payload["caveat"]))
    for k, flag in enumerate(payload.get("contradictions") or []):
        with st.container(border=True):
            st.markdown(f":red[**Records disagree:**] {md_text(flag['text'].removeprefix('Records disagree: '))}")
            for j, citation in enumerate(flag["citations"]):
                show_citation(wb, citation, key=f"x-{patient['id']}-{turn}-{k}-{j}")
    empty = []
    for name, title in SECTION_TITLES.items():
        items = payload["sections"][name]
        if not items:
            empty.append(title)
        elif name in FOLDED:
            with st.expander(f"{title} ({len(items)} passage{'' if len(items) == 1 else 's'})"):
                _items(name, items, turn)
        else:
            st.markdown(f"**{title}**")
            _items(name, items, turn)
    if empty:
        st.caption("Nothing under: " + ", ".join(empty) + ".")
    with st.expander(f"How this answer was made ({payload['latency_ms']:.0f} ms)"):
        question = payload["question"]
        removed = payload["verifier"]["removed"]
        st.caption(f"{question_summary(question)} · the citation check removed {removed} "
                   f"statement{'' if removed == 1 else 's'}",
                   help=labels.code_hint(f"request {payload['request_id']}", f"topics {question['topics']}",
                                         f"intent {question['intent']}", f"rules {question.get('rules')}"))
        st.dataframe(plain(payload["handoffs"]), hide_index=True, width="stretch")


for n, (question, payload) in enumerate(turns):
    with st.chat_message("user"):
        st.markdown(md_text(question))
    with st.chat_message("assistant"):
        render_answer(payload, n)

PENDING = f"chat_pending_{patient['id']}"


def _suggest(question: str) -> None:
    st.session_state[PENDING] = question


# Questions worth asking about this patient, from what the record holds; one click asks.
suggestions = suggested_questions(wb, patient["id"])
if suggestions:
    st.caption("Suggested questions")
    columns = st.columns(2)  # two a row: a question reads whole, never cut short
    for n, s in enumerate(suggestions):
        columns[n % 2].button(s.question, key=f"suggest-{patient['id']}-{n}", help=f"Because: {s.why}",
                              width="stretch", on_click=_suggest, args=(s.question,))

typed = st.chat_input("Ask about this patient (e.g. “What is her latest A1c?”)")
prompt = typed or st.session_state.pop(PENDING, None)
if prompt:
    previous = st.session_state.get("chat_parsed", {}).get(patient["id"])
    try:
        result = ask(wb, patient["id"], prompt, previous=previous, drafter=drafter_for(wb.settings))
    except WorkbenchError as exc:
        st.error(md_text(exc.message))
    else:
        st.session_state.setdefault("chat_parsed", {})[patient["id"]] = result.parsed
        turns.append((prompt, result.payload))
        st.rerun()
