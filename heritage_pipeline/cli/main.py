"""Command line: ``heritage-pipeline run | chunk | search | serve | ablate | validate-config``.

Exit codes: 0 success (inputs that could not be processed are quarantined, not errors); 1 a pipeline step failed;
2 usage or configuration error.
"""

from __future__ import annotations

import argparse

from heritage_pipeline.core.config import (
    DEFAULT_CHUNKING_CONFIG,
    DEFAULT_PIPELINE_CONFIG,
    SOURCE_TYPES,
    ConfigError,
)

from .ablate import cmd_ablate
from .chunk import cmd_chunk
from .console import err
from .run import cmd_run
from .search import cmd_search
from .serve import cmd_serve
from .validate import cmd_validate


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="heritage-pipeline", description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="command", required=True)

    def common(sp):
        sp.add_argument("--config", default=str(DEFAULT_CHUNKING_CONFIG), help="chunking.yaml (default: configs/chunking.yaml)")
        sp.add_argument("--pipeline-config", default=str(DEFAULT_PIPELINE_CONFIG), help="pipeline.yaml (default: configs/pipeline.yaml)")
        sp.add_argument("-v", "--verbose", action="count", default=0,
                        help="show library warnings and INFO logs on stderr (run, chunk and ablate otherwise "
                             "write them only to their log file; -vv: DEBUG logs)")

    r = sub.add_parser("run", help="materialise every partition (ingest_job), then the index and report (index_job)")
    common(r)
    r.add_argument("--data-dir", help="data folder with raw/<source_type>/ and golden/<lang>/ (default: data)")
    r.add_argument("--out", help="output folder (default: data/output)")
    r.add_argument("--executor", choices=("in_process", "multiprocess", "celery"),
                   help="Dagster executor of the runs' steps (default: executor.kind in pipeline.yaml)")
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

    s = sub.add_parser("search", help="query the LanceDB index (through `serve` when it runs)")
    common(s)
    s.add_argument("query", nargs="?", help="the query (or --queries)")
    s.add_argument("--queries", metavar="FILE.jsonl",
                   help="batch: one JSON object per line with id, query and optional lang, k, mode, filters; "
                        "prints one JSON line per query with its ranked hits")
    s.add_argument("--k", type=int, default=5, help="number of hits (default: 5)")
    s.add_argument("--mode", choices=("hybrid", "vector", "fts"), default="hybrid",
                   help="retriever: hybrid (BM25 + vectors, default), vector or fts (BM25 only: no model loaded)")
    s.add_argument("--explain", action="store_true", help="show the BM25 and vector ranks behind each score")
    s.add_argument("--expand-tokens", type=int, default=0, metavar="N",
                   help="parent expansion: add each hit's neighbouring chunks of the same section up to N tokens")
    s.add_argument("--no-server", action="store_true", help="answer in-process even when `serve` runs")
    s.add_argument("--lang", help="filter on the chunk language")
    s.add_argument("--source-type", choices=SOURCE_TYPES, help="filter on the source type")
    s.add_argument("--custodian-type", help="filter on the custodian type code (e.g. M, L, A)")
    s.add_argument("--country-code", help="filter on the country code (e.g. NL)")
    s.add_argument("--data-tier", help="filter on the data tier (e.g. TIER_1_AUTHORITATIVE)")
    s.add_argument("--query-lang", help="full-text analyser language (stemming, stop words); default: --lang")
    s.add_argument("--out", help="output folder of the run whose index to search (default: data/output)")
    s.add_argument("--json", action="store_true", help="machine-readable output")
    s.set_defaults(func=cmd_search)

    sv = sub.add_parser("serve", help="HTTP search API on 127.0.0.1 with the index and model kept warm")
    common(sv)
    sv.add_argument("--port", type=int, default=0, help="port (default: 0, a free one; written to <out>/serve.json)")
    sv.add_argument("--out", help="output folder of the run whose index to serve (default: data/output)")
    sv.add_argument("--fts-only", action="store_true", help="do not load the embedding model at start")
    sv.set_defaults(func=cmd_serve)

    a = sub.add_parser("ablate", help="size x overlap grid on golden sets -> report")
    common(a)
    a.add_argument("--golden", action="append", required=True, help="a golden folder (docs/ + golden.jsonl); repeatable")
    a.add_argument("--distractors", help="folder whose Markdown files are all added to every language's index "
                   "(default: a fixed sample of ablation.distractor_chars characters of that language from the golden "
                   "folder's data root: docs, legal, FAQ)")
    a.add_argument("--max-questions", type=int, default=None, help="evaluate at most N questions per language")
    a.add_argument("--modes", default="hierarchical,sliding,hybrid",
                   help="comma-separated chunking modes (default: all three; `run` uses ablation.modes of pipeline.yaml)")
    a.add_argument("--sizes", help="comma-separated chunk sizes in cl100k tokens (default: ablation.sizes)")
    a.add_argument("--overlaps", help="comma-separated overlap ratios (default: ablation.overlaps)")
    a.add_argument("--retrievers", help="comma-separated retrievers: bm25, vector, hybrid (BM25 and vector fused by "
                   "reciprocal rank) (default: ablation.retrievers, all three)")
    a.add_argument("--distractor-chars", type=int, default=300_000,
                   help="characters of default distractor text per language, sampled from the data folder's docs, "
                        "legal and FAQ files (default: 300000, about 75,000 tokens: enough unrelated text that "
                        "retrieval is not trivial); 0: no distractors")
    a.add_argument("--cache", help="embedding cache file (default: <out>/embeddings.sqlite)")
    a.add_argument("--compare-embedders", action="store_true",
                   help="also compare embedders at each language's recommended setting (ablation.embedder_candidates, "
                        "default: MiniLM torch / ONNX int8 / model2vec and multilingual USE)")
    a.add_argument("--heritage", metavar="FOLDER",
                   help="also evaluate the heritage golden set in FOLDER (data/golden/heritage): per question family "
                        "and source type, beside a plain BM25 baseline; written to heritage.md/.json and ablation.md")
    a.add_argument("--heritage-data", metavar="DIR",
                   help="data root the heritage set's paths are relative to (default: $HERITAGE_SHARED_DATA or ../shared/data)")
    a.add_argument("--out", required=True, help="report folder")
    a.set_defaults(func=cmd_ablate)

    v = sub.add_parser("validate-config", help="validate chunking.yaml and pipeline.yaml")
    common(v)
    v.set_defaults(func=cmd_validate)
    return p


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    from heritage_pipeline.core.cpus import limit_process_threads

    limit_process_threads()  # before torch / tokenizers / BLAS start their pools: threads follow the usable cores


    if getattr(args, "verbose", 0):
        import os

        os.environ["LANCEDB_LOG"] = os.environ["LANCE_LOG"] = "warn"  # read when lancedb is first imported
    try:
        return int(args.func(args) or 0)
    except ConfigError as exc:
        err.print(f"[red]configuration error[/red]\n{exc}")
        return 2
    except FileNotFoundError as exc:
        err.print(f"[red]error[/red]: {exc}")
        return 2

