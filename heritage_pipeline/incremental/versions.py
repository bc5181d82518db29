"""Incremental runs: content-chained data versions, reuse of unchanged outputs, and reuse of unchanged rows.

Every partitioned intermediate (one Parquet file per asset and partition) carries two keys in its Arrow schema
metadata (which Parquet keeps in the file footer):

* ``heritage.code_version``: the code version of the asset that wrote it (a hash of the config sections and of the
  source code that shape the stage, see :func:`source_hash`);
* ``heritage.data_version``: ``sha256(asset name, code version, data versions of its inputs)``, or for the root
  asset a hash of the input files' contents. This is a Merkle chain: two outputs with the same data version were
  computed by the same code and config from the same input bytes.

A stage whose would-be data version equals the one stored in its existing output file returns that file instead of
recomputing (:func:`read_if_version`). Because the key is derived from content and written in the same file as the
data (renamed into place atomically), the decision never depends on run history: a run killed at any point leaves
either the old file with the old key or the new file with the new key.

Row-level reuse (:func:`reusable_rows`) applies the same idea inside a stage whose work is per row (parsing is per
file, enrichment is per chunk): rows carry a key in the :data:`ROW_KEY` column, and rows of the previous output
written by the same code version are reused when their key is unchanged.

Dagster's own memoisation (versioned IO managers) was removed from Dagster; its data versions only *report*
staleness and never skip work, hence this small module.
"""

from __future__ import annotations

import ast
import hashlib
from functools import lru_cache
from pathlib import Path
from typing import Iterable

import pyarrow as pa
import pyarrow.parquet as pq

DATA_VERSION_KEY = b"heritage.data_version"
CODE_VERSION_KEY = b"heritage.code_version"
ROW_KEY = "heritage_row_key"
PACKAGE_DIR = Path(__file__).resolve().parents[1]
# packages whose modules are hashed into code versions (the evaluation package shapes the ablation report)
HASHED_PACKAGES = (PACKAGE_DIR.name, f"{PACKAGE_DIR.name}_eval")


def digest(*parts: str | bytes) -> str:
    """SHA-256 hex digest of the parts, each length-prefixed so that ("ab", "c") and ("a", "bc") differ."""
    h = hashlib.sha256()
    for p in parts:
        b = p.encode("utf-8") if isinstance(p, str) else p
        h.update(len(b).to_bytes(8, "big"))
        h.update(b)
    return h.hexdigest()


@lru_cache(maxsize=1024)
def _imports(path: Path) -> frozenset[str]:
    """Names of the heritage_pipeline modules imported by a source file (relative or absolute imports). Parsed once
    per process (like :func:`_module_sources`): the closures of the assets' code versions share most files, and
    parsing them for each closure took seconds of every run's start-up."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    pkg_parts = path.relative_to(PACKAGE_DIR.parent).with_suffix("").parts[:-1]  # e.g. ("heritage_pipeline", "defs")
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = list(pkg_parts[: len(pkg_parts) - node.level + 1])
                if node.module:
                    out.add(".".join(base + node.module.split(".")))
                else:
                    out.update(".".join(base + [a.name]) for a in node.names)
            elif node.module and node.module.split(".")[0] in HASHED_PACKAGES:
                out.add(node.module)
                out.update(f"{node.module}.{a.name}" for a in node.names)  # ``from pkg import module``
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name.split(".")[0] in HASHED_PACKAGES)
    return frozenset(out)


def _module_file(name: str) -> Path | None:
    rel = Path(*name.split("."))
    for cand in (PACKAGE_DIR.parent / rel.with_suffix(".py"), PACKAGE_DIR.parent / rel / "__init__.py"):
        if cand.is_file():
            return cand
    return None


@lru_cache(maxsize=64)
def module_closure(*modules: str) -> tuple[Path, ...]:
    """Source files of the given ``heritage_pipeline`` modules and of every package module they import, transitively
    (imports inside functions included). Sorted paths."""
    seen: dict[str, Path] = {}
    todo = [m if m.split(".")[0] in HASHED_PACKAGES else f"{PACKAGE_DIR.name}.{m}" for m in modules]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        path = _module_file(name)
        if path is None:
            # ``from .pkg import name`` where name is an attribute, not a module: the package file is enough
            parent = name.rsplit(".", 1)[0]
            if parent != name and parent not in seen:
                todo.append(parent)
            continue
        seen[name] = path
        todo.extend(_imports(path) - set(seen))
    return tuple(sorted(set(seen.values())))


@lru_cache(maxsize=64)
def _module_sources(*modules: str) -> tuple[str | bytes, ...]:
    """(relative path, source bytes) of every file of :func:`module_closure`, read once per process: every step of
    every run asks for its code version, and the code that runs is the code imported at start (an edit needs a
    reload either way)."""
    out: list[str | bytes] = []
    for p in module_closure(*modules):
        out += [p.relative_to(PACKAGE_DIR.parent).as_posix(), p.read_bytes()]
    return tuple(out)


def source_hash(*modules: str, files: Iterable[str | Path] = ()) -> str:
    """12-hex-digit hash of the source of ``modules`` and their transitive package imports, plus extra data files
    or folders that shape the output (e.g. ``configs/csv_mappings.yaml``; a folder hashes every file below it; a
    missing file hashes as absent).

    Used in Dagster code versions so that a code change, not only a config change, marks an asset unsynced and
    invalidates reuse of its stored outputs.
    """
    parts: list[str | bytes] = list(_module_sources(*modules))
    for f in files:
        fp = Path(f)
        if fp.is_dir():  # every file below it, by relative path
            for sub in sorted(q for q in fp.rglob("*") if q.is_file()):
                parts += [sub.relative_to(fp).as_posix(), sub.read_bytes()]
        else:
            parts += [fp.name, fp.read_bytes() if fp.is_file() else b"<absent>"]
    return digest(*parts)[:12]


# ------------------------------------------------------------------------------------------------ table versions
def table_versions(table: pa.Table | None) -> tuple[str | None, str | None]:
    """(data version, code version) stored in a table's schema metadata; (None, None) when absent."""
    meta = (table.schema.metadata or {}) if table is not None else {}
    dv, cv = meta.get(DATA_VERSION_KEY), meta.get(CODE_VERSION_KEY)
    return (dv.decode() if dv else None), (cv.decode() if cv else None)


