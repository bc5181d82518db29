"""Chunk model helpers."""

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
