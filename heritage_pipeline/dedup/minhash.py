"""Exact and near-duplicate removal with a record of every drop.

1. **Exact duplicates**: same SHA-256 of the normalised content (:func:`content_hash`: Unicode NFKC, case-folded,
   whitespace runs collapsed, trimmed).
2. **Near duplicates**: word k-shingles (``shingle_words``; CJK characters count as one word each) hashed to
   64 bits (:func:`shingle_hashes`), one MinHash per chunk (datasketch, ``num_perm`` affine permutations, fixed
   seed), MinHash LSH at ``lsh_threshold`` (default ``threshold - 0.1``) to propose candidate pairs, and **every
   candidate confirmed by the exact Jaccard similarity of the two shingle sets** (LSH is approximate: it both
   misses and over-proposes; the lower candidate threshold trades a little time for recall at ``threshold``).
   Only pairs with exact Jaccard >= ``threshold`` are duplicates. The shingle sets are sets of 64-bit hashes, so
   "exact" holds up to a 64-bit hash collision (probability about n^2 / 2^65 for n distinct shingles).
3. **Survivors** (greedy, in survivor order): chunks are visited by *higher data tier, then longer text, then
   smaller id*; a visited chunk that has not been dropped is kept, and every not-yet-decided chunk that is an
   exact duplicate of it or whose confirmed Jaccard with it is >= ``threshold`` is dropped in its favour. Hence
   every drop is justified by a *direct* pair (never a chain A~B~C), and the kept chunk always ranks above the
   dropped one.

Every dropped chunk gets one :class:`DedupRecord` (the dedup log) and one entry in its survivor's
``meta.duplicates``; :func:`check_dedup_accounting` verifies that no chunk disappears without a log row.

``quality.dup_penalty`` of a kept chunk is the highest exact Jaccard similarity to another *kept* chunk among the
LSH candidate pairs (so below ``threshold``; pairs far below ``lsh_threshold`` are rarely proposed by LSH and count
as 0). It feeds the composite score (:func:`heritage_pipeline.enrich.quality.composite_score`).

Why MinHash and not SimHash: on the text-dedup benchmark (CORE, NEWS-COPY) MinHash is clearly more accurate than
SimHash (see ../shared/notes/peers.md); SimHash is not implemented.
"""

from __future__ import annotations

import hashlib
import time
import unicodedata
from dataclasses import asdict, dataclass, field

import numpy as np
import pyarrow as pa
import regex

from heritage_pipeline.core.config import DedupConfig
from heritage_pipeline.core.models import TIER_PRIORITY, Chunk
from heritage_pipeline.enrich.quality import composite_score

REASON_EXACT = "exact"
REASON_NEAR = "near-duplicate (minhash)"
SEED = 1
# A "word" for shingling: one CJK / kana / hangul character, or a run of other word characters.
# Deliberately not core.text.WORD_RE: shingles take one token per Han / kana / Hangul character (those scripts
# write no spaces, so a "word" run would be a whole sentence and no two near-duplicates would share a shingle).
_WORDS = regex.compile(r"[\p{Han}\p{Hiragana}\p{Katakana}\p{Hangul}]|[^\W\p{Han}\p{Hiragana}\p{Katakana}\p{Hangul}]+")
_POLY = np.uint64(0x100000001B3)  # FNV-64 prime, odd: multiplier of the polynomial shingle hash (wraps mod 2^64)


@dataclass
class DedupRecord:
    """One dropped chunk: which chunk was kept instead, how similar they were and why it was dropped.

    ``similarity`` is the exact Jaccard similarity of the two shingle sets (1.0 for exact duplicates); None for
    drops that are not duplicates (e.g. an opt-in quality drop, then ``kept_id`` is empty).
    """

    dropped_id: str
    dropped_source: str
    kept_id: str
    kept_source: str
    similarity: float | None
    reason: str  # REASON_EXACT | REASON_NEAR | "dropped: <quality reason>"


DEDUP_LOG_SCHEMA = pa.schema([("dropped_id", pa.string()), ("dropped_source", pa.string()), ("kept_id", pa.string()),
                              ("kept_source", pa.string()), ("similarity", pa.float64()), ("reason", pa.string())])