def with_versions(table: pa.Table, data_version: str, code_version: str) -> pa.Table:
    """The same table with the data and code versions added to its schema metadata (existing keys kept)."""
    meta = dict(table.schema.metadata or {})
    meta[DATA_VERSION_KEY] = data_version.encode()
    meta[CODE_VERSION_KEY] = code_version.encode()
    return table.replace_schema_metadata(meta)


def chained_version(asset: str, code_version: str, inputs: Iterable[pa.Table]) -> str | None:
    """Data version of an output computed by ``asset`` at ``code_version`` from ``inputs`` (order-insensitive);
    None when an input carries no data version (written before versions existed: never reuse then)."""
    versions = [table_versions(t)[0] for t in inputs]
    if any(v is None for v in versions):
        return None
    return digest(asset, code_version, *sorted(v for v in versions if v is not None))


def stored_versions(path) -> tuple[str | None, str | None]:
    """(data version, code version) in the footer of a Parquet file (only the footer is read); (None, None) if the
    file is missing or unreadable. ``path`` is a local path or a UPath (fsspec URI)."""
    try:
        with path.open("rb") if hasattr(path, "open") else open(path, "rb") as f:
            return table_versions(pq.ParquetFile(f).schema_arrow.empty_table())
    except (OSError, pa.ArrowException, ValueError):
        return None, None


def read_table(path) -> pa.Table | None:
    """The whole Parquet file, or None when it is missing or unreadable (a corrupt file is recomputed, not fatal)."""
    try:
        with path.open("rb") if hasattr(path, "open") else open(path, "rb") as f:
            return pq.read_table(f)
    except (OSError, pa.ArrowException, ValueError):
        return None


def read_if_version(path, data_version: str | None) -> pa.Table | None:
    """The stored output at ``path`` if its footer says ``data_version`` (the output to reuse), else None."""
    if data_version is None or stored_versions(path)[0] != data_version:
        return None
    table = read_table(path)
    return table if table is not None and table_versions(table)[0] == data_version else None


def read_if_code_version(path, code_version: str) -> pa.Table | None:
    """The stored output at ``path`` if it was written by ``code_version`` (a source of reusable rows), else None."""
    if stored_versions(path)[1] != code_version:
        return None
    table = read_table(path)
    return table if table is not None and table_versions(table)[1] == code_version else None


# ----------------------------------------------------------------------------------------------------- row reuse
def write_text_atomic(path: str | Path, text: str) -> None:
    """Write ``text`` (UTF-8) atomically: :func:`heritage_pipeline.core.storage.write_text_atomic`."""
    from heritage_pipeline.core.storage import write_text_atomic as write

    write(path, text)


def _marker(path: Path) -> Path:
    return path.with_name(path.name + ".data_version")


def write_version_marker(path: str | Path, data_version: str) -> None:
    """Record, beside a side file (a quarantine list, the JSONL export) written outside the IO manager, the data
    version it was written for. Written after the file itself, so a crash between the two reads as out of date."""
    write_text_atomic(_marker(Path(path)), data_version)


def is_current(path: str | Path, data_version: str | None) -> bool:
    """True when the side file ``path`` exists and its marker (:func:`write_version_marker`) says ``data_version``."""
    path = Path(path)
    try:
        return path.exists() and _marker(path).read_text(encoding="utf-8") == data_version
    except OSError:
        return False


def reusable_rows(previous: pa.Table | None, keys: list[str]) -> dict[str, list[int]]:
    """Rows of ``previous`` to reuse for each wanted row key: ``{key: [row indices in previous]}``.

    ``previous`` must carry the :data:`ROW_KEY` column (else nothing is reused). Several rows may share one key
    (e.g. every document parsed from one file); keys absent from the result must be computed.
    """
    if previous is None or ROW_KEY not in previous.column_names:
        return {}
    wanted = set(keys)
    out: dict[str, list[int]] = {}
    for i, k in enumerate(previous.column(ROW_KEY).to_pylist()):
        if k in wanted:
            out.setdefault(k, []).append(i)
    return out


def add_row_keys(table: pa.Table, keys: list[str]) -> pa.Table:
    """``table`` with the :data:`ROW_KEY` column set to ``keys`` (one per row; replaces an existing column)."""
    if len(keys) != table.num_rows:
        raise ValueError(f"{len(keys)} row keys for {table.num_rows} rows")
    if ROW_KEY in table.column_names:
        table = table.drop_columns([ROW_KEY])
    return table.append_column(pa.field(ROW_KEY, pa.string()), pa.array(keys, type=pa.string()))
