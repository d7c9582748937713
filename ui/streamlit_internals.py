"""The one place the UI reaches into Streamlit's private names (its media store).

Checked against Streamlit 1.67.0 (requirements.txt). Why the public API is not enough:
a download built on click (``st.download_button`` with a callable) stays in Streamlit's
media store, fetchable at ``/media/<id>`` with no sign-in check, until the second
script run after the click, which may never come (ui/media.py, issue 21 item 2).
Streamlit offers no public call to drop one file from the store, so:

* ``media_store`` - the server's ``MediaFileManager`` (``runtime.get_instance()
  .media_file_mgr``: an internal module, but no underscore);
* ``media_file_id`` - the id Streamlit stores a built file under, from
  ``streamlit.runtime.memory_media_file_storage._calculate_file_id`` (a hash of the
  bytes, type and file name), so the file can be named without asking the store;
* ``drop_download`` - reads ``MediaFileManager._file_metadata`` to mark that one file
  as Streamlit marks a download no session shows (``mark_for_delete``), then runs the
  store's ordinary sweep (``remove_orphaned_files``), which deletes it; a file a
  session still shows is left alone by that sweep.

What breaks if Streamlit renames any of these: without ``runtime.get_instance`` or
``media_file_mgr`` every page with a download fails to render; without
``_calculate_file_id`` the click fails (the built file is never handed over); without
``_file_metadata`` the timer that drops the file fails in its thread, the download still
works, and the file stays in the store until Streamlit's own sweep, so patient data
lingers at a /media address again. tests/ui/test_media_store.py clicks a download and
checks the file is gone from the store seconds later, so an upgrade that breaks any of
them fails there.
"""

from __future__ import annotations

from typing import Any


def media_store() -> Any | None:
    """This server's media file manager, or None outside a running server (take it in a
    script run, where it is known)."""
    from streamlit import runtime

    return runtime.get_instance().media_file_mgr if runtime.exists() else None


def media_file_id(data: bytes, mime: str, file_name: str | None) -> str:
    """The id the media store keeps ``data`` under when it is stored with this type and
    file name (what a download's built file gets)."""
    from streamlit.runtime.memory_media_file_storage import _calculate_file_id

    return _calculate_file_id(data, mime, file_name)


def drop_download(store, file_id: str) -> None:
    """Remove a built download from ``store`` now, unless a session still shows it;
    nothing when the store no longer holds it."""
    metadata = store._file_metadata.get(file_id)
    if metadata is not None:
        metadata.mark_for_delete()
        store.remove_orphaned_files()
