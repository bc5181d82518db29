"""Scale-out: the pipeline on a local Dask cluster through the ``dagster-dask`` executor.

``heritage-pipeline run --executor dask`` runs two partitions at a time, each as a Dagster run whose steps are Dask
tasks on the cluster's worker processes; the result must equal the in-process run's.
"""

from __future__ import annotations

import os
import signal

import dagster as dg
import pytest

from heritage_pipeline_tests.ops_fixtures import index_rows, make_project


@pytest.mark.slow
def test_the_graph_runs_on_a_local_dask_cluster_and_matches_the_in_process_run(tmp_path, monkeypatch):
    from distributed import Client, LocalCluster

    from heritage_pipeline.cli import main

    local = make_project(tmp_path / "local")
    monkeypatch.setenv("DAGSTER_HOME", str(local.home))
    assert main(["run", "--config", str(local.chunking), "--pipeline-config", str(local.pipeline)]) == 0

    dask = make_project(tmp_path / "dask", executor={"kind": "dask"})
    monkeypatch.setenv("DAGSTER_HOME", str(dask.home))
    # the workers inherit this process's signal dispositions (see ops_fixtures.default_signals); `run` above has
    # already restored the defaults, this makes it explicit
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        worker_pids = set(client.run(os.getpid).values())
        rc = main(["run", "--config", str(dask.chunking), "--pipeline-config", str(dask.pipeline),
                   "--dask-address", cluster.scheduler_address, "--parallel-runs", "2"])
        assert rc == 0
    with dg.DagsterInstance.from_config(str(dask.home)) as instance:
        runs = [r for r in instance.get_runs() if r.tags.get("dagster/partition")]
        assert len(runs) == 3 and all(r.status == dg.DagsterRunStatus.SUCCESS for r in runs)
        step_pids = {rec.event_log_entry.dagster_event.pid for r in runs
                     for rec in instance.get_records_for_run(r.run_id, of_type=dg.DagsterEventType.STEP_SUCCESS).records}
        assert step_pids and step_pids <= worker_pids  # every step ran in a Dask worker process
        assert len(step_pids) == 2  # and both workers took steps
    want = [(r["id"], r["partition"], r["text"], r["record"]) for r in index_rows(local.out / "lancedb")]
    got = [(r["id"], r["partition"], r["text"], r["record"]) for r in index_rows(dask.out / "lancedb")]
    assert got == want and len(got) >= 20
