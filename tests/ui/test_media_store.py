"""Nothing a page shows of a patient is left in Streamlit's media store (issue 21, item 2).

Streamlit serves whatever is in its media store at ``/media/<id>`` to anyone who has the
address, with no session or sign-in check, for as long as the file is kept there (after
the tab closed too). So page images and thumbnails go to the page inline (data: URLs),
and every download (the review audit, the access audit with MRNs, an eval run) is built
only when its button is clicked, then dropped from the store seconds later (ui/media.py).

The pages are rendered in AppTest with every file the run puts in the media store
recorded (``MediaFileManager.add``), and every download registered to be built on click
(``MediaFileManager.add_deferred``). tests/browser/test_browser_media.py checks the same on the
real server from a real browser's requests.
"""

from __future__ import annotations

import base64
import io
import time
from types import SimpleNamespace

import pytest
from PIL import Image
from streamlit.runtime.media_file_manager import MediaFileManager
from streamlit.runtime.media_file_storage import MediaFileStorageError

from tests.support.app_support import app
from tests.support.file_builders import pdf
from tests.support.pipeline import ingest


@pytest.fixture
def media(monkeypatch):
    """What the page runs put in the media store (``stored``) and register to build on
    click (``deferred``: the callable, its file name and type, its id and its store)."""
    stored: list[dict] = []
    deferred: list[dict] = []
    real_add, real_deferred = MediaFileManager.add, MediaFileManager.add_deferred

    def add(self, path_or_data, mimetype, coordinates, file_name=None, is_for_static_download=False):
        stored.append({"mimetype": mimetype, "file_name": file_name, "download": is_for_static_download})
        return real_add(self, path_or_data, mimetype, coordinates, file_name, is_for_static_download)

    def add_deferred(self, data_callable, mimetype, coordinates, file_name=None, **kwargs):
        file_id = real_deferred(self, data_callable, mimetype, coordinates, file_name, **kwargs)
        deferred.append({"build": data_callable, "mimetype": mimetype, "file_name": file_name, "id": file_id,
                         "store": self})
        return file_id

    monkeypatch.setattr(MediaFileManager, "add", add)
    monkeypatch.setattr(MediaFileManager, "add_deferred", add_deferred)
    return SimpleNamespace(stored=stored, deferred=deferred)


def _page(page: str, patient_id: int | None = None, *, user: str = "dr.reviewer", **query):
    at = app(user=user, timeout=90, **query)
    if patient_id is not None:
        at.session_state["patient_id"] = patient_id
    at.run()
    at.switch_page(page).run()
    assert not at.exception, at.exception
    return at


def _images(at) -> list[str]:
    return [img.url for element in at.get("image") for img in element.proto.imgs]


def _download(media, file_name: str) -> dict:
    found = [d for d in media.deferred if d["file_name"] == file_name]
    assert found, f"no download of {file_name} is built on click: {media.deferred}"
    return found[-1]


# ----------------------------------------------------------------------------- page images


def test_page_images_and_thumbnails_go_to_the_page_inline(app_env, demo_patient, media):
    report = ingest(app_env, demo_patient, pdf(pages=3), "lab_pdf", "three-pages.pdf")
    at = _page("app_pages/documents.py", demo_patient["id"], document=str(report["document_id"]))
    overlay = [e for e in at.get("bidi_component") if e.proto.component_name == "cdw_page_overlay"]
    assert overlay and '"src": "data:image/' in overlay[0].proto.json
    next(t for t in at.toggle if t.label == "Page thumbnails").set_value(True).run()
    assert not at.exception, at.exception
    thumbs = _images(at)
    assert len(thumbs) == 3 and all(u.startswith("data:image/png;base64,") for u in thumbs), [u[:40] for u in thumbs]
    with Image.open(io.BytesIO(base64.b64decode(thumbs[0].split(",", 1)[1]))) as small:
        assert small.width == 90  # as small as st.image(bytes, width=90) made them
    assert media.stored == []


def test_the_viewer_without_its_overlay_component_still_sends_the_page_inline(app_env, demo_patient, media,
                                                                               monkeypatch):
    monkeypatch.setattr("ui.viewer._OVERLAY", None)  # a runtime without inline components: st.image
    report = ingest(app_env, demo_patient, pdf(pages=1), "lab_pdf", "one-page.pdf")
    at = _page("app_pages/documents.py", demo_patient["id"], document=str(report["document_id"]))
    (page_image,) = _images(at)
    assert page_image.startswith("data:image/png;base64,")
    assert media.stored == []


# ----------------------------------------------------------------------------- downloads


def test_the_review_audit_csv_is_built_only_when_clicked(app_env, demo_patient, media, monkeypatch):
    from core.services.review.decisions import decide_identity
    from golden.fixtures import LAB_CASES, render_lab
    from ui import media as ui_media

    wrong = ingest(app_env, demo_patient, render_lab(LAB_CASES[0]), "lab_pdf", "someone-elses-lab.pdf")
    assert wrong["identity"]["status"] == "identity_mismatch_quarantined"
    decide_identity(app_env, wrong["identity"]["identity_check_id"], approve=False, by="dr.alice",
                    reason="another patient's report")
    monkeypatch.setattr(ui_media, "KEEP_SECONDS", 0.3)
    at = _page("app_pages/review_queue.py", demo_patient["id"])
    assert any(b.proto.label == "Download CSV" for b in at.get("download_button"))
    assert media.stored == []  # nothing at a /media address before the click

    name = f"review-audit-patient-{demo_patient['id']}.csv"
    csv = _download(media, name)
    # The click: Streamlit runs the callable and stores what it returns for the browser to fetch.
    store = csv["store"]
    url = store.execute_deferred(csv["id"])
    assert "dr.alice rejected patient match" in store.read_file(url.rsplit("/", 1)[1]).content.decode()
    time.sleep(1.0)  # KEEP_SECONDS later the built file is gone from the store
    with pytest.raises(MediaFileStorageError):
        store._storage.get_file(url.rsplit("/", 1)[1])


def test_the_access_audit_csv_with_mrns_is_built_only_when_clicked(app_env, demo_patient, media):
    at = _page("app_pages/overview.py", demo_patient["id"], user="dr.ops")  # a chart view: an MRN in the audit
    at.switch_page("app_pages/operations.py").run()
    assert not at.exception, at.exception
    assert any(b.proto.label == "Download access audit (CSV)" for b in at.get("download_button"))
    assert media.stored == []
    built = _download(media, "access-audit.csv")["build"]()
    assert b",view_chart," in built and b",DEMO-1001," in built


def test_an_eval_run_download_is_built_only_when_clicked(app_env, data_dir, media):
    import json

    from tests.support.kept_runs import write_kept_run

    write_kept_run(data_dir)  # with its fixture documents, so the page draws the cited page as it would
    at = app("app_pages/evals.py", user="dr.ops", timeout=90).run()
    assert not at.exception, at.exception
    assert [b.proto.label for b in at.get("download_button")] == ["Download run (JSON)"]
    assert media.stored == []
    (download,) = [d for d in media.deferred if str(d["file_name"]).startswith("eval-run-")]
    assert json.loads(download["build"]())["run_id"] == "20261201-143500-ab12cd"
