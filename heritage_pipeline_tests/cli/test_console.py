"""The command line's output: quiet runs (library output in the log file), progress lines, the run summary."""

from __future__ import annotations

import io
import logging
import os
import re
import shutil
import subprocess
import sys
import time
import warnings
from pathlib import Path

import pytest
import yaml
from rich.console import Console

from heritage_pipeline.cli import console as C
from heritage_pipeline.cli.run import RETRIEVER_LABEL, ensure_dagster_home, recommendation_lines, reuse_label
from heritage_pipeline.core.progress import advance, phase

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def captured_err(monkeypatch):
    """Point the CLI's stderr console at a buffer (non-terminal, like a CI log)."""
    buf = io.StringIO()
    monkeypatch.setattr(C, "err", Console(file=buf, width=160, force_terminal=False))
    return buf


def test_line_progress_prints_ends_and_throttles_running_lines(captured_err):
    with C.ProgressDisplay(interval_s=3600, live=False) as display:
        for i in range(101):
            advance("grid", i, 100, f"point {i}")
        with phase("short"):
            pass
    lines = captured_err.getvalue().splitlines()
    # 101 records, one phase line each (the short uncounted phase prints none): nothing per step
    assert len(lines) == 1 and re.fullmatch(r"✓ grid: 100/100 in \d+\.\d s", lines[0]), lines
    assert set(display.timings) == {"grid", "short"}


def test_line_progress_reports_a_silent_step_with_its_eta(captured_err):
    with C.ProgressDisplay(interval_s=0.2, live=False):
        advance("grid", 1, 4, "point 1")
        time.sleep(1.5)  # no record for a while: the ticker still says what is running
    out = captured_err.getvalue()
    assert re.search(r"… grid: 1/4, \d+ s, ETA \d+ s — point 1", out), out


def test_line_progress_names_only_the_innermost_running_phase(captured_err):
    with C.ProgressDisplay(interval_s=0.5, live=False):
        advance("ablation report", 0, 1)
        advance("ablation grid", 0, 18, "en: embedding 60 questions")
        time.sleep(1.8)
    running = [ln for ln in captured_err.getvalue().splitlines() if ln.startswith("  …")]
    assert running and all(ln.startswith("  … ablation grid: ") for ln in running), running
    assert len(running) <= 4  # one line per interval, not one per phase per interval


def test_a_repeated_phase_adds_up(captured_err):
    with C.ProgressDisplay(interval_s=3600, live=False) as display:
        for _ in range(2):
            with phase("loading embedding model"):
                time.sleep(0.05)
    assert display.timings["loading embedding model"] >= 0.1


def test_quiet_output_sends_warnings_logging_and_fd2_to_the_log(tmp_path, captured_err):
    log = tmp_path / "run.log"
    before = list(logging.getLogger().handlers)
    with C.quiet_output(log, verbose=0):
        warnings.warn("a library deprecation", DeprecationWarning)
        logging.getLogger("some.library").info("library detail")
        os.write(2, b"native library line\n")  # what a Rust or C++ library writes
        C.err.print("progress for the user")
    text = log.read_text(encoding="utf-8")
    assert "a library deprecation" in text and "library detail" in text and "native library line" in text
    assert "progress for the user" not in text
    assert logging.getLogger().handlers == before  # the caller's logging is restored
    os.write(2, b"after the block\n")
    assert "after the block" not in log.read_text(encoding="utf-8")  # file descriptor 2 is restored


def test_reuse_labels_and_recommendation_lines_name_hybrid_once():
    assert reuse_label(6, 6) == "reused" and reuse_label(0, 6) == "recomputed"
    assert reuse_label(2, 6) == "4 of 6 recomputed" and reuse_label(0, 0) == "-"


def test_assets_parse_job_computed_in_the_same_run_count_as_recomputed():
    """A cold run parses registries first (parse_job: raw_sources, parsed_sections), then ingest_job reuses those two:
    the partition was recomputed, not "4 of 6 recomputed"; an unchanged re-run stays "reused", a changed
    enrichment config with unchanged files stays partial."""
    from heritage_pipeline.cli.run import reuse_in_this_run

    assert reuse_label(*reuse_in_this_run((2, 6), (0, 2))) == "recomputed"  # cold run
    assert reuse_label(*reuse_in_this_run((6, 6), (2, 2))) == "reused"  # nothing changed
    assert reuse_label(*reuse_in_this_run((4, 6), (2, 2))) == "2 of 6 recomputed"  # only enrichment re-ran
    assert reuse_in_this_run((3, 6), None) == (3, 6)  # a partition parse_job did not run for
    recs = {"fr": {"mode": "hybrid", "size_tokens": 600, "overlap_ratio": 0.15, "retriever": "hybrid",
                   "ndcg@10": 0.9576, "hit@5": 0.9833},
            "en": {"mode": "sliding", "size_tokens": 400, "overlap_ratio": 0.2, "retriever": "bm25",
                   "ndcg@10": 0.99, "hit@5": 1.0}}
    lines = recommendation_lines(recs)
    assert lines == ["  en: sliding chunking, 400 tokens, 20% overlap, BM25 retrieval: nDCG@10 0.990, hit@5 1.000",
                     "  fr: hybrid chunking, 600 tokens, 15% overlap, BM25+vector retrieval: nDCG@10 0.958, hit@5 0.983"]
    assert all(line.count("hybrid") <= 1 for line in lines) and "hybrid" not in RETRIEVER_LABEL["hybrid"]


