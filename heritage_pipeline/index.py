"""LanceDB index: one table of chunks with vectors, every metadata field as a column, and full-text indexes.

Schema (one row per chunk; :func:`index_schema`)
    ``id`` (chunk id, unique), ``partition`` (Dagster key ``<lang>|<source_type>``), ``text`` (the chunk text),
    ``search_text`` (what is embedded and full-text indexed: breadcrumb / context prefix + blank line + text),
    ``vector`` (fixed-size float32 [dim], L2-normalised passage embedding), ``section_emb`` (float32 list or null),
    ``doc_id``, ``source_path``, ``source_type``, ``lang`` (chunk language), ``language`` (partition language),
    ``anchors`` (list of heading titles), ``breadcrumb`` (``H1 › H2 › H3``), ``keywords`` (list), ``entities``
    (JSON ``{label: [names]}``), ``custodian_type``, ``country_code``, ``settlement``, ``data_tier``,
    ``char_start``, ``char_end`` (code points into the raw file), ``len_tokens`` (cl100k), ``quality_score``,
    ``readability``, ``embedding_model``, ``embedding_windows``, ``record`` (the full chunk JSON, schema name +
    version inside: every other metadata field of :class:`~heritage_pipeline.models.ChunkMeta`), and one
    ``search_text_<lang>`` column per stemmed language present (the row's ``search_text`` when the row is in that
    language, else empty). The table's schema metadata records ``embedding_model`` and ``dim``.

Full-text indexes (LanceDB native BM25, ``create_index(column, config=FTS(...))``)
    ``search_text``: language-neutral (lower case, ASCII folding, no stemming, no stop words) because the table
    mixes languages; ``search_text_<lang>``: stemming and stop words of that language (Snowball, via Tantivy).
    A search filtered on one language uses that language's index (measured in the ablation: French stemming
    and stop words add about 0.015 nDCG@10 over plain BM25).

Writes (:func:`sync_partitions`, :func:`write_partitions`)
    All given partitions are replaced in one ``merge_insert("id")`` commit: matched rows updated, new rows
    inserted, rows of those partitions whose id is not in the new data deleted (``when_not_matched_by_source_delete``).
    Re-materialising one partition therefore replaces exactly that partition's rows, never leaves stale rows of
    deleted chunks, and a crash never leaves a partition half replaced (every LanceDB write is a new version).

Search (:func:`search`)
    ``vector`` (cosine), ``fts`` (BM25) or ``hybrid`` (both lists fused by reciprocal-rank fusion,
    :class:`WeightedRRFReranker`); metadata filters on :data:`FILTER_COLUMNS`; hits sorted by score, then id.
"""

from __future__ import annotations

import json
import time
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa

from .chunking import breadcrumb
from .models import Chunk

FILTER_COLUMNS = ("lang", "language", "source_type", "custodian_type", "country_code", "data_tier", "doc_id")
# Languages with a Snowball stemmer and stop-word list in LanceDB's (Tantivy) FTS, by ISO 639-1 code.
FTS_LANGUAGE = {"ar": "Arabic", "da": "Danish", "de": "German", "el": "Greek", "en": "English", "es": "Spanish",
                "fi": "Finnish", "fr": "French", "hu": "Hungarian", "it": "Italian", "nl": "Dutch", "no": "Norwegian",
                "pt": "Portuguese", "ro": "Romanian", "ru": "Russian", "sv": "Swedish", "ta": "Tamil", "tr": "Turkish"}
RESULT_COLUMNS = ("id", "text", "anchors", "breadcrumb", "doc_id", "source_path", "source_type", "lang", "language",
                  "custodian_type", "country_code", "data_tier", "char_start", "char_end", "len_tokens", "keywords")


