"""The executor of the jobs, chosen by ``executor:`` in ``configs/pipeline.yaml`` (:class:`ExecutorConfig`); only
Dagster's public executors, no fork of one.

* ``in_process`` (default): every step of a run in the run's own process. On 2 cores the multiprocess executor
  costs ~10 s per step (a fresh interpreter importing Dagster, torch and the pipeline), which dwarfs a small
  partition's work; parallelism across partitions comes from Dagster's run queue (``configs/dagster.yaml``:
  ``max_concurrent_runs``) when the runs are launched through the daemon (a backfill in the UI).
* ``multiprocess``: Dagster's multiprocess executor, ``max_concurrent`` step processes at once.
* ``celery``: ``dagster-celery``'s executor: each step is a Celery task on the broker ``celery_broker`` (e.g. a
  Redis), executed by ``dagster-celery worker`` processes on any machine that imports this package and reaches the
  same storage and Dagster instance (docs/scaling.md). Runs of several partitions at once share the workers.

The upstream Dask executor is not offered: it names each step's Dask task ``<job>.<step>``, so concurrent runs of
one job (every partition run of ``ingest_job``) collide on equal keys and are handed the first run's results
(dagster-io/dagster#21418); avoiding it needed a fork calling Dagster's private APIs.
"""

from __future__ import annotations

import dagster as dg

from heritage_pipeline.core.config import ExecutorConfig


def celery_executor_config(cfg: ExecutorConfig) -> dict:
    """The config of ``dagster_celery.celery_executor`` for ``cfg``: broker, result backend and the modules the
    workers import.

    Args:
        cfg: the executor settings of ``pipeline.yaml``.

    Returns:
        A config dict for ``celery_executor.configured``.
    """
    return {"broker": cfg.celery_broker, "backend": cfg.celery_backend or cfg.celery_broker,
            "include": ["heritage_pipeline.definitions"]}


def executor_for(cfg: ExecutorConfig) -> dg.ExecutorDefinition:
    """The configured executor definition.

    Args:
        cfg: the executor settings of ``pipeline.yaml``.

    Returns:
        Dagster's in-process or multiprocess executor, or dagster-celery's, configured from ``cfg``.

    Raises:
        ImportError: ``kind: celery`` without ``dagster-celery`` installed (it is a declared dependency).
    """
    if cfg.kind == "in_process":
        return dg.in_process_executor
    if cfg.kind == "multiprocess":
        return dg.multiprocess_executor.configured({"max_concurrent": cfg.max_concurrent}, name="multiprocess")
    from dagster_celery import celery_executor

    return celery_executor.configured(celery_executor_config(cfg), name="celery")


def worker_env(n_workers: int) -> dict[str, str]:
    """Environment for ``n_workers`` worker processes sharing this machine's cores (multiprocess step processes,
    Celery workers started here).

    Model threads = available cores (affinity mask and cgroup quota, :mod:`heritage_pipeline.core.cpus`) // workers,
    at least 1, for torch / ONNX Runtime / USE (``HERITAGE_TORCH_THREADS``), OpenMP/BLAS and the ``tokenizers`` Rayon
    pool; otherwise every worker runs as many threads as there are cores and the workers slow each other down.

    Args:
        n_workers: worker processes sharing the cores.

    Returns:
        ``{environment variable: value}``.
    """
    from heritage_pipeline.core.cpus import available_cores, thread_env

    return thread_env(max(1, available_cores() // max(1, n_workers)))
