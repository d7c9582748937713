"""Streamlit entry point: the sign-in gate, then navigation by role. Pages live in
app_pages/ and stay thin; each one also checks the role itself (ui.auth.require)."""

import streamlit as st

from core.policy.access import Permission
from ui.auth import require_sign_in

st.set_page_config(page_title="Clinical Document Review Workbench", layout="wide")

account = require_sign_in()  # nothing below runs, and no page is listed, without a signed-in user
pages = [
    st.Page("app_pages/overview.py", title="Chart overview", default=True),
    st.Page("app_pages/documents.py", title="Documents"),
    st.Page("app_pages/review_queue.py", title="Review queue"),
    st.Page("app_pages/chat.py", title="Chat"),
    st.Page("app_pages/evals.py", title="Evals"),
]
if account.can(Permission.OPERATIONS):
    pages.append(st.Page("app_pages/operations.py", title="Operations"))
st.navigation(pages).run()
