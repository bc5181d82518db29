"""Scale-out through a public Dagster executor: ``dagster-celery`` with a local Redis broker.

``heritage-pipeline run --executor celery`` runs each job as a Dagster run whose steps are Celery tasks; a
``dagster-celery worker`` process (started here as a user would) executes them. The index must equal the
in-process run's. Needs ``redis-server`` (Debian package ``redis-server``; ``.ci/run`` installs it): skipped
with that reason when it is absent.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import dagster as dg
import pytest
import yaml

from heritage_pipeline_tests.ops_fixtures import free_port, index_rows, make_project, stop_tree

REPO = Path(__file__).resolve().parents[2]


def _wait_for_redis(port: int, timeout: float = 20.0) -> None:
    import redis

    deadline = time.monotonic() + timeout
    while True:
        try:
            if redis.Redis(host="127.0.0.1", port=port).ping():
                return
        except redis.exceptions.ConnectionError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("redis-server") is None,
                    reason="redis-server is not installed (apt-get install redis-server; .ci/run does it)")
def test_the_graph_runs_on_celery_workers_and_matches_the_in_process_run(tmp_path, monkeypatch):
    pytest.importorskip("dagster_celery")
    from heritage_pipeline.cli import main

    local = make_project(tmp_path / "local")
    monkeypatch.setenv("DAGSTER_HOME", str(local.home))
    assert main(["run", "--config", str(local.chunking), "--pipeline-config", str(local.pipeline)]) == 0

    port = free_port()
    broker = f"redis://127.0.0.1:{port}/0"
    redis_proc = subprocess.Popen(["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                                   "--appendonly", "no"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                  start_new_session=True)
    worker = None
    try:
        _wait_for_redis(port)
        cel = make_project(tmp_path / "celery", executor={"kind": "celery", "celery_broker": broker})
        monkeypatch.setenv("DAGSTER_HOME", str(cel.home))
        (cel.home).mkdir(parents=True, exist_ok=True)
        worker_yaml = tmp_path / "celery.yaml"
        worker_yaml.write_text(yaml.safe_dump({"execution": {"config": {"broker": broker, "backend": broker}}}))
        bindir = str(Path(sys.executable).parent)  # dagster-celery starts `celery` from PATH
        env = {**os.environ, **cel.env(), "DAGSTER_HOME": str(cel.home),
               "PATH": f"{bindir}{os.pathsep}{os.environ.get('PATH', '')}",
               "PYTHONPATH": f"{REPO}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
        # the worker inherits no ignored signals (see ops_fixtures.default_signals)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        worker = subprocess.Popen([str(Path(sys.executable).parent / "dagster-celery"), "worker", "start",
                                   "-A", "dagster_celery.app", "-y", str(worker_yaml), "-l", "INFO",
                                   "--", "--concurrency", "2"],
                                  env=env, cwd=str(REPO), start_new_session=True,
                                  stdout=open(tmp_path / "worker.log", "w"), stderr=subprocess.STDOUT)
        log = tmp_path / "worker.log"
        deadline = time.monotonic() + 120
        while " ready." not in log.read_text(errors="replace"):  # Celery logs "celery@<name> ready." when it listens
            assert worker.poll() is None and time.monotonic() < deadline, log.read_text(errors="replace")[-3000:]
            time.sleep(0.5)
        rc = main(["run", "--config", str(cel.chunking), "--pipeline-config", str(cel.pipeline)])
        assert rc == 0, (tmp_path / "worker.log").read_text()[-3000:]
        with dg.DagsterInstance.from_config(str(cel.home)) as instance:
            runs = instance.get_runs()
            # registry / LinkML partitions parsed, the gazetteer built, every partition, then the index
            assert {r.job_name for r in runs} == {"parse_job", "gazetteer_job", "ingest_job", "index_job"}
            assert all(r.status == dg.DagsterRunStatus.SUCCESS for r in runs)
            step_pids = {rec.event_log_entry.dagster_event.pid for r in runs
                         for rec in instance.get_records_for_run(r.run_id, of_type=dg.DagsterEventType.STEP_SUCCESS).records}
            assert step_pids and os.getpid() not in step_pids  # every step ran in a Celery worker process
    finally:
        if worker is not None:
            stop_tree(worker.pid)
        stop_tree(redis_proc.pid)
    want = [(r["id"], r["partition"], r["text"], r["record"]) for r in index_rows(local.out / "lancedb")]
    got = [(r["id"], r["partition"], r["text"], r["record"]) for r in index_rows(cel.out / "lancedb")]
    assert got == want and len(got) >= 20
