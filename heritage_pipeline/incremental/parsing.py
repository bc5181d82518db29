"""Incremental parsing: the rows of ``parsed_sections`` whose file is unchanged are reused, the others parsed now.

A file's row key is a hash of its path, SHA-256, source type, language and status (:func:`file_key`); the rows of
the previous output written by the same code version (:func:`heritage_pipeline.incremental.versions.read_if_code_version`)
whose key is still wanted are taken over as they are, in the order a full parse gives. Plain functions: the
``parsed_sections`` asset is a shell around :func:`parse_with_reuse`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable

import pyarrow as pa

from heritage_pipeline.core.models import QuarantineRecord
from heritage_pipeline.incremental.versions import add_row_keys, digest, reusable_rows
from heritage_pipeline.sources.dispatch import docs_to_table, table_to_docs

if TYPE_CHECKING:
    from heritage_pipeline.core.structure import ParsedDocument
    from heritage_pipeline.sources.discovery import RawSource

QUARANTINE_COLUMN = "heritage_quarantine"  # parsed_sections: JSON list of the file's partial quarantine records


def file_key(src: RawSource) -> str:
    """The row key of a source file's parsed documents: SHA-256 (hex) of its path, content hash, type, language and
    status (any change re-parses the file)."""
    return digest(src.path, src.sha256, src.source_type, src.lang, src.status)


@dataclass
class ParseReuse:
    """What :func:`parse_with_reuse` returns: the ``parsed_sections`` table and what it says about the files."""

    table: pa.Table
    docs_parsed_now: list[ParsedDocument] = field(default_factory=list)
    quarantined: list[QuarantineRecord] = field(default_factory=list)  # of every file, reused or parsed now
    skipped: list[str] = field(default_factory=list)  # "<path>: <why>", of every file
    files_parsed_now: int = 0
    files_reused: int = 0


def parse_with_reuse(sources: list[RawSource], previous: pa.Table | None,
                     parse: Callable[[list[RawSource]], object]) -> ParseReuse:
    """Parse the sources whose row key is not in ``previous``, reuse the rows of the others.

    Args:
        sources: the partition's raw sources (``raw_sources`` rows), in order.
        previous: the stored ``parsed_sections`` table written by the same code version, or None (parse all).
        parse: the parse stage (:func:`heritage_pipeline.stages.parse_sources` with the run's config): sources ->
            a result with ``docs``, ``quarantined`` and ``skipped``.

    Returns:
        A :class:`ParseReuse` whose table equals a full parse's (rows in source order, documents in parse order,
        each row keyed by :func:`file_key`, its file's partial quarantine records in :data:`QUARANTINE_COLUMN`).
    """
    keys = {s.path: file_key(s) for s in sources}
    reuse = reusable_rows(previous, list(keys.values()))
    todo = [s for s in sources if keys[s.path] not in reuse]
    result = parse(todo)
    by_file: dict[str, list[dict]] = {}
    for q in result.quarantined:
        by_file.setdefault(q.path.split("#", 1)[0], []).append(q.model_dump())
    new = docs_to_table(result.docs)
    new = add_row_keys(new, [keys[d.source_path] for d in result.docs])
    new = new.append_column(QUARANTINE_COLUMN, pa.array([json.dumps(by_file.get(d.source_path, []), ensure_ascii=False)
                                                         for d in result.docs], type=pa.string()))
    new_rows: dict[str, list[int]] = {}
    for i, d in enumerate(result.docs):
        new_rows.setdefault(d.source_path, []).append(i)
    pieces = []
    for s in sources:  # the order a full parse gives: sources in order, documents in parse order
        if keys[s.path] in reuse:
            pieces.append(previous.take(reuse[keys[s.path]]).select(new.column_names).cast(new.schema))
        elif s.path in new_rows:
            pieces.append(new.take(new_rows[s.path]))
    table = pa.concat_tables(pieces) if pieces else new
    reused_paths = {s.path for s in sources if keys[s.path] in reuse}
    quarantined = [r for r in result.quarantined if keys.get(r.path.split("#", 1)[0]) not in reuse]
    skipped = list(result.skipped)
    if reused_paths:
        old = previous.take(sorted(i for s in reused_paths for i in reuse[keys[s]]))
        for d, q in zip(table_to_docs(old), old.column(QUARANTINE_COLUMN).to_pylist()):
            skipped += [f"{d.source_path}: {s}" for s in d.skipped]
            quarantined += [QuarantineRecord.model_validate(r) for r in json.loads(q or "[]")]
    return ParseReuse(table, list(result.docs), quarantined, skipped, len(todo), len(reused_paths))
