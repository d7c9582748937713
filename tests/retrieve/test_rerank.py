"""Local reranker features and weights; Cohere reranker against a stand-in transport."""

from __future__ import annotations

import json

import cohere
import httpx
import numpy as np
import pytest

from retrieve import lexical
from retrieve.rerank import (
    CohereReranker,
    LocalFeatures,
    LocalReranker,
    LocalRerankWeights,
    RerankCandidate,
    Reranker,
)


def cand(cid: str, text: str, *, section: str = "", title: str = "", bm25=None, similarity=None):
    return RerankCandidate(cid, text, section, title, bm25, similarity)


# -- lexical features ---------------------------------------------------------------


@pytest.mark.parametrize(
    "query, text",
    [
        ("HbA1c target", "The A1C goal is below 7%."),
        ("BP checks", "Blood pressure should be measured at every visit."),
        ("colon cancer screening", "Colorectal cancer screening is recommended."),
        ("renal function tests", "Kidney function is checked with creatinine."),
        ("How often is a mammogram done", "Screening mammography every two years (interval)."),
    ],
)
def test_synonyms_make_full_coverage(query, text):
    assert lexical.coverage(lexical.terms(query), lexical.terms(text)) == 1.0


def test_coverage_counts_content_terms_only():
    q = lexical.terms("What is the capital of France?")
    assert q == frozenset({"capital", "franc"})
    assert lexical.coverage(q, lexical.terms("France has a capital city")) == 1.0
    assert lexical.coverage(q, lexical.terms("Blood pressure")) == 0.0
    assert lexical.coverage(frozenset(), lexical.terms("anything")) == 0.0


def test_stemming_folds_word_forms():
    assert {lexical.stem(w) for w in ("screening", "screened", "screens")} == {"screen"}
    assert lexical.stem("pressures") == lexical.stem("pressure")
    assert lexical.stem("stopping") == "stop"
    assert lexical.stem("a1c") == "a1c"


def test_keyword_query_adds_corpus_spellings_and_drops_stopwords():
    q = lexical.keyword_query("What is the HbA1c target and the BP goal?").split()
    assert {"hba1c", "a1c", "target", "goal", "blood", "pressure"} <= set(q)
    assert not {"what", "is", "the", "and"} & set(q)


# -- local reranker -----------------------------------------------------------------


def test_default_weights_sum_to_one_and_are_documented_values():
    w = LocalRerankWeights()
    assert (w.cosine, w.bm25, w.coverage, w.heading, w.bm25_half) == (0.45, 0.15, 0.25, 0.15, 12.0)
    with pytest.raises(ValueError):
        LocalRerankWeights(cosine=0.9)
    with pytest.raises(ValueError):
        LocalRerankWeights(cosine=0.5, bm25=-0.1, coverage=0.45, heading=0.15)


def test_score_is_the_documented_weighted_sum():
    reranker = LocalReranker()
    c = cand("c1", "The A1C goal is below 7%.", section="A1C goal", title="Diabetes", bm25=12.0, similarity=0.6)
    (features,) = reranker.features("HbA1c goal", [c])
    assert features == LocalFeatures(cosine=0.6, bm25=0.5, coverage=1.0, heading=1.0)
    ((cid, score),) = reranker.rerank("HbA1c goal", [c])
    assert cid == "c1"
    assert score == pytest.approx(0.45 * 0.6 + 0.15 * 0.5 + 0.25 * 1.0 + 0.15 * 1.0)


def test_missing_bm25_and_negative_cosine_count_as_zero():
    (f,) = LocalReranker().features("pizza", [cand("c", "nothing alike", similarity=-0.3)])
    assert f.bm25 == 0.0 and f.cosine == 0.0 and f.coverage == 0.0


@pytest.mark.parametrize("field, low, high", [
    ("similarity", 0.2, 0.7),
    ("bm25", 1.0, 30.0),
])
def test_each_signal_raises_the_score(field, low, high):
    reranker = LocalReranker()
    base = dict(text="Colorectal screening intervals", section="Stool tests", title="CRC")
    a = cand("a", bm25=5.0, similarity=0.5, **base)
    b = cand("b", bm25=5.0, similarity=0.5, **base)
    a = RerankCandidate(**{**a.__dict__, field: low})
    b = RerankCandidate(**{**b.__dict__, field: high})
    assert [cid for cid, _ in reranker.rerank("colon screening", [a, b])] == ["b", "a"]


