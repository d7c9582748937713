"""Sign-in, roles and the view audit through AppTest (issue 12): nothing of a patient
before sign-in, on Home or on any page run by itself; the form, a wrong password, a
browser refused after too many failures, the idle timeout, the first-sign-in password
change, sign-out; what a viewer, a reviewer and an admin see; and the views written to
the access audit."""

from __future__ import annotations

import pytest
from google.protobuf.message import Message
from streamlit.testing.v1 import AppTest

from domain.policy.access import permissions as access
from core.services.admin import access_audit
from core.services.admin import accounts
from core.services.admin import sign_in_sessions
from core.services.admin.patients import DEMO_PATIENTS
from golden.demo import DOCUMENTS
from tests.support.app_support import (app, app_workbench, browser_token, cookie_for, follow_sign_in, open_sign_in,
                               set_cookies, sign_in_session)
from tests.support.accounts import TEST_PASSWORD

PAGES = ("app_pages/overview.py", "app_pages/documents.py", "app_pages/review_queue.py", "app_pages/chat.py",
         "app_pages/evals.py", "app_pages/operations.py")


def _strings(message, out: list[str]) -> None:
    for field, value in message.ListFields():
        if field.type == field.TYPE_MESSAGE:  # a repeated field is a container
            for item in [value] if isinstance(value, Message) else value:
                if isinstance(item, Message):
                    _strings(item, out)
        elif field.type == field.TYPE_STRING:
            out.extend([value] if isinstance(value, str) else value)


def everything_shown(at: AppTest) -> str:
    """Every string of every element on the page (labels, options, bodies, help, tables)."""
    out: list[str] = []

    def walk(node) -> None:
        if (proto := getattr(node, "proto", None)) is not None:
            _strings(proto, out)
        for child in (getattr(node, "children", None) or {}).values():
            walk(child)

    walk(at._tree)
    out += [d.value.to_string() for d in at.dataframe]
    return "\n".join(out)


def assert_no_patient_data(at: AppTest) -> None:
    text = everything_shown(at)
    for p in DEMO_PATIENTS:
        for value in (p["first"], p["last"], p["mrn"]):
            assert value not in text, f"{value} shown without sign-in"
    assert not at.sidebar.selectbox  # no patient picker
    assert not at.get("page_link") and not at.dataframe


def assert_sign_in_form(at: AppTest) -> None:
    assert not at.exception, at.exception
    assert [t.label for t in at.text_input] == ["User name", "Password"]
    assert at.text_input[1].proto.type == at.text_input[1].proto.PASSWORD
    assert [b.label for b in at.button] == ["Sign in"]
    assert_no_patient_data(at)


def sign_in(at: AppTest, username: str, password: str) -> AppTest:
    at.text_input[0].input(username)
    at.text_input[1].input(password)
    next(b for b in at.button if b.label == "Sign in").click()
    return follow_sign_in(at.run())  # what the browser does with the ticket a right password gets


def events_of(wb, event: str, actor: str | None = None) -> list[dict]:
    return access_audit.events(wb, event=event, actor=actor)


def _load(wb, *filenames: str) -> dict[str, int]:
    from core.services.ingest.demo import load_demo

    return {d["filename"]: d["document_id"] for d in load_demo(wb, [d for d in DOCUMENTS if d.filename in filenames])}


# --- signed out ----------------------------------------------------------------------------


def test_opening_the_app_shows_the_sign_in_form_and_nothing_else(app_env, demo_patient):
    _load(app_env, "demo-lab-typed.pdf")
    at = app(user=None, patient=demo_patient["id"]).run()
    assert_sign_in_form(at)
    assert at.title[0].value == "Clinical Document Review Workbench"
    # A link to another page reaches the same gate: Home stops before any navigation.
    at.switch_page("app_pages/documents.py").run()
    assert_sign_in_form(at)


@pytest.mark.parametrize("page", PAGES)
def test_a_page_run_on_its_own_without_a_session_shows_no_patient_data(app_env, demo_patient, page):
    _load(app_env, "demo-lab-typed.pdf")
    at = app(page, user=None, patient=demo_patient["id"])
    at.session_state["patient_id"] = demo_patient["id"]
    at.run()
    assert_sign_in_form(at)