def fts_config(lang: str | None):
    """The FTS tokenizer for a language: stemming + stop words + ASCII folding for a language in
    :data:`FTS_LANGUAGE`, language-neutral (lower case + ASCII folding only) for ``None`` or any other language."""
    from lancedb.index import FTS

    if lang in FTS_LANGUAGE:
        return FTS(language=FTS_LANGUAGE[lang], stem=True, remove_stop_words=True, ascii_folding=True, lower_case=True)
    return FTS(language="English", stem=False, remove_stop_words=False, ascii_folding=True, lower_case=True)


def lang_column(lang: str) -> str:
    return f"search_text_{lang}"


def index_schema(dim: int, langs: list[str] = (), embedding_model: str = "") -> pa.Schema:
    """Arrow schema of the index table for vectors of ``dim`` floats and stemmed columns for ``langs``."""
    fields = [
        ("id", pa.string()),
        ("partition", pa.string()),
        ("text", pa.string()),
        ("search_text", pa.string()),
        ("vector", pa.list_(pa.float32(), dim)),
        ("section_emb", pa.list_(pa.float32())),
        ("doc_id", pa.string()),
        ("source_path", pa.string()),
        ("source_type", pa.string()),
        ("lang", pa.string()),
        ("language", pa.string()),
        ("anchors", pa.list_(pa.string())),
        ("breadcrumb", pa.string()),
        ("keywords", pa.list_(pa.string())),
        ("entities", pa.string()),
        ("custodian_type", pa.string()),
        ("country_code", pa.string()),
        ("settlement", pa.string()),
        ("data_tier", pa.string()),
        ("char_start", pa.int64()),
        ("char_end", pa.int64()),
        ("len_tokens", pa.int64()),
        ("quality_score", pa.float64()),
        ("readability", pa.float64()),
        ("embedding_model", pa.string()),
        ("embedding_windows", pa.int64()),
        ("record", pa.string()),
    ] + [(lang_column(lg), pa.string()) for lg in sorted(langs)]
    return pa.schema(fields, metadata={"embedding_model": embedding_model, "dim": str(dim)})


def stemmed_languages(chunks: list[Chunk]) -> list[str]:
    """Languages of ``chunks`` (``meta.lang``) that have a stemmed full-text index."""
    return sorted({c.meta.lang for c in chunks if c.meta.lang in FTS_LANGUAGE})


def chunk_rows(chunks: list[Chunk], vectors: np.ndarray, partition: str, *, langs: list[str] | None = None,
               embedding_model: str | None = None) -> pa.Table:
    """Arrow rows of :func:`index_schema` for chunks and their vectors (``float32 [n, dim]``).

    ``langs``: stemmed columns to fill (default: the chunks' own languages). Raises ValueError when the number
    of vectors differs from the number of chunks.
    """
    vectors = np.asarray(vectors, dtype=np.float32)
    if len(vectors) != len(chunks):
        raise ValueError(f"partition {partition}: {len(chunks)} chunks but {len(vectors)} vectors")
    dim = int(vectors.shape[1]) if vectors.ndim == 2 and len(vectors) else 384
    langs = stemmed_languages(chunks) if langs is None else langs
    model = embedding_model if embedding_model is not None else next((c.meta.embedding_model for c in chunks if c.meta.embedding_model), "")
    search_text = [c.embedding_text() for c in chunks]
    cols = {
        "id": [c.id for c in chunks],
        "partition": [partition] * len(chunks),
        "text": [c.text for c in chunks],
        "search_text": search_text,
        "vector": pa.FixedSizeListArray.from_arrays(pa.array(vectors.reshape(-1), type=pa.float32()), dim),
        "section_emb": [c.section_emb for c in chunks],
        "doc_id": [c.meta.doc_id for c in chunks],
        "source_path": [c.meta.source_path for c in chunks],
        "source_type": [c.meta.source_type for c in chunks],
        "lang": [c.meta.lang for c in chunks],
        "language": [c.meta.language for c in chunks],
        "anchors": [c.meta.anchors for c in chunks],
        "breadcrumb": [breadcrumb(c.meta.anchors) for c in chunks],
        "keywords": [c.meta.keywords for c in chunks],
        "entities": [json.dumps(c.meta.entities, ensure_ascii=False) for c in chunks],
        "custodian_type": [c.meta.custodian_type for c in chunks],
        "country_code": [c.meta.country_code for c in chunks],
        "settlement": [c.meta.settlement for c in chunks],
        "data_tier": [c.meta.data_tier for c in chunks],
        "char_start": [c.spans.char_start for c in chunks],
        "char_end": [c.spans.char_end for c in chunks],
        "len_tokens": [c.meta.len_tokens for c in chunks],
        "quality_score": [c.quality.score for c in chunks],
        "readability": [c.quality.readability for c in chunks],
        "embedding_model": [c.meta.embedding_model or model for c in chunks],
        "embedding_windows": [c.meta.embedding_windows for c in chunks],
        "record": [c.model_dump_json(exclude={"section_emb"}) for c in chunks],
    }
    for lg in sorted(langs):
        cols[lang_column(lg)] = [t if c.meta.lang == lg else "" for c, t in zip(chunks, search_text)]
    return pa.table(cols, schema=index_schema(dim, langs, model or ""))


