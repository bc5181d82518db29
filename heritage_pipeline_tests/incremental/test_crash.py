"""Crash safety: processes killed with SIGKILL in the middle of a write, then resumed.

* index syncs: a child process replaces three partitions per commit in a loop and is SIGKILLed at random points
  inside a sync; the index must always hold one whole version (every row of every partition from the same sync),
  never a mix, never a duplicate id, and a resumed child reaches the final state;
* Parquet intermediates: a child rewrites a partition file in a loop and is killed mid-write; the file is always
  readable and whole (temporary name, then rename);
* the whole pipeline (slow): ``heritage-pipeline run`` killed during enrichment, embedding or the index write, then
  re-run, ends with exactly the index of an uninterrupted run.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from heritage_pipeline_tests.ops_fixtures import REPO, default_signals, index_rows, make_project

PARTS = ("en|document", "nl|csv_registry", "fr|website")
DIM = 32
N_VERSIONS = 40


def expected_ids(partition: str, version: int) -> list[str]:
    """Ids of a partition at a version: the window moves and resizes, so each sync updates, inserts and deletes."""
    start, size = version % 7 * 37, 300 + (version * 53) % 200
    return [f"{partition.split('|')[1]}-{i:05d}" for i in range(start, start + size)]


def version_rows(partition: str, version: int) -> pa.Table:
    from heritage_pipeline.index.schema import index_schema

    ids = expected_ids(partition, version)
    n = len(ids)
    vec = np.random.default_rng(version).random((n, DIM), dtype=np.float32)
    cols = {name: [None] * n for name in index_schema(DIM).names}
    text = [f"version {version} text {i}" for i in ids]
    cols.update({"id": ids, "partition": [partition] * n, "text": text, "search_text": text,
                 "record": [f"v{version}"] * n, "language": [partition.split("|")[0]] * n,
                 "source_type": [partition.split("|")[1]] * n,
                 "vector": pa.FixedSizeListArray.from_arrays(pa.array(vec.reshape(-1)), DIM)})
    return pa.table(cols, schema=index_schema(DIM))


SYNC_CHILD = """
import sys
from heritage_pipeline.index.writer import sync_partitions
from heritage_pipeline_tests.incremental.test_crash import PARTS, version_rows
uri, start, stop = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
print("ready", flush=True)
for v in range(start, stop):
    sync_partitions(uri, "chunks", {p: version_rows(p, v) for p in PARTS}, {p: f"v{v}" for p in PARTS})
    print(v, flush=True)
"""


def _child(code: str, *args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", code, *args], cwd=REPO, stdout=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": str(REPO)}, preexec_fn=default_signals)


def _check_whole_version(uri: str) -> int:
    """The index holds every row of one sync and nothing else; returns that version (-1: no table yet)."""
    rows = index_rows(uri)
    if not rows:
        return -1
    tags = {r["record"] for r in rows}
    assert len(tags) == 1, f"rows of several syncs mixed after a crash: {sorted(tags)}"
    version = int(tags.pop()[1:])
    ids = [r["id"] for r in rows]
    assert len(ids) == len(set(ids)), "duplicate ids after a crash"
    assert sorted(ids) == sorted(i for p in PARTS for i in expected_ids(p, version))
    return version


def test_index_sync_killed_mid_commit_leaves_a_whole_version_and_resumes(tmp_path):
    uri = str(tmp_path / "lancedb")
    rng = random.Random(7)
    done = -1
    kills = 0
    while kills < 5:
        child = _child(SYNC_CHILD, uri, str(done + 1), str(N_VERSIONS))
        assert child.stdout.readline().strip() == "ready"
        target = rng.randint(1, 3)  # syncs to let finish before killing inside the next one
        for _ in range(target):
            line = child.stdout.readline().strip()
        time.sleep(rng.uniform(0.0, 0.15))
        child.send_signal(signal.SIGKILL)
        child.wait()
        kills += 1
        version = _check_whole_version(uri)
        assert version >= int(line)  # every sync reported done is durable
        done = version
    child = _child(SYNC_CHILD, uri, str(done + 1), str(N_VERSIONS))
    assert child.wait(timeout=600) == 0
    assert _check_whole_version(uri) == N_VERSIONS - 1
    from heritage_pipeline.index.writer import indexed_partition_versions
    from heritage_pipeline.index.search import search

    assert indexed_partition_versions(uri, "chunks") == {p: f"v{N_VERSIONS - 1}" for p in PARTS}
    hits = search(uri, "chunks", "version", mode="fts", k=5)  # the full-text index still answers
    assert len(hits) == 5


PARQUET_CHILD = """
import sys
import dagster as dg, pyarrow as pa
from upath import UPath
from heritage_pipeline.defs.io_managers import ParquetIOManager
from heritage_pipeline.incremental.versions import with_versions
base = sys.argv[1]
manager = ParquetIOManager(base_path=UPath(base))
key = dg.MultiPartitionKey({"source_type": "csv_registry", "language": "nl"})
print("ready", flush=True)
for v in range(1000):
    n = 200_000 + v
    t = with_versions(pa.table({"v": [v] * n, "x": list(range(n))}), f"v{v}", "c")
    manager.handle_output(dg.build_output_context(asset_key=dg.AssetKey("chunks"), partition_key=key), t)
    print(v, flush=True)
