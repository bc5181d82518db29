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
    """Parse the registry / LinkML partitions (``parse_job``) and build the gazetteer (``gazetteer_job``), materialise
    every partition through ``ingest_job``, then ``index_job`` (``lancedb_index``, ``ablation_report``).

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

    Library warnings and logs go to ``<out>/run.log``; the console shows progress per phase and the summary.

    Returns:
        0 when every run succeeded, 1 when a step failed (the summary names it).
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
    console.print("phases: " + ", ".join(f"{k} {v:.0f} s" for k, v in display.timings.items() if v >= 0.5)
                  + f"; library warnings and logs: {log_path}", highlight=False, soft_wrap=True)
    return code


def _run(args: argparse.Namespace, pcfg, out: Path, verbose: int) -> tuple:
    """The partition runs (``ingest_job``), then ``index_job``; returns the arguments of :func:`_summary` (the sixth,
    ``failures``, is empty when every step succeeded)."""
    import dagster as dg

    from heritage_pipeline.core.progress import advance, phase
    from heritage_pipeline.definitions import build_definitions
    from heritage_pipeline.incremental.discovery import discover_once
    from heritage_pipeline.defs.partitions import language_partitions, partition_key_str

    _restore_termination_signals()
    kind = args.executor or pcfg.executor.kind
    if not os.environ.get("DAGSTER_HOME"):
        os.environ["DAGSTER_HOME"] = str((out / "dagster_home").resolve())
    ensure_dagster_home(Path(os.environ["DAGSTER_HOME"]))
    t_start = time.perf_counter()
    err.print(f"[bold]heritage-pipeline run[/bold]: data {pcfg.data_path} -> outputs {out} (executor {kind})")
    with phase("loading pipeline"):
        defs = build_definitions(args.config, args.pipeline_config, data_dir=pcfg.data_path, output_dir=out,
                                 executor_kind=kind)
    with phase("discovering files"):
        sources = discover_once(pcfg.data_path, str(out / "storage"))
    # files skipped at discovery (licence texts, unsupported types) are listed in the summary, not run as partitions
    partitions = sorted({(s.source_type, s.lang) for s in sources if s.status != "skipped"} | _stored_partitions(out / "storage"))
    instance = dg.DagsterInstance.get()
    langs = sorted({lang for _, lang in partitions})
    known = set(instance.get_dynamic_partitions(language_partitions.name))
    if set(langs) - known:
        instance.add_dynamic_partitions(language_partitions.name, sorted(set(langs) - known))
    spec = _RunSpec(str(Path(args.config).resolve()), str(Path(args.pipeline_config).resolve()), str(pcfg.data_path),
                    str(out), kind, verbose)
    run_job = _job_runner(spec, defs, instance)
    failures: list[str] = []
    reuse: dict[str, tuple[int, int]] = {}  # partition -> (assets reused, assets materialised)
    parsed_here: dict[str, tuple[int, int]] = {}  # partition -> parse_job's (reused, materialised) in this run
    # the gazetteer (an asset upstream of every partition's enriched_chunks) is built from the parsed registry and
    # LinkML partitions: those are parsed first, then the gazetteer, then every partition runs whole (reusing them)
    from heritage_pipeline.enrich.gazetteer import GAZETTEER_SOURCE_TYPES

    with phase("registries and gazetteer (parse_job, gazetteer_job)"):
        for st, lang in (p for p in partitions if p[0] in GAZETTEER_SOURCE_TYPES):
            outcome = _attempt(run_job, "parse_job", (st, lang))
            if isinstance(outcome, str):
                failures.append(f"{partition_key_str(st, lang)} (parse): {outcome}")
            else:
                parsed_here[partition_key_str(st, lang)] = _reuse_counts(outcome)
        outcome = _attempt(run_job, "gazetteer_job", None)
        if isinstance(outcome, str):
            failures.append(f"gazetteer: {outcome}")
    label = "partitions (ingest_job)"
    advance(label, 0, len(partitions))
    for i, (st, lang) in enumerate(partitions, 1):
        key = partition_key_str(st, lang)
        advance(label, i - 1, len(partitions), f"running {key}")
        try:
            outcome = run_job("ingest_job", (st, lang))
        except Exception as exc:  # keep going: one broken partition must not lose the others
            outcome = f"{type(exc).__name__}: {exc}"
        if isinstance(outcome, str):
            failures.append(f"{key}: {outcome}")
        else:
            reuse[key] = reuse_in_this_run(_reuse_counts(outcome), parsed_here.get(key))
        advance(label, i, len(partitions), key)
    finals: dict[str, dict] = {}
    with phase("index and ablation report (index_job)"):
        try:
            outcome = run_job("index_job", None)
        except Exception as exc:
            outcome = f"{type(exc).__name__}: {exc}"
    if isinstance(outcome, str):
        failures.append(f"index/report: {outcome}")
    else:
        finals = outcome
    elapsed = time.perf_counter() - t_start
    return sources, partitions, out, pcfg, elapsed, failures, reuse, finals


def _attempt(run_job, job_name: str, partition):
    """``run_job(job_name, partition)``, an exception turned into its one-line message (one broken run must not
    lose the others)."""
    try:
        return run_job(job_name, partition)
    except Exception as exc:
        return f"{type(exc).__name__}: {exc}"


def _materialized_metadata(events) -> dict[str, dict]:
    """asset key -> {metadata key: plain value} of the asset materialisation events of a Dagster run (the last one
    per asset; for the partitioned assets of one partition run, one per asset)."""
    from heritage_pipeline.defs.metadata import plain

    out: dict[str, dict] = {}
    for ev in events:
        mat = ev.event_specific_data.materialization
        out[mat.asset_key.to_user_string()] = {k: plain(v) for k, v in mat.metadata.items()}
    return out


def reuse_in_this_run(ingest: tuple[int, int], parse: tuple[int, int] | None) -> tuple[int, int]:
    """A partition's (assets reused, assets materialised) for the summary, counting what parse_job computed earlier
    in the same run as computed: ingest_job then reuses those assets (raw_sources, parsed_sections), and a cold run
    of a registry said "4 of 6 recomputed" although nothing was stored before it.

    Args:
        ingest: ingest_job's (reused, materialised) for the partition.
        parse: parse_job's (reused, materialised) in this run, or None when parse_job did not run for it.

    Returns:
        (reused, materialised) with the assets parse_job recomputed no longer counted as reused.
    """
    if parse is None:
        return ingest
    reused, materialised = ingest
    return max(0, reused - (parse[1] - parse[0])), materialised


def _reuse_counts(meta: dict[str, dict]) -> tuple[int, int]:
    """(assets whose stored output was reused, assets materialised) of one partition run's materialisation metadata:
    an asset's materialisation says ``reused: true``, or for the root asset ``raw_sources`` (which always reads the
    files) ``changed: false``."""
    return sum(1 for m in meta.values() if m.get("reused") is True or m.get("changed") is False), len(meta)


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
    verbose: int = 0


def _job_runner(spec: _RunSpec, defs, instance):
    """A function ``(job name, (source_type, language) or None) -> failure message or materialisation metadata``
    (:func:`_materialized_metadata`) that runs one job
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
                instance=instance, partition_key=key, run_config=run_config(spec.verbose), raise_on_error=False)
            return _materialized_metadata(res.get_asset_materialization_events()) if res.success else _first_failure(res)
        return run

    def run(job_name: str, partition) -> str | None:
        job = dg.build_reconstructable_job(
            "heritage_pipeline.definitions", "job_for",
            reconstructable_args=(job_name, spec.chunking, spec.pipeline, spec.data_dir, spec.output_dir, spec.executor))
        with dg.execute_job(job, instance=instance, tags=tags_of(partition), run_config=run_config(spec.verbose)) as res:
            return _materialized_metadata(res.get_asset_materialization_events()) if res.success else _first_failure(res)
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

    from heritage_pipeline.defs.partitions import partition_key_str
    from heritage_pipeline.index.sync import quarantine_records

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
    # quarantine.jsonl itself is written by the lancedb_index asset (index/sync.py), as in a UI-launched run
    records = quarantine_records(storage)
    from heritage_pipeline.sources.accounting import parsed_files_from_storage, summarize_inputs, text_quality_from_storage

    stored = parsed_files_from_storage(storage)
    parser_skips: dict[str, str] = {}  # written by parsed_sections: the reason `chunk` gives too (one wording)
    for f in sorted((storage / "skipped").glob("*/*.json")):
        try:
            parser_skips.update(json.loads(f.read_text(encoding="utf-8")))
        except (OSError, ValueError):
            pass
    inputs = summarize_inputs({s.path: (s.status, s.reason or parser_skips.get(s.path)
                                        or "skipped by its parser (parsed_sections' skipped_items)")
                               for s in sources}, stored, records)
    paths = {s.path for s in sources}  # stored documents of files that are gone are not reported
    quality = text_quality_from_storage(storage, [p for p in stored if p.path in paths])
    quality.unclosed_fence_chunks = {k: v for k, v in quality.unclosed_fence_chunks.items() if k in paths}
    # grouped reasons: one line per reason with a count and three examples; then unclosed fences, running lines
    for line in inputs.lines() + quality.lines():
        console.print(line, markup=False, highlight=False, soft_wrap=True)
    try:
        import lancedb

        db = lancedb.connect(str(out / "lancedb"))
        index_rows = str(db.open_table(pcfg.lancedb.table).count_rows())
    except Exception as exc:
        index_rows = f"unavailable ({type(exc).__name__})"
    left_out = _parts_left_out(storage, partitions)
    # the counts of the inputs summary above (one source: discovery and parser skips, whole files and parts)
    n_parts = sum(g.count for groups in inputs.quarantined_parts.values() for g in groups)
    console.print(f"final chunks: {total}; index rows: {index_rows}; quarantined: {inputs.n_quarantined} files + "
                  f"{n_parts} parts; skipped: {inputs.n_skipped} files"
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
