"""The one settings object. Every knob is an environment variable with the
``WORKBENCH_`` prefix (provider keys keep their customary names too). Reading the
environment only: nothing here touches a file (the app secret is ``core.telemetry``'s)."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import AliasChoices, Field, ValidationError
from pydantic_settings import BaseSettings, SettingsConfigDict

from domain.errors import BadInput
from domain.limits import DEFAULT_LIMITS as _LIMITS


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="WORKBENCH_", extra="ignore")

    data_dir: Path = Path("data")
    app_secret: str | None = None
    worker_idle_sleep: float = 1.0
    worker_stale_after: float = 120.0  # seconds without heartbeat before a job is reclaimed
    max_attempts: int = 3
    # Ceilings per job (issue 13): reading a document (normalize + extract) runs in a child
    # process killed past either, and the job fails with resource_limit. Sized for a 60-page
    # OCR'd fax (~1-5 s a page) on 2 cores. job_process: forkserver (default), fork (tests:
    # monkeypatched readers reach the child) or off (in-process, no ceilings; debugging).
    job_timeout_seconds: float = 600.0
    job_memory_mb: int = 2048
    job_process: str = "forkserver"
    upload_max_bytes: int = 50 * 1024 * 1024
    # A clean HL7 v2 batch of more messages than this is read as parts of up to this many
    # consecutive messages, each its own document and job (docs/decisions.md).
    hl7_messages_per_job: int = 200
    start_worker: bool = True  # the UI process runs the worker thread
    load_demo: bool = True  # `make run` loads the demo documents into an empty data dir
    ocr_engine: str = "auto"  # auto (Tesseract when installed, else RapidOCR) | tesseract | rapidocr
    # The clinic's order for a numeric date that reads either way (01/12/2026) when nothing
    # the document prints settles it (docs/decisions.md): "day_first" or "month_first".
    # Unset (""): read month first, and left open where the reader names both readings.
    date_order: Literal["", "month_first", "day_first"] = ""
    # HL7 v2 over MLLP (docs/decisions.md): the app process listens on 127.0.0.1:mllp_port
    # when start_mllp is on; `python -m core mllp` runs the same listener headless.
    mllp_port: int = 2575
    start_mllp: bool = False
    # --- MLLP access and limits (issue 21, items 7 and 8; README "Configuration") ---
    # MLLP has no authentication: allow-lists of senders (MSH-3^MSH-4, "APP^FACILITY,..."
    # or a JSON array; '*' for one of the two) and of peers (addresses or CIDRs). Empty:
    # no restriction, allowed only when listening on loopback; `core mllp --host` on any
    # other address refuses to start without both (domain/policy/access/mllp_peers.py).
    mllp_allowed_senders: str = ""
    mllp_allowed_peers: str = ""
    mllp_max_connections: int = Field(default=32, ge=1)  # at once, from everyone
    mllp_max_connections_per_peer: int = Field(default=8, ge=1)  # at once, from one address
    mllp_frame_timeout_seconds: float = Field(default=120.0, gt=0)  # a whole frame, from its start byte
    mllp_idle_timeout_seconds: float = Field(default=300.0, gt=0)  # silence allowed between frames
    mllp_max_held_messages: int = Field(default=1000, ge=0)  # waiting for a chart; more are refused (AE)
    # --- end of MLLP access and limits ---
    # The app runs CLI commands for a shell beside it (issue 13) on a loopback port the OS
    # picks, named in <data dir>/app-endpoint.json; off, such a command fails at once.
    start_cli_endpoint: bool = True

    # Limits on reading one document (domain/limits.py; README "Settings"). A file over
    # one fails its job with the family's code (too_many_pages, page_too_large,
    # image_too_large, archive_too_large, sheet_too_large, document_too_long,
    # hl7_too_large, fhir_too_large), its original kept. Generous for real clinical documents.
    max_pages: int = _LIMITS.max_pages  # pages of a PDF with a text layer
    max_scanned_pages: int = _LIMITS.max_scanned_pages  # pages OCR'd per document (a 60-page fax fits)
    max_page_area_sq_in: float = _LIMITS.max_page_area_sq_in  # one page, 50 x 50 in (A0 is 1,550)
    max_text_chars_per_page: int = _LIMITS.max_text_chars_per_page  # a dense printed page holds ~10,000
    max_image_pixels: int = _LIMITS.max_image_pixels  # one image or TIFF frame; also Pillow's bomb guard
    max_archive_uncompressed_bytes: int = _LIMITS.max_archive_uncompressed_bytes  # DOCX/XLSX, from the zip directory
    max_archive_members: int = _LIMITS.max_archive_members  # parts in a DOCX/XLSX zip
    max_sheet_rows: int = _LIMITS.max_sheet_rows  # rows with content, per XLSX sheet
    max_sheet_cells: int = _LIMITS.max_sheet_cells  # cells with content, across a whole workbook
    max_merged_cells: int = _LIMITS.max_merged_cells  # cells covered by merged ranges, across a whole workbook
    max_shared_strings: int = _LIMITS.max_shared_strings  # distinct cell texts in an XLSX, counted while streaming
    max_shared_string_bytes: int = _LIMITS.max_shared_string_bytes  # one cell text's XML
    max_docx_paragraphs: int = _LIMITS.max_docx_paragraphs
    max_hl7_bytes: int = _LIMITS.max_hl7_bytes  # one HL7 file
    max_hl7_messages: int = _LIMITS.max_hl7_messages  # messages in one HL7 file (a batch)
    max_hl7_segments_per_message: int = _LIMITS.max_hl7_segments_per_message
    max_hl7_field_repetitions: int = _LIMITS.max_hl7_field_repetitions  # repetitions (~) of one field
    max_fhir_bytes: int = _LIMITS.max_fhir_bytes  # one FHIR JSON file
    max_fhir_resources: int = _LIMITS.max_fhir_resources  # resources in one FHIR file (a Bundle's entries)
    max_fhir_depth: int = _LIMITS.max_fhir_depth  # nesting of the JSON

    # Sign-in (docs/access.md). "local": accounts in the database; "oidc": Streamlit's
    # st.login against .streamlit/secrets.toml, users mapped to roles by oidc_roles, a JSON
    # object {"claim": "groups", "roles": {"<group>": "reviewer"}, "users": {"<email>": "admin"}}.
    auth: str = "local"
    oidc_roles: dict = Field(default_factory=dict)
    idle_timeout_minutes: float = 15.0
    lockout_minutes: float = 15.0
    password_min_length: int = 12

    embedder: str = "minilm"  # minilm | openai
    reranker: str = "local"  # local | cohere
    drafter: str = "none"  # none | openai

    openai_api_key: str | None = Field(
        default=None, validation_alias=AliasChoices("WORKBENCH_OPENAI_API_KEY", "OPENAI_API_KEY")
    )
    openai_base_url: str | None = Field(
        default=None, validation_alias=AliasChoices("WORKBENCH_OPENAI_BASE_URL", "OPENAI_BASE_URL")
    )
    openai_model: str = "gpt-4o-mini"
    openai_embedding_model: str = "text-embedding-3-small"
    openai_embedding_dim: int = 1536
    cohere_rerank_model: str = "rerank-v3.5"
    cohere_api_key: str | None = Field(
        default=None, validation_alias=AliasChoices("WORKBENCH_COHERE_API_KEY", "COHERE_API_KEY")
    )

    @property
    def ocr_preference(self) -> str | None:
        return None if self.ocr_engine == "auto" else self.ocr_engine

    @property
    def db_path(self) -> Path:
        return self.data_dir / "workbench.duckdb"

    @property
    def documents_dir(self) -> Path:
        return self.data_dir / "documents"

    @property
    def renders_dir(self) -> Path:
        return self.data_dir / "renders"

    @property
    def logs_dir(self) -> Path:
        return self.data_dir / "logs"

    @property
    def heartbeat_path(self) -> Path:
        return self.data_dir / "worker-heartbeat.json"

    @property
    def eval_results_dir(self) -> Path:
        return self.data_dir / "eval-results"


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """The settings from the environment; a value a setting cannot take is bad input
    naming the variable and what it may be (settings hold no patient data)."""
    try:
        return Settings()
    except ValidationError as exc:
        problems = "; ".join(f"WORKBENCH_{'_'.join(str(part) for part in e['loc']).upper()}: {e['msg']}"
                             for e in exc.errors())
        raise BadInput(f"A setting has a value it cannot take: {problems}.", code="bad_setting") from None


def reload_settings() -> Settings:
    get_settings.cache_clear()
    return get_settings()
