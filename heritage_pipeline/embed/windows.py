"""No silent truncation: texts longer than the model's window are embedded as the mean of window embeddings.
"""

from __future__ import annotations

import time
from contextlib import contextmanager, nullcontext
from typing import Iterator, Protocol

import numpy as np

WINDOW_MARGIN = 4  # word pieces kept free: re-tokenising a window substring can differ by a piece at its edges


class Embedder(Protocol):
    model_id: str
    dim: int
    max_tokens: int | None

    @property
    def cache_id(self) -> str: ...

    def embed_passages(self, texts: list[str]) -> tuple[np.ndarray, list[int]]: ...

    def embed_query(self, text: str) -> np.ndarray: ...

    def embed_passages_raw(self, texts: list[str]) -> tuple[np.ndarray, list[int]]: ...


class WindowedEmbedder:
    """Shared behaviour of every embedder: prefixes, windows of long texts, length-sorted batches, window mean.

    Subclasses set ``model_id``, ``dim``, ``max_tokens`` and implement ``_encode(texts) -> float32 [n, dim]``
    (L2-normalised, each text within the window) and, when ``max_tokens`` is not None, ``_offsets(text)`` (the
    ``(start, end)`` character offsets of the text's word pieces, special tokens excluded).
    ``model_seconds`` accumulates the time spent inside the model (to measure the pipeline's own overhead).
    """

    model_id: str = ""
    backend: str = ""
    dim: int = 0
    max_tokens: int | None = None

    def __init__(self, *, batch_size: int = 32, query_prefix: str = "", passage_prefix: str = "",
                 window_overlap_tokens: int = 32, long_text: str = "window_mean") -> None:
        if long_text not in ("window_mean", "error"):
            raise ValueError(f"long_text must be window_mean or error, not {long_text!r}")
        self.batch_size = batch_size
        self.query_prefix = query_prefix
        self.passage_prefix = passage_prefix
        self.overlap = window_overlap_tokens
        self.long_text = long_text
        self.model_seconds = 0.0

    @property
    def cache_id(self) -> str:
        """Everything that determines a vector besides the text: model, backend, window and overlap."""
        win = f"w{self.window}o{self.overlap}" if self.max_tokens else "whole"
        return f"{self.model_id}|{self.backend}|{win}"

    @property
    def window(self) -> int:
        """Word pieces of text per window (model window minus [CLS]/[SEP] and a safety margin)."""
        return (self.max_tokens or 0) - 2 - WINDOW_MARGIN

    def _offsets(self, text: str) -> list[tuple[int, int]]:
        raise NotImplementedError

    def _encode(self, texts: list[str]) -> np.ndarray:
        raise NotImplementedError

    def window_spans(self, text: str) -> list[tuple[int, int]]:
        """Half-open character spans ``[start, end)`` of the windows of ``text`` (``[(0, len(text))]`` when it
        fits). Windows hold at most :attr:`window` word pieces; consecutive windows share ``window_overlap_tokens``
        pieces. Raises ValueError when the text is too long and ``long_text`` is ``error``.
        """
        if not self.max_tokens:
            return [(0, len(text))]
        offs = self._offsets(text)
        n = len(offs)
        w = self.window
        if n <= w:
            return [(0, len(text))]
        if self.long_text == "error":
            raise ValueError(f"text of {n} word pieces exceeds the {self.model_id} window of {self.max_tokens}")
        step = max(1, w - self.overlap)
        out = []
        for s in range(0, n, step):
            e = min(n, s + w)
            out.append((offs[s][0], offs[e - 1][1]))
            if e == n:
                break
        return out

    def windows(self, text: str) -> list[str]:
        """The window substrings of ``text`` (see :meth:`window_spans`)."""
        return [text[s:e] for s, e in self.window_spans(text)]

    def _encode_sorted(self, texts: list[str]) -> np.ndarray:
        """Encode in batches of similar length (longest first), return rows in input order."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        order = sorted(range(len(texts)), key=lambda i: (-len(texts[i]), i))
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        t0 = time.perf_counter()
        for b in range(0, len(order), self.batch_size):
            idx = order[b : b + self.batch_size]
            out[idx] = self._encode([texts[i] for i in idx])
        self.model_seconds += time.perf_counter() - t0
        return out

    def embed_passages(self, texts: list[str]) -> tuple[np.ndarray, list[int]]:
        """Passage vectors ``float32 [n, dim]`` (L2-normalised) and the number of windows of each text.

        The passage prefix is prepended to each text before windowing (it is counted in the window).
        """
        pieces: list[str] = []
        owner: list[int] = []
        counts: list[int] = []
        for i, t in enumerate(texts):
            ws = self.windows(self.passage_prefix + t)
            pieces.extend(ws)
            owner.extend([i] * len(ws))
            counts.append(len(ws))
        vecs = self._encode_sorted(pieces)
        return mean_by_owner(vecs, owner, len(texts), self.dim), counts

    @contextmanager
    def short_texts(self) -> Iterator[None]:
        """Context for encoding many short texts (keyword candidates, breadcrumbs): a backend whose thread count does
        not suit them lowers it inside the block (:meth:`USEEmbedder.short_texts
        <heritage_pipeline.embed.embedders.USEEmbedder.short_texts>`); here, and for the other backends, nothing
        changes. Vectors are the same either way.

        Yields:
            None.
        """
        yield

    def embed_passages_raw(self, texts: list[str]) -> tuple[np.ndarray, list[int]]:
        """Like :meth:`embed_passages` without the passage prefix (breadcrumbs, keyword candidates)."""
        saved, self.passage_prefix = self.passage_prefix, ""
        try:
            return self.embed_passages(texts)
        finally:
            self.passage_prefix = saved

    def embed_queries(self, texts: list[str]) -> np.ndarray:
        """Query vectors ``float32 [n, dim]`` (query prefix added, long queries window-averaged)."""
        vecs, _ = self.embed_passages_raw([self.query_prefix + t for t in texts])
        return vecs

    def embed_query(self, text: str) -> np.ndarray:
        """One query vector ``float32 [dim]``."""
        return self.embed_queries([text])[0]


def short_texts(embedder):
    """``embedder.short_texts()`` (:meth:`WindowedEmbedder.short_texts`), or a context that changes nothing for an
    embedder without it (a KeyBERT backend, a test double).

    Args:
        embedder: any embedder.

    Returns:
        A context manager.
    """
    method = getattr(embedder, "short_texts", None)
    return method() if method is not None else nullcontext()


def mean_by_owner(vecs: np.ndarray, owner: list[int], n: int, dim: int) -> np.ndarray:
    """L2-normalised mean of the rows of ``vecs`` grouped by ``owner`` (row i belongs to text ``owner[i]``).

    Returns ``float32 [n, dim]``; a text with no rows gets a zero vector.
    """
    out = np.zeros((n, dim), dtype=np.float32)
    if len(owner):
        np.add.at(out, np.asarray(owner), vecs)
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    return out / np.maximum(norms, 1e-12)
