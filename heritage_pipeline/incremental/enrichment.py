"""Incremental enrichment: the rows of ``enriched_chunks`` whose coreference context is unchanged are reused.

Row keys (:func:`enrichment_keys`) hash each chunk's record with every record of its coreference context
(:func:`~heritage_pipeline.enrich.heritage.mention_context_key`), so an edited chunk re-enriches its whole document or
conversation (mentions resolve across it) while an edited registry row re-enriches that row only. When the
gazetteer changed since the reused rows were enriched, only their heritage mentions are redone (rule-based, cheap),
on their un-enriched originals, whole contexts at a time. Plain functions: the ``enriched_chunks`` asset is a shell
around :func:`enrich_with_reuse`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

import pyarrow as pa

from heritage_pipeline.core.models import Chunk, chunks_to_table, table_to_chunks
from heritage_pipeline.enrich.heritage import annotate_chunks, copy_annotation, mention_context_key
from heritage_pipeline.incremental.versions import add_row_keys, digest, reusable_rows

if TYPE_CHECKING:
    from heritage_pipeline.enrich.gazetteer import Gazetteer

GAZETTEER_KEY = b"heritage.gazetteer"  # schema metadata of enriched_chunks: the gazetteer its mentions come from


def enrichment_keys(items: list[Chunk], records: list[str]) -> list[str]:
    """Row keys for reusing enrichment (see the module docstring).

    Args:
        items: the chunks of the partition.
        records: each chunk's ``record`` column (its canonical JSON), same order.

    Returns:
        One SHA-256 (hex) key per chunk.
    """
    groups: dict[tuple, list[str]] = {}
    ctx = [mention_context_key(c) for c in items]
    for k, r in zip(ctx, records):
        groups.setdefault(k, []).append(r)
    group_hash = {k: digest(*sorted(rs)) for k, rs in groups.items()}
    return [digest(group_hash[k], r) for k, r in zip(ctx, records)]


def gazetteer_version_of(table: pa.Table | None) -> str | None:
    """The gazetteer fingerprint a stored ``enriched_chunks`` table was enriched with (None when absent)."""
    if table is None:
        return None
    raw = (table.schema.metadata or {}).get(GAZETTEER_KEY)
    return raw.decode() if raw is not None else None


@dataclass
class EnrichReuse:
    """What :func:`enrich_with_reuse` returns: the ``enriched_chunks`` table and its counts."""

    table: pa.Table
    items: list[Chunk]
    enriched_now: int = 0
    reused_rows: int = 0
    mentions_refreshed: int = 0
    passages_embedded_now: int = 0
    seconds: dict[str, float] = field(default_factory=dict)


def enrich_with_reuse(chunks: pa.Table, previous: pa.Table | None, gazetteer: Gazetteer | None, gazetteer_version: str,
                      enrich: Callable[[list[Chunk]], tuple[int, dict[str, float]]],
                      items: list[Chunk] | None = None) -> EnrichReuse:
    """Enrich the chunks whose row key is not in ``previous``; reuse the other rows (mentions refreshed when the
    gazetteer changed).

    Args:
        chunks: the partition's ``chunks`` table.
        previous: the stored ``enriched_chunks`` table written by the same code version, or None (enrich all).
        gazetteer: the gazetteer the mentions resolve against (None when ``context.entities.heritage`` is off).
        gazetteer_version: its fingerprint (``""`` when off), stored in the table's schema metadata.
        enrich: the enrichment stage over a list of chunks (in place): returns (passages embedded now, wall
            seconds per sub-step); called once, with the chunks to enrich (possibly none).
        items: the chunks of ``chunks`` when the caller has them already (equal to ``table_to_chunks(chunks)``,
            e.g. from :data:`heritage_pipeline.core.handoff.HANDOFF`); default decoded from the table.

    Returns:
        An :class:`EnrichReuse` whose table carries the row keys and :data:`GAZETTEER_KEY`.
    """
    items = table_to_chunks(chunks) if items is None else items
    keys = enrichment_keys(items, chunks.column("record").to_pylist())
    reuse = reusable_rows(previous, keys)
    todo = [c for c, k in zip(items, keys) if k not in reuse]
    embedded_now, seconds = enrich(todo)
    reannotated = 0
    if len(todo) < len(items):
        wanted = [k for k in keys if k in reuse]
        old = dict(zip(wanted, table_to_chunks(previous.take([reuse[k][0] for k in wanted]))))
        if (gazetteer_version_of(previous) or "") != gazetteer_version:
            originals = {k: c for c, k in zip(items, keys) if k in reuse}
            if gazetteer is not None:
                annotate_chunks(list(originals.values()), gazetteer)
            for k, c in originals.items():
                copy_annotation(c, old[k])
            reannotated = len(originals)
        fresh = iter(todo)
        items = [old[k] if k in reuse else next(fresh) for k in keys]
    table = add_row_keys(chunks_to_table(items), keys)
    table = table.replace_schema_metadata({**(table.schema.metadata or {}), GAZETTEER_KEY: gazetteer_version.encode()})
    return EnrichReuse(table, items, len(todo), len(items) - len(todo), reannotated, embedded_now, seconds)
