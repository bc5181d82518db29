"""Search: vector (cosine), full-text (BM25) or hybrid (weighted reciprocal-rank fusion), with metadata filters.
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np
import pyarrow as pa

from .analysis import ascii_fold, extract_identifiers, gazetteer_key, has_cjk, query_places, query_types
from .schema import CJK, FILTER_COLUMNS, lang_column
from .writer import open_table, quote_sql

RESULT_COLUMNS = ("id", "text", "anchors", "breadcrumb", "doc_id", "source_path", "source_type", "lang", "language",
                  "custodian_type", "country_code", "settlement", "name", "data_tier", "char_start", "char_end",
                  "len_tokens", "keywords", "source_url", "row_index")


def _where(filters: dict[str, str] | None) -> str | None:
    if not filters:
        return None
    bad = [k for k in filters if k not in FILTER_COLUMNS]
    if bad:
        raise ValueError(f"unknown filter {bad[0]!r}; filters: {', '.join(FILTER_COLUMNS)}")
    return " AND ".join(f"{k} = {quote_sql(v)}" for k, v in sorted(filters.items()) if v is not None) or None


TIE_DECIMALS = 6  # scores equal to 6 decimals are ties (float32 arithmetic differs between engines)


def tie_key(score: float) -> float:
    """Sort key that treats scores equal to :data:`TIE_DECIMALS` decimals as ties (broken by chunk id)."""
    return round(float(score), TIE_DECIMALS)


def rrf_fuse(ranked_lists: list[list[str]], weights: list[float], k: int = 60) -> list[tuple[str, float]]:
    """Weighted reciprocal-rank fusion of ranked id lists: ``score(d) = sum_i w_i / (k + rank_i(d))`` (1-based
    ranks; a list where ``d`` is absent adds nothing). Returns ``(id, score)`` sorted by score, then id.

    Source: Cormack, Clarke & Büttcher, "Reciprocal Rank Fusion outperforms Condorcet and individual rank learning
    methods", SIGIR 2009 (k = 60, equal weights); the per-list weights are the usual weighted variant.
    """
    score: dict[str, float] = defaultdict(float)
    for ids, w in zip(ranked_lists, weights):
        for rank, d in enumerate(ids, 1):
            score[d] += w / (k + rank)
    return sorted(score.items(), key=lambda x: (-tie_key(x[1]), x[0]))


class WeightedRRFReranker:
    """Reciprocal-rank fusion of a vector list and a BM25 list with per-list weights, as a LanceDB reranker.

    ``score(d) = w_vector / (k + rank_vector(d)) + w_fts / (k + rank_fts(d))`` with 1-based ranks and a list's
    term absent when ``d`` is not in it (Cormack, Clarke & Büttcher 2009, weighted form). ``k = 60`` and equal
    weights give LanceDB's ``RRFReranker``. Ties are broken by the chunk id (ascending).
    """

    def __new__(cls, k: int = 60, vector_weight: float = 1.0, fts_weight: float = 1.0):
        from lancedb.rerankers import Reranker

        class _Impl(Reranker):
            def __init__(self):
                super().__init__("relevance")
                if k <= 0 or vector_weight < 0 or fts_weight < 0:
                    raise ValueError("RRF needs k > 0 and non-negative weights")
                self.k, self.wv, self.wf = k, vector_weight, fts_weight

            def __str__(self):
                return f"WeightedRRFReranker(k={self.k}, vector_weight={self.wv}, fts_weight={self.wf})"

            def rerank_hybrid(self, query, vector_results: pa.Table, fts_results: pa.Table):
                lists = []  # each list in its own order, ties broken by id (LanceDB leaves tie order open)
                for res, col, sign in ((vector_results, "_distance", 1.0), (fts_results, "_score", -1.0)):
                    if res is None or not res.num_rows:
                        lists.append([])
                    else:
                        pairs = zip(res[col].to_pylist(), res["id"].to_pylist())
                        lists.append([i for _, i in sorted(pairs, key=lambda p: (tie_key(sign * p[0]), p[1]))])
                score = dict(rrf_fuse(lists, [self.wv, self.wf], self.k))
                merged = self.merge_results(vector_results, fts_results)
                merged = merged.append_column("_relevance_score", pa.array([score[i] for i in merged["id"].to_pylist()],
                                                                           type=pa.float64()))
                merged = merged.sort_by([("_relevance_score", "descending"), ("id", "ascending")])
                return self._keep_relevance_score(merged)

        return _Impl()


FLAGGED_POLICIES = ("exclude", "demote", "include")
TIERS = ("identifier", "field")
_GAZETTEER: dict[tuple, dict[str, str]] = {}


def _and(*parts: str | None) -> str | None:
    got = [f"({p})" for p in parts if p]
    return " AND ".join(got) or None


def gazetteer(tbl) -> dict[str, list[str]]:
    """Places of the indexed records: ``{folded key: [settlements as stored]}`` from the distinct ``settlement``
    values (the typed slot or ``meta.extra["slot:settlement"]``), cached per table version. One key holds every
    stored spelling (``BERLIN`` of a US registry and ``Berlin`` of a German one): keeping one of them gave the
    field match to one registry's rows only.

    Args:
        tbl: an open LanceDB table of :func:`~heritage_pipeline.index.schema.index_schema`.
    Returns:
        The lookup used by :func:`~heritage_pipeline.index.analysis.query_places` (empty without the column).
    """
    if "settlement" not in tbl.schema.names:
        return {}
    key = (getattr(tbl, "name", ""), str(getattr(tbl, "_conn", "")), tbl.version)
    if key not in _GAZETTEER:
        col = (tbl.search().where("settlement IS NOT NULL AND settlement != ''").select(["settlement"]).limit(None)
               .to_arrow().column("settlement").to_pylist())
        _GAZETTEER.clear()
        places: dict[str, list[str]] = {}
        for v in sorted(set(col)):
            for name in (v, v.split(",")[0]):  # "Chicago, IL" is also found as "Chicago"
                stored = places.setdefault(gazetteer_key(name), []) if gazetteer_key(name) else None
                if stored is not None and v not in stored:
                    stored.append(v)
        _GAZETTEER[key] = places
    return _GAZETTEER[key]


def fts_column(tbl, query: str, fts_lang: str | None) -> tuple[str, str]:
    """The full-text column to query and the query text as that column's analyser expects it.

    CJK in the query → the bigram column ``search_text_cjk`` (when the table has it); else the stemmed column of
    ``fts_lang`` with the query accent-folded (the column holds folded text); else the neutral ``search_text``.

    Returns:
        ``(column name, query text)``.
    """
    names = tbl.schema.names
    if has_cjk(query) and lang_column(CJK) in names:
        return lang_column(CJK), query
    if fts_lang and fts_lang != CJK and lang_column(fts_lang) in names:
        return lang_column(fts_lang), ascii_fold(query)
    return "search_text", query


def search_table(tbl, query: str, *, mode: str = "hybrid", k: int = 10, query_vector: np.ndarray | None = None,
                 filters: dict[str, str] | None = None, fts_lang: str | None = None, candidates: int | None = None,
                 rrf_k: int = 60, vector_weight: float = 1.0, fts_weight: float = 1.0,
                 columns: tuple[str, ...] = RESULT_COLUMNS, flagged: str = "exclude", tiers: bool = True,
                 explain: bool = False) -> list[dict]:
    """Top-``k`` rows of an open index table for ``query`` (see :func:`search`).

    Ranking: the base list (BM25 for ``fts``, cosine similarity for ``vector``, weighted RRF of both
    ``candidates``-deep lists for ``hybrid``, fused here with :func:`rrf_fuse`, the function the ablation uses).
    With ``tiers`` (``fts`` and ``hybrid`` only), two tiers go before the base list:

    1. *identifier*: rows whose ``identifiers`` hold an identifier of the query exactly (ISIL, Wikidata id, other
       codes; :func:`~heritage_pipeline.index.analysis.extract_identifiers`), more matched identifiers first;
    2. *field*: when the query names a custodian type and a place (gazetteer of the indexed settlements), the
       records of that type in that place.

    Inside a tier rows keep their base order (rows absent from the base list follow, by id).

    Args:
        tbl: an open index table.
        query: query text.
        mode: ``hybrid``, ``vector`` or ``fts``.
        k: number of rows returned.
        query_vector: the query embedding (``vector``/``hybrid``).
        filters: equality filters on :data:`FILTER_COLUMNS`.
        fts_lang: stemmed full-text column to use when the table has it (else the neutral one).
        candidates: depth of each retriever's list before fusion (default ``k``).
        rrf_k, vector_weight, fts_weight: weighted RRF parameters (hybrid).
        columns: row columns returned (``id`` always).
        flagged: chunks flagged boilerplate/degenerate: ``exclude`` (filtered out), ``demote`` (after every
            unflagged row) or ``include`` (ranked like any other).
        tiers: apply the identifier and field tiers.
        explain: add ``explain`` to each row: BM25 rank/score, vector rank/similarity, tier and matched values.
    Returns:
        Rows (dicts of ``columns``) with ``score`` (the base score: BM25, cosine similarity or RRF; 0.0 for a tier
        row outside the base list) and ``tier`` (``identifier``, ``field`` or None), in ranked order.
    Raises:
        ValueError: unknown mode, filter or flagged policy, or no query vector for ``vector``/``hybrid``.
    """
    if mode not in ("hybrid", "vector", "fts"):
        raise ValueError(f"unknown search mode {mode!r}: use hybrid, vector or fts")
    if flagged not in FLAGGED_POLICIES:
        raise ValueError(f"unknown flagged-chunk policy {flagged!r}: use {', '.join(FLAGGED_POLICIES)}")
    if mode in ("vector", "hybrid") and query_vector is None:
        raise ValueError(f"mode {mode!r} needs a query vector (an embedder)")
    names = tbl.schema.names
    has_flag = "flagged" in names
    where = _and(_where(filters), "flagged IS NULL OR flagged = false" if flagged == "exclude" and has_flag else None)
    depth = max(k, candidates or k)
    extra = [c for c in ("flagged",) if has_flag and flagged == "demote"]
    cols = list(dict.fromkeys(["id"] + [c for c in columns if c in names] + extra))
    rows: dict[str, dict] = {}

    def run(q, limit):
        q = q.where(where, prefilter=True) if where else q
        return q.limit(limit).to_arrow().to_pylist()

    def scan(cond: str, select: list[str], limit: int | None):  # a filtered scan (no ranking) for the tiers
        return tbl.search().where(_and(where, cond)).select(select).limit(limit).to_arrow().to_pylist()

    bm25: list[tuple[str, float]] = []
    vec: list[tuple[str, float]] = []
    if mode in ("fts", "hybrid"):
        col, text = fts_column(tbl, query, fts_lang)
        try:
            got = run(tbl.search(text, query_type="fts", fts_columns=col).select(cols + ["_score"]), depth)
        except Exception as exc:  # tantivy rejects a query whose tokens are all removed (stop words, symbols)
            if "query" not in str(exc).lower():
                raise
            got = []
        for r in got:
            rows.setdefault(r["id"], r)
        bm25 = sorted(((r["id"], float(r["_score"])) for r in got), key=lambda p: (-tie_key(p[1]), p[0]))
    if mode in ("vector", "hybrid"):
        q = (tbl.search(np.asarray(query_vector, dtype=np.float32), query_type="vector", vector_column_name="vector")
             .distance_type("cosine").select(cols + ["_distance"]))
        got = run(q, depth)
        for r in got:
            rows.setdefault(r["id"], r)
        vec = sorted(((r["id"], 1.0 - float(r["_distance"])) for r in got), key=lambda p: (-tie_key(p[1]), p[0]))
    base = bm25 if mode == "fts" else vec if mode == "vector" else rrf_fuse([[d for d, _ in vec], [d for d, _ in bm25]],
                                                                          [vector_weight, fts_weight], rrf_k)
    base_score = dict(base)
    base_rank = {d: i for i, (d, _) in enumerate(base)}
    tier_of: dict[str, tuple[int, int, str]] = {}  # id -> (tier index, -strength, matched)
    if tiers and mode != "vector":
        ids = extract_identifiers(query)
        if ids and "identifiers" in names:
            arr = ", ".join(quote_sql(i) for i in ids)
            for r in scan(f"array_has_any(identifiers, make_array({arr}))", cols + ["identifiers"], depth):
                hit = sorted(set(r.pop("identifiers") or []) & set(ids))
                if hit:
                    rows.setdefault(r["id"], r)
                    tier_of[r["id"]] = (0, -len(hit), " ".join(hit))
        types = query_types(query)
        places = query_places(query, gazetteer(tbl)) if types else []
        if places:  # a place alone ("Where is the Art Institute of Chicago?") is no request for that place's records
            plist = ", ".join(quote_sql(p) for p in places)
            tlist = ", ".join(quote_sql(t) for t in sorted(types))
            for r in scan(f"settlement IN ({plist}) AND custodian_type IN ({tlist})",
                          list(dict.fromkeys(cols + ["settlement", "custodian_type"])), None):
                if r["id"] not in tier_of:
                    rows.setdefault(r["id"], r)
                    tier_of[r["id"]] = (1, -1, f"{r['settlement']} + type {r['custodian_type']}")
    order = sorted(set(base_rank) | set(tier_of), key=lambda d: (tier_of.get(d, (len(TIERS), 0, ""))[:2],
                                                                    base_rank.get(d, len(base_rank)), d))
    if flagged == "demote" and has_flag:
        order.sort(key=lambda d: bool(rows[d].get("flagged")))  # stable: flagged rows after every other row
    out = []
    for d in order[:k]:
        r = rows[d]
        t = tier_of.get(d)
        hit = {**{c: r.get(c) for c in cols if c in columns or c == "id"}, "score": float(base_score.get(d, 0.0)),
               "tier": TIERS[t[0]] if t else None}
        if explain:
            br = {x: i for i, (x, _) in enumerate(bm25, 1)}
            vr = {x: i for i, (x, _) in enumerate(vec, 1)}
            hit["explain"] = {"bm25_rank": br.get(d), "bm25_score": dict(bm25).get(d),
                              "vector_rank": vr.get(d), "vector_similarity": dict(vec).get(d),
                              "rrf": ({"k": rrf_k, "fts": fts_weight / (rrf_k + br[d]) if d in br else 0.0,
                                       "vector": vector_weight / (rrf_k + vr[d]) if d in vr else 0.0}
                                      if mode == "hybrid" else None),
                              "tier": hit["tier"], "matched": t[2] if t else None}
        out.append(hit)
    return out


def check_embedder(tbl, embedder) -> None:
    """Raise ValueError when ``embedder`` is not the model that built the table (schema metadata)."""
    built_with = (tbl.schema.metadata or {}).get(b"embedding_model", b"").decode()
    if built_with and built_with != embedder.model_id:
        raise ValueError(f"the index was built with {built_with}; the configured embedder is {embedder.model_id}")


def search(uri: str, table_name: str, query: str, *, mode: str = "hybrid", k: int = 10, embedder=None,
           filters: dict[str, str] | None = None, fts_lang: str | None = None, **options) -> list[dict]:
    """Top-``k`` chunks for ``query`` in the index at ``uri``: ``vector`` (cosine similarity of
    ``embedder.embed_query``), ``fts`` (BM25) or ``hybrid`` (both, weighted reciprocal-rank fusion).

    Args:
        uri: LanceDB directory.
        table_name: the table (``chunks``).
        query: query text.
        mode: ``hybrid``, ``vector`` or ``fts``.
        k: number of hits.
        embedder: needed for ``vector``/``hybrid``; must be the model that built the index.
        filters: equality on :data:`FILTER_COLUMNS`; a ``lang`` filter also picks that language's stemmed
            full-text column unless ``fts_lang`` is given.
        fts_lang: stemmed full-text column to use.
        **options: :func:`search_table` keywords (``rrf_k``, ``vector_weight``, ``fts_weight``, ``candidates``,
            ``flagged``, ``tiers``, ``explain``, ``columns``).
    Returns:
        Rows of :data:`RESULT_COLUMNS` with ``score`` and ``tier``, ranked (see :func:`search_table`).
    Raises:
        FileNotFoundError: the index does not exist.
        ValueError: unknown mode or filter, a missing embedder, or an embedder other than the one of the index.
    """
    tbl = open_table(uri, table_name)
    qvec = None
    if mode in ("vector", "hybrid"):
        if embedder is None:
            raise ValueError(f"mode {mode!r} needs an embedder")
        check_embedder(tbl, embedder)
        qvec = embedder.embed_query(query)
    lang = fts_lang or (filters or {}).get("lang") or (filters or {}).get("language")
    return search_table(tbl, query, mode=mode, k=k, query_vector=qvec, filters=filters, fts_lang=lang, **options)