def log_to_table(records: list[DedupRecord], cfg: DedupConfig | None = None) -> pa.Table:
    """The dedup log as an Arrow table of :data:`DEDUP_LOG_SCHEMA`; the dedup parameters (threshold, num_perm,
    shingle size, LSH threshold) go into the schema metadata when ``cfg`` is given."""
    schema = DEDUP_LOG_SCHEMA
    if cfg is not None:
        schema = schema.with_metadata({"dedup_config": cfg.model_dump_json(), "lsh_threshold": str(lsh_threshold(cfg))})
    return pa.Table.from_pylist([asdict(r) for r in records], schema=schema)


def lsh_threshold(cfg: DedupConfig) -> float:
    """The MinHash-LSH candidate threshold: ``cfg.lsh_threshold`` or, when unset, ``max(0.5, threshold - 0.1)``."""
    explicit = getattr(cfg, "lsh_threshold", None)
    return float(explicit) if explicit is not None else max(0.5, round(cfg.threshold - 0.1, 4))


def normalise_for_hash(text: str) -> str:
    """NFKC, case-folded, whitespace runs collapsed to one space, trimmed."""
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def content_hash(text: str) -> str:
    """SHA-256 (hex) of :func:`normalise_for_hash` of the text."""
    return hashlib.sha256(normalise_for_hash(text).encode("utf-8", "surrogatepass")).hexdigest()


def words(text: str) -> list[str]:
    """Case-folded words of a text for shingling (CJK characters one word each; punctuation dropped)."""
    return _WORDS.findall(unicodedata.normalize("NFKC", text).casefold())


def _word_hash(w: str) -> int:
    return int.from_bytes(hashlib.blake2b(w.encode(), digest_size=8).digest(), "little")


def shingle_hashes(text: str, k: int, _cache: dict[str, int] | None = None) -> np.ndarray:
    """Sorted, unique 64-bit hashes of the word k-shingles of ``text`` (shape ``[n_shingles]``, uint64).

    A text with fewer than ``k`` words is one shingle (all its words); a text with no word gives an empty array.
    Word hashes are BLAKE2b-64 (deterministic across processes); a shingle's hash is the polynomial
    ``sum(h(w_i) * P^(k-1-i)) mod 2^64``.
    """
    ws = words(text)
    if not ws:
        return np.zeros(0, dtype=np.uint64)
    cache = {} if _cache is None else _cache
    hs = []
    for w in ws:
        h = cache.get(w)
        if h is None:
            h = cache[w] = _word_hash(w)
        hs.append(h)
    wh = np.array(hs, dtype=np.uint64)
    k = min(k, len(wh))
    n = len(wh) - k + 1
    acc = np.zeros(n, dtype=np.uint64)
    with np.errstate(over="ignore"):
        for j in range(k):
            acc = acc * _POLY + wh[j : j + n]
    return np.unique(acc)


def shingles(text: str, k: int) -> set[str]:
    """Word k-shingles as strings (for inspection and tests; the dedup itself uses :func:`shingle_hashes`)."""
    ws = words(text)
    if len(ws) <= k:
        return {" ".join(ws)} if ws else set()
    return {" ".join(ws[i : i + k]) for i in range(len(ws) - k + 1)}


def jaccard(a: set | np.ndarray, b: set | np.ndarray) -> float:
    """Exact Jaccard similarity |a ∩ b| / |a ∪ b| of two sets (Python sets, or sorted unique numpy arrays);
    1.0 for two empty sets."""
    if isinstance(a, np.ndarray):
        if len(a) == 0 and len(b) == 0:
            return 1.0
        inter = len(np.intersect1d(a, b, assume_unique=True))
        return inter / (len(a) + len(b) - inter)
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)


def survivor_key(c: Chunk) -> tuple[int, int, str]:
    """Survivor order, ascending: higher data tier first, then longer text (code points), then smaller id."""
    return (-TIER_PRIORITY.get(c.meta.data_tier, 0), -len(c.text), c.id)


