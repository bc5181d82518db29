"""Evaluation on the heritage golden set (``data/golden/heritage``, recipe :mod:`heritage_pipeline_eval.heritage_golden`).

The source files the questions are about are run through the pipeline's own stages (parse, chunk, enrich without
a model, dedup; embedding with the configured embedder; one LanceDB index, partitions ``<lang>|<source_type>``),
then every question is asked in several retrieval configurations:

- ``hybrid`` / ``fts``: the defaults of ``configs/pipeline.yaml`` (tiers on, flagged chunks excluded);
- ``hybrid, no tiers``: the fused list alone (what the identifier/field tiers add);
- ``hybrid, flagged included``: boilerplate/degenerate chunks ranked like others (what excluding them does);
- ``plain BM25 (rows as column: value)``: a baseline independent of the pipeline: each registry line as
  ``column: value`` lines (header names, ``column N`` for headerless files), each other file's chunks as they are,
  in one language-neutral BM25 index (LanceDB/Tantivy, lower case + ASCII folding, no tiers).

Metrics: hit@1, hit@5 and MRR@10 by relevance of record identity (:func:`is_relevant`), per family, source type
and held-out flag, with bootstrap 95% CIs on the totals.

Run: ``python -m heritage_pipeline_eval.heritage_eval [--golden data/golden/heritage] [--data ../shared/data]
[--out report/]`` (also ``heritage-pipeline ablate --heritage data/golden/heritage``).
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

K = 10


def load_golden(folder: Path) -> list[dict]:
    """Questions of ``<folder>/heritage.jsonl``. Raises FileNotFoundError naming the file when it is missing."""
    p = Path(folder) / "heritage.jsonl"
    if not p.exists():
        raise FileNotFoundError(f"{p}: no heritage golden set (build it with python -m heritage_pipeline_eval.heritage_golden)")
    return [json.loads(line) for line in p.read_text(encoding="utf-8").splitlines() if line.strip()]


def is_relevant(hit_path: str, char_start: int, char_end: int, rel: dict) -> bool:
    """Whether a retrieved span is the record/answer ``rel`` (``{path, char_start, char_end}``): same file (the hit's
    path ends with ``rel["path"]``) and overlapping code-point ranges."""
    return (hit_path or "").replace("\\", "/").endswith(rel["path"]) and char_start < rel["char_end"] and rel["char_start"] < char_end


def first_relevant_rank(hits: list[tuple[str, int, int]], relevant: list[dict]) -> int | None:
    """1-based rank of the first hit ``(path, char_start, char_end)`` that is relevant, or None."""
    for i, (p, a, b) in enumerate(hits, 1):
        if any(is_relevant(p, a, b, r) for r in relevant):
            return i
    return None


def build_index(data: Path, files: list[str], uri: str, pcfg, cache_path: str | None = None):
    """Chunks of ``files`` (relative to ``data``) through the pipeline's stages, embedded and indexed at ``uri``.

    Returns:
        ``(table, chunks, embedder, seconds)``.
    """
    from heritage_pipeline import stages as P
    from heritage_pipeline.core.config import load_chunking_config
    from heritage_pipeline.embed.cache import EmbeddingCache
    from heritage_pipeline.embed.embedders import make_embedder
    from heritage_pipeline.index.schema import chunk_rows
    from heritage_pipeline.index.writer import open_table, write_partitions
    from heritage_pipeline.sources.discovery import load_source

    t0 = time.perf_counter()
    cfg = load_chunking_config()
    cfg = cfg.model_copy(update={"context": cfg.context.model_copy(update={
        "keywords": cfg.context.keywords.model_copy(update={"method": "rake"}), "section_embedding": False})})
    parsed = P.parse_sources([load_source(data / f) for f in files], cfg)
    items = P.chunk_documents(parsed.docs, cfg)
    P.enrich_stage(items, cfg, None, pcfg.embedder, None, data_dir=pcfg.data_path)
    kept, _ = P.dedup_stage(items, cfg)
    embedder = make_embedder(pcfg.embedder)
    cache = EmbeddingCache(cache_path) if cache_path else None
    vecs, wins, _ = P.passage_vectors(kept, embedder, pcfg.embedder, cache)
    for c, w in zip(kept, wins):
        c.meta.embedding_model, c.meta.embedding_windows = embedder.model_id, w
    groups: dict[str, list[int]] = defaultdict(list)
    for i, c in enumerate(kept):
        groups[f"{c.meta.lang}|{c.meta.source_type}"].append(i)
    write_partitions(uri, "chunks", {k: chunk_rows([kept[i] for i in ix], vecs[ix], k) for k, ix in groups.items()})
    return open_table(uri, "chunks"), kept, embedder, time.perf_counter() - t0


def baseline_index(data: Path, golden: list[dict], chunks, uri: str):
    """The plain-BM25 baseline table: registry lines as ``column: value`` text, other files' chunks as they are."""
    import lancedb
    import pyarrow as pa

    from heritage_pipeline.index.schema import fts_config
    from heritage_pipeline_eval.heritage_golden import REGISTRIES, registry_rows

    rows = []
    for reg in REGISTRIES:
        path = data / reg.path
        header = None
        if reg.header:
            first = path.read_text(encoding="utf-8").lstrip("\ufeff").split("\n", 1)[0]
            header = next(csv.reader(io.StringIO(first), delimiter=reg.delimiter))
        for r in registry_rows(data, reg):
            names = header or [f"column {i + 1}" for i in range(len(r["fields"]))]
            text = "\n".join(f"{names[i] if i < len(names) else f'column {i + 1}'}: {v}" for i, v in enumerate(r["fields"]) if v)
            rows.append({"path": reg.path, "char_start": r["char_start"], "char_end": r["char_end"], "text": text})
    reg_paths = {r.path for r in REGISTRIES}
    for c in chunks:
        if not any(c.meta.source_path.endswith(p) for p in reg_paths):
            rows.append({"path": c.meta.source_path, "char_start": c.spans.char_start, "char_end": c.spans.char_end,
                         "text": c.text})
    db = lancedb.connect(uri)
    tbl = db.create_table("baseline", pa.Table.from_pylist(rows), mode="overwrite")
    tbl.create_index("text", config=fts_config(None), replace=True)
    return tbl