@dataclass
class IndexStats:
    rows: int
    partitions: int
    bytes_on_disk: int
    write_s: float
    version: int
    inserted: int = 0
    updated: int = 0
    deleted: int = 0


def dir_bytes(path: str | Path) -> int:
    """Bytes of all files under ``path`` (0 when it does not exist)."""
    p = Path(path)
    return sum(f.stat().st_size for f in p.rglob("*") if f.is_file()) if p.exists() else 0


def _quote(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def _conform(t: pa.Table, schema: pa.Schema) -> pa.Table:
    """Add missing stemmed-language columns (empty strings) and order columns as in ``schema``."""
    for f in schema:
        if f.name not in t.column_names:
            t = t.append_column(f.name, pa.array([""] * t.num_rows, type=f.type))
    return t.select(schema.names).cast(schema)


def write_partitions(uri: str, table_name: str, parts: dict[str, pa.Table], *, drop_missing: bool = False,
                     fts: bool = True) -> IndexStats:
    """Replace the rows of each given partition with ``parts[partition]`` (rows of :func:`chunk_rows`; an empty
    table empties the partition) in one atomic commit (see :func:`sync_partitions`), then refresh the FTS indexes.

    ``drop_missing``: also delete rows of partitions not in ``parts`` (the index then holds exactly ``parts``).
    A change of embedding model or vector size rebuilds the table, which needs every indexed partition in ``parts``
    (or ``drop_missing``); otherwise ValueError names the mismatch.
    """
    remove = [k for k in indexed_partitions(uri, table_name) if k not in parts] if drop_missing else []
    return sync_partitions(uri, table_name, parts, remove=remove, fts=fts)


# Field metadata of the ``partition`` column: JSON {partition key: data version of the rows written for it}.
PARTITION_VERSIONS_KEY = "heritage.partition_versions"


def indexed_partitions(uri: str, table_name: str) -> dict[str, int]:
    """Row count per partition in the index table (empty when the table does not exist)."""
    import lancedb

    db = lancedb.connect(uri)
    if table_name not in db.table_names():
        return {}
    col = db.open_table(table_name).search().select(["partition"]).limit(None).to_arrow().column("partition")
    counts: dict[str, int] = {}
    for k in col.to_pylist():
        counts[k] = counts.get(k, 0) + 1
    return counts


def indexed_partition_versions(uri: str, table_name: str) -> dict[str, str]:
    """``{partition: data version}`` recorded by the last :func:`sync_partitions` (empty when unknown).

    The record is written in a commit *after* the rows, so it may lag the rows after a crash (then the partition
    is simply synced again, which is idempotent) but never claims rows that were not committed.
    """
    import lancedb

    db = lancedb.connect(uri)
    if table_name not in db.table_names():
        return {}
    meta = db.open_table(table_name).schema.field("partition").metadata or {}
    raw = meta.get(PARTITION_VERSIONS_KEY.encode())
    return dict(json.loads(raw)) if raw else {}


def _model_of(schema: pa.Schema) -> str:
    return (schema.metadata or {}).get(b"embedding_model", b"").decode()


def sync_partitions(uri: str, table_name: str, parts: dict[str, pa.Table], versions: dict[str, str] | None = None,
                    *, remove: list[str] | tuple[str, ...] = (), fts: bool = True) -> IndexStats:
    """Make the index rows of each partition in ``parts`` exactly ``parts[partition]`` and delete the rows of the
    partitions in ``remove``, **in one LanceDB commit**: a ``merge_insert`` on ``id`` (update matched rows, insert
    new ones, delete the rows of those partitions that are not in the new data). A reader, or a process killed at
    any instant, sees either the whole previous version or the whole new one, never a partition half replaced.
    A language new to the table first gets its ``search_text_<lang>`` column (schema evolution, existing rows '').

    Then records ``versions`` (``{partition: data version}``, see :func:`indexed_partition_versions`; an empty
    partition synced before the table exists leaves no record, as there is no table yet) and brings the
    full-text indexes up to date (:func:`refresh_fts`; until then LanceDB searches unindexed rows by a flat scan,
    so results are complete at every version).

    Raises ValueError naming the id and partitions when a chunk id occurs twice in ``parts`` or is already indexed
    under a partition outside this sync (ids are unique in the index; a file whose language changed must leave its
    old partition, which is re-materialised then), and when
    the embedding model or vector size changed while indexed partitions outside ``parts``/``remove`` keep the old
    vectors (the table is rebuilt when every partition is given).
    """
    import lancedb

    t0 = time.perf_counter()
    owner: dict[str, str] = {}
    for key, t in parts.items():
        if t.num_rows:
            for i in t.column("id").to_pylist():
                if i in owner:
                    raise ValueError(f"chunk id {i!r} is in partitions {owner[i]} and {key}: ids must be unique in the "
                                     f"index; re-materialise the partition that still holds the file's old chunks")
                owner[i] = key
    db = lancedb.connect(uri)
    rows = [t for t in parts.values() if t.num_rows]
    langs = sorted({f.name.removeprefix("search_text_") for t in rows for f in t.schema if f.name.startswith("search_text_")})
    new_schema = None
    if rows:
        first = rows[0].schema
        new_schema = index_schema(first.field("vector").type.list_size, langs, _model_of(first))
    inserted = updated = deleted = 0
    scope = sorted(set(parts) | set(remove))
    tbl = db.open_table(table_name) if table_name in db.table_names() else None
    known = indexed_partition_versions(uri, table_name) if tbl is not None else {}
    if tbl is not None and new_schema is not None:
        old = tbl.schema
        if old.field("vector").type != new_schema.field("vector").type or (_model_of(old) and _model_of(old) != _model_of(new_schema)):
            left = sorted(set(indexed_partitions(uri, table_name)) - set(scope))
            if left:
                raise ValueError(f"{uri}/{table_name}: the index holds vectors of {_model_of(old) or '?'} "
                                 f"({old.field('vector').type}); new rows come from {_model_of(new_schema)} "
                                 f"({new_schema.field('vector').type}) but partitions {left} were not re-embedded: "
                                 "re-materialise every partition, then the index")
            tbl, known = None, {}  # rebuilt below, in one commit like the rest
    if tbl is None:
        if not rows:
            return IndexStats(0, 0, dir_bytes(uri), time.perf_counter() - t0, 0)
        tbl = db.create_table(table_name, pa.concat_tables([_conform(t, new_schema) for t in rows]), mode="overwrite")
        inserted = tbl.count_rows()
    else:
        missing_cols = [lg for lg in langs if lang_column(lg) not in tbl.schema.names]
        if missing_cols:
            tbl.add_columns({lang_column(lg): "CAST('' AS STRING)" for lg in missing_cols})
        schema = tbl.schema
        if owner:  # an id may not move silently from a partition outside this sync (merge_insert would move it)
            others = (tbl.search().where(f"partition NOT IN ({', '.join(_quote(k) for k in scope)})")
                      .select(["id", "partition"]).limit(None).to_arrow().to_pylist())
            clash = next((r for r in others if r["id"] in owner), None)
            if clash:
                raise ValueError(f"chunk id {clash['id']!r} is in partitions {clash['partition']} (indexed) and "
                                 f"{owner[clash['id']]}: ids must be unique in the index; re-materialise the partition "
                                 "that still holds the file's old chunks")
        if scope:
            source = pa.concat_tables([_conform(t, schema) for t in rows]) if rows else schema.empty_table()
            res = (tbl.merge_insert("id").when_matched_update_all().when_not_matched_insert_all()
                   .when_not_matched_by_source_delete(f"partition IN ({', '.join(_quote(k) for k in scope)})")
                   .execute(source))
            inserted = int(getattr(res, "num_inserted_rows", 0) or 0)
            updated = int(getattr(res, "num_updated_rows", 0) or 0)
            deleted = int(getattr(res, "num_deleted_rows", 0) or 0)
    recorded = {k: v for k, v in {**known, **(versions or {})}.items() if k not in remove}
    for k in parts:
        if not (versions and k in versions):
            recorded.pop(k, None)  # rows replaced without a version: unknown from now on
    if recorded != known:
        tbl.update_field_metadata({"path": "partition", "metadata": {PARTITION_VERSIONS_KEY: json.dumps(recorded, sort_keys=True)}})
    if fts and tbl.count_rows():
        refresh_fts(tbl)
    n_parts = len(indexed_partitions(uri, table_name))
    return IndexStats(tbl.count_rows(), n_parts, dir_bytes(uri), time.perf_counter() - t0, int(tbl.version),
                      inserted, updated, deleted)


def _fts_columns(tbl) -> list[str]:
    return [n for n in tbl.schema.names if n == "search_text" or n.startswith("search_text_")]


def build_fts(tbl) -> None:
    """(Re)build the full-text indexes: language-neutral on ``search_text``, stemmed on each ``search_text_<lang>``."""
    for name in _fts_columns(tbl):
        lang = None if name == "search_text" else name.removeprefix("search_text_")
        tbl.create_index(name, config=fts_config(lang), replace=True)


def refresh_fts(tbl) -> None:
    """Bring the full-text indexes up to date after a write: build the ones missing (a new table or language
    column), else fold unindexed rows in with ``optimize()`` (cheaper than a rebuild; deleted rows are masked by
    LanceDB's deletion files)."""
    have = {tuple(ix.columns): ix.name for ix in tbl.list_indices()}
    if any((c,) not in have for c in _fts_columns(tbl)):
        build_fts(tbl)
    elif any(tbl.index_stats(have[(c,)]).num_unindexed_rows for c in _fts_columns(tbl)):
        tbl.optimize()


def _where(filters: dict[str, str] | None) -> str | None:
    if not filters:
        return None
    bad = [k for k in filters if k not in FILTER_COLUMNS]
    if bad:
        raise ValueError(f"unknown filter {bad[0]!r}; filters: {', '.join(FILTER_COLUMNS)}")
    return " AND ".join(f"{k} = {_quote(v)}" for k, v in sorted(filters.items()) if v is not None) or None


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


def open_table(uri: str, table_name: str):
    """The index table. Raises FileNotFoundError naming the URI when it does not exist."""
    import lancedb

    db = lancedb.connect(uri)
    if table_name not in db.table_names():
        raise FileNotFoundError(f"{uri}: no LanceDB table {table_name!r}; run `heritage-pipeline run` first")
    return db.open_table(table_name)


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
            rows = q.select(cols).limit(depth).to_arrow().to_pylist()[:k]  # lance warns that _score/_distance are not selected: they cannot be, in a hybrid query
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
