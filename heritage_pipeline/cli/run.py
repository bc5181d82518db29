"""``heritage-pipeline run``: every partition of the partitioned assets, then the index and the report.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from rich.table import Table

from heritage_pipeline.core.config import (
    SOURCE_TYPES,
    load_chunking_config,
    load_pipeline_config,
)

from .console import QUIET_RUN_CONFIG, _progress, console, err


# ------------------------------------------------------------------------------------------------------------ run
def cmd_run(args: argparse.Namespace) -> int:
    """Materialise every partition of the partitioned assets, then ``lancedb_index`` and ``ablation_report``.

    Partitions: every (source_type, language) found in the raw files, plus every partition stored by an earlier run
    (so that one whose files were removed or moved is emptied, not left in the index). Unchanged partitions reuse
    their stored outputs (see :mod:`heritage_pipeline.incremental.versions`). Executor: ``executor`` in pipeline.yaml or
    ``--executor``; ``--parallel-runs`` partition runs at once.
    """
    import dagster as dg

    from heritage_pipeline.defs.assets import discover_once
    from heritage_pipeline.defs.executors import parallel_runs

    _restore_termination_signals()
    from heritage_pipeline.definitions import build_definitions
    from heritage_pipeline.defs.partitions import language_partitions, partition_key_str

    pcfg = load_pipeline_config(args.pipeline_config).with_paths(data_dir=args.data_dir, output_dir=args.out)
    load_chunking_config(args.config)
    ecfg = pcfg.executor.model_copy(update={k: v for k, v in {"kind": args.executor, "parallel_runs": args.parallel_runs,
                                                              "dask_address": args.dask_address}.items() if v is not None})
    out = pcfg.output_path
    out.mkdir(parents=True, exist_ok=True)
    if not os.environ.get("DAGSTER_HOME"):
        home = out / "dagster_home"
        home.mkdir(parents=True, exist_ok=True)
        os.environ["DAGSTER_HOME"] = str(home.resolve())
    Path(os.environ["DAGSTER_HOME"]).mkdir(parents=True, exist_ok=True)
    defs = build_definitions(args.config, args.pipeline_config, data_dir=pcfg.data_path, output_dir=out)
    assets = list(defs.assets)
    t_start = time.perf_counter()
    err.print(f"[bold]heritage-pipeline run[/bold]: data {pcfg.data_path} -> outputs {out} (executor {ecfg.kind})")
    sources = discover_once(pcfg.data_path, str(out / "storage"))
    # files skipped at discovery (licence texts, unsupported types) are listed in the summary, not run as partitions
    partitions = sorted({(s.source_type, s.lang) for s in sources if s.status != "skipped"} | _stored_partitions(out / "storage"))
    instance = dg.DagsterInstance.get()
    langs = sorted({lang for _, lang in partitions})
    known = set(instance.get_dynamic_partitions(language_partitions.name))
    if set(langs) - known:
        instance.add_dynamic_partitions(language_partitions.name, sorted(set(langs) - known))
    failures: list[str] = []
    with _progress() as progress, _dask_cluster(ecfg) as address:
        task = progress.add_task("partitions", total=len(partitions) + 1)
        spec = _RunSpec(str(Path(args.config).resolve()), str(Path(args.pipeline_config).resolve()), str(pcfg.data_path),
                        str(out), ecfg.kind, address or "", os.environ["DAGSTER_HOME"])
        n = parallel_runs(ecfg)
        if n > 1:
            # One process per partition run, as Dagster's run launchers do: Dagster is not thread-safe (two runs in
            # two threads of one process deadlock in its SQLite event log), and processes also sidestep the GIL.
            import multiprocessing
            from concurrent.futures import ProcessPoolExecutor, as_completed

            progress.update(task, description=f"partitions ({n} runs at a time)")
            from heritage_pipeline.defs.executors import worker_env

            env = worker_env(n) if ecfg.kind == "in_process" else {}  # the models load in these processes then
            with ProcessPoolExecutor(max_workers=n, mp_context=multiprocessing.get_context("spawn"),
                                     initializer=_set_environment, initargs=(env,)) as pool:
                futures = {pool.submit(_run_partition_in_worker, spec, st, lang): (st, lang) for st, lang in partitions}
                for fut in as_completed(futures):
                    try:
                        problem = fut.result()
                    except Exception as exc:  # a worker process died: report the partition, keep the others
                        problem = f"{type(exc).__name__}: {exc}"
                    if problem:
                        failures.append(f"{partition_key_str(*futures[fut])}: {problem}")
                    progress.advance(task)
        else:
            run_partition = _partition_runner(spec, instance, assets, defs.resources)
            for st, lang in partitions:
                progress.update(task, description=f"partition {partition_key_str(st, lang)}")
                try:
                    problem = run_partition(st, lang)
                except Exception as exc:  # keep going: one broken partition must not lose the others
                    problem = f"{type(exc).__name__}: {exc}"
                if problem:
                    failures.append(f"{partition_key_str(st, lang)}: {problem}")
                progress.advance(task)
        progress.update(task, description="lancedb_index + ablation_report")
        res = dg.materialize(assets, selection=["lancedb_index", "ablation_report"], instance=instance,
                             resources=defs.resources, raise_on_error=False, run_config=QUIET_RUN_CONFIG)
        if not res.success:
            failures.append(f"index/report: {_first_failure(res)}")
        progress.advance(task)
    elapsed = time.perf_counter() - t_start
    _summary(sources, partitions, out, pcfg, elapsed, failures)
    return 1 if failures else 0


def _restore_termination_signals() -> None:
    """Undo an inherited "ignore" of SIGINT/SIGTERM (a shell starts background jobs that way) before any run or
    worker process starts. Dagster maps SIGTERM to SIGINT's handler in every process it runs in, stops its
    compute-log ``tail`` helpers with SIGTERM and waits 30 s for each one that ignores it: with both signals ignored,
    every step of a Dask or launched run pays that wait."""
    import signal

    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    if signal.getsignal(signal.SIGTERM) == signal.SIG_IGN:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)


def _stored_partitions(storage: Path) -> set[tuple[str, str]]:
    """(source_type, language) of every partition an earlier run stored under ``storage/raw_sources``."""
    root = storage / "raw_sources"
    if not root.is_dir():
        return set()
    return {(p.stem, p.parent.name) for p in root.glob("*/*.parquet") if p.stem in SOURCE_TYPES}


class _dask_cluster:
    """For ``executor.kind == dask`` without an address: a local Dask cluster shared by all partition runs of this
    command (``dask_workers`` processes), yielding its scheduler address; otherwise yields the configured address."""

    def __init__(self, ecfg) -> None:
        self.ecfg = ecfg
        self.cluster = None

    def __enter__(self) -> str | None:
        if self.ecfg.kind != "dask" or self.ecfg.dask_address:
            return self.ecfg.dask_address or None
        from distributed import LocalCluster

        from heritage_pipeline.defs.executors import worker_env

        from heritage_pipeline.core.cpus import available_cores

        # never more worker processes than usable cores (affinity mask, cgroup quota): more only slows every one
        workers = max(1, min(self.ecfg.dask_workers, available_cores()))
        self.cluster = LocalCluster(n_workers=workers, threads_per_worker=self.ecfg.dask_threads_per_worker,
                                    processes=True, dashboard_address=None, env=worker_env(workers))
        return self.cluster.scheduler_address

    def __exit__(self, *exc) -> None:
        if self.cluster is not None:
            self.cluster.close()


@dataclass(frozen=True)
class _RunSpec:
    """What a partition run needs, as plain strings (sent to worker processes)."""

    chunking: str
    pipeline: str
    data_dir: str
    output_dir: str
    executor: str
    dask_address: str
    dagster_home: str


def _partition_runner(spec: _RunSpec, instance, assets=None, resources=None):
    """A function (source_type, language) -> None or a failure message that materialises one partition: in this
    process for the in-process executor, else through a reconstructable ``ingest_job`` (multiprocess, Dask)."""
    import dagster as dg

    from heritage_pipeline.defs.automation import PARTITIONED_KEYS
    from heritage_pipeline.defs.partitions import partition_key_str

    if spec.executor == "in_process":
        if assets is None:
            from heritage_pipeline.definitions import build_definitions

            defs = build_definitions(spec.chunking, spec.pipeline, data_dir=spec.data_dir, output_dir=spec.output_dir)
            assets, resources = list(defs.assets), defs.resources

        def run(st: str, lang: str) -> str | None:
            key = dg.MultiPartitionKey({"source_type": st, "language": lang})
            res = dg.materialize(assets, selection=list(PARTITIONED_KEYS), partition_key=key, instance=instance,
                                 resources=resources, raise_on_error=False, run_config=QUIET_RUN_CONFIG)
            return None if res.success else _first_failure(res)
        return run

    job = dg.build_reconstructable_job(
        "heritage_pipeline.definitions", "job_for",
        reconstructable_args=("ingest_job", spec.chunking, spec.pipeline, spec.data_dir, spec.output_dir, spec.executor,
                              spec.dask_address))

    def run(st: str, lang: str) -> str | None:
        tags = {"dagster/partition": partition_key_str(st, lang), "dagster/partition/source_type": st,
                "dagster/partition/language": lang}
        with dg.execute_job(job, instance=instance, tags=tags, run_config=QUIET_RUN_CONFIG) as res:
            return None if res.success else _first_failure(res)
    return run


_WORKER_RUNNER = None


def _set_environment(env: dict[str, str]) -> None:
    """Process-pool initializer: set environment variables in the worker process."""
    os.environ.update(env)


def _run_partition_in_worker(spec: _RunSpec, st: str, lang: str) -> str | None:
    """Process-pool entry point: one partition run in this worker process (its Dagster instance and, for the
    in-process executor, its models are set up once per process)."""
    global _WORKER_RUNNER
    if _WORKER_RUNNER is None:
        os.environ["DAGSTER_HOME"] = spec.dagster_home
        import dagster as dg

        _WORKER_RUNNER = _partition_runner(spec, dg.DagsterInstance.get())
    try:
        return _WORKER_RUNNER(st, lang)
    except Exception as exc:
        return f"{type(exc).__name__}: {exc}"


def _first_failure(res) -> str:
    for ev in res.all_events:
        if ev.is_failure and ev.event_specific_data is not None and getattr(ev.event_specific_data, "error", None):
            return f"{ev.step_key}: {ev.event_specific_data.error.message.strip().splitlines()[-1]}"
    return "failed"


def _parts_left_out(storage: Path, partitions) -> Counter:
    """Parts of parsed files deliberately left out (e.g. conversation messages under the minimum length), per
    partition key, from the stored ``parsed_sections``."""
    import pyarrow.parquet as pq

    from heritage_pipeline.defs.partitions import partition_key_str

    out: Counter = Counter()
    for st, lang in partitions:
        path = storage / "parsed_sections" / lang / f"{st}.parquet"
        if path.exists():
            for raw in pq.read_table(path, columns=["structure"]).column("structure").to_pylist():
                n = len(json.loads(raw or "{}").get("skipped", []))
                if n:
                    out[partition_key_str(st, lang)] += n
    return out


def _summary(sources, partitions, out: Path, pcfg, elapsed: float, failures: list[str]) -> None:
    import pyarrow.parquet as pq

    from heritage_pipeline.core.models import QuarantineRecord
    from heritage_pipeline.defs.partitions import partition_key_str
    from heritage_pipeline.stages import write_quarantine

    storage = out / "storage"
    files = Counter((s.source_type, s.lang) for s in sources)
    t = Table(title="Partitions")
    for col in ("partition", "files", "chunks", "after dedup"):
        t.add_column(col, justify="right" if col != "partition" else "left")
    total = 0
    for st, lang in partitions:
        n_chunks = _rows(storage / "chunks" / lang / f"{st}.parquet")
        n_final = _rows(storage / "embedded_chunks" / lang / f"{st}.parquet")
        total += n_final
        t.add_row(partition_key_str(st, lang), str(files[(st, lang)]), str(n_chunks), str(n_final))
    console.print(t)
    records: list[QuarantineRecord] = [QuarantineRecord(path=s.path, reason=s.reason, stage="discover") for s in sources
                                       if s.status == "quarantined"]
    for qf in sorted((storage / "quarantine").rglob("*.jsonl")) if (storage / "quarantine").exists() else []:
        for line in qf.read_text(encoding="utf-8").splitlines():
            if line.strip():
                records.append(QuarantineRecord.model_validate_json(line))
    # a file refused at discovery is also recorded by the parse stage: list each (path, reason) once
    records = list({(r.path, r.reason): r for r in records}.values())
    skipped = [s for s in sources if s.status == "skipped"]
    write_quarantine(records, out / "quarantine.jsonl")
    from heritage_pipeline.sources.accounting import parsed_files_from_storage, summarize_inputs

    inputs = summarize_inputs({s.path: (s.status, s.reason or "skipped by its parser (parsed_sections' skipped_items)")
                               for s in sources}, parsed_files_from_storage(storage), records)
    for line in inputs.lines():  # grouped reasons: one line per reason with a count and three examples
        console.print(line, markup=False, highlight=False)
    index_rows = "?"
    try:
        import lancedb

        db = lancedb.connect(str(out / "lancedb"))
        index_rows = str(db.open_table(pcfg.lancedb.table).count_rows())
    except Exception as exc:
        index_rows = f"unavailable ({type(exc).__name__})"
    md = out / "ablation" / "ablation.md"
    if md.exists():
        print(md.read_text(encoding="utf-8"), flush=True)
    left_out = _parts_left_out(storage, partitions)
    console.print(f"final chunks: {total}; index rows: {index_rows}; quarantined: {len(records)}; skipped: {len(skipped)}"
                  + (f"; parts left out by the parsers: {sum(left_out.values())} (" +
                     ", ".join(f"{k} {v}" for k, v in sorted(left_out.items())) +
                     "; listed in parsed_sections' `skipped_items` metadata)" if left_out else ""))
    console.print(f"outputs: {out / 'chunks.jsonl'}, {out / 'lancedb'}, {out / 'ablation'}, {out / 'quarantine.jsonl'}")
    console.print(f"wall time: {elapsed:.1f} s")
    if failures:
        err.print("[red]failed steps:[/red]")
        for f in failures:
            err.print(f"  {f}")
    del pq


def _rows(path: Path) -> int:
    import pyarrow.parquet as pq

    try:
        return pq.ParquetFile(path).metadata.num_rows
    except Exception:
        return 0
