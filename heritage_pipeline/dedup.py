"""Exact and near-duplicate removal with a record of every drop.

1. Exact duplicates: same SHA-256 of the normalised content (lower-cased, whitespace collapsed).
2. Near duplicates: MinHash (datasketch, ``num_perm`` permutations, word ``shingle_words``-grams) indexed in
   MinHash LSH at ``threshold``; every LSH candidate pair is **confirmed by the exact Jaccard similarity of the
   shingle sets** (LSH is approximate) before anything is dropped. Confirmed pairs are grouped transitively.
3. Survivor of each group: higher data tier, then longer text, then smaller id (stable). The survivor's
   ``meta.duplicates`` lists every dropped chunk's id and source; :class:`DedupRecord` rows form the dedup log.

Nothing is removed without a log row. ``dup_penalty`` for the quality score is the highest confirmed similarity
of a kept chunk to any other chunk (including ones below the threshold found as LSH candidates).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import asdict, dataclass

import pyarrow as pa

from .config import DedupConfig
from .models import TIER_PRIORITY, Chunk
from .quality import composite_score

_WORDS = re.compile(r"\w+", re.UNICODE)


@dataclass
class DedupRecord:
    """One dropped chunk: which chunk was kept instead, how similar they were and why it was dropped."""

    dropped_id: str
    dropped_source: str
    kept_id: str
    kept_source: str
    similarity: float
    reason: str  # "exact" | "near-duplicate (minhash)"


DEDUP_LOG_SCHEMA = pa.schema([("dropped_id", pa.string()), ("dropped_source", pa.string()), ("kept_id", pa.string()),
                              ("kept_source", pa.string()), ("similarity", pa.float64()), ("reason", pa.string())])


def log_to_table(records: list[DedupRecord]) -> pa.Table:
    return pa.Table.from_pylist([asdict(r) for r in records], schema=DEDUP_LOG_SCHEMA)


def content_hash(text: str) -> str:
    """SHA-256 of the normalised content: lower case, runs of whitespace collapsed, trimmed."""
    return hashlib.sha256(" ".join(text.lower().split()).encode()).hexdigest()


def shingles(text: str, k: int) -> set[str]:
    """Word k-shingles of the lower-cased text (a text shorter than k words is one shingle)."""
    words = _WORDS.findall(text.lower())
    if len(words) <= k:
        return {" ".join(words)} if words else set()
    return {" ".join(words[i : i + k]) for i in range(len(words) - k + 1)}


def jaccard(a: set[str], b: set[str]) -> float:
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)


def _rank(c: Chunk) -> tuple[int, int, str]:
    """Survivor order: higher tier first, then longer text, then smaller id (sorted ascending on this key)."""
    return (-TIER_PRIORITY.get(c.meta.data_tier, 0), -len(c.text), c.id)


def dedup_chunks(chunks: list[Chunk], cfg: DedupConfig, *, min_tokens: int = 300) -> tuple[list[Chunk], list[DedupRecord]]:
    """Remove exact and near duplicates. Returns (kept chunks in input order, dedup log). Sets ``meta.duplicates``
    on survivors and the final ``quality.score`` (with ``dup_penalty``) on every kept chunk."""
    n = len(chunks)
    parent = list(range(n))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    def union(i: int, j: int) -> None:
        ri, rj = find(i), find(j)
        if ri != rj:
            parent[max(ri, rj)] = min(ri, rj)

    sim: dict[tuple[int, int], tuple[float, str]] = {}
    by_hash: dict[str, int] = {}
    for i, c in enumerate(chunks):
        h = content_hash(c.text)
        if h in by_hash:
            j = by_hash[h]
            union(j, i)
            sim[(j, i)] = (1.0, "exact")
        else:
            by_hash[h] = i
    penalty = [0.0] * n
    reps = sorted(by_hash.values())
    if len(reps) > 1:
        from datasketch import MinHash, MinHashLSH

        sh = {i: shingles(chunks[i].text, cfg.shingle_words) for i in reps}
        lsh = MinHashLSH(threshold=cfg.threshold, num_perm=cfg.num_perm)
        mhs = {}
        encoded = [[s.encode() for s in sh[i]] for i in reps]
        for i, m in zip(reps, MinHash.bulk(encoded, num_perm=cfg.num_perm, seed=1)):
            mhs[i] = m
        with lsh.insertion_session() as session:
            for i in reps:
                session.insert(i, mhs[i])
        for i in reps:
            for j in lsh.query(mhs[i]):
                if j <= i:
                    continue
                s = jaccard(sh[i], sh[j])  # confirm the LSH candidate with the exact Jaccard similarity
                penalty[i] = max(penalty[i], s)
                penalty[j] = max(penalty[j], s)
                if s >= cfg.threshold:
                    union(i, j)
                    sim[(i, j)] = (s, "near-duplicate (minhash)")
    groups: dict[int, list[int]] = {}
    for i in range(n):
        groups.setdefault(find(i), []).append(i)
    drop: set[int] = set()
    log: list[DedupRecord] = []
    for members in groups.values():
        if len(members) == 1:
            continue
        survivor = min(members, key=lambda i: _rank(chunks[i]))
        s_chunk = chunks[survivor]
        for m in sorted(members):
            if m == survivor:
                continue
            key = (min(m, survivor), max(m, survivor))
            similarity, reason = sim.get(key, (None, None))
            if similarity is None:  # joined through a third chunk: measure this pair directly
                similarity = jaccard(shingles(chunks[m].text, cfg.shingle_words), shingles(s_chunk.text, cfg.shingle_words))
                reason = "exact" if content_hash(chunks[m].text) == content_hash(s_chunk.text) else "near-duplicate (minhash)"
            drop.add(m)
            d = chunks[m]
            s_chunk.meta.duplicates.append({"id": d.id, "source": d.meta.source_path})
            log.append(DedupRecord(d.id, d.meta.source_path, s_chunk.id, s_chunk.meta.source_path, round(similarity, 4), reason))
            penalty[survivor] = max(penalty[survivor], similarity)
    kept = []
    for i, c in enumerate(chunks):
        if i in drop:
            continue
        c.quality.score = composite_score(c.quality.readability, c.meta.len_tokens, min_tokens, penalty[i])
        kept.append(c)
    return kept, log
