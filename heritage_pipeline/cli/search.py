"""``heritage-pipeline search``: query the LanceDB index.
"""

from __future__ import annotations

import argparse
import json

from rich.table import Table

from heritage_pipeline.core.config import (
    load_pipeline_config,
)

from .console import console, err


# --------------------------------------------------------------------------------------------------------- search
def cmd_search(args: argparse.Namespace) -> int:
    from heritage_pipeline.embed.embedders import make_embedder
    from heritage_pipeline.index.search import search

    pcfg = load_pipeline_config(args.pipeline_config).with_paths(output_dir=args.out)
    uri = str(pcfg.output_path / "lancedb") if args.out else pcfg.resolve(pcfg.lancedb.uri)
    embedder = make_embedder(pcfg.embedder, model_cache=pcfg.output_path / "cache" / "models") if args.mode != "fts" else None
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
