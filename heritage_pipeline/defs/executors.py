"""The executor of the jobs, chosen by ``executor:`` in ``configs/pipeline.yaml`` (:class:`ExecutorConfig`).

* ``in_process`` (default): every step of a run in the run's own process. On 2 cores the multiprocess executor
  costs ~10 s per step (a fresh interpreter importing Dagster, torch and the pipeline), which dwarfs a small
  partition's work; parallelism then comes from running partitions concurrently (the run coordinator's
  ``max_concurrent_runs``, or ``heritage-pipeline run --parallel-runs``).
* ``multiprocess``: Dagster's multiprocess executor, ``max_concurrent`` step processes at once.
* ``dask``: the ``dagster-dask`` executor (with run-unique task keys, see :func:`_run_scoped_dask_executor`); each
  step is a task on a Dask cluster: an existing scheduler (``dask_address``) or a local cluster started for the run
  (``dask_workers`` processes). Workers must import this package and reach the same storage (shared disk or object
  store, see docs/scaling.md).
"""

from __future__ import annotations

import dagster as dg

from heritage_pipeline.core.config import ExecutorConfig


def _run_scoped_dask_executor() -> dg.ExecutorDefinition:
    """``dagster-dask``'s executor with Dask task keys unique per run.

    dagster-dask names each step's Dask task ``<job>.<step>``. Dask treats equal keys as the same computation, so
    concurrent runs of one job on one cluster (every partition run of ``ingest_job``) are handed the first run's
    results and "succeed" without executing their own steps (dagster-io/dagster#21418, still so in dagster-dask
    0.29.27; found here by test_dask.py). This is upstream's ``DaskExecutor.execute`` for the ``existing`` and
    ``local`` clusters with the run id in the key; everything else (worker entry point, resource requirements,
    retries) is dagster-dask's own.
    """
    import dask.distributed
    from dagster import Permissive, Selector, StringSource, multiple_process_executor_requirements
    from dagster._core.errors import raise_execution_interrupts
    from dagster._core.events import DagsterEvent
    from dagster._utils import iterate_with_context
    from dagster_dask.executor import DaskExecutor, get_dask_resource_requirements, query_on_dask_worker

    class RunScopedDaskExecutor(DaskExecutor):
        def execute(self, plan_context, execution_plan):
            if not plan_context.instance.is_persistent:
                raise dg.DagsterInvariantViolationError("Dask execution requires a persistent DagsterInstance")
            job_name, run_id = plan_context.job_name, plan_context.dagster_run.run_id
            if self.cluster_type == "existing":
                cluster, owned = self.cluster_configuration["address"], None
            elif self.cluster_type == "local":
                cluster = owned = dask.distributed.LocalCluster(**self.build_dict(job_name))
            else:
                raise dg.DagsterInvariantViolationError(f"cluster type {self.cluster_type!r}: use existing or local")
            try:
                with dask.distributed.Client(cluster) as client:
                    futures: dict[str, object] = {}
                    for level in execution_plan.get_steps_to_execute_by_level():
                        for step in level:
                            deps = [futures[k] for inp in step.step_inputs for k in inp.dependency_keys]
                            futures[step.key] = client.submit(
                                query_on_dask_worker, deps, plan_context.reconstructable_job, plan_context.dagster_run,
                                plan_context.run_config, [step.key], plan_context.instance.get_ref(),
                                execution_plan.known_state, key=f"{job_name}.{run_id}.{step.key}",
                                resources=get_dask_resource_requirements(step.tags))
                    done = dask.distributed.as_completed(list(futures.values()), with_results=True)
                    for _future, events in iterate_with_context(raise_execution_interrupts, done):
                        for event in events:
                            if not isinstance(event, DagsterEvent):
                                raise TypeError(f"a Dask task returned {type(event).__name__}, not a DagsterEvent")
                            yield event
            finally:
                if owned is not None:
                    owned.close()

    @dg.executor(name="dask", requirements=multiple_process_executor_requirements(),
                 config_schema={"cluster": dg.Field(Selector({"existing": dg.Field({"address": StringSource}),
                                                              "local": dg.Field(Permissive(), is_required=False)}))})
    def dask_executor(init_context):
        ((cluster_type, cluster_configuration),) = init_context.executor_config["cluster"].items()
        return RunScopedDaskExecutor(cluster_type, cluster_configuration)

    return dask_executor


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
    return _run_scoped_dask_executor().configured({"cluster": dask_cluster_config(cfg, dask_address)}, name="dask")


def worker_env(n_workers: int) -> dict[str, str]:
    """Environment for ``n_workers`` worker processes (Dask workers, parallel partition runs) on this machine.

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


def parallel_runs(cfg: ExecutorConfig) -> int:
    """Partition runs the CLI keeps in flight: ``parallel_runs``, or 1 (``dask_workers`` for dask) when 0."""
    if cfg.parallel_runs:
        return cfg.parallel_runs
    return cfg.dask_workers if cfg.kind == "dask" else 1
