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
    RETRIEVER_LABELS,
    SOURCE_TYPES,
    load_chunking_config,
    load_pipeline_config,
)

from .console import console, err, run_config


# ------------------------------------------------------------------------------------------------------------ run
DAGSTER_YAML = Path(__file__).resolve().parents[2] / "configs" / "dagster.yaml"


def ensure_dagster_home(home: Path) -> bool:
    """Create the Dagster instance folder ``home`` with the project's ``dagster.yaml`` (telemetry off) when it has
    none: without one Dagster prints a notice and a telemetry banner into the first run's output.

    Args:
        home: the ``DAGSTER_HOME`` folder.

    Returns:
        True when ``dagster.yaml`` was written, False when one was there already.
    """
    home.mkdir(parents=True, exist_ok=True)
    target = home / "dagster.yaml"
    if target.exists():
        return False
    import shutil

    shutil.copyfile(DAGSTER_YAML, target)
    return True


def cmd_run(args: argparse.Namespace) -> int:
    """Materialise every partition of the partitioned assets, then ``lancedb_index`` and ``ablation_report``.

    Partitions: every (source_type, language) found in the raw files, plus every partition stored by an earlier run
    (so that one whose files were removed or moved is emptied, not left in the index). Unchanged partitions reuse
    their stored outputs (see :mod:`heritage_pipeline.incremental.versions`). Executor: ``executor`` in pipeline.yaml or
    ``--executor``; ``--parallel-runs`` partition runs at once. Library warnings and logs go to ``<out>/run.log``.
    """
    from .console import ProgressDisplay, quiet_output

    pcfg = load_pipeline_config(args.pipeline_config).with_paths(data_dir=args.data_dir, output_dir=args.out)
    load_chunking_config(args.config)
    out = pcfg.output_path
    out.mkdir(parents=True, exist_ok=True)
    verbose = getattr(args, "verbose", 0)
    with quiet_output(out / "run.log", verbose) as log_path:
        with ProgressDisplay() as display:  # closed before the summary: a live display would redraw under it
            summary = _run(args, pcfg, out, verbose)
        _summary(*summary)
        code = 1 if summary[5] else 0
    console.print(f"phases: " + ", ".join(f"{k} {v:.0f} s" for k, v in display.timings.items() if v >= 0.5)
                  + f"; library warnings and logs: {log_path}", highlight=False, soft_wrap=True)
    return code