# --- the form --------------------------------------------------------------------------------


def test_the_right_password_signs_in_and_shows_the_user_in_the_sidebar(app_env, demo_patient):
    at = sign_in(app(user=None).run(), "dr.reviewer", TEST_PASSWORD)
    assert not at.exception, at.exception
    assert at.title[0].value == "Chart overview"
    assert at.sidebar.markdown[0].value == "Signed in as **dr.reviewer** (reviewer)"
    assert any(b.label == "Sign out" for b in at.sidebar.button)
    assert at.session_state["auth"]["username"] == "dr.reviewer"
    assert at.session_state["auth"]["user_id"] == accounts.get_account(app_env, "dr.reviewer").id
    (event,) = events_of(app_env, accounts.SIGN_IN, "dr.reviewer")
    assert event["channel"] == "ui" and event["user_id"] == at.session_state["auth"]["user_id"]


def test_a_wrong_password_says_so_and_is_audited(app_env):
    at = sign_in(app(user=None).run(), "dr.reviewer", "not the password")
    assert [e.value for e in at.error] == [accounts.SIGN_IN_REFUSED]
    assert_sign_in_form(at)
    assert "auth" not in at.session_state
    (event,) = events_of(app_env, accounts.SIGN_IN_FAILED, "dr.reviewer")
    assert event["detail"] == "attempt 1"


def test_too_many_failures_from_one_browser_refuse_it_in_the_same_words_without_locking_the_account(app_env):
    at = app(user=None).run()
    for i in range(access.CLIENT_MAX_FAILURES):
        at = sign_in(at, "dr.bob" if i % 2 else "dr.nobody", "still not the password")
        assert [e.value for e in at.error] == [accounts.SIGN_IN_REFUSED]  # no "attempts left", no "locked"
    at = sign_in(at, "dr.bob", TEST_PASSWORD)  # this browser is refused now, even the right password
    assert [e.value for e in at.error] == [accounts.SIGN_IN_REFUSED]
    assert_sign_in_form(at)
    assert len(events_of(app_env, accounts.SIGN_IN_FAILED, "dr.bob")) == access.CLIENT_MAX_FAILURES // 2
    assert events_of(app_env, accounts.SIGN_IN_THROTTLED, "dr.bob")
    assert not events_of(app_env, accounts.ACCOUNT_LOCKED, "dr.bob")
    # dr.bob at another address is not locked out by the guesser at this one.
    assert accounts.sign_in(app_env, "dr.bob", TEST_PASSWORD, client="192.0.2.10").ok


def test_an_idle_session_is_signed_out_with_a_message(app_env, demo_patient):
    at = sign_in_session(app(user=None), "dr.reviewer", idle_minutes=20, wb=app_env)
    at.run()
    assert any(i.value == "Signed out after 15 minutes without activity." for i in at.info)
    assert_sign_in_form(at)
    assert "auth" not in at.session_state
    assert len(events_of(app_env, accounts.IDLE_TIMEOUT, "dr.reviewer")) == 1
    at.run()  # the browser still sends the ended sign-in's cookie: it stays ended, audited once
    assert_sign_in_form(at)
    assert len(events_of(app_env, accounts.IDLE_TIMEOUT, "dr.reviewer")) == 1
    # A session seen a minute ago stays, and its last activity moves on.
    at = sign_in_session(app(user=None), "dr.reviewer", idle_minutes=1, wb=app_env)
    held = sign_in_sessions.check(app_workbench(), browser_token(at)).sign_in
    before = held.last_seen
    at.run()
    assert at.title[0].value == "Chart overview" and held.last_seen > before


# --- the session belongs to the browser's cookie (issue 21) --------------------------------


def test_a_signed_in_session_without_its_browsers_cookie_shows_only_the_form(app_env, demo_patient):
    """What a client that names a signed-in session's id (it is in every upload URL) but
    lacks that browser's cookie gets: the form, and the session ends, nothing kept."""
    at = app(user="dr.reviewer")
    at.session_state["patient_id"] = demo_patient["id"]
    at.run()
    assert at.title[0].value == "Chart overview"
    at.session_state["chat_turns"] = {1: [("question", {"answer": "patient data"})]}
    set_cookies(at, {})  # the same session, now reached by a client with no cookie
    at.run()
    assert_sign_in_form(at)
    assert "auth" not in at.session_state and "chat_turns" not in at.session_state
    (refused,) = events_of(app_env, sign_in_sessions.SESSION_REFUSED, "dr.reviewer")
    assert refused["user_id"] == accounts.get_account(app_env, "dr.reviewer").id
    # A cookie the server never issued is no better.
    at = app(user="dr.reviewer")
    at.run()
    set_cookies(at, cookie_for("a-token-nobody-was-given"))
    at.run()
    assert_sign_in_form(at)


