"""Settings -> provider instances. The offline implementation is always the
default; a keyed provider is used only when chosen *and* its key is set."""

from __future__ import annotations

from functools import lru_cache

from domain.errors import WorkbenchError
from domain.settings import Settings
from retrieve.embedder import Embedder, MiniLmOnnxEmbedder


@lru_cache(maxsize=1)
def _minilm() -> MiniLmOnnxEmbedder:
    return MiniLmOnnxEmbedder()


def embedder_for(settings: Settings) -> Embedder:
    if settings.embedder == "openai":
        if not settings.openai_api_key:
            raise WorkbenchError("WORKBENCH_EMBEDDER=openai needs OPENAI_API_KEY.", code="provider_not_configured")
        from retrieve.embedder import OpenAICompatibleEmbedder

        return OpenAICompatibleEmbedder.from_settings(
            base_url=settings.openai_base_url or "https://api.openai.com/v1", api_key=settings.openai_api_key,
            model=settings.openai_embedding_model, dim=settings.openai_embedding_dim,
        )
    return _minilm()


def reranker_for(settings: Settings, embedder: Embedder):
    """Local rerank by default; Cohere only when chosen and keyed."""
    from retrieve.rerank import CohereReranker, LocalReranker

    if settings.reranker == "cohere" and settings.cohere_api_key:
        return CohereReranker.from_api_key(settings.cohere_api_key, model=settings.cohere_rerank_model)
    return LocalReranker(embedder)
