"""``heritage-pipeline chunk``: files -> parsed, chunked, enriched, deduplicated JSONL.
"""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

from heritage_pipeline.core.config import (
    ConfigError,
    load_chunking_config,
    load_pipeline_config,
)

from .console import console, err


# ---------------------------------------------------------------------------------------------------------- chunk
def _expand(paths: list[str]) -> list[Path]:
    """The input files of ``paths`` (folders expanded to their supported files), each once, in order. Raises
    FileNotFoundError naming a path that does not exist (a usage error, not a bad input)."""
    from heritage_pipeline.sources.discovery import iter_files

    out: dict[Path, Path] = {}
    for p in map(Path, paths):
        if p.is_dir():  # every file: one of an unsupported type is skipped with that reason, never dropped silently
            found = iter_files(p)
        elif p.exists():
            found = [p]
        else:
            raise FileNotFoundError(f"{p}: no such file or directory")
        for f in found:
            out.setdefault(f.resolve(), f)  # the same file named twice (or via its folder) is read once
    return list(out.values())


def cmd_chunk(args: argparse.Namespace) -> int:
    """``chunk PATH... --out OUT.jsonl``: usage errors first (exit 2), then the pipeline with library output in
    ``OUT.log`` (see :func:`_chunk_files`)."""
    try:
        cfg = load_config(args)
    except ConfigError as exc:
        err.print(str(exc), markup=False, highlight=False)
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
    out_path = Path(args.out).resolve()
    files = [f for f in files if f.resolve() != out_path]  # our own output, when it sits in an input folder
    if not files:
        err.print("no input files")
        return 2
    from .console import ProgressDisplay, quiet_output

    out = Path(args.out)
    log_path = out.with_name(out.stem + ".log")
    with quiet_output(log_path, getattr(args, "verbose", 0)):
        code = _chunk_files(args, files, cfg, pcfg, out, ProgressDisplay())
    console.print(f"library warnings and logs: {log_path}", highlight=False, soft_wrap=True)
    return code


def _chunk_files(args: argparse.Namespace, files: list[Path], cfg, pcfg, out: Path, display) -> int:
    """The ``chunk`` pipeline over ``files``: read, parse, chunk, enrich, deduplicate, write; each phase reported as
    progress (:mod:`heritage_pipeline.core.progress`) on ``display`` (a ``ProgressDisplay``, closed before the input
    accounting is printed). Returns the exit code (0)."""
    from heritage_pipeline import stages as P
    from heritage_pipeline.sources.accounting import parsed_file, summarize_inputs, text_quality

    with display:
        sources, parsed, items, kept, log, cfg, notice = _process(args, files, cfg, pcfg)
    n = P.write_jsonl(kept, out, cfg.outputs.fields)
    qpath = out.with_name(out.stem + ".quarantine.jsonl") if out.suffix == ".jsonl" else Path(str(out) + ".quarantine.jsonl")
    P.write_quarantine(parsed.quarantined, qpath)
    if log:
        import pyarrow.parquet as pq

        from heritage_pipeline.dedup.minhash import log_to_table

        pq.write_table(log_to_table(log), out.with_name(out.stem + ".dedup_log.parquet"))
    summary = summarize_inputs({s.path: (s.status, _parse_reason(parsed.accounted.get(s.path, ""), s.reason))
                                for s in sources}, [parsed_file(d) for d in parsed.docs], parsed.quarantined)
    for line in summary.lines() + text_quality(items, [parsed_file(d) for d in parsed.docs]).lines():
        console.print(line, markup=False, highlight=False, soft_wrap=True)
    console.print(f"{len(items)} chunks, {len(log)} dropped as duplicates, {n} written to {out}")
    if (gline := gazetteer_line(cfg, pcfg.data_path)) is not None:
        console.print(gline, markup=False, highlight=False, soft_wrap=True)
    if notice:
        console.print(notice, markup=False, highlight=False, soft_wrap=True)
    if parsed.quarantined:
        console.print(f"quarantine: {qpath}")
    return 0