def test_another_sign_ins_cookie_does_not_open_the_session_it_names(app_env, demo_patient):
    """A signed-in viewer naming a reviewer's session id: they are themselves, in a
    session holding nothing of the reviewer's."""
    at = app(user="dr.reviewer")
    at.session_state["patient_id"] = demo_patient["id"]
    at.run()
    at.session_state["chat_turns"] = {1: [("question", {"answer": "patient data"})]}
    set_cookies(at, cookie_for(open_sign_in("dr.viewer", wb=app_env)))
    at.run()
    assert at.sidebar.markdown[0].value == "Signed in as **dr.viewer** (viewer)"
    assert "chat_turns" not in at.session_state and at.session_state["auth"]["username"] == "dr.viewer"


def test_the_cookie_signs_in_a_new_session_until_sign_out(app_env):
    """A reload or a new tab of the browser (a new Streamlit session) is signed in by the
    cookie; after signing out the same cookie opens nothing."""
    token = open_sign_in("dr.reviewer", wb=app_env)
    at = set_cookies(app(user=None), cookie_for(token)).run()
    assert not at.exception, at.exception
    assert at.title[0].value == "Chart overview"
    assert at.sidebar.markdown[0].value == "Signed in as **dr.reviewer** (reviewer)"
    assert not events_of(app_env, accounts.SIGN_IN, "dr.reviewer")  # no password, no new sign-in
    next(b for b in at.sidebar.button if b.label == "Sign out").click().run()
    assert_sign_in_form(at)
    tab = set_cookies(app(user=None), cookie_for(token)).run()
    assert_sign_in_form(tab)
    assert any(i.value == "Signed out." for i in tab.info)
    tab.run()  # said once, not at every try of the form
    assert_sign_in_form(tab)
    assert not tab.info
    assert len(events_of(app_env, accounts.SIGN_OUT, "dr.reviewer")) == 1


def test_a_server_without_the_sign_in_route_says_how_to_start_it(app_env, monkeypatch):
    """A bare `streamlit run Home.py` cannot set the cookie: it says so, and offers no form
    that could never sign anyone in."""
    at = app(user=None)
    monkeypatch.setattr("ui.session_cookie._installed", False)
    at.run()
    assert any("make run" in e.value and "streamlit run app.py" in e.value for e in at.error)
    assert not at.text_input and not at.button


def test_a_disabled_account_is_signed_out_at_its_next_click(app_env):
    at = app(user="dr.carol").run()
    assert at.title[0].value == "Chart overview"
    accounts.disable_user(app_env, "dr.carol", by="dr.admin")
    at.run()
    assert any("no longer active" in i.value for i in at.info)
    assert_sign_in_form(at)


def test_the_first_sign_in_with_a_temporary_password_asks_for_a_new_one(app_env):
    accounts.add_user(app_env, username="nurse.kim", role="reviewer", password="temporary-walnut-sky-1", by="dr.admin",
                      must_change_password=True)
    at = sign_in(app(user=None).run(), "nurse.kim", "temporary-walnut-sky-1")
    assert not at.exception, at.exception
    assert at.title[0].value == "Change your password"
    assert [t.label for t in at.text_input] == ["Current password", "New password", "New password again"]
    assert_no_patient_data(at)

    def change(current: str, new: str, again: str) -> None:
        for box, value in zip(at.text_input, (current, new, again)):
            box.input(value)
        next(b for b in at.button if b.label == "Change password").click()
        at.run()

    change("temporary-walnut-sky-1", "my-own-cedar-ribbon-42", "my-own-cedar-ribbon-43")
    assert any("not the same" in e.value for e in at.error)
    change("temporary-walnut-sky-1", "short", "short")
    assert any("at least 12 characters" in e.value for e in at.error)
    change("temporary-walnut-sky-1", "my-own-cedar-ribbon-42", "my-own-cedar-ribbon-42")
    assert not at.exception, at.exception
    assert at.title[0].value == "Chart overview"
    assert any(s.value == "Password changed." for s in at.sidebar.success)
    assert not accounts.get_account(app_env, "nurse.kim").must_change_password
    assert accounts.sign_in(app_env, "nurse.kim", "my-own-cedar-ribbon-42").ok
    assert events_of(app_env, accounts.PASSWORD_CHANGED, "nurse.kim")


