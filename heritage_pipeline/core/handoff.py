"""In-process hand-off of chunk objects from the asset that wrote a chunk table to the asset that reads it next.

Every partitioned chunk asset stores its output as a Parquet table of canonical JSON records
(:func:`~heritage_pipeline.core.models.chunks_to_table`), and the next asset turned that table back into
:class:`~heritage_pipeline.core.models.Chunk` objects (:func:`~heritage_pipeline.core.models.table_to_chunks`, a
pydantic validation of every record: about 0.1 ms per chunk, three times per partition run, and more than a tenth
of a registry row's whole marginal cost beside its embedding). With the in-process executor (``heritage-pipeline
run``) the objects the producer serialised are still in memory when the consumer starts: :data:`HANDOFF` keeps
them, keyed by the data and code versions in the output table's schema metadata and its row count, and the
consumer takes them instead of decoding. The table is still written and loaded as before (the stored outputs, the
versions, a later run's reuse and every other executor are unchanged); a consumer in another process, or of a
table whose objects were not kept, decodes the table as before.

What the consumer gets equals the decoded table: records round-trip through their JSON losslessly (a test holds
every stage's chunks of the bundled data to that), and ``section_emb``, stored as float32, is rounded to float32
here the same way. Each kept list is taken once (the consumer modifies its chunks in place) and at most
:data:`MAX_KEPT` lists are kept, so a consumer that never runs holds no more than that.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

import numpy as np
import pyarrow as pa

from heritage_pipeline.core.models import Chunk, table_to_chunks

MAX_KEPT = 2  # lists kept at once: a partition run has one producer -> consumer hand-off in flight at a time


def _key(table: pa.Table) -> tuple[bytes, bytes, int] | None:
    """(data version, code version, rows) of a versioned chunk table; None when it carries no data version."""
    from heritage_pipeline.incremental.versions import CODE_VERSION_KEY, DATA_VERSION_KEY

    meta = table.schema.metadata or {}
    dv = meta.get(DATA_VERSION_KEY)
    return (dv, meta.get(CODE_VERSION_KEY, b""), table.num_rows) if dv else None


class ChunkHandoff:
    """The chunk lists written by producers and not yet taken (see the module docstring). Thread-safe."""

    def __init__(self, max_kept: int = MAX_KEPT) -> None:
        self._kept: OrderedDict[tuple, list[Chunk]] = OrderedDict()
        self._lock = threading.Lock()
        self.max_kept = max_kept
        self.taken = 0  # tables served from kept objects (for tests and the profile)
        self.decoded = 0  # tables decoded

    def put(self, table: pa.Table, chunks: list[Chunk]) -> None:
        """Keep ``chunks``, the objects ``table`` was built from, for the asset that reads ``table`` next.

        Args:
            table: the output table as stored (with its data and code versions in the schema metadata); a table
                without a data version is not kept.
            chunks: the chunks, in the table's row order; the producer must not modify them afterwards.

        Raises:
            ValueError: the number of chunks differs from the table's rows.
        """
        if len(chunks) != table.num_rows:
            raise ValueError(f"handoff: {len(chunks)} chunks for a table of {table.num_rows} rows")
        key = _key(table)
        if key is None:
            return
        with self._lock:
            self._kept[key] = chunks
            self._kept.move_to_end(key)
            while len(self._kept) > self.max_kept:
                self._kept.popitem(last=False)

    def take(self, table: pa.Table) -> list[Chunk]:
        """The chunks of ``table``: the kept objects it was built from when there are (removed from the hand-off:
        the caller owns them), else :func:`~heritage_pipeline.core.models.table_to_chunks` of it.

        Raises:
            ValueError: from ``table_to_chunks`` (a table of another schema version).
        """
        key = _key(table)
        with self._lock:
            chunks = self._kept.pop(key, None) if key is not None else None
        if chunks is None:
            self.decoded += 1
            return table_to_chunks(table)
        self.taken += 1
        for c in chunks:  # stored as list<float32>: what table_to_chunks would read back
            if c.section_emb is not None:
                c.section_emb = np.asarray(c.section_emb, dtype=np.float32).tolist()
        return chunks

    def drop(self, table: pa.Table) -> None:
        """Forget the objects kept for ``table`` (its consumer reuses a stored output and does not need them)."""
        key = _key(table)
        with self._lock:
            self._kept.pop(key, None)

    def clear(self) -> None:
        """Drop every kept list."""
        with self._lock:
            self._kept.clear()


HANDOFF = ChunkHandoff()