def test_dagster_home_gets_the_project_yaml_once(tmp_path):
    home = tmp_path / "home"
    assert ensure_dagster_home(home) is True
    written = yaml.safe_load((home / "dagster.yaml").read_text())
    assert written["telemetry"] == {"enabled": False} and written["concurrency"]["runs"]["max_concurrent_runs"] >= 1
    (home / "dagster.yaml").write_text("telemetry:\n  enabled: true\n")
    assert ensure_dagster_home(home) is False  # a user's own instance settings are kept
    assert "true" in (home / "dagster.yaml").read_text()


def _small_data(tmp_path: Path) -> tuple[Path, Path]:
    """A data folder with three French FastAPI pages and the English golden set, and a pipeline.yaml whose ablation
    grid is one point on 10 questions without distractors."""
    data = tmp_path / "data"
    (data / "raw" / "document").mkdir(parents=True)
    for p in sorted((ROOT / "data" / "raw" / "document" / "fastapi" / "fr").glob("*.md")):
        shutil.copy(p, data / "raw" / "document" / p.name)
    shutil.copytree(ROOT / "data" / "golden" / "en", data / "golden" / "en")
    cfg = yaml.safe_load((ROOT / "configs" / "pipeline.yaml").read_text(encoding="utf-8"))
    cfg["ablation"].update(sizes=[400], overlaps=[0.2], languages=["en"], max_questions_per_language=10,
                           distractor_chars=0, bootstrap_samples=20)
    pipeline = tmp_path / "pipeline.yaml"
    pipeline.write_text(yaml.safe_dump(cfg), encoding="utf-8")
    return data, pipeline


def _run_cli(data: Path, pipeline: Path, out: Path, home: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LANCE", "DAGSTER"))}
    env["DAGSTER_HOME"] = str(home)  # fresh: no dagster.yaml yet, as after a clone
    return subprocess.run([sys.executable, "-m", "heritage_pipeline.cli", "run", "--data-dir", str(data), "--out",
                           str(out), "--pipeline-config", str(pipeline)], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=1500)


@pytest.mark.slow
def test_run_is_quiet_and_a_second_run_says_everything_was_reused(tmp_path):
    """A fresh run prints under 60 lines, no library warning (LanceDB, Dagster, telemetry), names its log file; the
    log holds the library output; an unchanged second run says that everything was reused."""
    data, pipeline = _small_data(tmp_path)
    out, home = tmp_path / "out", tmp_path / "home"
    first = _run_cli(data, pipeline, out, home)
    assert first.returncode == 0, first.stdout + first.stderr
    lines = (first.stdout + first.stderr).splitlines()
    assert len(lines) < 60, lines
    # library output looks like "WARN lance::...", "DeprecationWarning: ...", Dagster's telemetry / dagster.yaml notices
    noisy = [ln for ln in lines if re.search(r"\bWARN|Warning\b|[Dd]eprecat|[Tt]elemetry|dagster\.yaml|Slack", ln)]
    assert not noisy, noisy
    assert f"library warnings and logs: {out / 'run.log'}" in first.stdout
    # the log holds what the console does not show (library warnings and logs are routed there:
    # test_quiet_output_sends_warnings_logging_and_fd2_to_the_log); here, at least every phase's records
    assert "heritage_pipeline.progress: partitions (ingest_job)" in (out / "run.log").read_text(encoding="utf-8")
    assert re.search(r"^fr\|document\s+3\s+\d+\s+\d+\s+recomputed\s*$", first.stdout, re.M), first.stdout
    assert "en: hybrid chunking, 400 tokens, 20% overlap" in first.stdout
    assert "ablation.md" in first.stdout
    assert "no distractor documents" in (out / "ablation" / "ablation.md").read_text(encoding="utf-8")
    second = _run_cli(data, pipeline, out, home)
    assert second.returncode == 0, second.stdout + second.stderr
    assert re.search(r"^fr\|document\s+3\s+\d+\s+\d+\s+reused\s*$", second.stdout, re.M), second.stdout
    assert ("nothing changed since the last run: all 1 partitions, the index and the ablation report were reused"
            in second.stdout), second.stdout
