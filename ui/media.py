"""Images and downloads without a lasting /media URL (issue 21, item 2).

Streamlit serves what ``st.image`` is given as bytes, and what ``st.download_button``
is given as data, from its media store at ``/media/<content hash>.<ext>``: an address
with no session or sign-in check, answered for as long as the file stays in the store,
even after the tab that showed it has closed. A page image or an audit CSV of MRNs must
not sit there, so:

- images go to the browser inline, as ``data:`` URLs (``data_url``); ``st.image`` passes
  a ``data:`` URL straight to the page (streamlit/elements/lib/image_utils.py,
  ``image_to_url``) and the viewer's overlay component sends it in its JSON;
- a download is built only when the button is clicked (``download_button``: Streamlit's
  deferred ``data`` callable). Streamlit then stores the built file and gives its URL to
  the browser, which fetches it at once; the file is dropped from the store
  ``KEEP_SECONDS`` later instead of waiting for Streamlit's own sweeps (the second script
  run after the click, which may never come when the person walks away).
"""

from __future__ import annotations

import base64
import io
import threading
from collections.abc import Callable

import streamlit as st

from ui.streamlit_internals import drop_download, media_file_id, media_store

KEEP_SECONDS = 10.0  # how long a built download stays fetchable: the browser fetches it at once


def data_url(image: bytes, mime: str | None = None, *, width: int | None = None) -> str:
    """``image`` as a ``data:`` URL; with ``width``, scaled down to that many pixels
    wide first, as ``st.image(bytes, width=…)`` did before sending it."""
    if width is not None:
        from PIL import Image

        with Image.open(io.BytesIO(image)) as img:
            if img.width > width:
                small = img.resize((width, max(1, round(img.height * width / img.width))), Image.BILINEAR)
                buf = io.BytesIO()
                small.save(buf, format="PNG")
                image, mime = buf.getvalue(), "image/png"
    mime = mime or _sniff(image)
    return f"data:{mime};base64," + base64.b64encode(image).decode("ascii")


def _sniff(image: bytes) -> str:
    if image.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    return "image/png"


def download_button(label: str, build: Callable[[], str | bytes], *, file_name: str, mime: str, key: str,
                    **kwargs) -> None:
    """``st.download_button`` whose file is built by ``build()`` only when it is clicked,
    and taken out of Streamlit's media store ``KEEP_SECONDS`` after it was built.
    ``build`` runs outside the script run (Streamlit calls it from its server thread), so
    it must not call ``st.*``: give it what it needs, e.g. the rows already shown."""
    store = media_store()

    def built() -> bytes:
        data = build()
        data = data.encode("utf-8") if isinstance(data, str) else bytes(data)
        if store is not None:
            _forget_later(store, data, mime, file_name)
        return data

    st.download_button(label, built, file_name=file_name, mime=mime, key=key, on_click="ignore", **kwargs)


def _forget_later(store, data: bytes, mime: str, file_name: str) -> None:
    """Drop the built file from the media store ``KEEP_SECONDS`` from now (it is marked
    as Streamlit marks a download no session shows, then swept: ui/streamlit_internals.py)."""
    file_id = media_file_id(data, mime, file_name)  # the id Streamlit stores the built file under
    timer = threading.Timer(KEEP_SECONDS, drop_download, args=(store, file_id))
    timer.daemon = True
    timer.start()
