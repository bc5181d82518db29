"""Parquet IO manager: one file per partition, ``<base>/<asset>/<language>/<source_type>.parquet``.

Assets hand over ``pyarrow.Table`` objects. Files are written to a temporary name in the same folder and renamed,
so a run killed mid-write never leaves a truncated Parquet file (on object stores, where rename is a copy, the
object appears whole or not at all). An output whose footer would carry the same data version as the file already
in place (:mod:`heritage_pipeline.incremental.versions`) is not rewritten. ``base_dir`` may be a local path or an fsspec URI
(``s3://bucket/prefix``) through universal-pathlib. Unpartitioned assets downstream of partitioned ones receive
``{partition_key: Table}``.
"""

from __future__ import annotations


import dagster as dg
import pyarrow as pa
import pyarrow.parquet as pq
from upath import UPath

from heritage_pipeline.core.storage import atomic_write
from heritage_pipeline.incremental.versions import stored_versions, table_versions
from .partitions import split_partition_key


def partition_path(base_dir: str | UPath, asset: str, partition_key) -> UPath:
    """Where :class:`ParquetIOManager` keeps ``asset`` for a ``source_type x language`` partition key (a
    MultiPartitionKey or its string form ``<language>|<source_type>``)."""
    source_type, lang = split_partition_key(partition_key)
    return UPath(base_dir) / asset / lang / f"{source_type}.parquet"


class ParquetIOManager(dg.UPathIOManager):
    """Tables to Parquet (zstd), atomically (temporary name, then rename)."""

    extension = ".parquet"

    def dump_to_path(self, context: dg.OutputContext, obj: pa.Table, path: UPath) -> None:
        if not isinstance(obj, pa.Table):
            raise TypeError(f"{context.asset_key.to_user_string()}: expected a pyarrow.Table, got {type(obj).__name__}")
        version = table_versions(obj)[0]
        if version is not None and stored_versions(path)[0] == version:
            context.log.debug(f"{path}: unchanged (data version {version[:12]}), not rewritten")
            return
        def write(tmp) -> None:
            with tmp.open("wb") as f:
                pq.write_table(obj, f, compression="zstd")

        atomic_write(path, write)

    def load_from_path(self, context: dg.InputContext, path: UPath) -> pa.Table:
        with path.open("rb") as f:
            return pq.read_table(f)


class ParquetIOManagerFactory(dg.ConfigurableIOManagerFactory):
    """Configurable factory (``base_dir``: folder or fsspec URI for the Parquet intermediates)."""

    base_dir: str

    def create_io_manager(self, context) -> ParquetIOManager:
        return ParquetIOManager(base_path=UPath(self.base_dir))