def _metrics(ranks: list[int | None]) -> dict[str, float]:
    r = np.array([x if x is not None else 10**6 for x in ranks], dtype=float)
    return {"hit@1": float((r <= 1).mean()), "hit@5": float((r <= 5).mean()),
            "mrr@10": float(np.where(r <= K, 1.0 / r, 0.0).mean())}


def evaluate(golden_dir: Path, data: Path, pcfg=None, cache_path: str | None = None,
             samples: int = 1000) -> dict[str, Any]:
    """Build the index of the set's files, run every configuration, score.

    Args:
        golden_dir: folder holding ``heritage.jsonl``.
        data: the shared data root the set's paths are relative to.
        pcfg: pipeline configuration (default: ``configs/pipeline.yaml``).
        cache_path: embedding cache (SQLite) to reuse.
        samples: bootstrap resamples for the CIs.
    Returns:
        ``{"n_questions", "n_chunks", "build_s", "configs": {name: {"overall", "overall_ci", "by_family",
        "by_source_type", "heldout_registry", "p50_ms", "p95_ms"}}}``; rates are shares of questions (0-1).
    Raises:
        FileNotFoundError: the set or one of its files is missing.
    """
    from heritage_pipeline.core.config import load_pipeline_config
    from heritage_pipeline.index.search import search_table
    from heritage_pipeline_eval.metrics import bootstrap_ci

    pcfg = pcfg or load_pipeline_config()
    lc = pcfg.lancedb
    golden = load_golden(golden_dir)
    files = sorted({r["path"] for q in golden for r in q["relevant"]})
    out: dict[str, Any] = {"n_questions": len(golden), "files": files, "configs": {}}
    with tempfile.TemporaryDirectory(prefix="heritage-eval-") as tmp:
        tbl, chunks, embedder, build_s = build_index(data, files, tmp, pcfg, cache_path)
        out.update(n_chunks=len(chunks), build_s=round(build_s, 1),
                   n_flagged=sum(1 for c in chunks if c.quality.boilerplate or c.quality.degenerate))
        qvecs = embedder.embed_queries([q["question"] for q in golden])
        base = baseline_index(data, golden, chunks, tmp)
        common = dict(candidates=lc.candidates, rrf_k=lc.rrf_k, vector_weight=lc.vector_weight, fts_weight=lc.fts_weight,
                      columns=("id", "source_path", "char_start", "char_end"))
        configs = {
            "hybrid (default)": dict(mode="hybrid", flagged=lc.flagged, tiers=lc.tiers),
            "fts (default)": dict(mode="fts", flagged=lc.flagged, tiers=lc.tiers),
            "hybrid, no tiers": dict(mode="hybrid", flagged=lc.flagged, tiers=False),
            "hybrid, flagged included": dict(mode="hybrid", flagged="include", tiers=lc.tiers),
        }
        for name, opts in configs.items():
            ranks, lat = [], []
            for i, q in enumerate(golden):
                t = time.perf_counter()
                hits = search_table(tbl, q["question"], k=K, query_vector=qvecs[i], **common, **opts)
                lat.append((time.perf_counter() - t) * 1000)
                ranks.append(first_relevant_rank([(h["source_path"], h["char_start"], h["char_end"]) for h in hits],
                                                 q["relevant"]))
            out["configs"][name] = _score(golden, ranks, lat, samples, bootstrap_ci)
        out["parent_expansion"] = answer_in_budget(tbl, golden, qvecs, common, lc)
        ranks, lat = [], []
        for q in golden:
            t = time.perf_counter()
            try:
                got = (base.search(q["question"], query_type="fts", fts_columns="text")
                       .select(["path", "char_start", "char_end", "_score"]).limit(K).to_arrow().to_pylist())
            except Exception as exc:  # a query of stop words/symbols only
                if "query" not in str(exc).lower():
                    raise
                got = []
            lat.append((time.perf_counter() - t) * 1000)
            ranks.append(first_relevant_rank([(h["path"], h["char_start"], h["char_end"]) for h in got], q["relevant"]))
        out["configs"]["plain BM25 (rows as column: value)"] = _score(golden, ranks, lat, samples, bootstrap_ci)
    return out