def test_sign_out_returns_to_the_form_and_is_audited(app_env):
    at = app(user="dr.reviewer").run()
    at.session_state["chat_turns"] = {1: [("question", {"answer": "patient data"})]}
    next(b for b in at.sidebar.button if b.label == "Sign out").click().run()
    assert_sign_in_form(at)
    assert any(i.value == "Signed out." for i in at.info)
    assert "auth" not in at.session_state and "chat_turns" not in at.session_state  # nothing left behind
    assert len(events_of(app_env, accounts.SIGN_OUT, "dr.reviewer")) == 1


# --- what each role sees -------------------------------------------------------------------------


@pytest.fixture
def review_work(app_env, demo_patient):
    """A chart with a read document, a patient-match check and findings waiting for review."""
    docs = _load(app_env, "demo-lab-typed.pdf", "demo-intake.pdf", "demo-wrong-patient-lab.pdf")
    return app_env, demo_patient, docs


DECISION_BUTTONS = {"Approve identity", "Reject identity", "Approve", "Keep out of the chart", "Reject",
                    "Correct", "Undo decision", "Save box", "Move or resize the box", "Draw the box"}


def test_a_viewer_reads_the_queue_but_gets_no_decision_controls(review_work):
    wb, patient, _ = review_work
    at = app(user="dr.viewer")
    at.session_state["patient_id"] = patient["id"]
    at.run()
    at.switch_page("app_pages/review_queue.py").run()
    assert not at.exception, at.exception
    assert any("decisions need the reviewer role" in c.value for c in at.caption)
    assert "items to review" in " ".join(m.value for m in at.markdown)  # the queue is listed
    assert not DECISION_BUTTONS & {b.label for b in at.button}
    assert not any(t.label.startswith("Reason") for t in at.text_input)
    assert not any(b.label.startswith("Approve ") for b in at.button)  # no bulk approval either
    # A reviewer on the same chart gets them.
    at = app(user="dr.reviewer")
    at.session_state["patient_id"] = patient["id"]
    at.run()
    at.switch_page("app_pages/review_queue.py").run()
    assert DECISION_BUTTONS & {b.label for b in at.button}


def test_a_viewer_cannot_upload_delete_or_add_patients(review_work):
    wb, patient, docs = review_work
    at = app(user="dr.viewer", document=docs["demo-lab-typed.pdf"])
    at.session_state["patient_id"] = patient["id"]
    at.run()
    assert not any(e.label == "Add a patient" for e in at.expander)
    assert not any(b.label == "Add patient" for b in at.button)
    at.switch_page("app_pages/documents.py").run()
    assert not at.exception, at.exception
    assert not at.get("file_uploader") and not any(e.label == "Upload documents" for e in at.expander)
    assert not any(b.label.startswith("Delete this document") for b in at.button)
    assert at.get("bidi_component")  # the document itself is readable
    at = app(user="dr.reviewer", document=docs["demo-lab-typed.pdf"])
    at.session_state["patient_id"] = patient["id"]
    at.run()
    at.switch_page("app_pages/documents.py").run()
    assert at.get("file_uploader") and any(b.label.startswith("Delete this document") for b in at.button)


@pytest.mark.parametrize("user, role", [("dr.viewer", "viewer"), ("dr.reviewer", "reviewer")])
def test_operations_is_for_admins_only(app_env, user, role):
    at = app("app_pages/operations.py", user=user).run()
    assert not at.exception, at.exception
    assert any(w.value.startswith(f"Your role ({role}) cannot see operations and the access audit")
               for w in at.warning)
    assert not at.dataframe and not at.button
    at = app(user=user).run()  # and it is not in their navigation
    with pytest.raises(ValueError, match="Could not find a navigation page"):
        at.switch_page("app_pages/operations.py")


