"""The index stage as a plain function (index/sync.py): what it writes, and that two writers at once both succeed.

Small in-memory inputs: two partitions of hand-made chunks with 8-d vectors, stored as the embedded_chunks Parquet
files the asset would read, and one raw_sources partition holding a quarantined file.
"""

from __future__ import annotations

import json
import multiprocessing
from pathlib import Path

import numpy as np
import pytest
import pyarrow.parquet as pq

from heritage_pipeline.core.models import chunks_to_table
from heritage_pipeline.incremental.versions import with_versions
from heritage_pipeline.index.sync import sync_index
from heritage_pipeline.sources.discovery import RawSource, sources_to_table

from heritage_pipeline_tests._chunks import make_chunk
from heritage_pipeline_tests.ops_fixtures import index_rows

FIELDS = ["id", "text", "meta", "spans"]


def _store(out: Path, version: str = "v1") -> dict[str, Path]:
    """Two embedded_chunks partitions and a raw_sources partition with one quarantined file, under ``out/storage``."""
    current = {}
    for key, texts in {"en|document": ["The Loire is the longest river.", "The Seine flows through Paris."],
                       "fr|document": ["La Loire est le plus long fleuve."]}.items():
        lang, st = key.split("|")
        chunks = [make_chunk(i, t, source=f"{lang}.md", lang=lang) for i, t in enumerate(texts)]
        for c in chunks:
            c.id = f"{lang}:{c.id}"
        vecs = np.random.default_rng(len(texts)).random((len(chunks), 8), dtype=np.float32)
        path = out / "storage" / "embedded_chunks" / lang / f"{st}.parquet"
        path.parent.mkdir(parents=True, exist_ok=True)
        pq.write_table(with_versions(chunks_to_table(chunks, vecs.tolist()), f"{key}-{version}", "cv"), path)
        current[key] = path
    raw = out / "storage" / "raw_sources" / "en" / "document.parquet"
    raw.parent.mkdir(parents=True, exist_ok=True)
    bad = RawSource(path="raw/document/broken.md", abs_path="/x/broken.md", source_type="document", lang="en",
                    status="quarantined", reason="not valid UTF-8 (byte 0xff at offset 3)", encoding="", sha256="0",
                    n_bytes=4, text="")
    pq.write_table(sources_to_table([bad]), raw)
    return current


def _sync(out: str, start_at: float = 0.0) -> tuple[list[str], int]:
    """One writer (run in a separate process by the concurrency test), starting at the wall-clock time
    ``start_at`` so that two writers really overlap."""
    import time

    time.sleep(max(0.0, start_at - time.time()))
    out_p = Path(out)
    current = {k: out_p / "storage" / "embedded_chunks" / k.split("|")[0] / "document.parquet"
               for k in ("en|document", "fr|document")}
    res = sync_index(str(out_p / "lancedb"), "chunks", current, "cv", out_p, FIELDS)
    return res.rewritten, res.rows


