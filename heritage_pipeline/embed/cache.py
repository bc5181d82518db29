"""The embedding cache (SQLite, keyed by model id, prefix and text hash): a passage is never embedded twice.
"""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from .windows import Embedder


class EmbeddingCache:
    """Persistent cache of passage vectors keyed by SHA-256 of (embedder cache id, prefix, text), in SQLite.

    SQLite (standard library) gives atomic, crash-safe writes and O(log n) lookups without loading the whole cache.
    ``hits`` / ``misses`` count texts looked up through :func:`embed_with_cache` since the cache was opened.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # parallel partition runs (threads, Dask workers) share the file: wait for a writer instead of failing at 5 s
        self._db = sqlite3.connect(str(self.path), timeout=120)
        self._db.execute("CREATE TABLE IF NOT EXISTS emb (key TEXT PRIMARY KEY, dim INTEGER, windows INTEGER, vec BLOB)")
        self.hits = 0
        self.misses = 0

    @property
    def hit_rate(self) -> float:
        """hits / (hits + misses) since the cache was opened (0.0 before any lookup)."""
        n = self.hits + self.misses
        return self.hits / n if n else 0.0

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

    def __len__(self) -> int:
        return int(self._db.execute("SELECT COUNT(*) FROM emb").fetchone()[0])

    def close(self) -> None:
        self._db.close()


def embed_with_cache(embedder: Embedder, texts: list[str], cache: EmbeddingCache | None,
                     prefix: str = "") -> tuple[np.ndarray, list[int], int]:
    """Embed passages, reusing cached vectors.

    Returns ``(vectors float32 [n, dim], windows per text, number of distinct texts embedded now)``. Identical
    texts in one call are embedded once. ``prefix`` is part of the cache key (pass the passage prefix).
    """
    if cache is None:
        vecs, wins = embedder.embed_passages(texts)
        return vecs, wins, len(texts)
    cid = getattr(embedder, "cache_id", embedder.model_id)
    keys = [EmbeddingCache.key(cid, prefix, t) for t in texts]
    found = cache.get_many(list(dict.fromkeys(keys)))
    missing = [i for i, k in enumerate(keys) if k not in found]
    todo_keys = list(dict.fromkeys(keys[i] for i in missing))
    first_index: dict[str, int] = {}
    for i, k in enumerate(keys):
        first_index.setdefault(k, i)
    if todo_keys:
        new_vecs, new_wins = embedder.embed_passages([texts[first_index[k]] for k in todo_keys])
        cache.put_many([(k, new_vecs[j], new_wins[j]) for j, k in enumerate(todo_keys)])
        for j, k in enumerate(todo_keys):
            found[k] = (new_vecs[j], new_wins[j])
    cache.hits += len(texts) - len(missing)
    cache.misses += len(missing)
    vecs = np.stack([found[k][0] for k in keys]) if keys else np.zeros((0, embedder.dim), np.float32)
    return vecs, [found[k][1] for k in keys], len(todo_keys)