def _process(args: argparse.Namespace, files: list[Path], cfg, pcfg):
    """Read, parse, chunk, enrich and deduplicate ``files``; returns (sources, parsed, items, kept, dedup log, cfg,
    notice), ``notice`` the line saying that prose chunks got RAKE keywords instead of the configured
    embedding-ranked ones (no model loaded), else None."""
    from heritage_pipeline import stages as P
    from heritage_pipeline.core.progress import advance, phase
    from heritage_pipeline.core.storage import OutputLayout
    from heritage_pipeline.embed.cache import EmbeddingCache
    from heritage_pipeline.embed.embedders import make_embedder
    from heritage_pipeline.sources.discovery import load_source

    from heritage_pipeline.enrich.keywords import VECTOR_METHODS, is_registry_row
    from heritage_pipeline.enrich.langid import policy_from
    from heritage_pipeline.sources.discovery import resolve_source_languages

    sources = []
    advance("reading files", 0, len(files))
    for i, f in enumerate(files, 1):
        sources.append(load_source(f, source_type=args.source_type, lang=args.lang, policy=policy_from(cfg)))
        advance("reading files", i, len(files), f.name)
    if not args.lang:  # a file with no confident detection: its folder's language or the configured default
        resolve_source_languages(sources, policy_from(cfg), absolute=True)
    needs_model = (cfg.context.keywords.method in VECTOR_METHODS or cfg.context.section_embedding) \
        and not args.no_model
    # Registry rows need no model (their keywords are their slot values, enrich/keywords.py): load it only when a
    # source of another type is there, in a background thread while parsing and chunking run (~8 s of model load).
    loader = None
    if needs_model and any(s.status == "ok" and s.source_type != "csv_registry" for s in sources):
        from concurrent.futures import ThreadPoolExecutor

        pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="model-load")
        loader = pool.submit(make_embedder, pcfg.embedder, model_cache=OutputLayout(pcfg.output_path).model_cache)
        pool.shutdown(wait=False)
    with phase("parsing", f"{len(sources)} files"):
        parsed = P.parse_sources(sources, cfg)
    with phase("chunking", f"{len(parsed.docs)} documents"):
        items = P.chunk_documents(parsed.docs, cfg)
    prose = sum(1 for c in items if not is_registry_row(c))
    embedder = loader.result() if (loader is not None and prose) else None
    notice = None
    if embedder is None and cfg.context.keywords.method in VECTOR_METHODS:
        if prose:  # (registry rows take their slot values as keywords whatever the method: nothing to say for them)
            why = "--no-model" if args.no_model else "no model is loaded for an input of CSV registries only"
            notice = (f"keywords: {prose} prose chunks got RAKE keywords, not context.keywords.method "
                      f"{cfg.context.keywords.method!r} ({why}); drop --no-model for embedding-ranked keywords")
            logging.getLogger("heritage_pipeline.chunk").warning(notice)
        cfg = cfg.model_copy(update={"context": cfg.context.model_copy(update={
            "keywords": cfg.context.keywords.model_copy(update={"method": "rake"})})})
    cache = EmbeddingCache(args.cache) if (embedder is not None and args.cache) else None
    with phase("enriching", f"{len(items)} chunks"):
        P.enrich_stage(items, cfg, embedder, pcfg.embedder, cache, data_dir=pcfg.data_path)
    with phase("deduplicating", f"{len(items)} chunks"):
        kept, log = P.dedup_stage(items, cfg)
    return sources, parsed, items, kept, log, cfg, notice


def gazetteer_line(cfg, data_dir) -> str | None:
    """The summary line naming the heritage gazetteer the enrichment used (trial defect 13: ``chunk`` on a user's
    files silently read the repository's bundled registries, e.g. ``wikidata_isil_lookup_sample.tsv``, and named and
    typed a user's ISIL row from it): its files, how many institutions, and the keys that change it.

    Args:
        cfg: the chunking config (``context.entities``).
        data_dir: the folder relative gazetteer paths resolve against (pipeline.yaml ``data_dir``).
    Returns:
        The line, or None when heritage annotation is off (``context.entities.heritage: false``).
    """
    from heritage_pipeline.enrich.gazetteer import _gazetteer_paths, default_gazetteer

    ent = cfg.context.entities
    if not ent.heritage:
        return None
    paths = [p for p in _gazetteer_paths(ent.gazetteer, data_dir) if Path(p).exists()]
    n = len(default_gazetteer(ent.gazetteer, data_dir)) if paths else 0
    return (f"heritage gazetteer: {n} institutions from {', '.join(paths) or 'no existing file'} "
            f"(context.entities.gazetteer, relative to pipeline.yaml data_dir {data_dir}; names and custodian types "
            "of mentions and ISIL rows come from it; context.entities.heritage: false turns it off)")


def _parse_reason(accounted: str, discovery_reason: str) -> str:
    """The reason of a file's status: ``stages.parse_sources`` records ``skipped: <why>`` / ``quarantined: <why>``."""
    status, _, why = accounted.partition(": ")
    return why if status in ("skipped", "quarantined") and why else discovery_reason


def _override_args(args: argparse.Namespace) -> list[tuple[str, str]]:
    """``(dotted key, the argument as typed)`` of every chunking override on the command line."""
    out = []
    if getattr(args, "mode", None):
        out.append(("mode", f"--mode {args.mode}"))
    if getattr(args, "domain", None):
        out.append(("domains", f"--domain {args.domain}"))
    for item in getattr(args, "set", None) or []:
        out.append((item.partition("=")[0].strip(), f"--set {item}"))
    return out


def load_config(args: argparse.Namespace):
    """The chunking config of ``chunk``: the file (``--config``) with ``--mode/--domain/--set`` applied.

    Args:
        args: the parsed ``chunk`` options.

    Returns:
        The validated :class:`~heritage_pipeline.core.config.ChunkingConfig`.

    Raises:
        ConfigError: an invalid file (the message names the file and key) or an invalid override: then the message
            names the command-line argument(s) at fault (``--set sliding_window.overlap_ratio=0.9``), not the
            file, which is valid.
    """
    overrides = chunk_overrides(args)
    try:
        return load_chunking_config(args.config, **overrides)
    except ConfigError as exc:
        if not overrides:
            raise
        load_chunking_config(args.config)  # the file itself is invalid: its own error, naming it, is raised here
        lines = str(exc).splitlines()
        bad = [ln.strip().split(":", 1)[0].split(" = ", 1)[0] for ln in lines[1:]]
        named = [arg for key, arg in _override_args(args)
                 if any(b == key or b.startswith(key + ".") or key.startswith(b + ".") for b in bad)]
        named = named or [arg for _, arg in _override_args(args)]
        raise ConfigError("\n".join([f"{', '.join(named)}: invalid override (the configuration file "
                                      f"{args.config or 'configs/chunking.yaml'} itself is valid)", *lines[1:]])) from None


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