def _run(args: argparse.Namespace, pcfg, out: Path, verbose: int) -> tuple:
    """The partition runs, then the index and the report; returns the arguments of :func:`_summary` (the sixth,
    ``failures``, is empty when every step succeeded)."""
    import dagster as dg

    from heritage_pipeline.core.progress import advance, phase
    from heritage_pipeline.defs.assets import discover_once
    from heritage_pipeline.defs.executors import parallel_runs

    _restore_termination_signals()
    from heritage_pipeline.definitions import build_definitions
    from heritage_pipeline.defs.partitions import language_partitions, partition_key_str

    ecfg = pcfg.executor.model_copy(update={k: v for k, v in {"kind": args.executor, "parallel_runs": args.parallel_runs,
                                                              "dask_address": args.dask_address}.items() if v is not None})
    if not os.environ.get("DAGSTER_HOME"):
        os.environ["DAGSTER_HOME"] = str((out / "dagster_home").resolve())
    ensure_dagster_home(Path(os.environ["DAGSTER_HOME"]))
    t_start = time.perf_counter()
    err.print(f"[bold]heritage-pipeline run[/bold]: data {pcfg.data_path} -> outputs {out} (executor {ecfg.kind})")
    with phase("loading pipeline"):
        defs = build_definitions(args.config, args.pipeline_config, data_dir=pcfg.data_path, output_dir=out)
    assets = list(defs.assets)
    with phase("discovering files"):
        sources = discover_once(pcfg.data_path, str(out / "storage"))
    # files skipped at discovery (licence texts, unsupported types) are listed in the summary, not run as partitions
    partitions = sorted({(s.source_type, s.lang) for s in sources if s.status != "skipped"} | _stored_partitions(out / "storage"))
    instance = dg.DagsterInstance.get()
    langs = sorted({lang for _, lang in partitions})
    known = set(instance.get_dynamic_partitions(language_partitions.name))
    if set(langs) - known:
        instance.add_dynamic_partitions(language_partitions.name, sorted(set(langs) - known))
    failures: list[str] = []
    reuse: dict[str, tuple[int, int]] = {}  # partition -> (assets reused, assets materialised)
    rc = run_config(verbose)
    with _dask_cluster(ecfg) as address:
        spec = _RunSpec(str(Path(args.config).resolve()), str(Path(args.pipeline_config).resolve()), str(pcfg.data_path),
                        str(out), ecfg.kind, address or "", os.environ["DAGSTER_HOME"], verbose)
        n = parallel_runs(ecfg)
        label = "partitions" if n == 1 else f"partitions ({n} runs at a time)"
        advance(label, 0, len(partitions))

        def record(st: str, lang: str, outcome, done: int) -> None:
            key = partition_key_str(st, lang)
            if isinstance(outcome, str):
                failures.append(f"{key}: {outcome}")
            else:
                reuse[key] = outcome
            advance(label, done, len(partitions), key)

        if n > 1:
            # One process per partition run, as Dagster's run launchers do: Dagster is not thread-safe (two runs in
            # two threads of one process deadlock in its SQLite event log), and processes also sidestep the GIL.
            import multiprocessing
            from concurrent.futures import ProcessPoolExecutor, as_completed

            from heritage_pipeline.defs.executors import worker_env

            env = worker_env(n) if ecfg.kind == "in_process" else {}  # the models load in these processes then
            with ProcessPoolExecutor(max_workers=n, mp_context=multiprocessing.get_context("spawn"),
                                     initializer=_set_environment, initargs=(env,)) as pool:
                futures = {pool.submit(_run_partition_in_worker, spec, st, lang): (st, lang) for st, lang in partitions}
                for i, fut in enumerate(as_completed(futures), 1):
                    try:
                        outcome = fut.result()
                    except Exception as exc:  # a worker process died: report the partition, keep the others
                        outcome = f"{type(exc).__name__}: {exc}"
                    record(*futures[fut], outcome, i)
        else:
            run_partition = _partition_runner(spec, instance, assets, defs.resources)
            for i, (st, lang) in enumerate(partitions, 1):
                advance(label, i - 1, len(partitions), f"running {partition_key_str(st, lang)}")
                try:
                    outcome = run_partition(st, lang)
                except Exception as exc:  # keep going: one broken partition must not lose the others
                    outcome = f"{type(exc).__name__}: {exc}"
                record(st, lang, outcome, i)
        finals: dict[str, dict] = {}
        for asset, name in (("lancedb_index", "lancedb index"), ("ablation_report", "ablation report")):
            with phase(name):
                res = dg.materialize(assets, selection=[asset], instance=instance, resources=defs.resources,
                                     raise_on_error=False, run_config=rc)
            if not res.success:
                failures.append(f"{asset}: {_first_failure(res)}")
            finals[asset] = _materialized_metadata(res).get(asset, {})
    elapsed = time.perf_counter() - t_start
    return sources, partitions, out, pcfg, elapsed, failures, reuse, finals


def _materialized_metadata(res) -> dict[str, dict]:
    """asset key -> {metadata key: plain value} of every materialisation of a Dagster run result (the last one per
    asset; for the partitioned assets of one partition run, one per asset)."""
    out: dict[str, dict] = {}
    for ev in res.get_asset_materialization_events():
        mat = ev.event_specific_data.materialization
        out[mat.asset_key.to_user_string()] = {k: getattr(v, "value", v) for k, v in mat.metadata.items()}
    return out


