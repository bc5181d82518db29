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
