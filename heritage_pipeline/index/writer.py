"""Index writes: partitions replaced in one ``merge_insert`` commit, per-partition versions, full-text indexes.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa

from .schema import fts_config, index_schema, lang_column


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


def quote_sql(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def has_table(db, table_name: str) -> bool:
    """Whether the LanceDB connection holds ``table_name`` (``list_tables``, all pages; ``table_names()`` is
    deprecated and warns on every call)."""
    resp = db.list_tables()
    while True:
        if table_name in resp.tables:
            return True
        if not resp.page_token:
            return False
        resp = db.list_tables(page_token=resp.page_token)


def _conform(t: pa.Table, schema: pa.Schema) -> pa.Table:
    """Add missing columns (empty strings for full-text columns, nulls otherwise) and order columns as in ``schema``."""
    for f in schema:
        if f.name not in t.column_names:
            fill = pa.array([""] * t.num_rows, type=f.type) if pa.types.is_string(f.type) else pa.nulls(t.num_rows, f.type)
            t = t.append_column(f.name, fill)
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
    if not has_table(db, table_name):
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
    if not has_table(db, table_name):
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
    tbl = db.open_table(table_name) if has_table(db, table_name) else None
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
        if new_schema is not None:  # columns added to the schema since the table was created: all-null for old rows
            new_fields = [f for f in new_schema if f.name not in tbl.schema.names]
            if new_fields:
                tbl.add_columns(pa.schema(new_fields))
        schema = tbl.schema
        if owner:  # an id may not move silently from a partition outside this sync (merge_insert would move it)
            others = (tbl.search().where(f"partition NOT IN ({', '.join(quote_sql(k) for k in scope)})")
                      .select(["id", "partition"]).limit(None).to_arrow().to_pylist())
            clash = next((r for r in others if r["id"] in owner), None)
            if clash:
                raise ValueError(f"chunk id {clash['id']!r} is in partitions {clash['partition']} (indexed) and "
                                 f"{owner[clash['id']]}: ids must be unique in the index; re-materialise the partition "
                                 "that still holds the file's old chunks")
        if scope:
            source = pa.concat_tables([_conform(t, schema) for t in rows]) if rows else schema.empty_table()
            res = (tbl.merge_insert("id").when_matched_update_all().when_not_matched_insert_all()
                   .when_not_matched_by_source_delete(f"partition IN ({', '.join(quote_sql(k) for k in scope)})")
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


def open_table(uri: str, table_name: str):
    """The index table. Raises FileNotFoundError naming the URI when it does not exist.

    LanceDB is imported here, with the garbage collector paused
    (:func:`~heritage_pipeline.index.startup.import_lancedb`: 0.2 s less per ``search`` call)."""
    from .startup import import_lancedb

    db = import_lancedb().connect(uri)
    if not has_table(db, table_name):
        raise FileNotFoundError(f"{uri}: no LanceDB table {table_name!r}; run `heritage-pipeline run` first")
    return db.open_table(table_name)
