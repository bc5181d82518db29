"""Chunk model helpers."""

import numpy as np
import pytest


def test_extraction_date_honours_source_date_epoch(monkeypatch):
    """Reproducible output: SOURCE_DATE_EPOCH fixes ChunkMeta.extraction_date (UTC day), also through the chunker."""
    from heritage_pipeline import chunk_text
    from heritage_pipeline.core.models import extraction_day

    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")  # 2023-11-14T22:13:20Z
    assert extraction_day() == "2023-11-14"
    chunks = chunk_text("# Title\n\nSome body text for the chunker.\n", doc_id="d")
    assert chunks and {c.meta.extraction_date for c in chunks} == {"2023-11-14"}
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "yesterday")
    with pytest.raises(ValueError, match="SOURCE_DATE_EPOCH"):
        extraction_day()


def test_extraction_date_without_epoch_is_the_local_date_of_the_current_second(monkeypatch):
    """The per-second cache of the local date follows the clock, also across midnight."""
    from datetime import date, datetime, timedelta

    from heritage_pipeline.core import models

    monkeypatch.delenv("SOURCE_DATE_EPOCH", raising=False)
    assert models.extraction_day() == date.today().isoformat()
    midnight = datetime.combine(date(2025, 3, 30) + timedelta(days=1), datetime.min.time()).timestamp()
    for t in (midnight - 1.5, midnight - 0.2, midnight, midnight + 0.7, midnight - 0.2):
        monkeypatch.setattr(models.time, "time", lambda t=t: t)
        assert models.extraction_day() == date.fromtimestamp(t).isoformat(), t


def test_vectors_as_an_array_give_the_table_of_vectors_as_lists():
    """A numpy [n, dim] array of vectors is stored exactly as the same vectors given as Python lists (float32)."""
    import pyarrow as pa

    from heritage_pipeline.core.models import chunks_to_table, table_to_chunks, table_vector_array, table_vectors
    from heritage_pipeline.sources.registry import parse_registry
    from heritage_pipeline.core.config import REPO_ROOT, load_chunking_config
    from heritage_pipeline.stages import chunk_documents

    path = REPO_ROOT / "data" / "raw" / "csv_registry" / "nl_erfgoedorganisaties_sample.csv"
    doc, _ = parse_registry(path.read_text(encoding="utf-8"), doc_id=path.name, source_path=str(path), lang="nl")
    chunks = chunk_documents([doc], load_chunking_config())[:25]
    vecs = np.random.default_rng(0).standard_normal((len(chunks), 512)).astype(np.float32)
    fast, slow = chunks_to_table(chunks, vecs), chunks_to_table(chunks, [v.tolist() for v in vecs])
    assert fast.equals(slow) and fast.schema == slow.schema
    assert np.array_equal(np.asarray(table_vectors(fast), dtype=np.float32), vecs)
    # the array reader gives the same array, also over a table of several record batches (a Parquet read)
    two = pa.concat_tables([fast.slice(0, 10), fast.slice(10)])
    for t in (fast, slow, two):
        got = table_vector_array(t)
        assert got.dtype == np.float32 and np.array_equal(got, np.asarray(table_vectors(t), dtype=np.float32))
    assert table_vector_array(fast.slice(0, 0)).shape == np.asarray(table_vectors(fast.slice(0, 0)), np.float32).shape
    with pytest.raises(ValueError):
        table_vector_array(chunks_to_table(chunks))  # not embedded
    assert [c.id for c in table_to_chunks(fast)] == [c.id for c in chunks]
    assert chunks_to_table([], np.zeros((0, 512), np.float32)).num_rows == 0
    with pytest.raises(ValueError):
        chunks_to_table(chunks, vecs[:-1])
    with pytest.raises(ValueError):
        chunks_to_table(chunks[:1], vecs[0])
