"""LanceDB index: one table of chunks with vectors, metadata columns and a native full-text index.

Schema (one row per chunk): ``id`` (chunk id, unique), ``partition`` (Dagster key ``<lang>|<source_type>``),
``text``, ``vector`` (fixed-size float32, L2-normalised passage embedding), ``section_emb`` (float32 list or null),
``doc_id``, ``source_path``, ``source_type``, ``lang`` (chunk language), ``language`` (partition language),
``anchors`` (list of strings), ``breadcrumb``, ``keywords`` (list), ``entities`` (JSON ``{label: [names]}``),
``custodian_type``, ``country_code``, ``settlement``, ``data_tier``, ``char_start``, ``char_end``, ``len_tokens``,
``quality_score``, ``readability``, ``record`` (the full chunk JSON).

Writes replace exactly the partitions given, in one ``merge_insert`` commit (:func:`sync_partitions`), so
re-materialising one partition never leaves stale rows of deleted chunks behind and a crash never leaves a partition
half replaced; every LanceDB write is a new table version (atomic). The FTS
index is language-neutral (lower case, ASCII folding, no stemming) because one table mixes languages.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa

from .chunking import breadcrumb
from .models import Chunk

FILTER_COLUMNS = ("lang", "language", "source_type", "custodian_type", "country_code", "data_tier")


def index_schema(dim: int) -> pa.Schema:
    return pa.schema(
        [
            ("id", pa.string()),
            ("partition", pa.string()),
            ("text", pa.string()),
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
            ("record", pa.string()),
        ]
    )


def chunk_rows(chunks: list[Chunk], vectors: np.ndarray, partition: str) -> pa.Table:
    """Arrow rows of :func:`index_schema` for chunks and their vectors ([n, dim] float32)."""
    dim = int(vectors.shape[1]) if len(vectors) else 384
    flat = pa.array(np.asarray(vectors, dtype=np.float32).reshape(-1), type=pa.float32())
    cols = {
        "id": [c.id for c in chunks],
        "partition": [partition] * len(chunks),
        "text": [c.text for c in chunks],
        "vector": pa.FixedSizeListArray.from_arrays(flat, dim),
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
        "record": [c.model_dump_json(exclude={"section_emb"}) for c in chunks],
    }
    return pa.table(cols, schema=index_schema(dim))


@dataclass
class IndexStats:
    rows: int
    partitions: int
    bytes_on_disk: int
    write_s: float
    version: int


def dir_bytes(path: str | Path) -> int:
    p = Path(path)
    return sum(f.stat().st_size for f in p.rglob("*") if f.is_file()) if p.exists() else 0


def _quote(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def write_partitions(uri: str, table_name: str, parts: dict[str, pa.Table], *, drop_missing: bool = False) -> IndexStats:
    """Replace the rows of each given partition with ``parts[partition]`` in one atomic commit (see
    :func:`sync_partitions`), then bring the FTS index up to date.

    ``drop_missing``: also delete rows of partitions not in ``parts`` (a full rebuild of the index content).
    """
    remove = [k for k in indexed_partitions(uri, table_name) if k not in parts] if drop_missing else []
    return sync_partitions(uri, table_name, parts, remove=remove)


# Field metadata of the ``partition`` column: JSON {partition key: data version of the rows written for it}.
PARTITION_VERSIONS_KEY = "heritage.partition_versions"


def _fts_config():
    from lancedb.index import FTS

    return FTS(language="English", stem=False, remove_stop_words=False, ascii_folding=True, lower_case=True)


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


def sync_partitions(uri: str, table_name: str, parts: dict[str, pa.Table], versions: dict[str, str] | None = None,
                    *, remove: list[str] | tuple[str, ...] = ()) -> IndexStats:
    """Make the index rows of each partition in ``parts`` exactly ``parts[partition]`` and delete the rows of the
    partitions in ``remove``, **in one LanceDB commit**: a ``merge_insert`` on ``id`` (update matched rows, insert
    new ones, delete the rows of those partitions that are not in the new data). A reader, or a process killed at
    any instant, sees either the whole previous version or the whole new one, never a partition half replaced.

    Then records ``versions`` (``{partition: data version}``, see :func:`indexed_partition_versions`) and brings the
    full-text index up to date (created when absent, else ``optimize()`` folds the new rows into it; until then
    LanceDB searches unindexed rows by a flat scan, so results are complete at every version).

    Raises ValueError naming the id and partitions when a chunk id occurs twice in ``parts`` (ids are unique in the
    index; a file whose language changed must leave its old partition, which is re-materialised then).
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
    if table_name not in db.table_names():
        if not rows:
            return IndexStats(0, 0, dir_bytes(uri), time.perf_counter() - t0, 0)
        tbl = db.create_table(table_name, pa.concat_tables(rows), mode="overwrite")
        known: dict[str, str] = {}
    else:
        tbl = db.open_table(table_name)
        known = indexed_partition_versions(uri, table_name)
        scope = sorted(set(parts) | set(remove))
        if rows and rows[0].schema.field("vector").type != tbl.schema.field("vector").type:
            left = set(indexed_partitions(uri, table_name)) - set(scope)
            if left:
                raise ValueError(f"the embedding dimension changed ({tbl.schema.field('vector').type} -> "
                                 f"{rows[0].schema.field('vector').type}) but partitions {sorted(left)} were not "
                                 "re-embedded: re-materialise every partition, then the index")
            tbl = db.create_table(table_name, pa.concat_tables(rows), mode="overwrite")  # one commit, like the rest
            known, scope = {}, []
        if scope:
            source = pa.concat_tables(rows).cast(tbl.schema) if rows else tbl.schema.empty_table()
            (tbl.merge_insert("id").when_matched_update_all().when_not_matched_insert_all()
             .when_not_matched_by_source_delete(f"partition IN ({', '.join(_quote(k) for k in scope)})")
             .execute(source))
    recorded = {k: v for k, v in {**known, **(versions or {})}.items() if k not in remove}
    for k in parts:
        if not (versions and k in versions):
            recorded.pop(k, None)  # rows replaced without a version: unknown from now on
    if recorded != known:
        tbl.update_field_metadata({"path": "partition", "metadata": {PARTITION_VERSIONS_KEY: json.dumps(recorded, sort_keys=True)}})
    if tbl.count_rows():
        if not any(ix.columns == ["text"] for ix in tbl.list_indices()):
            tbl.create_index("text", config=_fts_config(), replace=True)
        else:
            name = next(ix.name for ix in tbl.list_indices() if ix.columns == ["text"])
            if tbl.index_stats(name).num_unindexed_rows:
                tbl.optimize()
    n_parts = len(indexed_partitions(uri, table_name))
    return IndexStats(tbl.count_rows(), n_parts, dir_bytes(uri), time.perf_counter() - t0, int(tbl.version))


