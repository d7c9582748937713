"""Streamlit entry point: the sign-in gate, then navigation by role. Pages live in
app_pages/ and stay thin; each one also checks the role itself (ui.auth.require)."""

import streamlit as st

from domain.policy.access.permissions import Permission
from ui.auth import current_user, require_sign_in

st.set_page_config(page_title="Clinical Document Review Workbench", layout="wide")

# The navigation is built before the gate and hidden while nobody is signed in: the
# browser then forgets the page list at sign-out, and a link to a page (/documents?…)
# still names that page, which opens once the person has signed in.
signed_in = current_user()
pages = [
    st.Page("app_pages/overview.py", title="Chart overview", default=True),
    st.Page("app_pages/documents.py", title="Documents"),
    st.Page("app_pages/review_queue.py", title="Review queue"),
    st.Page("app_pages/chat.py", title="Chat"),
    st.Page("app_pages/evals.py", title="Evals"),
]
if signed_in is None or signed_in.can(Permission.OPERATIONS):
    pages.append(st.Page("app_pages/operations.py", title="Operations"))
shown = signed_in is not None and not signed_in.must_change_password
nav = st.navigation(pages, position="sidebar" if shown else "hidden")
require_sign_in()  # nothing below runs without a signed-in user: only the form is drawn
nav.run()
