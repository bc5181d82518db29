"""LanceDB index: one table of chunks with vectors, metadata columns and a native full-text index.

Schema (one row per chunk): ``id`` (chunk id, unique), ``partition`` (Dagster key ``<lang>|<source_type>``),
``text``, ``vector`` (fixed-size float32, L2-normalised passage embedding), ``section_emb`` (float32 list or null),
``doc_id``, ``source_path``, ``source_type``, ``lang`` (chunk language), ``language`` (partition language),
``anchors`` (list of strings), ``breadcrumb``, ``keywords`` (list), ``entities`` (JSON ``{label: [names]}``),
``custodian_type``, ``country_code``, ``settlement``, ``data_tier``, ``char_start``, ``char_end``, ``len_tokens``,
``quality_score``, ``readability``, ``record`` (the full chunk JSON).

Writes replace exactly the partitions given (delete by partition, then add), so re-materialising one partition
never leaves stale rows of deleted chunks behind; every LanceDB write is a new table version (atomic). The FTS
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
    """Replace the rows of each given partition with ``parts[partition]`` and rebuild the FTS index.

    ``drop_missing``: also delete rows of partitions not in ``parts`` (a full rebuild of the index content).
    """
    import lancedb
    from lancedb.index import FTS

    t0 = time.perf_counter()
    db = lancedb.connect(uri)
    tables = [t for t in parts.values() if t.num_rows]
    existing = table_name in db.table_names()
    if not existing:
        if not tables:
            return IndexStats(0, 0, dir_bytes(uri), time.perf_counter() - t0, 0)
        tbl = db.create_table(table_name, pa.concat_tables(tables), mode="overwrite")
    else:
        tbl = db.open_table(table_name)
        if drop_missing:
            keep = ", ".join(_quote(k) for k in parts) or "''"
            tbl.delete(f"partition NOT IN ({keep})")
        for key, t in parts.items():
            tbl.delete(f"partition = {_quote(key)}")
            if t.num_rows:
                tbl.add(t)
    if tbl.count_rows():
        tbl.create_index("text", config=FTS(language="English", stem=False, remove_stop_words=False, ascii_folding=True,
                                            lower_case=True), replace=True)
    n_parts = len({r["partition"] for r in tbl.to_arrow().select(["partition"]).to_pylist()})
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
