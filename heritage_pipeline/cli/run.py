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
    """Materialise every partition through ``ingest_job``, then ``index_job`` (``lancedb_index``, ``ablation_report``).

    The runs are Dagster runs of the named jobs on the project's Dagster instance (``$DAGSTER_HOME``), so they show
    in the UI as ``ingest_job`` / ``index_job`` and write exactly what a UI-launched run writes. Partitions: every
    (source_type, language) found in the raw files, plus every partition stored by an earlier run (so one whose
    files were removed is emptied, not left in the index). Unchanged partitions reuse their stored outputs (see
    :mod:`heritage_pipeline.incremental.versions`). Executor: ``executor.kind`` in pipeline.yaml or ``--executor``:
    ``in_process`` runs each job in this process (``execute_in_process``); ``multiprocess`` and ``celery`` launch a
    reconstructable job (``dagster.execute_job``) whose steps that executor runs. To run partitions concurrently,
    launch a backfill through the daemon (``make dev``): its run queue (``configs/dagster.yaml``) does that.

    Args:
        args: the parsed ``run`` options.

    Returns:
        0 when every run succeeded, 1 when a step failed (the summary names it).
    """
    import dagster as dg

    from heritage_pipeline.definitions import build_definitions
    from heritage_pipeline.defs.assets import discover_once
    from heritage_pipeline.defs.partitions import language_partitions, partition_key_str

    _restore_termination_signals()
    pcfg = load_pipeline_config(args.pipeline_config).with_paths(data_dir=args.data_dir, output_dir=args.out)
    load_chunking_config(args.config)
    kind = args.executor or pcfg.executor.kind
    out = pcfg.output_path
    out.mkdir(parents=True, exist_ok=True)
    if not os.environ.get("DAGSTER_HOME"):
        home = out / "dagster_home"
        home.mkdir(parents=True, exist_ok=True)
        os.environ["DAGSTER_HOME"] = str(home.resolve())
    Path(os.environ["DAGSTER_HOME"]).mkdir(parents=True, exist_ok=True)
    defs = build_definitions(args.config, args.pipeline_config, data_dir=pcfg.data_path, output_dir=out,
                             executor_kind=kind)
    t_start = time.perf_counter()
    err.print(f"[bold]heritage-pipeline run[/bold]: data {pcfg.data_path} -> outputs {out} (executor {kind})")
    sources = discover_once(pcfg.data_path, str(out / "storage"))
    # files skipped at discovery (licence texts, unsupported types) are listed in the summary, not run as partitions
    partitions = sorted({(s.source_type, s.lang) for s in sources if s.status != "skipped"} | _stored_partitions(out / "storage"))
    instance = dg.DagsterInstance.get()
    langs = sorted({lang for _, lang in partitions})
    known = set(instance.get_dynamic_partitions(language_partitions.name))
    if set(langs) - known:
        instance.add_dynamic_partitions(language_partitions.name, sorted(set(langs) - known))
    spec = _RunSpec(str(Path(args.config).resolve()), str(Path(args.pipeline_config).resolve()), str(pcfg.data_path),
                    str(out), kind)
    run_job = _job_runner(spec, defs, instance)
    failures: list[str] = []
    with _progress() as progress:
        task = progress.add_task("partitions", total=len(partitions) + 1)
        for st, lang in partitions:
            key = partition_key_str(st, lang)
            progress.update(task, description=f"ingest_job {key}")
            try:
                problem = run_job("ingest_job", (st, lang))
            except Exception as exc:  # keep going: one broken partition must not lose the others
                problem = f"{type(exc).__name__}: {exc}"
            if problem:
                failures.append(f"{key}: {problem}")
            progress.advance(task)
        progress.update(task, description="index_job (lancedb_index + ablation_report)")
        problem = run_job("index_job", None)
        if problem:
            failures.append(f"index/report: {problem}")
        progress.advance(task)
    elapsed = time.perf_counter() - t_start
    _summary(sources, partitions, out, pcfg, elapsed, failures)
    return 1 if failures else 0


def _restore_termination_signals() -> None:
    """Undo an inherited "ignore" of SIGINT/SIGTERM (a shell starts background jobs that way) before any run
    starts. Dagster maps SIGTERM to SIGINT's handler in every process it runs in, stops its compute-log ``tail``
    helpers with SIGTERM and waits 30 s for each one that ignores it: with both signals ignored, every step of a
    launched run pays that wait."""
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


@dataclass(frozen=True)
class _RunSpec:
    """What a reconstructable job needs, as plain strings (rebuilt in the executor's processes)."""

    chunking: str
    pipeline: str
    data_dir: str
    output_dir: str
    executor: str


def _job_runner(spec: _RunSpec, defs, instance):
    """A function ``(job name, (source_type, language) or None) -> None or a failure message`` that runs one job
    (one partition of it) as a Dagster run of that name: ``execute_in_process`` for the in-process executor, else
    ``execute_job`` of the reconstructable job so that its executor (multiprocess, celery) runs the steps."""
    import dagster as dg

    from heritage_pipeline.defs.partitions import partition_key_str

    def tags_of(partition) -> dict[str, str]:
        if partition is None:
            return {}
        st, lang = partition
        return {"dagster/partition": partition_key_str(st, lang), "dagster/partition/source_type": st,
                "dagster/partition/language": lang}

    if spec.executor == "in_process":
        def run(job_name: str, partition) -> str | None:
            key = dg.MultiPartitionKey({"source_type": partition[0], "language": partition[1]}) if partition else None
            res = defs.resolve_job_def(job_name).execute_in_process(
                instance=instance, partition_key=key, run_config=QUIET_RUN_CONFIG, raise_on_error=False)
            return None if res.success else _first_failure(res)
        return run

    def run(job_name: str, partition) -> str | None:
        job = dg.build_reconstructable_job(
            "heritage_pipeline.definitions", "job_for",
            reconstructable_args=(job_name, spec.chunking, spec.pipeline, spec.data_dir, spec.output_dir, spec.executor))
        with dg.execute_job(job, instance=instance, tags=tags_of(partition), run_config=QUIET_RUN_CONFIG) as res:
            return None if res.success else _first_failure(res)
    return run


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

    from heritage_pipeline.defs.partitions import partition_key_str
    from heritage_pipeline.index.sync import quarantine_records

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
    # quarantine.jsonl itself is written by the lancedb_index asset (index/sync.py), as in a UI-launched run
    records = quarantine_records(storage)
    skipped = [s for s in sources if s.status == "skipped"]
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