EXPANSION_BUDGETS = (0, 1000, 2000)


def answer_in_budget(tbl, golden, qvecs, common, lc, k: int = 5) -> dict[str, dict[str, float]]:
    """Parent expansion, measured: for the questions with an answer span (``visit``), the share whose whole answer
    range lies inside one of the top-``k`` default hybrid hits, without expansion (budget 0: the chunk alone) and
    with each hit expanded to its section up to ``EXPANSION_BUDGETS`` cl100k tokens
    (:func:`heritage_pipeline.index.api.expand_section`).

    Returns:
        ``{"budget <n>": {"answer_in_budget": share, "n": questions}}``.
    """
    import json as _json

    from heritage_pipeline.index.api import expand_section
    from heritage_pipeline.index.search import search_table

    qs = [(i, q) for i, q in enumerate(golden) if q["family"] == "visit"]
    cols = dict(common, columns=("id", "source_path", "char_start", "char_end", "record"))
    res = {}
    for budget in EXPANSION_BUDGETS:
        found = 0
        for i, q in qs:
            hits = search_table(tbl, q["question"], mode="hybrid", k=k, query_vector=qvecs[i], flagged=lc.flagged,
                                tiers=lc.tiers, **cols)
            ok = False
            for h in hits:
                meta = _json.loads(h["record"])["meta"]
                a, b = h["char_start"], h["char_end"]
                if budget:
                    sec = expand_section(tbl, h["id"], meta, budget)
                    a, b = sec["char_start"], sec["char_end"]
                if any(h["source_path"].endswith(r["path"]) and a <= r["char_start"] and r["char_end"] <= b
                       for r in q["relevant"]):
                    ok = True
                    break
            found += ok
        res[f"budget {budget}"] = {"answer_in_budget": round(found / len(qs), 4) if qs else float("nan"), "n": len(qs)}
    return res