def access_table(at: AppTest):
    return next(d.value for d in at.dataframe if "what" in d.value.columns)


def test_an_admin_manages_users_and_reads_the_access_audit(app_env, demo_patient):
    at = app(user="dr.reviewer")
    at.session_state["patient_id"] = demo_patient["id"]
    at.run()  # a view of the demo patient's chart to find in the audit
    at = app(user="dr.ops").run()
    at.switch_page("app_pages/operations.py").run()
    assert not at.exception, at.exception
    assert [t.label for t in at.tabs] == ["Jobs and workers", "Users", "Access audit", "Document categories"]
    users = next(d.value for d in at.dataframe if "must change password" in d.value.columns).set_index("user")
    assert users.loc["dr.viewer", "role"] == "viewer" and bool(users.loc["dr.viewer", "active"])

    # Add an account with a temporary password: it must be changed at the first sign-in.
    by_label = {t.label: t for t in at.text_input}
    by_label["User name"].input("nurse.lee")
    next(s for s in at.selectbox if s.label == "Role").set_value("viewer")
    by_label["Temporary password"].input("temporary-fig-lantern-9")
    next(b for b in at.button if b.label == "Add account").click().run()
    assert not at.exception, at.exception
    added = accounts.get_account(app_env, "nurse.lee")
    assert added.role == "viewer" and added.must_change_password and added.created_by == "dr.ops"
    assert any("nurse.lee added as viewer" in s.value for s in at.success)

    # Disable one, then enable it again.
    at.selectbox(key="users_pick").set_value("dr.bob").run()
    next(b for b in at.button if b.label == "Disable account").click().run()
    assert not accounts.get_account(app_env, "dr.bob").active
    next(b for b in at.button if b.label == "Enable account").click().run()
    assert accounts.get_account(app_env, "dr.bob").active
    # An admin cannot disable their own account from here.
    at.selectbox(key="users_pick").set_value("dr.ops").run()
    assert next(b for b in at.button if b.label == "Disable account").disabled

    # The access audit: newest first, in words, filtered by user and by patient, as CSV.
    at.selectbox(key="access_who").set_value("dr.reviewer").run()
    audit = access_table(at)
    assert list(audit["who"]) == ["dr.reviewer"] and list(audit["what"]) == ["viewed a chart"]
    at.selectbox(key="access_who").set_value("All").run()
    at.selectbox(key="access_patient").set_value(demo_patient["id"]).run()
    audit = access_table(at)
    assert set(audit["patient"]) == {"MRN DEMO-1001"} and set(audit["what"]) == {"viewed a chart"}
    assert any(d.proto.label == "Download access audit (CSV)" for d in at.get("download_button"))
    csv = access_audit.events_csv(access_audit.events(app_env, patient_id=demo_patient["id"]))
    assert csv.splitlines()[0].startswith("occurred_at,actor,user_id,event,patient_id,patient_mrn")
    assert ",dr.reviewer," in csv and ",view_chart," in csv and ",DEMO-1001," in csv


# --- the view audit -----------------------------------------------------------------------------


def test_a_chart_view_is_written_once_per_patient_shown(app_env, demo_patient):
    from core.services.admin.patients import get_patient

    at = app(user="dr.reviewer")
    at.session_state["patient_id"] = demo_patient["id"]
    at.run()
    at.run()
    at.run()  # reruns of the same chart: one view
    views = events_of(app_env, access_audit.VIEW_CHART)
    assert [(v["actor"], v["patient_id"], v["user_id"]) for v in views] == [
        ("dr.reviewer", demo_patient["id"], accounts.get_account(app_env, "dr.reviewer").id)]
    other = get_patient(app_env, mrn="DEMO-1002")
    at.sidebar.selectbox[0].set_value(other["id"]).run()
    at.sidebar.selectbox[0].set_value(demo_patient["id"]).run()
    assert [v["patient_id"] for v in events_of(app_env, access_audit.VIEW_CHART)] == [
        demo_patient["id"], other["id"], demo_patient["id"]]  # newest first