"""


def test_parquet_output_killed_mid_write_is_never_truncated(tmp_path):
    from heritage_pipeline.incremental.versions import stored_versions

    path = tmp_path / "chunks" / "nl" / "csv_registry.parquet"
    rng = random.Random(11)
    for _ in range(4):
        child = _child(PARQUET_CHILD, str(tmp_path))
        assert child.stdout.readline().strip() == "ready"
        child.stdout.readline()
        time.sleep(rng.uniform(0.0, 0.3))
        child.send_signal(signal.SIGKILL)
        child.wait()
        table = pq.read_table(path)
        v = table.column("v")[0].as_py()
        assert table.num_rows == 200_000 + v and set(table.column("v").to_pylist()) == {v}
        assert stored_versions(path)[0] == f"v{v}"


# ------------------------------------------------------------------------------------------- whole pipeline
def _run_cli(project, *, kill_at: tuple[str, int, float] | None = None) -> int:
    """``heritage-pipeline run`` in a subprocess; with ``kill_at = (step, nth start, delay s)``, SIGKILL it ``delay``
    seconds after the nth STEP_START of ``step`` (watched in the Dagster event log). Returns the exit code (-9)."""
    cmd = [sys.executable, "-m", "heritage_pipeline.cli", "run", "--config", str(project.chunking),
           "--pipeline-config", str(project.pipeline)]
    proc = subprocess.Popen(cmd, env=project.env(), cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            start_new_session=True, preexec_fn=default_signals)
    if kill_at is None:
        _, err = proc.communicate(timeout=1800)
        assert proc.returncode == 0, err.decode()[-3000:]
        return 0
    step, nth, delay = kill_at
    import dagster as dg

    deadline = time.monotonic() + 1800
    while time.monotonic() < deadline:
        assert proc.poll() is None, f"the run ended before {step} started {nth} times"
        try:
            with dg.DagsterInstance.from_config(str(project.home)) as inst:
                starts = [r for run in inst.get_runs() for r in
                          inst.get_records_for_run(run.run_id, of_type=dg.DagsterEventType.STEP_START).records
                          if r.event_log_entry.step_key == step]
        except Exception:  # the database is being written: look again
            starts = []
        if len(starts) >= nth:
            time.sleep(delay)
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            return proc.returncode
        time.sleep(0.2)
    raise AssertionError("timed out waiting for the kill point")


def _index_state(project) -> tuple[list[tuple], np.ndarray]:
    rows = index_rows(project.out / "lancedb")
    ids = [r["id"] for r in rows]
    assert len(ids) == len(set(ids)), "duplicate rows in the index"
    return [(r["id"], r["partition"], r["text"], r["record"]) for r in rows], np.array([r["vector"] for r in rows])


@pytest.fixture(scope="module")
def reference_index(tmp_path_factory):
    """The index and JSONL of an uninterrupted run over the test project."""
    reference = make_project(tmp_path_factory.mktemp("reference"), keywords="keybert")
    _run_cli(reference)
    rows, vectors = _index_state(reference)
    assert len(rows) >= 20
    return rows, vectors, (reference.out / "chunks.jsonl").read_text(encoding="utf-8").splitlines()


@pytest.mark.slow
@pytest.mark.parametrize("kill_at", [("enriched_chunks", 3, 1.0), ("embedded_chunks", 3, 0.05), ("lancedb_index", 1, 0.3)],
                         ids=["mid-enrichment", "mid-embedding", "mid-index-write"])
def test_pipeline_killed_mid_stage_then_rerun_gives_the_uninterrupted_index(tmp_path_factory, reference_index, kill_at):
    expected, expected_vectors, ref_lines = reference_index
    crashed = make_project(tmp_path_factory.mktemp("crashed"), keywords="keybert")
    assert _run_cli(crashed, kill_at=kill_at) == -signal.SIGKILL
    _run_cli(crashed)
    got, vectors = _index_state(crashed)
    assert got == expected  # same ids, partitions, texts and full records: nothing lost, nothing doubled
    np.testing.assert_allclose(vectors, expected_vectors, atol=1e-5)
    got_lines = (crashed.out / "chunks.jsonl").read_text(encoding="utf-8").splitlines()
    assert [json.loads(x)["id"] for x in got_lines] == [json.loads(x)["id"] for x in ref_lines]
    assert not list(crashed.out.rglob("*.tmp"))