@dataclass
class DedupStats:
    """What one :func:`dedup_chunks` call did (counts and seconds), for asset metadata and benchmarks."""

    chunks_in: int = 0
    exact_groups: int = 0
    dropped_exact: int = 0
    dropped_near: int = 0
    lsh_candidates: int = 0
    confirmed_pairs: int = 0
    rejected_candidates: int = 0
    seconds: dict[str, float] = field(default_factory=dict)


def candidate_pairs(sets: list[np.ndarray], cfg: DedupConfig, stats: DedupStats | None = None) -> list[tuple[int, int, float]]:
    """All MinHash-LSH candidate pairs ``(i, j, exact_jaccard)`` with ``i < j`` among non-empty shingle sets.

    ``sets[i]`` are sorted unique uint64 shingle hashes (:func:`shingle_hashes`). The Jaccard value is exact
    (computed on the sets), whatever the MinHash estimate was.
    """
    from datasketch import MinHash, MinHashLSH

    t0 = time.perf_counter()
    idx = [i for i, s in enumerate(sets) if len(s)]
    if len(idx) < 2:
        return []
    perms = MinHash(cfg.num_perm, seed=SEED, scheme="affine64").permutations
    lsh = MinHashLSH(threshold=lsh_threshold(cfg), num_perm=cfg.num_perm)
    sigs = {}
    with lsh.insertion_session() as session:
        for i in idx:
            m = MinHash(cfg.num_perm, seed=SEED, hashfunc=_identity, scheme="affine64", permutations=perms)
            m.update_batch(sets[i])
            sigs[i] = m
            session.insert(i, m, check_duplication=False)
    t1 = time.perf_counter()
    out: list[tuple[int, int, float]] = []
    for i in idx:
        for j in sorted(lsh.query(sigs[i])):
            if j > i:
                out.append((i, j, jaccard(sets[i], sets[j])))
    if stats is not None:
        stats.seconds["minhash_lsh"] = round(t1 - t0, 3)
        stats.seconds["query_confirm"] = round(time.perf_counter() - t1, 3)
        stats.lsh_candidates += len(out)
    return out


def _identity(x):
    return x


