"""What `make run` serves (`python -m ui.serve` runs `streamlit run app.py`): Home.py,
plus the route that sets the sign-in cookie and the guard that keeps a signed-in
session to the browser holding it (ui/session_cookie.py, docs/access.md).

`streamlit run` finds ``app`` below and serves it with uvicorn; every Streamlit setting
(STREAMLIT_* variables, .streamlit/config.toml, flags) applies as for a plain script.
"""

import streamlit as st

from ui import session_cookie

app = st.App("Home.py", routes=session_cookie.routes(), middleware=session_cookie.middleware())
