"""Materialisation metadata as Dagster's own types, so the UI renders them: tables as ``TableMetadataValue`` (a cell
may hold any text, ``|`` in a partition key included, with no Markdown escaping to get wrong), numbers as numbers.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import dagster as dg


def table(columns: Sequence[str], rows: Iterable[Sequence]) -> dg.TableMetadataValue:
    """A table the Dagster UI shows as a table.

    Args:
        columns: column names.
        rows: one sequence of cells per row (ints and floats stay numbers, anything else becomes text).

    Returns:
        A ``TableMetadataValue`` whose column types are read from the cells (``int``, ``float`` or ``string``).
    """
    rows = [tuple(r) for r in rows]

    def kind(i: int) -> str:
        cells = [r[i] for r in rows if r[i] is not None]
        if cells and all(isinstance(c, int) and not isinstance(c, bool) for c in cells):
            return "int"
        if cells and all(isinstance(c, (int, float)) and not isinstance(c, bool) for c in cells):
            return "float"
        return "string"

    kinds = [kind(i) for i in range(len(columns))]
    records = [dg.TableRecord({c: (v if k != "string" else ("" if v is None else str(v)))
                               for c, k, v in zip(columns, kinds, r)}) for r in rows]
    return dg.MetadataValue.table(records, schema=dg.TableSchema(
        columns=[dg.TableColumn(c, k) for c, k in zip(columns, kinds)]))


def histogram(values: Iterable[float], edges: Sequence[float], label: str) -> dg.TableMetadataValue:
    """Counts of ``values`` per bin ``[edges[i], edges[i+1])``, the last bin open-ended, as a table.

    Args:
        values: the measurements (e.g. tokens per chunk).
        edges: increasing bin edges, at least two.
        label: the unit, used as the first column's name (e.g. ``tokens``).

    Returns:
        A table with columns ``label`` (the bin, e.g. ``100-300``, last ``>= 900``) and ``chunks``.
    """
    counts = [0] * (len(edges) - 1)
    for v in values:
        for i in range(len(edges) - 1):
            if edges[i] <= v < edges[i + 1] or (i == len(edges) - 2 and v >= edges[-1]):
                counts[i] += 1
                break
    names = [f"{edges[i]:g}-{edges[i + 1]:g}" if i < len(edges) - 2 else f">= {edges[i]:g}" for i in range(len(counts))]
    return table((label, "chunks"), zip(names, counts))


def plain(value) -> object:
    """The plain Python value of a metadata value, for code that reads materialisations back (the run summary, tests):
    a one-column table becomes the list of its cells, a wider table the list of its rows as dicts, anything else its
    ``.value``.

    Args:
        value: a Dagster metadata value (or an already plain value).

    Returns:
        The plain value.
    """
    if isinstance(value, dg.TableMetadataValue):
        rows = [dict(r.data) for r in value.records]
        cols = [c.name for c in value.schema.columns] if value.schema else []
        return [r[cols[0]] for r in rows] if len(cols) == 1 else rows
    return getattr(value, "value", value)
