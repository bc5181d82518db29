"""Two ``heritage-pipeline run`` processes on one output, started 3 s apart, as a user would (issue 15): both
succeed and the index equals a clean run's. Slow: two real runs plus the reference run."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from heritage_pipeline_tests.ops_fixtures import REPO, default_signals, index_rows, make_project


def _start(project) -> subprocess.Popen:
    cmd = [sys.executable, "-m", "heritage_pipeline.cli", "run", "--config", str(project.chunking),
           "--pipeline-config", str(project.pipeline)]
    return subprocess.Popen(cmd, env=project.env(), cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, start_new_session=True, preexec_fn=default_signals)


def _index(project) -> list[tuple]:
    rows = index_rows(project.out / "lancedb")
    ids = [r["id"] for r in rows]
    assert len(ids) == len(set(ids)), "duplicate rows in the index"
    return sorted((r["id"], r["partition"], r["text"], r["record"]) for r in rows)


@pytest.mark.slow
def test_two_runs_started_3_s_apart_both_succeed_and_the_index_equals_a_clean_runs(tmp_path):
    shared = make_project(tmp_path / "shared")
    first = _start(shared)
    time.sleep(3)
    second = _start(shared)
    outs = [p.communicate(timeout=1800)[0] for p in (first, second)]
    assert first.returncode == 0, outs[0][-3000:]
    assert second.returncode == 0, outs[1][-3000:]

    clean = make_project(tmp_path / "clean")
    ref = _start(clean)
    out = ref.communicate(timeout=1800)[0]
    assert ref.returncode == 0, out[-3000:]
    rows = _index(shared)
    assert rows and rows == _index(clean)
    assert _jsonl(shared) == _jsonl(clean) and len(_jsonl(shared)) == len(rows)


def _jsonl(project) -> list[dict]:
    """chunks.jsonl without the day of the run (``meta.extraction_date``)."""
    import json

    out = []
    for line in (project.out / "chunks.jsonl").read_text(encoding="utf-8").splitlines():
        rec = json.loads(line)
        rec.get("meta", {}).pop("extraction_date", None)
        out.append(rec)
    return sorted(out, key=lambda r: r["id"])