def _score(golden, ranks, lat, samples, bootstrap_ci) -> dict[str, Any]:
    def group(key):
        g: dict[str, list] = defaultdict(list)
        for q, r in zip(golden, ranks):
            g[key(q)].append(r)
        return {k: {**_metrics(v), "n": len(v)} for k, v in sorted(g.items())}

    r = np.array([x if x is not None else 10**6 for x in ranks], dtype=float)
    held = [r_ for q, r_ in zip(golden, ranks) if q["heldout"] and q["source_type"] == "csv_registry"]
    return {"overall": {**_metrics(ranks), "n": len(ranks)},
            "overall_ci": {"hit@1": bootstrap_ci((r <= 1).astype(float), samples),
                           "hit@5": bootstrap_ci((r <= 5).astype(float), samples)},
            "heldout_registry": {**_metrics(held), "n": len(held)} if held else None,
            "by_family": group(lambda q: q["family"]), "by_source_type": group(lambda q: q["source_type"]),
            "by_heldout": group(lambda q: "held-out" if q["heldout"] else "tuning"),
            "p50_ms": round(float(np.percentile(lat, 50)), 2), "p95_ms": round(float(np.percentile(lat, 95)), 2)}


def markdown(res: dict[str, Any]) -> str:
    """The report section: one table per grouping, every configuration side by side."""
    names = list(res["configs"])
    lines = [f"## Heritage golden set ({res['n_questions']} questions, {res['n_chunks']} chunks of {len(res['files'])} "
             f"files, {res['n_flagged']} flagged chunks)", "",
             "hit@1 / hit@5 / MRR@10; relevance by record identity (file + row/entity span, or answer span).", ""]

    def table(title, rows_of):
        lines.extend([f"### {title}", "", "| group | n | " + " | ".join(names) + " |", "|---|---|" + "---|" * len(names)])
        keys = list(rows_of(res["configs"][names[0]]))
        for k in keys:
            cells = []
            for n in names:
                m = rows_of(res["configs"][n])[k]
                cells.append(f"{m['hit@1']:.3f} / {m['hit@5']:.3f} / {m['mrr@10']:.3f}")
            lines.append(f"| {k} | {rows_of(res['configs'][names[0]])[k]['n']} | " + " | ".join(cells) + " |")
        lines.append("")

    table("Overall and held-out registries", lambda c: {"all": c["overall"], "held-out registry rows": c["heldout_registry"]})
    table("By question family", lambda c: c["by_family"])
    table("By source type", lambda c: c["by_source_type"])
    table("Tuning vs held-out files", lambda c: c["by_heldout"])
    lines.append("| configuration | hit@1 95% CI | hit@5 95% CI | p50 / p95 ms per query |")
    lines.append("|---|---|---|---|")
    for n in names:
        c = res["configs"][n]
        lines.append(f"| {n} | {c['overall_ci']['hit@1'][0]:.3f}-{c['overall_ci']['hit@1'][1]:.3f} | "
                     f"{c['overall_ci']['hit@5'][0]:.3f}-{c['overall_ci']['hit@5'][1]:.3f} | {c['p50_ms']} / {c['p95_ms']} |")
    if res.get("parent_expansion"):
        lines += ["", "Parent expansion (visit questions, top-5 default hybrid hits; answer range wholly inside a hit's "
                  "span, or its section's span up to the budget in cl100k tokens):", "",
                  "| budget | answer in budget | n |", "|---|---|---|"]
        lines += [f"| {k} | {v['answer_in_budget']:.3f} | {v['n']} |" for k, v in res["parent_expansion"].items()]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    root = Path(__file__).resolve().parents[1]
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--golden", default=str(root / "data" / "golden" / "heritage"), help="folder with heritage.jsonl")
    ap.add_argument("--data", default=str(root.parent / "shared" / "data"), help="shared data root")
    ap.add_argument("--cache", help="embedding cache file (SQLite)")
    ap.add_argument("--out", help="folder for heritage.json and heritage.md (default: print only)")
    args = ap.parse_args(argv)
    res = evaluate(Path(args.golden), Path(args.data), cache_path=args.cache)
    md = markdown(res)
    print(md)
    if args.out:
        Path(args.out).mkdir(parents=True, exist_ok=True)
        (Path(args.out) / "heritage.json").write_text(json.dumps(res, indent=1, ensure_ascii=False))
        (Path(args.out) / "heritage.md").write_text(md)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