def _reuse_counts(res) -> tuple[int, int]:
    """(assets whose stored output was reused, assets materialised) of one partition run result: an asset's
    materialisation says ``reused: true``, or for the root asset ``raw_sources`` (which always reads the files)
    ``changed: false``."""
    meta = _materialized_metadata(res)
    return sum(1 for m in meta.values() if m.get("reused") is True or m.get("changed") is False), len(meta)


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

        self.cluster = LocalCluster(n_workers=self.ecfg.dask_workers, threads_per_worker=self.ecfg.dask_threads_per_worker,
                                    processes=True, dashboard_address=None, env=worker_env(self.ecfg.dask_workers))
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
    verbose: int = 0


def _partition_runner(spec: _RunSpec, instance, assets=None, resources=None):
    """A function (source_type, language) -> a failure message, or (assets reused, assets materialised), that
    materialises one partition: in this process for the in-process executor, else through a reconstructable
    ``ingest_job`` (multiprocess, Dask)."""
    import dagster as dg

    from heritage_pipeline.defs.automation import PARTITIONED_KEYS
    from heritage_pipeline.defs.partitions import partition_key_str

    if spec.executor == "in_process":
        if assets is None:
            from heritage_pipeline.definitions import build_definitions

            defs = build_definitions(spec.chunking, spec.pipeline, data_dir=spec.data_dir, output_dir=spec.output_dir)
            assets, resources = list(defs.assets), defs.resources

        def run(st: str, lang: str) -> str | tuple[int, int]:
            key = dg.MultiPartitionKey({"source_type": st, "language": lang})
            res = dg.materialize(assets, selection=list(PARTITIONED_KEYS), partition_key=key, instance=instance,
                                 resources=resources, raise_on_error=False, run_config=run_config(spec.verbose))
            return _reuse_counts(res) if res.success else _first_failure(res)
        return run

    job = dg.build_reconstructable_job(
        "heritage_pipeline.definitions", "job_for",
        reconstructable_args=("ingest_job", spec.chunking, spec.pipeline, spec.data_dir, spec.output_dir, spec.executor,
                              spec.dask_address))

    def run(st: str, lang: str) -> str | tuple[int, int]:
        tags = {"dagster/partition": partition_key_str(st, lang), "dagster/partition/source_type": st,
                "dagster/partition/language": lang}
        with dg.execute_job(job, instance=instance, tags=tags, run_config=run_config(spec.verbose)) as res:
            return _reuse_counts(res) if res.success else _first_failure(res)
    return run


_WORKER_RUNNER = None


def _set_environment(env: dict[str, str]) -> None:
    """Process-pool initializer: set environment variables in the worker process."""
    os.environ.update(env)


def _run_partition_in_worker(spec: _RunSpec, st: str, lang: str) -> str | tuple[int, int]:
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


# "hybrid" is a chunking mode and a retriever: the retriever is shown as "BM25+vector" (core.config.RETRIEVER_LABELS)
RETRIEVER_LABEL = RETRIEVER_LABELS


def recommendation_lines(recommendations: dict[str, dict]) -> list[str]:
    """One line per language: the recommended chunking setting and retriever, with its scores.

    Args:
        recommendations: language -> the ablation's recommendation (``mode``, ``size_tokens`` (cl100k tokens),
            ``overlap_ratio``, ``retriever``, ``ndcg@10``, ``hit@5``).

    Returns:
        Plain-text lines, languages in sorted order.
    """
    out = []
    for lang, r in sorted(recommendations.items()):
        out.append(f"  {lang}: {r['mode']} chunking, {r['size_tokens']} tokens, {r['overlap_ratio']:.0%} overlap, "
                   f"{RETRIEVER_LABEL.get(r['retriever'], r['retriever'])} retrieval: nDCG@10 {r['ndcg@10']:.3f}, "
                   f"hit@5 {r['hit@5']:.3f}")
    return out


def reuse_label(reused: int, materialised: int) -> str:
    """How a partition run went, for the summary: ``reused``, ``recomputed`` or ``k of n recomputed`` (assets).

    Args:
        reused: assets of the partition whose stored output was reused (inputs, config and code unchanged).
        materialised: assets the partition run materialised.

    Returns:
        The label; ``-`` when the partition did not run.
    """
    if not materialised:
        return "-"
    if reused == materialised:
        return "reused"
    if reused == 0:
        return "recomputed"
    return f"{materialised - reused} of {materialised} recomputed"


