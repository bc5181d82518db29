"""``heritage-pipeline search``: query the LanceDB index, one query or a JSON Lines batch, in-process or through a
running ``heritage-pipeline serve``.

Imports are deferred: answering through the server needs only the standard library; in-process full-text search
imports LanceDB; the embedding model (torch) is loaded only for ``vector``/``hybrid`` queries.
"""

from __future__ import annotations

import argparse
import json
import sys

from .console import console, err

FILTER_ARGS = ("lang", "source_type", "custodian_type", "country_code", "data_tier")


def _filters(args) -> dict[str, str]:
    return {k: getattr(args, k) for k in FILTER_ARGS if getattr(args, k, None) and k != "lang"}


def read_queries(path: str) -> list[dict]:
    """Queries of a JSON Lines file: one object per line with ``query`` (required), ``id`` (default: the line
    number), optional ``lang``, ``k``, ``mode`` and ``filters`` (``{column: value}``). Blank lines are skipped.

    Returns:
        Request dicts; a line that is not such an object becomes ``{"id", "error"}`` naming the file and line.
    Raises:
        FileNotFoundError: the file does not exist.
    """
    out = []
    with open(path, encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as exc:
                out.append({"id": str(n), "error": f"{path}:{n}: not JSON ({exc.msg})"})
                continue
            if not isinstance(obj, dict) or not isinstance(obj.get("query"), str) or not obj["query"].strip():
                out.append({"id": str(obj.get("id", n)) if isinstance(obj, dict) else str(n),
                            "error": f"{path}:{n}: needs an object with a non-empty string 'query'"})
                continue
            if "filters" in obj and not isinstance(obj["filters"], dict):
                out.append({"id": str(obj.get("id", n)), "error": f"{path}:{n}: 'filters' must be an object"})
                continue
            out.append({**obj, "id": str(obj.get("id", n))})
    return out


def _request(args, q: dict) -> dict:
    return {"query": q["query"], "k": int(q.get("k", args.k)), "mode": q.get("mode", args.mode),
            "lang": q.get("lang", args.lang), "fts_lang": q.get("fts_lang", args.query_lang),
            "filters": {**_filters(args), **(q.get("filters") or {})}, "explain": args.explain,
            "expand_tokens": args.expand_tokens}


class _Local:
    """In-process answering (index opened once for the whole batch)."""

    def __init__(self, pcfg):
        from heritage_pipeline.index.api import Searcher

        self.s = Searcher(pcfg.resolve(pcfg.lancedb.uri), pcfg.lancedb.table, pipeline_config=pcfg)

    def __call__(self, req: dict) -> list[dict]:
        return [h.to_dict() for h in self.s.search(req["query"], k=req["k"], mode=req["mode"], lang=req["lang"],
                                                   filters=req["filters"] or None, fts_lang=req["fts_lang"],
                                                   explain=req["explain"], expand_tokens=req["expand_tokens"])]


def cmd_search(args: argparse.Namespace) -> int:
    from heritage_pipeline.core.config import load_pipeline_config

    if bool(args.query) == bool(args.queries):
        err.print("[red]error[/red]: give a query or --queries FILE.jsonl (not both)")
        return 2
    pcfg = load_pipeline_config(args.pipeline_config)
    if args.out:
        pcfg = pcfg.with_paths(output_dir=args.out)
    uri = pcfg.resolve(pcfg.lancedb.uri)
    answer = None
    if not args.no_server:
        from .serve import client_for

        answer = client_for(pcfg.output_path, uri, pcfg.lancedb.table)
    try:
        if answer is None:
            answer = _Local(pcfg)
        if args.queries:
            for q in read_queries(args.queries):
                if "error" in q:
                    print(json.dumps({"id": q["id"], "error": q["error"], "hits": []}, ensure_ascii=False))
                    continue
                try:
                    hits = answer(_request(args, q))
                    print(json.dumps({"id": q["id"], "query": q["query"], "hits": hits}, ensure_ascii=False))
                except ValueError as exc:
                    print(json.dumps({"id": q["id"], "query": q["query"], "error": str(exc), "hits": []},
                                     ensure_ascii=False))
            return 0
        hits = answer(_request(args, {"query": args.query}))
    except FileNotFoundError as exc:
        err.print(f"[red]error[/red]: {exc}")
        return 2
    except ValueError as exc:
        err.print(f"[red]error[/red]: {exc}")
        return 2
    if args.json:
        print(json.dumps(hits, ensure_ascii=False, indent=1))
        return 0
    print_hits(args.query, args.mode, hits, explain=args.explain)
    served = getattr(answer, "base_url", None)
    console.print(f"answered by heritage-pipeline serve at {served}" if served else
                  "answered in-process (no heritage-pipeline serve running for this index; start one for fast calls)",
                  style="dim")
    return 0


SCORE_NAME = {"fts": "BM25", "vector": "cosine", "hybrid": "RRF"}


def explain_score(mode: str, h: dict) -> str:
    """A hit's score in words: the measure, its value, and the tier that placed it (when one did)."""
    s = f"{SCORE_NAME[mode]} {h['score']:.4f}" if mode != "fts" else f"BM25 {h['score']:.2f}"
    if h.get("tier"):
        s += f" · {h['tier']} match"
    return s


def print_hits(query: str, mode: str, hits: list[dict], *, explain: bool = False) -> None:
    """Print hits as a table: rank, explained score, full id, language, source type, where (anchors / row), snippet;
    with ``explain`` the BM25 and vector ranks behind each score."""
    from rich.table import Table

    t = Table(title=f"{mode} search: {query}", show_lines=False)
    t.add_column("#", justify="right")
    t.add_column("score")
    if explain:
        t.add_column("BM25 rank", justify="right")
        t.add_column("vector rank", justify="right")
    t.add_column("id", overflow="fold")
    t.add_column("lang")
    t.add_column("source type")
    t.add_column("snippet", overflow="fold")
    for h in hits:
        snippet = " ".join(h["text"].split())[:160]
        row = [str(h["rank"]), explain_score(mode, h)]
        if explain:
            e = h.get("explain") or {}
            row += [str(e.get("bm25_rank") or "-"), str(e.get("vector_rank") or "-")]
        row += [h["id"], h.get("lang") or "", h.get("source_type") or "", snippet]
        t.add_row(*row)
    console.print(t)
    if not hits:
        console.print("no hits")
    else:
        console.print(f"score: {SCORE_NAME[mode]}" + (" = fts_weight/(rrf_k + BM25 rank) + vector_weight/(rrf_k + vector rank)"
                                                     if mode == "hybrid" else "") +
                      "; an identifier match (exact code in the query) or a field match (a named place) ranks first",
                      style="dim")
    sys.stdout.flush()
