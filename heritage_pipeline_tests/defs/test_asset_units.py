"""Asset unit tests a newcomer can read: each asset function called directly with ``dg.build_asset_context`` (one
partition key, the project's resources pointed at a temporary folder) and small in-memory inputs.

The chain raw_sources -> parsed_sections -> chunks runs on one three-paragraph Markdown file; each step's table
and metadata are checked, with the metadata in Dagster's own types (tables, numbers).
"""

from __future__ import annotations

import dagster as dg
import pytest

from heritage_pipeline.core.config import DEFAULT_CHUNKING_CONFIG, DEFAULT_PIPELINE_CONFIG
from heritage_pipeline.core.models import table_to_chunks
from heritage_pipeline.defs.assets import chunks, parsed_sections, raw_sources
from heritage_pipeline.defs.metadata import histogram, table
from heritage_pipeline.defs.resources import build_resources

PAGE = """# Rivers of France

## The Loire

The Loire is the longest river in France. It rises in the Massif Central and flows north, then west, for more
than a thousand kilometres before it reaches the Atlantic Ocean near Saint-Nazaire.

## The Seine

The Seine flows through Paris and reaches the English Channel at Le Havre. Its basin holds a quarter of the
population of the country, and barges still carry grain and building materials along it.
"""
KEY = dg.MultiPartitionKey({"source_type": "document", "language": "en"})


@pytest.fixture()
def resources(tmp_path):
    (tmp_path / "data" / "raw" / "document").mkdir(parents=True)
    (tmp_path / "data" / "raw" / "document" / "rivers.md").write_text(PAGE, encoding="utf-8")
    return build_resources(DEFAULT_CHUNKING_CONFIG, DEFAULT_PIPELINE_CONFIG, data_dir=tmp_path / "data",
                           output_dir=tmp_path / "out")


def test_raw_parsed_and_chunks_assets_on_one_small_file(resources):
    with dg.instance_for_test() as instance:
        def ctx(*names):
            return dg.build_asset_context(partition_key=KEY, instance=instance,
                                          resources={n: resources[n] for n in names})

        raw = raw_sources(ctx("settings"))
        assert raw.value.num_rows == 1 and raw.metadata["files_ok"].value == 1
        files = raw.metadata["files"]
        assert isinstance(files, dg.TableMetadataValue) and files.records[0].data["file"] == "raw/document/rivers.md"

        parsed = parsed_sections(ctx("settings"), raw_sources=raw.value)
        assert parsed.metadata["files_parsed_now"].value == 1

        out = chunks(ctx("settings", "tokenizer"), parsed_sections=parsed.value)
        items = table_to_chunks(out.value)
        assert items and all(PAGE[c.spans.char_start:c.spans.char_end] == c.text for c in items)  # raw slices
        assert {c.meta.source_path for c in items} == {"raw/document/rivers.md"}
        hist = out.metadata["length_histogram"]
        assert isinstance(hist, dg.TableMetadataValue)
        assert sum(r.data["chunks"] for r in hist.records) == len(items)

        again = raw_sources(ctx("settings"))  # same files: same data version (the content chain of the partition)
        assert again.data_version == raw.data_version


def test_metadata_tables_keep_partition_keys_and_numbers():
    """A ``|`` in a partition key is a cell, not a Markdown column break; counts stay numbers."""
    t = table(("partition", "chunks", "share"), [("en|document", 12, 0.5), ("fr|website", 3, 0.25)])
    assert [c.type for c in t.schema.columns] == ["string", "int", "float"]
    assert [r.data["partition"] for r in t.records] == ["en|document", "fr|website"]
    h = histogram([50, 150, 150, 2000], [0, 100, 300, 1200], "tokens")
    assert [(r.data["tokens"], r.data["chunks"]) for r in h.records] == [("0-100", 1), ("100-300", 2), (">= 300", 1)]


def test_plain_reads_tables_back_as_lists():
    """The run summary and the tests read materialisation metadata back with ``plain``: a one-column table (the
    index's partitions_rewritten) is the list of its cells, a wider table its rows, other values their value."""
    import dagster as dg

    from heritage_pipeline.defs.metadata import plain, table

    assert plain(table(("partition",), [("nl|csv_registry",), ("en|document",)])) == ["nl|csv_registry", "en|document"]
    assert plain(table(("partition",), [])) == []
    assert plain(table(("partition", "chunks"), [("en|document", 3)])) == [{"partition": "en|document", "chunks": 3}]
    assert plain(dg.MetadataValue.int(4)) == 4 and plain(True) is True
