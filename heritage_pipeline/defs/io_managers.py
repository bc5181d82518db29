"""Parquet IO manager: one file per partition, ``<base>/<asset>/<language>/<source_type>.parquet``.

Assets hand over ``pyarrow.Table`` objects. Files are written to a temporary name and renamed, so a run killed
mid-write never leaves a truncated Parquet file. ``base_dir`` may be a local path or an fsspec URI (``s3://...``)
through universal-pathlib. Unpartitioned assets downstream of partitioned ones receive ``{partition_key: Table}``.
"""

from __future__ import annotations

import uuid

import dagster as dg
import pyarrow as pa
import pyarrow.parquet as pq
from upath import UPath


class ParquetIOManager(dg.UPathIOManager):
    extension = ".parquet"

    def dump_to_path(self, context: dg.OutputContext, obj: pa.Table, path: UPath) -> None:
        if not isinstance(obj, pa.Table):
            raise TypeError(f"{context.asset_key.to_user_string()}: expected a pyarrow.Table, got {type(obj).__name__}")
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
        with tmp.open("wb") as f:
            pq.write_table(obj, f, compression="zstd")
        tmp.rename(path)

    def load_from_path(self, context: dg.InputContext, path: UPath) -> pa.Table:
        with path.open("rb") as f:
            return pq.read_table(f)


class ParquetIOManagerFactory(dg.ConfigurableIOManagerFactory):
    """Configurable factory (``base_dir``: folder or fsspec URI for the Parquet intermediates)."""

    base_dir: str

    def create_io_manager(self, context) -> ParquetIOManager:
        return ParquetIOManager(base_path=UPath(self.base_dir))
