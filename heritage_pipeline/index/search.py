"""Search: vector (cosine), full-text (BM25) or hybrid (weighted reciprocal-rank fusion), with metadata filters.
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np
import pyarrow as pa

from .schema import FILTER_COLUMNS, lang_column
from .writer import open_table, quote_sql

RESULT_COLUMNS = ("id", "text", "anchors", "breadcrumb", "doc_id", "source_path", "source_type", "lang", "language",
                  "custodian_type", "country_code", "data_tier", "char_start", "char_end", "len_tokens", "keywords")


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


def search_table(tbl, query: str, *, mode: str = "hybrid", k: int = 10, query_vector: np.ndarray | None = None,
                 filters: dict[str, str] | None = None, fts_lang: str | None = None, candidates: int | None = None,
                 rrf_k: int = 60, vector_weight: float = 1.0, fts_weight: float = 1.0,
                 columns: tuple[str, ...] = RESULT_COLUMNS) -> list[dict]:
    """Top-``k`` rows of an open index table for ``query`` (see :func:`search`); rows carry ``score``.

    ``fts_lang``: use the stemmed full-text column of that language when the table has it (else the neutral one).
    ``candidates``: list depth fetched from each retriever before fusion (default ``k``). An FTS query that
    reduces to nothing (only stop words or symbols) returns no BM25 hits instead of failing.
    """
    where = _where(filters)
    col = lang_column(fts_lang) if fts_lang and lang_column(fts_lang) in tbl.schema.names else "search_text"
    depth = max(k, candidates or k)
    cols = ["id"] + [c for c in columns if c != "id" and c in tbl.schema.names]  # fusion matches rows by id

    def fts_query(limit: int):
        q = tbl.search(query, query_type="fts", fts_columns=col)
        return q.where(where, prefilter=True) if where else q

    def vec_query(limit: int):
        if query_vector is None:
            raise ValueError(f"mode {mode!r} needs a query vector (an embedder)")
        q = tbl.search(np.asarray(query_vector, dtype=np.float32), query_type="vector",
                       vector_column_name="vector").distance_type("cosine")
        return q.where(where, prefilter=True) if where else q

    try:
        if mode == "fts":
            rows = fts_query(k).select(cols + ["_score"]).limit(k).to_arrow().to_pylist()
            scored = [(float(r["_score"]), r) for r in rows]
        elif mode == "vector":
            rows = vec_query(k).select(cols + ["_distance"]).limit(k).to_arrow().to_pylist()
            scored = [(1.0 - float(r["_distance"]), r) for r in rows]  # cosine similarity
        elif mode == "hybrid":
            if query_vector is None:
                raise ValueError("mode 'hybrid' needs a query vector (an embedder)")
            q = (tbl.search(query_type="hybrid", vector_column_name="vector", fts_columns=col)
                 .vector(np.asarray(query_vector, dtype=np.float32)).text(query)
                 .rerank(WeightedRRFReranker(rrf_k, vector_weight, fts_weight)))
            if where:
                q = q.where(where, prefilter=True)
            # No select(): LanceDB passes a hybrid query's columns to both legs, so neither `_score` nor `_distance`
            # can be listed and lance logs a deprecation per call; unprojected, the legs keep their scores.
            rows = q.limit(depth).to_arrow().select(cols + ["_relevance_score"]).to_pylist()[:k]
            scored = [(float(r["_relevance_score"]), r) for r in rows]
        else:
            raise ValueError(f"unknown search mode {mode!r}: use hybrid, vector or fts")
    except ValueError:
        raise
    except Exception as exc:  # tantivy rejects a query whose tokens are all removed (stop words, symbols)
        if mode == "fts" and "query" in str(exc).lower():
            return []
        raise
    out = [{**{c: r.get(c) for c in cols}, "score": s} for s, r in scored]
    out.sort(key=lambda r: (-tie_key(r["score"]), r["id"]))
    return out


def search(uri: str, table_name: str, query: str, *, mode: str = "hybrid", k: int = 10, embedder=None,
           filters: dict[str, str] | None = None, fts_lang: str | None = None, **fusion) -> list[dict]:
    """Top-``k`` chunks for ``query``: ``vector`` (cosine similarity of ``embedder.embed_query``), ``fts`` (BM25)
    or ``hybrid`` (both fused by weighted reciprocal-rank fusion; ``fusion``: ``rrf_k``, ``vector_weight``,
    ``fts_weight``, ``candidates``). ``filters``: equality on :data:`FILTER_COLUMNS`; a ``lang`` filter also picks
    that language's stemmed full-text index unless ``fts_lang`` is given.

    Rows have the :data:`RESULT_COLUMNS` and ``score``, sorted by score (descending), then id.
    Raises FileNotFoundError when the index does not exist, ValueError for an unknown mode or filter, a missing
    embedder, or an embedder other than the one that built the index.
    """
    tbl = open_table(uri, table_name)
    qvec = None
    if mode in ("vector", "hybrid"):
        if embedder is None:
            raise ValueError(f"mode {mode!r} needs an embedder")
        built_with = (tbl.schema.metadata or {}).get(b"embedding_model", b"").decode()
        if built_with and built_with != embedder.model_id:
            raise ValueError(f"the index was built with {built_with}; the configured embedder is {embedder.model_id}")
        qvec = embedder.embed_query(query)
    lang = fts_lang or (filters or {}).get("lang") or (filters or {}).get("language")
    return search_table(tbl, query, mode=mode, k=k, query_vector=qvec, filters=filters, fts_lang=lang, **fusion)