def dedup_chunks(chunks: list[Chunk], cfg: DedupConfig, *, min_tokens: int = 300, max_tokens: int = 1200,
                 stats: DedupStats | None = None) -> tuple[list[Chunk], list[DedupRecord]]:
    """Remove exact and near duplicates (module docstring). Returns (kept chunks in input order, dedup log).

    Side effects on kept chunks: the survivor's ``meta.duplicates`` gets ``{"id", "source", "reason",
    "similarity"}`` per dropped chunk; every kept chunk gets ``quality.dup_penalty`` and its final
    ``quality.score`` (``min_tokens``/``max_tokens``: the useful-length band of the score's coverage term, cl100k
    tokens). Input chunks with equal ids are a caller bug and raise ValueError.
    """
    stats = stats if stats is not None else DedupStats()
    stats.chunks_in = len(chunks)
    ids = [c.id for c in chunks]
    if len(set(ids)) != len(ids):
        raise ValueError("dedup_chunks: chunk ids are not unique")
    n = len(chunks)
    t0 = time.perf_counter()
    # 1. exact groups: representative = the best-ranked member
    by_hash: dict[str, list[int]] = {}
    for i, c in enumerate(chunks):
        by_hash.setdefault(content_hash(c.text), []).append(i)
    groups = [sorted(m, key=lambda i: survivor_key(chunks[i])) for m in by_hash.values()]
    stats.exact_groups = sum(1 for g in groups if len(g) > 1)
    reps = [g[0] for g in groups]
    group_of = {g[0]: g for g in groups}
    # 2. near-duplicate candidates among representatives, confirmed by exact Jaccard
    cache: dict[str, int] = {}
    sets = [shingle_hashes(chunks[i].text, cfg.shingle_words, cache) for i in reps]
    stats.seconds["shingles"] = round(time.perf_counter() - t0, 3)
    neighbours: dict[int, list[tuple[int, float]]] = {}
    best_sim = {i: 0.0 for i in reps}
    pairs = candidate_pairs(sets, cfg, stats) if len(reps) > 1 else []
    for a, b, s in pairs:
        i, j = reps[a], reps[b]
        if s >= cfg.threshold:
            neighbours.setdefault(i, []).append((j, s))
            neighbours.setdefault(j, []).append((i, s))
            stats.confirmed_pairs += 1
        else:
            stats.rejected_candidates += 1
    # 3. greedy survivors in survivor order
    t2 = time.perf_counter()
    state: dict[int, int] = {}  # representative -> index of the representative it was dropped for (-1: kept)
    log: list[DedupRecord] = []
    drop: set[int] = set()

    def record(dropped: int, kept: int, similarity: float, reason: str) -> None:
        d, k = chunks[dropped], chunks[kept]
        drop.add(dropped)
        k.meta.duplicates.append({"id": d.id, "source": d.meta.source_path, "reason": reason,
                                  "similarity": f"{similarity:.4f}"})
        log.append(DedupRecord(d.id, d.meta.source_path, k.id, k.meta.source_path, round(similarity, 4), reason))

    for r in sorted(reps, key=lambda i: survivor_key(chunks[i])):
        if r in state:
            continue
        state[r] = -1
        for m in group_of[r][1:]:
            record(m, r, 1.0, REASON_EXACT)
            stats.dropped_exact += 1
        for other, s in sorted(neighbours.get(r, []), key=lambda t: survivor_key(chunks[t[0]])):
            if other in state:
                continue
            state[other] = r
            for m in group_of[other]:
                record(m, r, s, REASON_NEAR)
                stats.dropped_near += 1
    # dup penalty: highest similarity to another kept chunk among the confirmed candidates
    for a, b, s in pairs:
        i, j = reps[a], reps[b]
        if state.get(i) == -1 and state.get(j) == -1:
            best_sim[i] = max(best_sim[i], s)
            best_sim[j] = max(best_sim[j], s)
    kept = []
    for i, c in enumerate(chunks):
        if i in drop:
            continue
        penalty = best_sim.get(i, 0.0)
        c.quality.dup_penalty = round(penalty, 4)
        c.quality.score = 0.0 if c.quality.degenerate else composite_score(  # degenerate text: see enrich/quality.py
            c.quality.readability, c.meta.len_tokens, min_tokens, penalty, max_tokens)
        kept.append(c)
    stats.seconds["survivors"] = round(time.perf_counter() - t2, 3)
    stats.seconds["total"] = round(time.perf_counter() - t0, 3)
    assert len(kept) + len(log) == n
    return kept, log


def check_dedup_accounting(chunks_in: list[Chunk] | list[str], kept: list[Chunk], log: list[DedupRecord]) -> list[str]:
    """Problems with a dedup result (empty list when sound): every input id is either kept or logged exactly
    once, never both; every log row's survivor (when it has one) is kept."""
    in_ids = [c if isinstance(c, str) else c.id for c in chunks_in]
    kept_ids = [c.id for c in kept]
    dropped = [r.dropped_id for r in log]
    problems = []
    lost = set(in_ids) - set(kept_ids) - set(dropped)
    if lost:
        problems.append(f"{len(lost)} chunk(s) disappeared without a dedup-log row, e.g. {sorted(lost)[:3]}")
    both = set(kept_ids) & set(dropped)
    if both:
        problems.append(f"{len(both)} chunk(s) both kept and logged as dropped, e.g. {sorted(both)[:3]}")
    if len(dropped) != len(set(dropped)):
        problems.append("a chunk is logged as dropped more than once")
    unknown = (set(kept_ids) | set(dropped)) - set(in_ids)
    if unknown:
        problems.append(f"{len(unknown)} id(s) in the output that were not in the input, e.g. {sorted(unknown)[:3]}")
    kept_set = set(kept_ids)
    orphan = [r.dropped_id for r in log if r.kept_id and r.kept_id not in kept_set]
    if orphan:
        problems.append(f"{len(orphan)} log row(s) name a survivor that was not kept, e.g. {orphan[:3]}")
    return problems
