"""The chunks of three real bundled documents equal the readable snapshots stored beside the hash guard
(``heritage_pipeline_eval/bench/snapshots/*.md``; regenerate with ``python -m heritage_pipeline_eval.bench.snapshots
--write`` when a chunker change is deliberate, and read the diff)."""

from __future__ import annotations


def test_chunk_output_equals_the_stored_snapshots():
    from heritage_pipeline_eval.bench.snapshots import DOCUMENTS, SNAPSHOT_DIR, diffs

    assert sorted(p.stem for p in SNAPSHOT_DIR.glob("*.md")) == sorted(DOCUMENTS)
    found = diffs()
    assert not found, "\n".join(found.values())[:4000]