def _where(filters: dict[str, str] | None) -> str | None:
    if not filters:
        return None
    bad = [k for k in filters if k not in FILTER_COLUMNS]
    if bad:
        raise ValueError(f"unknown filter {bad[0]!r}; filters: {', '.join(FILTER_COLUMNS)}")
    return " AND ".join(f"{k} = {_quote(v)}" for k, v in filters.items() if v is not None) or None


def search(uri: str, table_name: str, query: str, *, mode: str = "hybrid", k: int = 10, embedder=None,
           filters: dict[str, str] | None = None) -> list[dict]:
    """Top-``k`` rows for ``query``. ``mode``: ``vector`` (cosine), ``fts`` (BM25), ``hybrid`` (both, fused by
    reciprocal-rank fusion). Rows have ``id, text, anchors, score, ...``, sorted by score then id.

    Raises FileNotFoundError when the index does not exist, ValueError for an unknown mode or filter.
    """
    import lancedb
    from lancedb.rerankers import RRFReranker

    db = lancedb.connect(uri)
    if table_name not in db.table_names():
        raise FileNotFoundError(f"{uri}: no LanceDB table {table_name!r}; run `heritage-pipeline run` first")
    tbl = db.open_table(table_name)
    where = _where(filters)
    cols = ["id", "text", "anchors", "breadcrumb", "doc_id", "source_path", "source_type", "lang", "char_start", "char_end",
            "len_tokens", "keywords"]
    if mode == "fts":
        q = tbl.search(query, query_type="fts", fts_columns="text")
        score_col = "_score"
    elif mode in ("vector", "hybrid"):
        if embedder is None:
            raise ValueError(f"mode {mode!r} needs an embedder")
        vec = embedder.embed_query(query)
        if mode == "vector":
            q = tbl.search(vec, query_type="vector", vector_column_name="vector").distance_type("cosine")
            score_col = "_distance"
        else:
            q = (tbl.search(query_type="hybrid", vector_column_name="vector", fts_columns="text")
                 .vector(vec).text(query).rerank(RRFReranker()))
            score_col = "_relevance_score"
    else:
        raise ValueError(f"unknown search mode {mode!r}: use hybrid, vector or fts")
    if where:
        q = q.where(where, prefilter=True)
    rows = q.limit(k).to_arrow().to_pylist()
    out = []
    for r in rows:
        score = float(r.get(score_col, 0.0) or 0.0)
        if score_col == "_distance":
            score = 1.0 - score  # cosine similarity
        out.append({**{c: r.get(c) for c in cols}, "score": score})
    out.sort(key=lambda r: (-r["score"], r["id"]))
    return out
