"""The index stage as a plain function: bring the LanceDB table, ``chunks.jsonl`` and ``quarantine.jsonl`` up to
date with the stored ``embedded_chunks`` partitions.

Used by the ``lancedb_index`` asset (a thin shell that lists the stored partitions and attaches metadata), so a
run launched from the Dagster UI writes exactly what ``heritage-pipeline run`` writes.

Concurrency: the whole read-compare-write sequence runs under an exclusive file lock (``filelock``, an OS lock
released when the process dies, so a crash never leaves it held) next to the output folder. Two runs on the same
output (two ``heritage-pipeline run`` started seconds apart, or a UI partition run during the nightly schedule)
therefore write one after the other: the second sees the first's table, finds the partitions it just wrote
current and writes nothing or only what changed since. Without the lock the second writer read "no table" while
the first was creating it and failed with ``Table 'chunks' was not found``. Runs launched through the Dagster
daemon are also serialised before they start by the ``index_writes`` tag concurrency limit of
``configs/dagster.yaml``; the lock covers in-process CLI runs and any writer outside Dagster.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from heritage_pipeline.core.handoff import HANDOFF
from heritage_pipeline.core.models import QuarantineRecord, table_vector_array
from heritage_pipeline.core.storage import OutputLayout
from heritage_pipeline.incremental.versions import (digest, is_current, read_table, stored_versions,
    write_version_marker)

from .schema import chunk_rows
from .writer import build_fts, dir_bytes, indexed_partition_versions, indexed_partitions, open_table, refresh_fts, sync_partitions

LOCK_NAME = ".index.lock"


@dataclass
class IndexSyncResult:
    """What :func:`sync_index` did. Counts are rows (chunks) and partitions."""

    data_version: str
    rows: int
    partitions: int
    rewritten: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    per_partition: dict[str, int] = field(default_factory=dict)
    jsonl_lines: int = 0
    quarantined: int = 0
    index_bytes: int = 0
    lancedb_version: int = 0
    waited_for_lock_s: float = 0.0


def _rows_in(path: Path) -> int:
    with Path(path).open("rb") as f:
        return pq.ParquetFile(f).metadata.num_rows


def sync_index(uri: str, table: str, current: dict[str, Path], code_version: str, output_dir: str | Path,
               fields: list[str], *, lock_timeout_s: float = 1800.0, log=None) -> IndexSyncResult:
    """Rewrite the index partitions whose stored data changed, remove those no longer stored, refresh the full-text
    index, and rewrite ``chunks.jsonl`` and ``quarantine.jsonl`` when they are stale; all under the index lock.

    Args:
        uri: the LanceDB folder (or URI; the lock then lives in ``output_dir``).
        table: the LanceDB table name.
        current: ``{partition key: path of its stored embedded_chunks Parquet file}`` for every stored partition.
        code_version: the index asset's code version: a change of it rewrites every partition (row layout, FTS).
        output_dir: the output folder (``chunks.jsonl``, ``quarantine.jsonl``, ``storage/``, the lock file).
        fields: the chunk fields ``chunks.jsonl`` carries (``outputs.fields``).
        lock_timeout_s: seconds to wait for a concurrent writer before giving up.
        log: optional callable receiving one-line progress messages.

    Returns:
        An :class:`IndexSyncResult`.

    Raises:
        filelock.Timeout: another writer held the lock for longer than ``lock_timeout_s``.
        ValueError: from :func:`~heritage_pipeline.index.writer.sync_partitions` (a chunk id in two partitions, or a
            changed embedding model with partitions left out).
    """
    import time

    from filelock import FileLock

    out = Path(output_dir)
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    with FileLock(str(out / LOCK_NAME), timeout=lock_timeout_s):
        waited = time.perf_counter() - t0
        versions = {k: stored_versions(p)[0] for k, p in current.items()}
        indexed = indexed_partition_versions(uri, table)
        counts = indexed_partitions(uri, table)
        # each partition's rows are recorded as "<index code version>:<data version>"
        want = {k: f"{code_version}:{v}" for k, v in versions.items() if v}
        changed = sorted(k for k, v in versions.items()
                         if v is None or indexed.get(k) != want[k] or counts.get(k, 0) != _rows_in(current[k]))
        removed = sorted(k for k in counts if k not in current)
        code_changed = any(not indexed[k].startswith(f"{code_version}:") for k in changed if k in indexed)
        data_version = digest("lancedb_index", code_version, *(f"{k}={v}" for k, v in sorted(versions.items())))
        layout = OutputLayout(out)
        jsonl = layout.chunks_jsonl
        jsonl_stale = not is_current(jsonl, data_version)
        tables = {k: read_table(p) for k, p in current.items()} if (changed or removed or jsonl_stale) else {}
        decoded: dict[str, list] = {}  # partition -> its chunks, decoded once for the index rows and chunks.jsonl

        def chunks_of(k: str) -> list:
            if k not in decoded:  # the objects embedded_chunks wrote this table from, when this process holds them
                decoded[k] = HANDOFF.take(tables[k])
            return decoded[k]

        if changed or removed:
            parts = {}
            for k in changed:
                items = chunks_of(k)
                parts[k] = chunk_rows(items, table_vector_array(tables[k]), k) if items else pa.table({})
            stats = sync_partitions(uri, table, parts, {k: want[k] for k in changed if k in want}, remove=removed,
                                    fts=False)
            rows, n_parts = stats.rows, stats.partitions
        else:
            if log:
                log("no partition changed since the index was written: nothing to write")
            rows, n_parts = sum(counts.values()), len(counts)
        if rows:  # also on a run with nothing to write: completes an FTS refresh a crash interrupted
            (build_fts if code_changed else refresh_fts)(open_table(uri, table))
        n_lines = rows
        if tables:
            from heritage_pipeline.stages import write_jsonl

            all_chunks = [c for k in sorted(tables) for c in chunks_of(k)]
            n_lines = write_jsonl(sorted(all_chunks, key=lambda c: c.id), jsonl, fields)
            write_version_marker(jsonl, data_version)
        quarantined = write_run_quarantine(layout.storage, layout.quarantine_jsonl)
        per_partition = indexed_partitions(uri, table)
        version = int(open_table(uri, table).version) if per_partition else 0
    return IndexSyncResult(data_version, rows, n_parts, changed, removed, per_partition, n_lines, quarantined,
                           dir_bytes(uri) if "://" not in uri else 0, version, round(waited, 3))


def quarantine_records(storage: str | Path) -> list[QuarantineRecord]:
    """Every quarantined file or part of one recorded in the stored partitions, each (path, reason) once.

    Args:
        storage: the Parquet storage folder (``<output>/storage``).

    Returns:
        Files refused at discovery (``raw_sources`` rows with status ``quarantined``) and the parse-stage records
        (``storage/quarantine/<lang>/<source_type>.jsonl``), sorted by path then reason.
    """
    storage = Path(storage)
    records: list[QuarantineRecord] = []
    for p in sorted((storage / "raw_sources").glob("*/*.parquet")):
        t = pq.read_table(p, columns=["path", "status", "reason", "source_type"])
        for r in t.to_pylist():
            if r["status"] == "quarantined":
                records.append(QuarantineRecord(path=r["path"], reason=r["reason"] or "", stage="discover",
                                                source_type=r["source_type"]))
    for qf in sorted((storage / "quarantine").rglob("*.jsonl")):
        for line in qf.read_text(encoding="utf-8").splitlines():
            if line.strip():
                rec = QuarantineRecord.model_validate_json(line)
                if rec.source_type is None:  # the file is named after its partition's source type
                    rec = rec.model_copy(update={"source_type": qf.stem})
                records.append(rec)
    unique = {(r.path, r.reason): r for r in records}  # a file refused at discovery is also recorded at parse time
    return [unique[k] for k in sorted(unique)]


def write_run_quarantine(storage: str | Path, path: str | Path) -> int:
    """Write :func:`quarantine_records` as JSON Lines to ``path`` (atomically). Returns the number of records."""
    from heritage_pipeline.stages import write_quarantine

    return write_quarantine(quarantine_records(storage), path)


def read_quarantine(path: str | Path) -> list[dict]:
    """The records of a ``quarantine.jsonl`` file (``[]`` when it does not exist)."""
    p = Path(path)
    if not p.exists():
        return []
    return [json.loads(line) for line in p.read_text(encoding="utf-8").splitlines() if line.strip()]