def test_opening_a_document_and_a_chat_answer_are_views(app_env, demo_patient):
    docs = _load(app_env, "demo-lab-typed.pdf")
    at = app(user="dr.reviewer", document=docs["demo-lab-typed.pdf"])
    at.session_state["patient_id"] = demo_patient["id"]
    at.run()
    at.switch_page("app_pages/documents.py").run()
    at.run()
    (view,) = events_of(app_env, access_audit.VIEW_DOCUMENT)
    assert (view["patient_id"], view["object_type"], view["object_id"]) == (
        demo_patient["id"], "document", str(docs["demo-lab-typed.pdf"]))
    at.switch_page("app_pages/chat.py").run()
    at.chat_input[0].set_value("What is her latest LDL?").run()
    assert not at.exception, at.exception
    at.run()
    (answer,) = events_of(app_env, access_audit.VIEW_ANSWER)
    assert answer["patient_id"] == demo_patient["id"] and answer["object_type"] == "answer"
    assert answer["actor"] == "dr.reviewer"


# --- the identity provider (st.login), with a stubbed user -------------------------------------


@pytest.fixture
def oidc(app_env, monkeypatch):
    import json

    from domain.settings import reload_settings

    monkeypatch.setenv("WORKBENCH_AUTH", "oidc")
    monkeypatch.setenv("WORKBENCH_OIDC_ROLES", json.dumps(
        {"claim": "groups", "roles": {"cdw-readers": "viewer", "cdw-reviewers": "reviewer"},
         "users": {"head.nurse@clinic.example": "admin"}}))
    reload_settings()
    yield app_env
    reload_settings()


def oidc_app(**user) -> AppTest:
    at = app(user=None)
    at.user = {"is_logged_in": True, "email_verified": True, **user} if user else {"is_logged_in": False}
    return at.run()


def test_an_identity_provider_user_is_mapped_to_a_role(oidc):
    at = oidc_app(email="R.Ng@clinic.example", groups=["staff", "cdw-reviewers"])
    assert not at.exception, at.exception
    assert at.title[0].value == "Chart overview"
    assert at.sidebar.markdown[0].value.endswith("(reviewer)")
    account = accounts.get_account(oidc, "r.ng@clinic.example")
    assert (account.role, account.auth_source) == ("reviewer", "oidc")
    assert events_of(oidc, accounts.SIGN_IN, "r.ng@clinic.example")[0]["channel"] == "oidc"
    at = oidc_app(email="head.nurse@clinic.example", groups=[])
    assert accounts.get_account(oidc, "head.nurse@clinic.example").role == "admin"


def test_an_identity_provider_user_without_a_role_sees_nothing(oidc):
    at = oidc_app(email="visitor@clinic.example", groups=["staff"])
    assert any("no role for you" in e.value for e in at.error)
    assert_no_patient_data(at)
    assert accounts.get_account(oidc, "visitor@clinic.example") is None
    at = oidc_app()  # not signed in at the provider yet: only the button that starts st.login
    assert [b.label for b in at.button] == ["Sign in with your organisation's account"]
    assert_no_patient_data(at)


# --- the first admin -----------------------------------------------------------------------------


@pytest.fixture
def fresh_dir(settings, monkeypatch):
    """A data dir with no account at all (no `wb` fixture: nothing seeded)."""
    import streamlit as st

    from tests.support.app_support import fresh_app_runtime

    fresh_app_runtime(monkeypatch)
    yield settings
    st.cache_resource.clear()


def test_a_fresh_data_dir_has_one_admin_with_a_one_time_password(fresh_dir):
    import stat

    at = app(user=None).run()
    assert_sign_in_form(at)
    assert any("initial-admin-password.txt" in c.value for c in at.caption)
    path = fresh_dir.data_dir / "initial-admin-password.txt"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    password = next(line.split(": ", 1)[1] for line in path.read_text().splitlines() if line.startswith("password: "))
    at = sign_in(at, "admin", password)
    assert at.title[0].value == "Change your password"
    for box, value in zip(at.text_input, (password, "the-admins-own-pass", "the-admins-own-pass")):
        box.input(value)
    next(b for b in at.button if b.label == "Change password").click()
    at.run()
    assert not at.exception, at.exception
    assert at.title[0].value == "Chart overview" and not path.exists()  # spent
