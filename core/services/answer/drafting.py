"""Optional model drafting of answers (OpenAI-compatible: OpenAI, vLLM, Ollama,
llama.cpp). Off unless WORKBENCH_DRAFTER=openai and a key are set; the
deterministic answer is always the fallback."""

from __future__ import annotations

from typing import Any

from domain.settings import Settings

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

    @property
    def model(self) -> str:
        return self._model

    def draft(self, question: str, evidence: dict[str, str]) -> str:
        return self.draft_with_usage(question, evidence)[0]

    def draft_with_usage(self, question: str, evidence: dict[str, str]) -> tuple[str, dict[str, int] | None]:
        """The prose and the token usage the server reported ({"prompt", "completion"}),
        or None when it reported none (some OpenAI-compatible servers do not)."""
        numbered = "\n".join(f"[{k}] {v}" for k, v in evidence.items())
        response = self._client.chat.completions.create(
            model=self._model, temperature=0,
            messages=[{"role": "system", "content": SYSTEM_PROMPT},
                      {"role": "user", "content": f"Question: {question}\n\nEvidence:\n{numbered}"}],
        )
        return response.choices[0].message.content or "", token_usage(response)


def token_usage(response: Any) -> dict[str, int] | None:
    """``{"prompt": n, "completion": m}`` from an OpenAI-compatible response's ``usage``."""
    usage = getattr(response, "usage", None)
    if usage is None:
        return None
    out: dict[str, int] = {}
    for key, attr in (("prompt", "prompt_tokens"), ("completion", "completion_tokens")):
        value = usage.get(attr) if isinstance(usage, dict) else getattr(usage, attr, None)
        if isinstance(value, int) and not isinstance(value, bool):
            out[key] = value
    return out or None


def drafter_for(settings: Settings):
    if settings.drafter == "openai" and settings.openai_api_key:
        return OpenAICompatibleDrafter.from_settings(settings)
    return None
