"""Token counting for the brief's budget, with the embedder's own tokenizer (the
``tokenizer.json`` shipped with the MiniLM model, read by ``tokenizers``): a real
tokenizer, installed with the product, never downloaded."""

from __future__ import annotations

from functools import lru_cache

from retrieve.embedder import MINILM_MODEL_ID, find_minilm_files

TOKENIZER_NAME = f"{MINILM_MODEL_ID} tokenizer.json (tokenizers)"


@lru_cache(maxsize=1)
def _tokenizer():
    from tokenizers import Tokenizer

    # Our own instance, never the embedder's shared one.
    tokenizer = Tokenizer.from_file(str(find_minilm_files().tokenizer))
    tokenizer.no_truncation()  # the file caps a text at the model's window: a brief is longer
    tokenizer.no_padding()
    return tokenizer


def count_tokens(text: str) -> int:
    """Tokens of ``text`` as the tokenizer splits it, without the model's [CLS]/[SEP]."""
    return len(_tokenizer().encode(text, add_special_tokens=False).ids)
