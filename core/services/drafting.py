"""Optional model drafting of answers (OpenAI-compatible: OpenAI, vLLM, Ollama,
llama.cpp). Off unless WORKBENCH_DRAFTER=openai and a key are set; the
deterministic answer is always the fallback."""

from __future__ import annotations

from typing import Any

from core.settings import Settings

SYSTEM_PROMPT = (
    "You rewrite clinical evidence into short plain sentences for a clinician. Use only the numbered "
    "evidence given. End every sentence with the marker(s) of the evidence it uses, like [E1] or [E1][E3]. "
    "Never add numbers, values, dates, diagnoses, treatments or doses that are not in the cited evidence. "
    "If evidence is missing, say so without guessing."
)


class OpenAICompatibleDrafter:
    def __init__(self, client: Any, model: str):
        self._client = client
        self._model = model
        self.name = f"openai-compatible:{model}"

    @classmethod
    def from_settings(cls, settings: Settings, *, http_client: Any = None) -> "OpenAICompatibleDrafter":
        from openai import OpenAI

        client = OpenAI(api_key=settings.openai_api_key, base_url=settings.openai_base_url, http_client=http_client,
                        max_retries=0, timeout=30.0)
        return cls(client, settings.openai_model)

    def draft(self, question: str, evidence: dict[str, str]) -> str:
        numbered = "\n".join(f"[{k}] {v}" for k, v in evidence.items())
        response = self._client.chat.completions.create(
            model=self._model, temperature=0,
            messages=[{"role": "system", "content": SYSTEM_PROMPT},
                      {"role": "user", "content": f"Question: {question}\n\nEvidence:\n{numbered}"}],
        )
        return response.choices[0].message.content or ""


def drafter_for(settings: Settings):
    if settings.drafter == "openai" and settings.openai_api_key:
        return OpenAICompatibleDrafter.from_settings(settings)
    return None
