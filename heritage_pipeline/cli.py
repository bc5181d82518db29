"""Command line: ``heritage-pipeline run | chunk | search | ablate | validate-config``.

Exit codes: 0 success (inputs that could not be processed are quarantined, not errors); 1 a pipeline step failed;
2 usage or configuration error.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
# LanceDB's Rust log: warnings such as "No existing dataset ... will be created" or the hybrid-query note that
# _score is not selected are not about the user's data; errors still show (LANCE_LOG=warn brings them back)
os.environ.setdefault("LANCE_LOG", "error")

import warnings  # noqa: E402

# Library chatter that says nothing about the user's data: Dagster beta/preview notices for features we rely on
# deliberately (data versions), and scikit-learn's note that multi-word stop-word entries tokenize differently.
warnings.filterwarnings("ignore", message=r".*is currently in beta.*")
warnings.filterwarnings("ignore", message=r".*stop_words may be inconsistent.*")

from rich.console import Console  # noqa: E402
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn  # noqa: E402
from rich.table import Table  # noqa: E402

from .config import DEFAULT_CHUNKING_CONFIG, DEFAULT_PIPELINE_CONFIG, SOURCE_TYPES, ConfigError, load_chunking_config, load_pipeline_config  # noqa: E402

# Wide consoles when not on a terminal (CI logs): tables are not wrapped mid-row.
console = Console(stderr=False, width=None if sys.stdout.isatty() else 160)
err = Console(stderr=True, width=None if sys.stderr.isatty() else 160)
QUIET_RUN_CONFIG = {"loggers": {"console": {"config": {"log_level": "WARNING"}}}}


def _progress() -> Progress:
    return Progress(TextColumn("{task.description}"), BarColumn(), TextColumn("{task.completed}/{task.total}"),
                    TimeElapsedColumn(), console=err, transient=False)


# ------------------------------------------------------------------------------------------------------------ run
def cmd_run(args: argparse.Namespace) -> int:
    """Materialise every partition of the partitioned assets, then ``lancedb_index`` and ``ablation_report``.

    Partitions: every (source_type, language) found in the raw files, plus every partition stored by an earlier run
    (so that one whose files were removed or moved is emptied, not left in the index). Unchanged partitions reuse
    their stored outputs (see :mod:`heritage_pipeline.incremental`). Executor: ``executor`` in pipeline.yaml or
    ``--executor``; ``--parallel-runs`` partition runs at once.
    """
    import dagster as dg

    from .defs.assets import discover_once
    from .defs.executors import parallel_runs

    _restore_termination_signals()
    from .defs.partitions import language_partitions, partition_key_str
    from .definitions import build_definitions

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
    partitions = sorted({(s.source_type, s.lang) for s in sources} | _stored_partitions(out / "storage"))
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
            from .defs.executors import worker_env

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

        from .defs.executors import worker_env

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


def _partition_runner(spec: _RunSpec, instance, assets=None, resources=None):
    """A function (source_type, language) -> None or a failure message that materialises one partition: in this
    process for the in-process executor, else through a reconstructable ``ingest_job`` (multiprocess, Dask)."""
    import dagster as dg

    from .defs.automation import PARTITIONED_KEYS
    from .defs.partitions import partition_key_str

    if spec.executor == "in_process":
        if assets is None:
            from .definitions import build_definitions

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

    from .defs.partitions import partition_key_str

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

    from .defs.partitions import partition_key_str
    from .models import QuarantineRecord
    from .pipeline import write_quarantine

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
    if records or skipped:
        q = Table(title="Quarantined and skipped inputs")
        q.add_column("path")
        q.add_column("status")
        q.add_column("reason")
        for r in records:
            q.add_row(r.path, "quarantined", r.reason)
        for s in skipped:
            q.add_row(s.path, "skipped", s.reason)
        console.print(q)
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


# ---------------------------------------------------------------------------------------------------------- chunk
def _expand(paths: list[str]) -> list[Path]:
    """The input files of ``paths`` (folders expanded to their supported files), each once, in order. Raises
    FileNotFoundError naming a path that does not exist (a usage error, not a bad input)."""
    from .discovery import EXTENSION_TYPES, is_ignored

    out: dict[Path, Path] = {}
    for p in map(Path, paths):
        if p.is_dir():
            found = sorted(f for f in p.rglob("*") if f.is_file() and f.suffix.lower() in EXTENSION_TYPES
                           and not is_ignored(f.name))
        elif p.exists():
            found = [p]
        else:
            raise FileNotFoundError(f"{p}: no such file or directory")
        for f in found:
            out.setdefault(f.resolve(), f)  # the same file named twice (or via its folder) is read once
    return list(out.values())


def cmd_chunk(args: argparse.Namespace) -> int:
    from . import pipeline as P
    from .discovery import load_source
    from .embedding import EmbeddingCache, make_embedder

    try:
        cfg = load_chunking_config(args.config, **chunk_overrides(args))
    except ConfigError as exc:
        err.print(str(exc))
        return 2
    pcfg = load_pipeline_config(args.pipeline_config)
    if Path(args.out).is_dir():
        err.print(f"--out {args.out}: is a folder; give the path of the JSONL file to write")
        return 2
    try:
        files = _expand(args.paths)
    except FileNotFoundError as exc:
        err.print(str(exc))
        return 2
    if not files:
        err.print("no input files")
        return 2
    sources = []
    with _progress() as progress:
        task = progress.add_task("reading", total=len(files))
        for f in files:
            sources.append(load_source(f, source_type=args.source_type, lang=args.lang))
            progress.advance(task)
    parsed = P.parse_sources(sources, cfg)
    items = P.chunk_documents(parsed.docs, cfg)
    needs_model = cfg.context.keywords.method == "keybert" or cfg.context.section_embedding
    embedder = make_embedder(pcfg.embedder) if (needs_model and items and not args.no_model) else None
    if embedder is None and cfg.context.keywords.method == "keybert":
        cfg = cfg.model_copy(update={"context": cfg.context.model_copy(update={
            "keywords": cfg.context.keywords.model_copy(update={"method": "rake"})})})
    cache = EmbeddingCache(args.cache) if (embedder is not None and args.cache) else None
    P.enrich_stage(items, cfg, embedder, pcfg.embedder, cache, data_dir=pcfg.data_path)
    kept, log = P.dedup_stage(items, cfg)
    out = Path(args.out)
    n = P.write_jsonl(kept, out, cfg.outputs.fields)
    qpath = out.with_name(out.stem + ".quarantine.jsonl") if out.suffix == ".jsonl" else Path(str(out) + ".quarantine.jsonl")
    P.write_quarantine(parsed.quarantined, qpath)
    if log:
        from .dedup import log_to_table
        import pyarrow.parquet as pq

        pq.write_table(log_to_table(log), out.with_name(out.stem + ".dedup_log.parquet"))
    by_status = Counter(v.split(":")[0] for v in parsed.accounted.values())
    console.print(f"{len(files)} input(s): {by_status.get('parsed', 0)} parsed, {by_status.get('skipped', 0)} skipped, "
                  f"{by_status.get('quarantined', 0)} quarantined; {len(items)} chunks, {len(log)} dropped as duplicates, "
                  f"{n} written to {out}")
    for q in parsed.quarantined:
        err.print(f"[yellow]quarantined[/yellow] {q.path}: {q.reason}")
    for s in parsed.skipped:
        err.print(f"[dim]skipped[/dim] {s}")
    if parsed.quarantined:
        console.print(f"quarantine: {qpath}")
    return 0


def chunk_overrides(args: argparse.Namespace) -> dict[str, object]:
    """chunking.yaml overrides from ``chunk --mode/--domain/--set``: ``--domain`` applies one preset to every file
    (the path rules are switched off); ``--set key=value`` takes any dotted key, the value parsed as YAML."""
    import yaml

    out: dict[str, object] = {}
    if getattr(args, "mode", None):
        out["mode"] = args.mode
    if getattr(args, "domain", None):
        out["domains.default"] = args.domain
        out["domains.rules"] = []
    for item in getattr(args, "set", None) or []:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"--set {item!r}: expected KEY=VALUE, e.g. --set sliding_window.size_tokens=600")
        out[key.strip()] = yaml.safe_load(value)
    return out


# --------------------------------------------------------------------------------------------------------- search
def cmd_search(args: argparse.Namespace) -> int:
    from .embedding import make_embedder
    from .index import search

    pcfg = load_pipeline_config(args.pipeline_config).with_paths(output_dir=args.out)
    uri = str(pcfg.output_path / "lancedb") if args.out else pcfg.resolve(pcfg.lancedb.uri)
    embedder = make_embedder(pcfg.embedder) if args.mode != "fts" else None
    filters = {k: v for k, v in {"lang": args.lang, "source_type": args.source_type, "custodian_type": args.custodian_type,
                                 "country_code": args.country_code, "data_tier": args.data_tier}.items() if v}
    lc = pcfg.lancedb
    try:
        hits = search(uri, lc.table, args.query, mode=args.mode, k=args.k, embedder=embedder, filters=filters,
                      fts_lang=args.query_lang, rrf_k=lc.rrf_k, vector_weight=lc.vector_weight, fts_weight=lc.fts_weight,
                      candidates=lc.candidates)
    except FileNotFoundError as exc:
        err.print(str(exc))
        return 2
    except ValueError as exc:
        err.print(f"[red]error[/red]: {exc}")
        return 2
    if args.json:
        print(json.dumps(hits, ensure_ascii=False, indent=1))
        return 0
    t = Table(title=f"{args.mode} search: {args.query}")
    for col in ("#", "score", "id", "anchors", "snippet"):
        t.add_column(col)
    for i, h in enumerate(hits, 1):
        snippet = " ".join(h["text"].split())[:160]
        t.add_row(str(i), f"{h['score']:.4f}", h["id"], " › ".join(h["anchors"] or []), snippet)
    console.print(t)
    if not hits:
        console.print("no hits")
    return 0


# --------------------------------------------------------------------------------------------------------- ablate
def cmd_ablate(args: argparse.Namespace) -> int:
    from .ablation import default_distractors, distractor_docs, run_ablation
    from .embedding import EmbeddingCache, make_embedder
    from .evaluation import load_golden

    cfg = load_chunking_config(args.config)
    pcfg = load_pipeline_config(args.pipeline_config)
    update: dict = {"max_questions_per_language": args.max_questions}
    for key in ("modes", "sizes", "overlaps", "retrievers"):
        value = getattr(args, key)
        if value:
            cast = float if key == "overlaps" else int if key == "sizes" else str
            update[key] = [cast(v) for v in value.split(",") if v]
    if args.distractor_chars is not None:
        update["distractor_chars"] = args.distractor_chars
    if args.compare_embedders and not pcfg.ablation.embedder_candidates:
        from .bench_embed import CANDIDATES

        update["embedder_candidates"] = [c.model_dump() for c in CANDIDATES.values()]
    abl = type(pcfg.ablation).model_validate({**pcfg.ablation.model_dump(), **update})
    golden: dict[str, Path] = {}
    for g in args.golden:
        qs, _ = load_golden(g, limit=1)
        if not qs:
            err.print(f"{g}: golden set is empty")
            return 2
        golden[qs[0].lang] = Path(g)
    distractors = {}
    for lang, folder in golden.items():
        if args.distractors:
            root = Path(args.distractors)
            if not root.is_dir():
                err.print(f"{root}: --distractors is not a folder")
                return 2
            distractors[lang] = distractor_docs(sorted(root.rglob("*.md")), None, None, root)
        else:  # a fixed sample of the data folder's other corpora of this language (<golden>/../..)
            distractors[lang] = default_distractors(folder.resolve().parent.parent, lang, abl.distractor_chars,
                                                    abl.distractor_corpora, abl.distractor_max_file_chars)
        n_chars = sum(len(d.text) for d in distractors[lang])
        err.print(f"{lang}: {len(distractors[lang])} distractor documents, {n_chars} characters")
    embedder = make_embedder(pcfg.embedder)
    out = Path(args.out)
    cache = EmbeddingCache(args.cache or out / "embeddings.sqlite")
    t0 = time.perf_counter()
    try:
        result = run_ablation(golden, distractors, cfg, abl, embedder, cache, out, progress=lambda m: err.print(m),
                              lcfg=pcfg.lancedb, ecfg=pcfg.embedder)
    finally:
        cache.close()
    print(result.markdown, flush=True)
    console.print(f"embedding cache: {cache.hits} hits, {cache.misses} misses (hit rate {cache.hit_rate:.1%}); "
                  f"wall time {time.perf_counter() - t0:.0f} s")
    console.print(f"report: {', '.join(result.paths.values())}")
    return 0


# ------------------------------------------------------------------------------------------------ validate-config
def cmd_validate(args: argparse.Namespace) -> int:
    ok = True
    for path, loader in ((args.config, load_chunking_config), (args.pipeline_config, load_pipeline_config)):
        try:
            loader(path)
            console.print(f"{path}: OK")
        except ConfigError as exc:
            err.print(str(exc))
            ok = False
    return 0 if ok else 2


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="heritage-pipeline", description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="command", required=True)

    def common(sp):
        sp.add_argument("--config", default=str(DEFAULT_CHUNKING_CONFIG), help="chunking.yaml (default: configs/chunking.yaml)")
        sp.add_argument("--pipeline-config", default=str(DEFAULT_PIPELINE_CONFIG), help="pipeline.yaml (default: configs/pipeline.yaml)")

    r = sub.add_parser("run", help="materialise every asset and partition in-process (the main job)")
    common(r)
    r.add_argument("--data-dir", help="data folder with raw/<source_type>/ and golden/<lang>/ (default: data)")
    r.add_argument("--out", help="output folder (default: data/output)")
    r.add_argument("--executor", choices=("in_process", "multiprocess", "dask"),
                   help="Dagster executor for the partition runs (default: executor.kind in pipeline.yaml)")
    r.add_argument("--parallel-runs", type=int, help="partition runs at once (default: executor.parallel_runs)")
    r.add_argument("--dask-address", help="Dask scheduler address (default: executor.dask_address, else a local cluster)")
    r.set_defaults(func=cmd_run)

    c = sub.add_parser("chunk", help="parse, chunk, enrich and deduplicate files into JSONL")
    common(c)
    c.add_argument("paths", nargs="+", help="files or folders")
    c.add_argument("--out", required=True, help="output JSONL")
    c.add_argument("--source-type", choices=SOURCE_TYPES, help="force the source type (default: from the extension)")
    c.add_argument("--lang", help="force the language code (default: detected)")
    c.add_argument("--no-model", action="store_true", help="no embedding model: RAKE keywords, no section_emb")
    c.add_argument("--cache", help="embedding cache file (SQLite) to reuse across calls")
    c.add_argument("--mode", choices=("hierarchical", "sliding", "hybrid"), help="override chunking.yaml `mode`")
    c.add_argument("--domain", choices=("tech", "legal", "faq"),
                   help="use this domain preset (size and overlap) for every file instead of the path rules")
    c.add_argument("--set", action="append", metavar="KEY=VALUE",
                   help="override any chunking.yaml key, e.g. --set sliding_window.size_tokens=600 (repeatable)")
    c.set_defaults(func=cmd_chunk)

    s = sub.add_parser("search", help="query the LanceDB index")
    common(s)
    s.add_argument("query")
    s.add_argument("--k", type=int, default=5)
    s.add_argument("--mode", choices=("hybrid", "vector", "fts"), default="hybrid")
    s.add_argument("--lang", help="filter on the chunk language")
    s.add_argument("--source-type", choices=SOURCE_TYPES, help="filter on the source type")
    s.add_argument("--custodian-type", help="filter on the custodian type code (e.g. M, L, A)")
    s.add_argument("--country-code", help="filter on the country code (e.g. NL)")
    s.add_argument("--data-tier", help="filter on the data tier (e.g. TIER_1_AUTHORITATIVE)")
    s.add_argument("--query-lang", help="full-text analyser language (stemming, stop words); default: --lang")
    s.add_argument("--out", help="output folder of the run whose index to search (default: data/output)")
    s.add_argument("--json", action="store_true", help="machine-readable output")
    s.set_defaults(func=cmd_search)

    a = sub.add_parser("ablate", help="size x overlap grid on golden sets -> report")
    common(a)
    a.add_argument("--golden", action="append", required=True, help="a golden folder (docs/ + golden.jsonl); repeatable")
    a.add_argument("--distractors", help="folder whose Markdown files are all added to every language's index "
                   "(default: a fixed sample of ablation.distractor_chars characters of that language from the golden "
                   "folder's data root: docs, legal, FAQ)")
    a.add_argument("--max-questions", type=int, default=None, help="evaluate at most N questions per language")
    a.add_argument("--modes", default="hierarchical,sliding,hybrid",
                   help="comma-separated chunking modes (default: all three; the bundled run's asset uses ablation.modes)")
    a.add_argument("--sizes", help="comma-separated chunk sizes in cl100k tokens (default: ablation.sizes)")
    a.add_argument("--overlaps", help="comma-separated overlap ratios (default: ablation.overlaps)")
    a.add_argument("--retrievers", help="comma-separated retrievers: bm25, vector, hybrid (default: all)")
    a.add_argument("--distractor-chars", type=int, default=300_000,
                   help="characters of default distractors per language (default: 300000, the issue-6 protocol)")
    a.add_argument("--cache", help="embedding cache file (default: <out>/embeddings.sqlite)")
    a.add_argument("--compare-embedders", action="store_true",
                   help="also compare embedders at each language's recommended setting (ablation.embedder_candidates, "
                        "default: MiniLM torch / ONNX int8 / model2vec and multilingual USE)")
    a.add_argument("--out", required=True, help="report folder")
    a.set_defaults(func=cmd_ablate)

    v = sub.add_parser("validate-config", help="validate chunking.yaml and pipeline.yaml")
    common(v)
    v.set_defaults(func=cmd_validate)
    return p


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except ConfigError as exc:
        err.print(f"[red]configuration error[/red]\n{exc}")
        return 2
    except FileNotFoundError as exc:
        err.print(f"[red]error[/red]: {exc}")
        return 2


if __name__ == "__main__":
    sys.exit(main())
