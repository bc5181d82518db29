"""Partitions: ``source_type`` (static) x ``language`` (dynamic, registered when raw sources are discovered).

Dagster joins multi-partition keys with dimensions sorted by name: the string key is ``<language>|<source_type>``,
e.g. ``fr|document``.
"""

from __future__ import annotations

import dagster as dg

from heritage_pipeline.core.config import SOURCE_TYPES

source_type_partitions = dg.StaticPartitionsDefinition(list(SOURCE_TYPES))
language_partitions = dg.DynamicPartitionsDefinition(name="language")
source_language_partitions = dg.MultiPartitionsDefinition(
    {"source_type": source_type_partitions, "language": language_partitions}
)


def partition_key_str(source_type: str, lang: str) -> str:
    """The string form of a partition key (dimensions sorted by name): ``<lang>|<source_type>``."""
    return f"{lang}|{source_type}"


def split_partition_key(key) -> tuple[str, str]:
    """(source_type, language) of a partition key given as a MultiPartitionKey or its string form.

    Runs launched through GraphQL with only the ``dagster/partition`` tag carry a plain string; both work.
    """
    if not isinstance(key, dg.MultiPartitionKey):
        key = source_language_partitions.get_partition_key_from_str(str(key))
    dims = key.keys_by_dimension
    return dims["source_type"], dims["language"]