def test_coverage_and_heading_break_semantic_ties():
    reranker = LocalReranker()
    on_topic = cand("on", "Check the A1C twice a year.", section="How often to check A1C", similarity=0.5)
    off_topic = cand("off", "Mammography is done biennially.", section="Breast screening", similarity=0.5)
    ranked = reranker.rerank("How often should A1C be checked?", [off_topic, on_topic])
    assert ranked[0][0] == "on"
    # same cosine, no BM25: the gap is exactly full coverage plus full heading match
    assert ranked[0][1] - ranked[1][1] == pytest.approx(0.25 + 0.15)


class _TableEmbedder:
    """A stand-in embedder: fixed vectors for known texts."""

    name = "stand-in"
    dim = 2

    def __init__(self, table: dict[str, list[float]]):
        self.table = table
        self.calls: list[list[str]] = []

    def embed(self, texts):
        self.calls.append(list(texts))
        rows = np.array([self.table[t] for t in texts], dtype=np.float32)
        return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def test_missing_similarity_is_embedded_once_with_the_given_embedder():
    near = cand("near", "alpha", section="S", title="T")
    far = cand("far", "beta", section="S", title="T")
    given = cand("given", "gamma", similarity=0.1)
    embedder = _TableEmbedder({"q": [1, 0], near.document: [1, 0.1], far.document: [0, 1]})
    features = LocalReranker(embedder).features("q", [near, far, given])
    assert embedder.calls == [["q", near.document, far.document]]
    assert features[0].cosine == pytest.approx(0.995, abs=1e-3)
    assert features[1].cosine == pytest.approx(0.0, abs=1e-6)
    assert features[2].cosine == pytest.approx(0.1)


def test_local_reranker_meets_protocol_and_handles_empty():
    reranker = LocalReranker()
    assert isinstance(reranker, Reranker)
    assert reranker.rerank("anything", []) == []
    assert reranker.name == "local-v1"


# -- Cohere against a stand-in --------------------------------------------------------


def _cohere_with(handler) -> CohereReranker:
    client = httpx.Client(transport=httpx.MockTransport(handler))
    return CohereReranker.from_api_key("test-key", model="rerank-v3.5", httpx_client=client)


def test_cohere_reranker_sends_documents_and_maps_scores_back():
    seen = {}

    def handler(request: httpx.Request) -> httpx.Response:
        seen["url"] = str(request.url)
        seen["auth"] = request.headers.get("authorization")
        seen["body"] = json.loads(request.content)
        return httpx.Response(200, json={
            "id": "r1",
            "results": [{"index": 1, "relevance_score": 0.91}, {"index": 0, "relevance_score": 0.12}],
            "meta": {"billed_units": {"search_units": 1}},
        })

    reranker = _cohere_with(handler)
    candidates = [cand("c0", "Mammography every two years.", section="Breast", title="USPSTF"),
                  cand("c1", "Check the A1C twice a year.", section="A1C", title="ADA")]
    ranked = reranker.rerank("How often is A1C checked?", candidates)
    assert ranked == [("c1", 0.91), ("c0", 0.12)]
    assert seen["url"].endswith("/v2/rerank")
    assert seen["auth"] == "Bearer test-key"
    assert seen["body"]["model"] == "rerank-v3.5"
    assert seen["body"]["query"] == "How often is A1C checked?"
    assert seen["body"]["documents"] == [c.document for c in candidates]
    assert seen["body"]["top_n"] == 2
    assert reranker.name == "cohere:rerank-v3.5"
    assert isinstance(reranker, Reranker)


def test_cohere_reranker_skips_the_call_without_candidates():
    def handler(request):  # pragma: no cover - must not be reached
        raise AssertionError("no request expected")

    assert _cohere_with(handler).rerank("q", []) == []


def test_cohere_http_error_surfaces():
    def handler(request):
        return httpx.Response(401, json={"message": "invalid api token"})

    with pytest.raises(cohere.core.api_error.ApiError):
        _cohere_with(handler).rerank("q", [cand("c", "text")])
