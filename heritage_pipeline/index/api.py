"""The Python search API: ranked, citable hits from the LanceDB index built by ``heritage-pipeline run``.

::

    from heritage_pipeline import search

    for hit in search("Welche Bibliothek hat die ISIL DE-3?", k=5):
        print(hit.id, hit.score, hit.tier, hit.meta["source_path"], hit.meta["row_index"], hit.spans)

For many queries keep one :class:`Searcher` (the table and the embedding model stay loaded)::

    s = Searcher()                      # configs/pipeline.yaml: index location, embedder, fusion settings
    hits = s.search("musee Lyon", mode="fts", lang="fr")

Imports stay light: LanceDB is imported when the index is opened, the embedding model (and torch, for a
sentence-transformers model) only when a ``vector`` or ``hybrid`` query needs it.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any

from .search import RESULT_COLUMNS, check_embedder, search_table

HIT_COLUMNS = RESULT_COLUMNS + ("record",)


@dataclass
class SearchHit:
    """One ranked hit.

    Attributes:
        id: the chunk id (``<doc_id>#<section>#<nnn>``), in full.
        rank: 1-based rank.
        score: the base retrieval score: BM25 (``fts``), cosine similarity (``vector``) or weighted RRF
            (``hybrid``); 0.0 for a tier hit outside the fused list.
        tier: ``identifier`` (exact identifier match), ``field`` (record of a place/type the query names) or None.
        text: the chunk's text (a slice of the source, SPEC §3).
        spans: ``{"char_start", "char_end"}``: code-point offsets into the raw source file.
        source_url: the page URL where known.
        lang, source_type: the chunk's language and source type.
        meta: the chunk's full ``meta`` (``source_path``, ``row_index``, anchors, slots, ...).
        explain: with ``explain=True``: BM25 and vector ranks and scores, RRF terms, tier and matched values.
        section: with ``expand_tokens``: the neighbouring chunks of the same section (see :meth:`Searcher.search`).
    """

    id: str
    rank: int
    score: float
    tier: str | None
    text: str
    spans: dict[str, int]
    source_url: str | None
    lang: str | None
    source_type: str | None
    meta: dict[str, Any] = field(default_factory=dict)
    explain: dict[str, Any] | None = None
    section: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-serialisable dict (``explain``/``section`` left out when not requested)."""
        d = asdict(self)
        for key in ("explain", "section"):
            if d[key] is None:
                d.pop(key)
        return d


def _hit(rank: int, row: dict[str, Any]) -> SearchHit:
    record = json.loads(row["record"]) if row.get("record") else {}
    meta = record.get("meta") or {k: row.get(k) for k in RESULT_COLUMNS if k not in ("id", "text")}
    return SearchHit(id=row["id"], rank=rank, score=row["score"], tier=row.get("tier"), text=row.get("text") or "",
                     spans={"char_start": row.get("char_start"), "char_end": row.get("char_end")},
                     source_url=row.get("source_url") or meta.get("source_url"), lang=row.get("lang"),
                     source_type=row.get("source_type"), meta=meta, explain=row.get("explain"))


# Filter columns whose values are upper-case codes (country_code ISO 3166 alpha-2, data_tier TIER_*, custodian_type
# GLAMORCUBESFIXPHDNT letters): a lower-case filter value matched nothing and said nothing.
_UPPER_CASE_FILTERS = frozenset({"country_code", "data_tier", "custodian_type"})


class Searcher:
    """An open index (and, once needed, its embedding model) answering queries.

    Args:
        uri: LanceDB directory (default: ``lancedb.uri`` of the pipeline configuration).
        table: table name (default: ``lancedb.table``).
        pipeline_config: a loaded ``PipelineConfig`` or the path of ``pipeline.yaml`` (default: ``configs/pipeline.yaml``).
        embedder: an embedder object (``model_id``, ``embed_query``); default: built from the configuration on
            the first ``vector``/``hybrid`` query.
    Raises:
        FileNotFoundError: the index does not exist.
        ConfigError: the pipeline configuration is invalid.
    """

    def __init__(self, uri: str | None = None, table: str | None = None, *, pipeline_config=None, embedder=None):
        from heritage_pipeline.core.config import load_pipeline_config

        from .writer import open_table

        pcfg = pipeline_config if hasattr(pipeline_config, "lancedb") else load_pipeline_config(pipeline_config)
        self.config = pcfg
        self.uri = uri or pcfg.resolve(pcfg.lancedb.uri)
        self.table_name = table or pcfg.lancedb.table
        self.table = open_table(str(self.uri), self.table_name)
        self._embedder = embedder

    @property
    def embedder(self):
        """The query embedder (built on first use from ``embedder`` in the configuration; checked against the
        model that built the index). Raises ValueError on a model mismatch."""
        if self._embedder is None:
            from heritage_pipeline.core.storage import OutputLayout
            from heritage_pipeline.embed.embedders import QUERY_THREADS, make_embedder

            from .startup import paused_gc

            with paused_gc():  # a model is long-lived: load it without full collections over the heap
                self._embedder = make_embedder(self.config.embedder, threads=QUERY_THREADS, resident=True,
                                               model_cache=OutputLayout(self.config.output_path).model_cache)
        check_embedder(self.table, self._embedder)
        return self._embedder

    def search(self, query: str, *, k: int = 5, mode: str = "hybrid", lang: str | None = None,
               filters: dict[str, str] | None = None, fts_lang: str | None = None, explain: bool = False,
               flagged: str | None = None, tiers: bool | None = None, expand_tokens: int = 0) -> list[SearchHit]:
        """Ranked hits for ``query``.

        Args:
            query: query text.
            k: number of hits.
            mode: ``hybrid`` (default), ``fts`` (BM25) or ``vector``.
            lang: filter on the chunk language; also picks that language's stemmed full-text column.
            filters: more equality filters (``source_type``, ``custodian_type``, ``country_code``, ``data_tier``,
                ``settlement``, ``doc_id``, ``language``).
            fts_lang: stemmed full-text column to use (default: ``lang``).
            explain: add the BM25/vector ranks behind each score.
            flagged: boilerplate/degenerate chunks: ``exclude``/``demote``/``include`` (default: ``lancedb.flagged``).
            tiers: identifier and field tiers (default: ``lancedb.tiers``).
            expand_tokens: parent expansion budget in cl100k tokens (``meta.len_tokens``): when > 0, each hit gets
                ``section``: the chunks of the same document and section (same anchors) nearest to the hit, in
                source order, added while their tokens fit the budget, with the span they cover.
        Returns:
            :class:`SearchHit` list in ranked order.
        Raises:
            ValueError: an empty query, ``k`` below 1, unknown mode, filter or policy; a mismatched embedder.
        """
        if not query or not query.strip():
            raise ValueError("empty query: give some words or an identifier")
        if k < 1:
            raise ValueError(f"k must be at least 1, got {k}")
        lc = self.config.lancedb
        f = {**(filters or {}), **({"lang": lang} if lang else {})}
        # codes are stored upper-case (ISO 3166 alpha-2, TIER_...): `--country-code de` means DE
        f = {key: (v.upper() if key in _UPPER_CASE_FILTERS and isinstance(v, str) else v) for key, v in f.items()}
        qvec = self.embedder.embed_query(query) if mode in ("vector", "hybrid") else None
        rows = search_table(self.table, query, mode=mode, k=k, query_vector=qvec, filters=f or None,
                            fts_lang=fts_lang or lang, candidates=lc.candidates, rrf_k=lc.rrf_k,
                            vector_weight=lc.vector_weight, fts_weight=lc.fts_weight, columns=HIT_COLUMNS,
                            flagged=flagged or lc.flagged, tiers=lc.tiers if tiers is None else tiers, explain=explain)
        hits = [_hit(i, r) for i, r in enumerate(rows, 1)]
        if expand_tokens > 0:
            for h in hits:
                h.section = self.section(h, expand_tokens)
        return hits

    def section(self, hit: SearchHit, budget_tokens: int) -> dict[str, Any]:
        """The hit's section within a token budget (parent expansion; see :func:`expand_section`)."""
        return expand_section(self.table, hit.id, hit.meta, budget_tokens, text=hit.text)


def expand_section(table, hit_id: str, meta: dict[str, Any], budget_tokens: int, text: str = "") -> dict[str, Any]:
    """A hit's section within a token budget (parent expansion).

    Args:
        table: the open index table.
        hit_id: the hit's chunk id.
        meta: the hit's ``meta`` (``doc_id``, ``anchors``, ``len_tokens``; spans from ``char_start``/``char_end``
            of the row when the hit is found in the table).
        budget_tokens: cl100k tokens (sum of ``meta.len_tokens``) the section may hold, the hit included.
        text: the hit's text (used when the hit is not in the table).
    Returns:
        ``{"ids", "char_start", "char_end", "len_tokens", "chunks": [{"id", "char_start", "char_end", "text"}]}``
        in source order: the chunks of the same document with the same anchors, added nearest first (alternating
        after/before the hit) while their tokens fit the budget.
    """
    from .writer import quote_sql

    doc_id, anchors = meta.get("doc_id"), meta.get("anchors") or []
    rows = (table.search().where(f"doc_id = {quote_sql(doc_id)}")
            .select(["id", "anchors", "char_start", "char_end", "len_tokens", "text"]).limit(None)
            .to_arrow().to_pylist()) if doc_id else []
    same = sorted((r for r in rows if (r["anchors"] or []) == anchors), key=lambda r: (r["char_start"], r["id"]))
    pos = next((i for i, r in enumerate(same) if r["id"] == hit_id), None)
    if pos is None:
        same, pos = [{"id": hit_id, "char_start": meta.get("char_start"), "char_end": meta.get("char_end"),
                      "len_tokens": meta.get("len_tokens") or 0, "text": text}], 0
    lo = hi = pos
    used = same[pos]["len_tokens"] or 0
    while True:
        grown = False
        for j in (hi + 1, lo - 1):
            if 0 <= j < len(same) and not lo <= j <= hi and used + (same[j]["len_tokens"] or 0) <= budget_tokens:
                used += same[j]["len_tokens"] or 0
                lo, hi = min(lo, j), max(hi, j)
                grown = True
        if not grown:
            break
    part = same[lo:hi + 1]
    return {"ids": [r["id"] for r in part], "char_start": part[0]["char_start"], "char_end": part[-1]["char_end"],
            "len_tokens": used, "chunks": [{k: r[k] for k in ("id", "char_start", "char_end", "text")} for r in part]}


def search(query: str, *, k: int = 5, mode: str = "hybrid", lang: str | None = None,
           filters: dict[str, str] | None = None, uri: str | None = None, table: str | None = None,
           pipeline_config=None, embedder=None, **options) -> list[SearchHit]:
    """Ranked hits for one query (opens the index each call; use :class:`Searcher` for many queries).

    Args:
        query: query text.
        k: number of hits.
        mode: ``hybrid`` (default; needs the embedding model), ``fts`` or ``vector``.
        lang: filter on the chunk language (and its stemmed full-text column).
        filters: more equality filters (see :meth:`Searcher.search`).
        uri, table, pipeline_config, embedder: see :class:`Searcher`.
        **options: ``explain``, ``flagged``, ``tiers``, ``fts_lang``, ``expand_tokens`` (see :meth:`Searcher.search`).
    Returns:
        :class:`SearchHit` list in ranked order.
    Raises:
        FileNotFoundError: the index does not exist.
        ValueError: unknown mode, filter or policy; a mismatched embedder.
    """
    s = Searcher(uri, table, pipeline_config=pipeline_config, embedder=embedder)
    return s.search(query, k=k, mode=mode, lang=lang, filters=filters, **options)