def _summary(sources, partitions, out: Path, pcfg, elapsed: float, failures: list[str],
             reuse: dict[str, tuple[int, int]] | None = None, finals: dict[str, dict] | None = None) -> None:
    from rich import box

    from heritage_pipeline.core.models import QuarantineRecord
    from heritage_pipeline.defs.partitions import partition_key_str
    from heritage_pipeline.stages import write_quarantine

    reuse, finals = reuse or {}, finals or {}
    storage = out / "storage"
    files = Counter((s.source_type, s.lang) for s in sources)
    t = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False)
    for col in ("partition", "files", "chunks", "after dedup", "this run"):
        t.add_column(col, justify="right" if col in ("files", "chunks", "after dedup") else "left")
    total = 0
    for st, lang in partitions:
        key = partition_key_str(st, lang)
        n_chunks = _rows(storage / "chunks" / lang / f"{st}.parquet")
        n_final = _rows(storage / "embedded_chunks" / lang / f"{st}.parquet")
        total += n_final
        t.add_row(key, str(files[(st, lang)]), str(n_chunks), str(n_final),
                  "failed" if key not in reuse else reuse_label(*reuse[key]))
    console.print(t)
    all_reused = bool(reuse) and all(r == m for r, m in reuse.values()) and len(reuse) == len(partitions)
    index_meta, report_meta = finals.get("lancedb_index", {}), finals.get("ablation_report", {})
    rewritten = list(index_meta.get("partitions_rewritten") or []) + list(index_meta.get("partitions_removed") or [])
    if all_reused and not rewritten and report_meta.get("reused") is True:
        console.print(f"nothing changed since the last run: all {len(partitions)} partitions, the index and the "
                      "ablation report were reused")
    else:
        n_re = sum(1 for r, m in reuse.values() if r < m)
        console.print(f"partitions recomputed: {n_re} of {len(partitions)}; index partitions rewritten: "
                      f"{len(rewritten)}; ablation report: "
                      + {True: "reused", False: "recomputed"}.get(report_meta.get("reused"), "not run"))
    abl_dir = out / "ablation"
    try:
        recs = json.loads((abl_dir / "ablation.data_version.json").read_text(encoding="utf-8")).get("recommendations", {})
    except (OSError, ValueError):
        recs = {}
    if recs:
        console.print("recommended setting (ablation on the golden sets):")
        for line in recommendation_lines(recs):
            console.print(line, markup=False, highlight=False, soft_wrap=True)
        console.print(f"report: {abl_dir / 'ablation.md'} (all settings, confidence intervals, why; plot ablation.png)",
                      highlight=False, soft_wrap=True)
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
        console.print(line, markup=False, highlight=False, soft_wrap=True)
    try:
        import lancedb

        db = lancedb.connect(str(out / "lancedb"))
        index_rows = str(db.open_table(pcfg.lancedb.table).count_rows())
    except Exception as exc:
        index_rows = f"unavailable ({type(exc).__name__})"
    left_out = _parts_left_out(storage, partitions)
    console.print(f"final chunks: {total}; index rows: {index_rows}; quarantined: {len(records)}; skipped: {len(skipped)}"
                  + (f"; parts left out by the parsers: {sum(left_out.values())} (" +
                     ", ".join(f"{k} {v}" for k, v in sorted(left_out.items())) +
                     "; listed in parsed_sections' `skipped_items` metadata)" if left_out else ""), highlight=False,
                  soft_wrap=True)
    console.print(f"outputs: {out / 'chunks.jsonl'}, {out / 'lancedb'}, {out / 'quarantine.jsonl'}; "
                  f"wall time {elapsed:.1f} s", highlight=False, soft_wrap=True)
    if failures:
        err.print("[red]failed steps:[/red]")
        for f in failures:
            err.print(f"  {f}", markup=False, highlight=False)


def _rows(path: Path) -> int:
    import pyarrow.parquet as pq

    try:
        return pq.ParquetFile(path).metadata.num_rows
    except Exception:
        return 0
