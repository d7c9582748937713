"""Streamlit entry point: navigation only. Pages live in pages/ and stay thin."""

import streamlit as st

st.set_page_config(page_title="Clinical Document Review Workbench", layout="wide")

pages = [
    st.Page("pages/overview.py", title="Chart overview", default=True),
    st.Page("pages/documents.py", title="Documents"),
    st.Page("pages/review_queue.py", title="Review queue"),
    st.Page("pages/chat.py", title="Chat"),
    st.Page("pages/evals.py", title="Evals"),
    st.Page("pages/operations.py", title="Operations"),
]
st.navigation(pages).run()
