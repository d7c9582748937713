"""Streamlit entry point: navigation only. Pages live in app_pages/ and stay thin."""

import streamlit as st

st.set_page_config(page_title="Clinical Document Review Workbench", layout="wide")

pages = [
    st.Page("app_pages/overview.py", title="Chart overview", default=True),
    st.Page("app_pages/documents.py", title="Documents"),
    st.Page("app_pages/review_queue.py", title="Review queue"),
    st.Page("app_pages/chat.py", title="Chat"),
    st.Page("app_pages/evals.py", title="Evals"),
    st.Page("app_pages/operations.py", title="Operations"),
]
st.navigation(pages).run()
