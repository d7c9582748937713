"""The offline MiniLM embedder (real model from installed wheels) and the
OpenAI-compatible embedder against a stand-in transport."""

from __future__ import annotations

import json

import httpx2
import numpy as np
import pytest

from retrieve import embedder as embedder_module
from retrieve.embedder import (
    MINILM_DIM,
    Embedder,
    MiniLmOnnxEmbedder,
    OpenAICompatibleEmbedder,
    find_minilm_files,
)


@pytest.fixture(scope="module")
def minilm() -> MiniLmOnnxEmbedder:
    return MiniLmOnnxEmbedder()


def test_model_files_come_from_installed_packages():
    files = find_minilm_files()
    assert files.model.name == "model.onnx" and files.model.stat().st_size > 10_000_000
    assert files.tokenizer.name == "tokenizer.json"
    assert "site-packages" in str(files.model) and "site-packages" in str(files.tokenizer)


def test_vectors_are_float32_unit_rows(minilm):
    vectors = minilm.embed(["Colorectal cancer screening", "Blood pressure goal", ""])
    assert vectors.shape == (3, MINILM_DIM) and vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert isinstance(minilm, Embedder)
    assert minilm.name == "all-MiniLM-L6-v2-onnx-int8"


def test_empty_input(minilm):
    assert minilm.embed([]).shape == (0, MINILM_DIM)


def test_batching_and_order_do_not_change_vectors(minilm, monkeypatch):
    # Each call encodes (nothing kept): what lets the cache hand back a text's vector
    # whatever batch it first came in.
    monkeypatch.setattr(embedder_module, "_MINILM_CACHE", embedder_module._VectorCache(size=0))
    texts = ["short", "a somewhat longer sentence about kidney function", "TSH after a dose change"]
    together = minilm.embed(texts)
    alone = np.vstack([minilm.embed([t]) for t in texts])
    np.testing.assert_allclose(together, alone, atol=1e-4)
    reversed_rows = minilm.embed(texts[::-1])[::-1]
    np.testing.assert_allclose(together, reversed_rows, atol=1e-4)


def test_long_text_is_truncated_at_256_tokens(minilm):
    head = " ".join(["glucose"] * 300)
    a, b = minilm.embed([head + " mammography colonoscopy", head + " thyroid lipids kidney"])
    np.testing.assert_allclose(a, b, atol=1e-6)  # the differing tails were cut off


def test_model_loads_once_per_process(minilm):
    minilm.embed(["warm"])
    runtime = embedder_module._RUNTIME
    MiniLmOnnxEmbedder().embed(["again"])
    assert embedder_module._RUNTIME is runtime


def _encoded_texts(monkeypatch, cache_size: int) -> list[str]:
    """A fresh cache of ``cache_size`` vectors, and the texts the model encodes from now
    on, in order (the model still encodes them)."""
    monkeypatch.setattr(embedder_module, "_MINILM_CACHE", embedder_module._VectorCache(size=cache_size))
    encoded: list[str] = []
    real = MiniLmOnnxEmbedder._encode

    def counting(runtime, batch):
        encoded.extend(batch)
        return real(runtime, batch)

    monkeypatch.setattr(MiniLmOnnxEmbedder, "_encode", staticmethod(counting))
    return encoded


def test_a_text_embedded_before_is_not_encoded_again_and_the_cache_is_bounded(minilm, monkeypatch):
    encoded = _encoded_texts(monkeypatch, 2)
    first = minilm.embed(["Potassium 6.9 mmol/L", "INR 3.9"])
    again = minilm.embed(["INR 3.9", "Potassium 6.9 mmol/L"])
    assert encoded == ["INR 3.9", "Potassium 6.9 mmol/L"]  # once each (shortest first)
    np.testing.assert_array_equal(again, first[::-1])
    again[:] = 0.0  # a caller's array is its own: the kept vectors do not change with it
    minilm.embed(["Sodium 139 mmol/L"])  # two kept at most: the least recently used, INR, goes
    np.testing.assert_array_equal(minilm.embed(["Potassium 6.9 mmol/L", "INR 3.9"]), first)
    assert encoded[2:] == ["Sodium 139 mmol/L", "INR 3.9"]


def test_forgetting_the_kept_vectors_encodes_a_text_again(minilm, monkeypatch):
    # What the ingest bench does before it times a repeated document's vector step.
    encoded = _encoded_texts(monkeypatch, 8)
    first = minilm.embed(["Creatinine 88 umol/L"])
    minilm.embed(["Creatinine 88 umol/L"])
    assert encoded == ["Creatinine 88 umol/L"]
    embedder_module.forget_kept_vectors()
    np.testing.assert_array_equal(minilm.embed(["Creatinine 88 umol/L"]), first)
    assert encoded == ["Creatinine 88 umol/L"] * 2


def test_threads_are_capped():
    with pytest.raises(ValueError):
        MiniLmOnnxEmbedder(threads=4)


@pytest.mark.parametrize(
    "query, closer, farther",
    [
        ("HbA1c target for adults with diabetes",
         "For most adults with diabetes the A1C goal is below 7 percent.",
         "Colorectal cancer screening starts at age 45 with a stool test or colonoscopy."),
        ("How often should blood pressure be screened?",
         "Adults should have their blood pressure measured every year to screen for hypertension.",
         "Thyroid-stimulating hormone is the first test for hypothyroidism."),
        ("When to start mammograms",
         "Screening mammography every two years is advised from age 40.",
         "A statin is recommended when LDL cholesterol is 190 mg/dL or higher."),
        ("kidney function monitoring",
         "Check eGFR and urine albumin at least once a year in chronic kidney disease.",
         "Cervical cytology every three years from age 21."),
    ],
)
def test_known_pairs_rank_as_expected(minilm, query, closer, farther):
    q, near, far = minilm.embed([query, closer, farther])
    assert float(q @ near) > float(q @ far) + 0.05


# -- OpenAI-compatible --------------------------------------------------------------


def _openai_embedder(handler, dim=3) -> OpenAICompatibleEmbedder:
    client = httpx2.Client(transport=httpx2.MockTransport(handler))
    return OpenAICompatibleEmbedder.from_settings(
        base_url="http://stand-in.invalid/v1", api_key="k", model="text-embed-x", dim=dim, http_client=client
    )


def test_openai_compatible_embedder_orders_and_normalises():
    requests = []

    def handler(request):
        body = json.loads(request.content)
        requests.append(body)
        data = [{"object": "embedding", "index": i, "embedding": [float(i + 1), 0.0, 0.0]}
                for i in range(len(body["input"]))][::-1]  # out of order on purpose
        return httpx2.Response(200, json={"object": "list", "data": data, "model": body["model"],
                                          "usage": {"prompt_tokens": 1, "total_tokens": 1}})

    emb = _openai_embedder(handler)
    vectors = emb.embed(["a", "b"])
    assert requests[0]["model"] == "text-embed-x" and requests[0]["input"] == ["a", "b"]
    np.testing.assert_allclose(vectors, [[1, 0, 0], [1, 0, 0]])
    assert emb.name == "openai-compatible:text-embed-x" and isinstance(emb, Embedder)


def test_openai_compatible_embedder_rejects_wrong_dimension():
    def handler(request):
        return httpx2.Response(200, json={"object": "list", "model": "m",
                                          "data": [{"object": "embedding", "index": 0, "embedding": [1.0, 2.0]}],
                                          "usage": {"prompt_tokens": 1, "total_tokens": 1}})

    with pytest.raises(ValueError, match="2-dim"):
        _openai_embedder(handler, dim=3).embed(["a"])
