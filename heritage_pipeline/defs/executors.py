"""The executor of the jobs, chosen by ``executor:`` in ``configs/pipeline.yaml`` (:class:`ExecutorConfig`).

* ``in_process`` (default): every step of a run in the run's own process. On 2 cores the multiprocess executor
  costs ~10 s per step (a fresh interpreter importing Dagster, torch and the pipeline), which dwarfs a small
  partition's work; parallelism then comes from running partitions concurrently (the run coordinator's
  ``max_concurrent_runs``, or ``heritage-pipeline run --parallel-runs``).
* ``multiprocess``: Dagster's multiprocess executor, ``max_concurrent`` step processes at once.
* ``dask``: the ``dagster-dask`` executor; each step is a task on a Dask cluster: an existing scheduler
  (``dask_address``) or a local cluster started for the run (``dask_workers`` processes). Workers must import this
  package and reach the same storage (shared disk or object store, see docs/scaling.md).
"""

from __future__ import annotations

import dagster as dg

from ..config import ExecutorConfig


def dask_cluster_config(cfg: ExecutorConfig, address: str | None = None) -> dict:
    """The ``cluster`` block of the dask executor config: ``existing`` when an address is known, else ``local``."""
    address = address if address is not None else cfg.dask_address
    if address:
        return {"existing": {"address": address}}
    return {"local": {"n_workers": cfg.dask_workers, "threads_per_worker": cfg.dask_threads_per_worker}}


def executor_for(cfg: ExecutorConfig, *, dask_address: str | None = None) -> dg.ExecutorDefinition:
    """The configured executor definition (configured with the values of ``cfg``)."""
    if cfg.kind == "in_process":
        return dg.in_process_executor
    if cfg.kind == "multiprocess":
        return dg.multiprocess_executor.configured({"max_concurrent": cfg.max_concurrent}, name="multiprocess")
    from dagster_dask import dask_executor

    return dask_executor.configured({"cluster": dask_cluster_config(cfg, dask_address)}, name="dask")


def parallel_runs(cfg: ExecutorConfig) -> int:
    """Partition runs the CLI keeps in flight: ``parallel_runs``, or 1 (``dask_workers`` for dask) when 0."""
    if cfg.parallel_runs:
        return cfg.parallel_runs
    return cfg.dask_workers if cfg.kind == "dask" else 1
