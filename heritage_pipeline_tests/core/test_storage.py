"""The one atomic writer and the output layout (core/storage.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from heritage_pipeline.core.storage import OutputLayout, atomic_write, write_text_atomic


def test_atomic_write_replaces_whole_or_not_at_all(tmp_path):
    target = tmp_path / "sub" / "out.txt"
    write_text_atomic(target, "first")
    assert target.read_text() == "first"

    def broken(tmp: Path) -> None:
        tmp.write_text("half")
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        atomic_write(target, broken)
    assert target.read_text() == "first"  # untouched
    assert [p.name for p in target.parent.iterdir()] == ["out.txt"]  # no temporary file left behind
    write_text_atomic(target, "second")
    assert target.read_text() == "second"


def test_layout_names_every_artefact_under_the_output_folder(tmp_path):
    layout = OutputLayout(tmp_path)
    paths = [layout.storage, layout.chunks_jsonl, layout.quarantine_jsonl, layout.lancedb, layout.ablation,
             layout.embedding_cache, layout.model_cache, layout.partition_file("chunks", "document", "en"),
             layout.partition_quarantine("document", "en"), layout.dedup_log("document", "en")]
    assert all(tmp_path in p.parents for p in paths)
    assert layout.partition_file("chunks", "document", "en") == tmp_path / "storage" / "chunks" / "en" / "document.parquet"