def test_sync_writes_index_jsonl_and_quarantine_and_then_nothing(tmp_path):
    current = _store(tmp_path)
    res = sync_index(str(tmp_path / "lancedb"), "chunks", current, "cv", tmp_path, FIELDS)
    assert res.rewritten == ["en|document", "fr|document"] and res.rows == 3
    assert res.per_partition == {"en|document": 2, "fr|document": 1}
    lines = [json.loads(x) for x in (tmp_path / "chunks.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [x["id"] for x in lines] == sorted(r["id"] for r in index_rows(tmp_path / "lancedb"))
    quarantine = [json.loads(x) for x in (tmp_path / "quarantine.jsonl").read_text(encoding="utf-8").splitlines()]
    assert quarantine == [{"path": "raw/document/broken.md", "reason": "not valid UTF-8 (byte 0xff at offset 3)",
                           "stage": "discover"}]
    again = sync_index(str(tmp_path / "lancedb"), "chunks", current, "cv", tmp_path, FIELDS)
    assert again.rewritten == [] and again.rows == 3 and again.data_version == res.data_version
    # a partition no longer stored leaves the index
    gone = sync_index(str(tmp_path / "lancedb"), "chunks", {"en|document": current["en|document"]}, "cv", tmp_path, FIELDS)
    assert gone.removed == ["fr|document"] and gone.per_partition == {"en|document": 2}


@pytest.mark.slow
def test_two_concurrent_writers_both_succeed_and_the_index_equals_a_single_writers(tmp_path):
    """Two processes sync the same output at once (as two `heritage-pipeline run` do): the lock serialises them,
    the second finds everything current, and the index equals the one a single writer builds."""
    _store(tmp_path / "both")
    _store(tmp_path / "one")
    import time

    ctx = multiprocessing.get_context("spawn")
    start_at = time.time() + 15  # after both workers imported LanceDB and the pipeline
    with ctx.Pool(2) as pool:
        results = pool.starmap(_sync, [(str(tmp_path / "both"), start_at)] * 2)
    assert sorted(len(r[0]) for r in results) == [0, 2]  # one wrote both partitions, the other nothing
    assert all(rows == 3 for _, rows in results)
    _sync(str(tmp_path / "one"))
    both, one = index_rows(tmp_path / "both" / "lancedb"), index_rows(tmp_path / "one" / "lancedb")
    assert [(r["id"], r["text"], r["partition"]) for r in both] == [(r["id"], r["text"], r["partition"]) for r in one]


def _interleaved(out: Path, monkeypatch) -> list:
    """Writer A reads the index state, then pauses (up to 5 s) until writer B has finished; B starts once A has read.
    With the lock B cannot read before A has written (A's pause runs out, A writes, then B finds everything current);
    without it B reads the same "no table" state as A and the two writes collide. Returns both outcomes (an
    :class:`IndexSyncResult` or the exception), A's first."""
    import threading

    from heritage_pipeline.index import sync as sync_mod

    a_read, b_done = threading.Event(), threading.Event()
    real = sync_mod.indexed_partition_versions

    def reading(uri, table):
        state = real(uri, table)
        if threading.current_thread().name == "writer-a":
            a_read.set()
            b_done.wait(5.0)  # the race window: B runs here unless the lock holds it back
        return state

    monkeypatch.setattr(sync_mod, "indexed_partition_versions", reading)
    current = {k: out / "storage" / "embedded_chunks" / k.split("|")[0] / "document.parquet"
               for k in ("en|document", "fr|document")}
    results: dict[str, object] = {}

    def writer(name: str) -> None:
        try:
            results[name] = sync_index(str(out / "lancedb"), "chunks", current, "cv", out, FIELDS)
        except Exception as exc:  # the outcome is checked by the caller
            results[name] = exc
        finally:
            if name == "writer-b":
                b_done.set()

    a = threading.Thread(target=writer, args=("writer-a",), name="writer-a")
    a.start()
    assert a_read.wait(60)
    b = threading.Thread(target=writer, args=("writer-b",), name="writer-b")
    b.start()
    a.join(120)
    b.join(120)
    return [results["writer-a"], results["writer-b"]]


def test_two_interleaved_writers_are_serialised_by_the_lock_and_collide_without_it(tmp_path, monkeypatch):
    """The race forced deterministically (see :func:`_interleaved`): with the index lock both writers succeed, B
    waited for A, B wrote nothing, and the index equals a single writer's; with the lock replaced by a no-op the
    same interleaving fails (an error, or both writers rewriting every partition) — so this test needs the lock."""
    import contextlib

    import filelock

    _store(tmp_path / "locked")
    a, b = _interleaved(tmp_path / "locked", monkeypatch)
    assert not isinstance(a, Exception) and not isinstance(b, Exception), (a, b)
    assert a.rewritten == ["en|document", "fr|document"] and b.rewritten == []
    assert b.waited_for_lock_s >= 1.0  # B was held at the lock while A paused between its read and its write
    _store(tmp_path / "one")
    _sync(str(tmp_path / "one"))
    key = lambda r: (r["id"], r["text"], r["partition"])  # noqa: E731
    assert [key(r) for r in index_rows(tmp_path / "locked" / "lancedb")] == \
        [key(r) for r in index_rows(tmp_path / "one" / "lancedb")]

    monkeypatch.undo()
    monkeypatch.setattr(filelock, "FileLock", lambda *a, **k: contextlib.nullcontext())
    _store(tmp_path / "unlocked")
    a, b = _interleaved(tmp_path / "unlocked", monkeypatch)
    collided = isinstance(a, Exception) or isinstance(b, Exception) or (a.rewritten and b.rewritten)
    assert collided, "without the lock the interleaved writers must collide; otherwise this test proves nothing"


def test_sync_takes_the_chunks_embedded_chunks_handed_over_and_writes_what_decoding_would(tmp_path):
    """embedded_chunks hands its chunk objects to lancedb_index in the same process (core/handoff.py): the index stage
    takes them instead of decoding the table (a registry of 100,000 rows: ~0.1 ms a row of pydantic validation), and
    what it writes (index rows, chunks.jsonl) is what the decoded table gives."""
    from heritage_pipeline.core.handoff import HANDOFF
    from heritage_pipeline.core.models import table_to_chunks
    from heritage_pipeline.incremental.versions import read_table

    decoded_out, handed_out = tmp_path / "decoded", tmp_path / "handed"
    for out in (decoded_out, handed_out):
        _store(out)
    HANDOFF.clear()
    plain = sync_index(str(decoded_out / "lancedb"), "chunks", _store(decoded_out), "cv", decoded_out, FIELDS)
    current = _store(handed_out)
    before = (HANDOFF.taken, HANDOFF.decoded)
    for p in current.values():  # what embedded_chunks' output does: the objects its table was built from
        table = read_table(p)
        HANDOFF.put(table, table_to_chunks(table))
    handed = sync_index(str(handed_out / "lancedb"), "chunks", current, "cv", handed_out, FIELDS)
    assert (HANDOFF.taken - before[0], HANDOFF.decoded - before[1]) == (2, 0)
    assert (handed.rows, handed.rewritten) == (plain.rows, plain.rewritten)
    assert (handed_out / "chunks.jsonl").read_bytes() == (decoded_out / "chunks.jsonl").read_bytes()
    strip = lambda rows: sorted(({k: v for k, v in r.items() if k != "_rowid"} for r in rows), key=lambda r: r["id"])  # noqa: E731
    assert strip(index_rows(handed_out / "lancedb")) == strip(index_rows(decoded_out / "lancedb"))
