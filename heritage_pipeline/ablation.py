"""Ablation over chunk size x overlap x mode, per language and retriever, on golden sets.

For each language and grid point: chunk the golden documents plus distractor documents with the pipeline's own
chunker, embed the chunks (embedding cache shared across grid points), build a LanceDB table (language-aware BM25
index: stemming and stop words of that language), retrieve the top ``k`` for every question with BM25, vector and
hybrid (reciprocal-rank fusion) search, and score with :mod:`heritage_pipeline.evaluation`.

Report rows (``ablation.json``), one per (lang, mode, size_tokens, overlap_ratio, retriever): ``hit@5, mrr@10,
ndcg@10`` and their bootstrap 95% CIs, the paragraph-overlap variant ``ndcg@10_paragraph``,
``answer_in_2000_tokens``, ``n_queries, n_chunks, index_bytes, index_dim, build_s, p50_ms, p95_ms`` (search call
only, query embedding excluded) and ``recommended``.

Recommendation rule (per language): among rows of the recommended retriever (the one with the best mean nDCG@10
over the grid), the best nDCG@10; rows within 0.005 of it are ties, broken by ``answer_in_2000_tokens`` then by the
smaller size (fewer tokens per hit is cheaper to read). The written explanation states the margins.
"""

from __future__ import annotations

import csv
import json
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .chunking import Chunker, params_for
from .config import AblationConfig, ChunkingConfig
from .embedding import EmbeddingCache, embed_with_cache
from .evaluation import (METRICS, GoldenQuestion, RetrievedChunk, answer_within_budget, bootstrap_ci, load_golden,
                         per_query_metrics)
from .index import dir_bytes
from .markdown import parse_markdown

FTS_LANGUAGE = {"en": "English", "fr": "French", "de": "German", "nl": "Dutch", "es": "Spanish", "it": "Italian",
                "pt": "Portuguese", "ru": "Russian", "sv": "Swedish", "da": "Danish", "fi": "Finnish", "no": "Norwegian",
                "hu": "Hungarian", "ro": "Romanian", "tr": "Turkish"}


@dataclass
class CorpusDoc:
    doc_id: str
    text: str
    is_golden: bool


@dataclass
class AblationResult:
    rows: list[dict[str, Any]]
    recommendations: dict[str, dict[str, Any]]
    markdown: str
    paths: dict[str, str] = field(default_factory=dict)


def chunk_corpus(docs: list[CorpusDoc], cfg: ChunkingConfig, mode: str, size: int, overlap: float, lang: str):
    grid_cfg = cfg.model_copy(update={
        "mode": mode,
        "sliding_window": cfg.sliding_window.model_copy(update={"size_tokens": size, "overlap_ratio": overlap}),
    })
    chunker = Chunker(grid_cfg)
    params = params_for(grid_cfg, source_type="document", domain=None)
    chunks = []
    for d in docs:
        doc = parse_markdown(d.text, doc_id=d.doc_id, source_path=d.doc_id, lang=lang,
                             max_level=grid_cfg.hierarchy.max_level)
        chunks.extend(chunker.chunk_document(doc, params))
    return chunks


def _build_table(db_dir: Path, chunks, vectors: np.ndarray, lang: str):
    import lancedb
    import pyarrow as pa
    from lancedb.index import FTS

    dim = vectors.shape[1]
    table = pa.table({
        "id": [c.id for c in chunks],
        "doc_id": [c.meta.doc_id for c in chunks],
        "text": [c.embedding_text() for c in chunks],
        "char_start": [c.spans.char_start for c in chunks],
        "char_end": [c.spans.char_end for c in chunks],
        "len_tokens": [c.meta.len_tokens for c in chunks],
        "vector": pa.FixedSizeListArray.from_arrays(pa.array(vectors.reshape(-1), type=pa.float32()), dim),
    })
    db = lancedb.connect(str(db_dir))
    tbl = db.create_table("chunks", table, mode="overwrite")
    tbl.create_index("text", config=FTS(language=FTS_LANGUAGE.get(lang, "English"), stem=lang in FTS_LANGUAGE,
                                        remove_stop_words=lang in FTS_LANGUAGE, ascii_folding=True), replace=True)
    return tbl


def _retrieve(tbl, retriever: str, question: str, qvec: np.ndarray, k: int) -> list[RetrievedChunk]:
    from lancedb.rerankers import RRFReranker

    if retriever == "bm25":
        q = tbl.search(question, query_type="fts", fts_columns="text")
        col = "_score"
    elif retriever == "vector":
        q = tbl.search(qvec, query_type="vector", vector_column_name="vector").distance_type("cosine")
        col = "_distance"
    else:
        q = (tbl.search(query_type="hybrid", vector_column_name="vector", fts_columns="text").vector(qvec)
             .text(question).rerank(RRFReranker()))
        col = "_relevance_score"
    try:
        rows = q.limit(k).select(["id", "doc_id", "char_start", "char_end", "len_tokens"]).to_arrow().to_pylist()
    except Exception as exc:  # an FTS query made only of stop words or symbols matches nothing
        if retriever == "bm25" and "query" in str(exc).lower():
            return []
        raise
    hits = []
    for r in rows:
        s = float(r.get(col) or 0.0)
        s = -s if col == "_distance" else s
        hits.append(RetrievedChunk(r["id"], r["doc_id"], r["char_start"], r["char_end"], r["len_tokens"], s))
    hits.sort(key=lambda h: (-h.score, h.id))  # deterministic tie-break: score, then chunk id
    return hits


def evaluate_language(lang: str, questions: list[GoldenQuestion], docs: list[CorpusDoc], cfg: ChunkingConfig,
                      abl: AblationConfig, embedder, cache: EmbeddingCache | None, progress=None) -> list[dict[str, Any]]:
    """All grid rows for one language (see module docstring)."""
    rows: list[dict[str, Any]] = []
    qvecs = np.stack([embedder.embed_query(q.question) for q in questions]) if questions else None
    for mode in abl.modes:
        for size in abl.sizes:
            for overlap in abl.overlaps:
                t0 = time.perf_counter()
                chunks = chunk_corpus(docs, cfg, mode, size, overlap, lang)
                vectors, _, _ = embed_with_cache(embedder, [c.embedding_text() for c in chunks], cache)
                with tempfile.TemporaryDirectory(prefix="ablation-") as tmp:
                    tbl = _build_table(Path(tmp), chunks, vectors, lang)
                    build_s = time.perf_counter() - t0
                    index_bytes = dir_bytes(tmp)
                    for retriever in abl.retrievers:
                        rankings: dict[str, list[RetrievedChunk]] = {}
                        lat = []
                        for qi, q in enumerate(questions):
                            t = time.perf_counter()
                            rankings[q.qid] = _retrieve(tbl, retriever, q.question, qvecs[qi], abl.k)
                            lat.append((time.perf_counter() - t) * 1000)
                        scores = per_query_metrics(questions, rankings, "contains", abl.k)
                        para = per_query_metrics(questions, rankings, "paragraph", abl.k)
                        budget = np.array([answer_within_budget(q, rankings[q.qid]) for q in questions], dtype=float)
                        row: dict[str, Any] = {"lang": lang, "mode": mode, "size_tokens": size, "overlap_ratio": overlap,
                                               "retriever": retriever}
                        for m in METRICS:
                            row[m] = round(float(scores[m].mean()), 4)
                            lo, hi = bootstrap_ci(scores[m], abl.bootstrap_samples, abl.seed)
                            row[f"{m}_ci"] = [round(lo, 4), round(hi, 4)]
                        row["ndcg@10_paragraph"] = round(float(para["ndcg@10"].mean()), 4)
                        row["answer_in_2000_tokens"] = round(float(budget.mean()), 4)
                        row.update({"n_queries": len(questions), "n_chunks": len(chunks), "index_dim": int(vectors.shape[1]),
                                    "index_bytes": index_bytes, "build_s": round(build_s, 2),
                                    "p50_ms": round(float(np.percentile(lat, 50)), 2) if lat else 0.0,
                                    "p95_ms": round(float(np.percentile(lat, 95)), 2) if lat else 0.0,
                                    "recommended": False})
                        rows.append(row)
                if progress:
                    progress(f"{lang} {mode} size={size} overlap={overlap:.2f}: {len(chunks)} chunks")
    return rows


def recommend(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Mark the recommended row per language (rule in the module docstring); returns lang -> explanation."""
    out: dict[str, dict[str, Any]] = {}
    for lang in sorted({r["lang"] for r in rows}):
        lr = [r for r in rows if r["lang"] == lang]
        by_ret: dict[str, list[float]] = {}
        for r in lr:
            by_ret.setdefault(r["retriever"], []).append(r["ndcg@10"])
        retriever = max(sorted(by_ret), key=lambda k: float(np.mean(by_ret[k])))
        cand = [r for r in lr if r["retriever"] == retriever]
        best = max(r["ndcg@10"] for r in cand)
        ties = [r for r in cand if r["ndcg@10"] >= best - 0.005]
        chosen = sorted(ties, key=lambda r: (-r["answer_in_2000_tokens"], r["size_tokens"], r["overlap_ratio"], r["mode"]))[0]
        chosen["recommended"] = True
        runner = sorted((r for r in cand if r is not chosen), key=lambda r: -r["ndcg@10"])[:1]
        why = (f"{retriever} retrieval has the best mean nDCG@10 over the grid ({np.mean(by_ret[retriever]):.3f}). "
               f"Best setting: {chosen['mode']} {chosen['size_tokens']} tokens / {chosen['overlap_ratio']:.0%} overlap, "
               f"nDCG@10 {chosen['ndcg@10']:.3f} (95% CI {chosen['ndcg@10_ci'][0]:.3f}-{chosen['ndcg@10_ci'][1]:.3f}), "
               f"hit@5 {chosen['hit@5']:.3f}, MRR@10 {chosen['mrr@10']:.3f}, answer within 2000 tokens "
               f"{chosen['answer_in_2000_tokens']:.3f}, {chosen['n_chunks']} chunks.")
        if len(ties) > 1:
            why += f" {len(ties)} settings are within 0.005 nDCG of the best; the tie-break prefers the one that fits the answer in 2000 tokens most often, then the smaller size."
        if runner:
            rr = runner[0]
            why += (f" Runner-up: {rr['size_tokens']}/{rr['overlap_ratio']:.0%} at {rr['ndcg@10']:.3f}; differences smaller "
                    "than the CI width are not significant on this many questions.")
        out[lang] = {"retriever": retriever, "mode": chosen["mode"], "size_tokens": chosen["size_tokens"],
                     "overlap_ratio": chosen["overlap_ratio"], "ndcg@10": chosen["ndcg@10"], "why": why}
    return out


def to_markdown(rows: list[dict[str, Any]], recs: dict[str, dict[str, Any]]) -> str:
    lines = ["| lang | mode | size | overlap | retriever | hit@5 | MRR@10 | nDCG@10 (95% CI) | in 2000 tok | chunks | p50 ms |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        mark = " **★**" if r["recommended"] else ""
        lines.append(f"| {r['lang']} | {r['mode']} | {r['size_tokens']} | {r['overlap_ratio']:.2f} | {r['retriever']}{mark} | "
                     f"{r['hit@5']:.3f} | {r['mrr@10']:.3f} | {r['ndcg@10']:.3f} ({r['ndcg@10_ci'][0]:.3f}-{r['ndcg@10_ci'][1]:.3f}) | "
                     f"{r['answer_in_2000_tokens']:.3f} | {r['n_chunks']} | {r['p50_ms']:.1f} |")
    lines.append("")
    for lang, rec in recs.items():
        lines.append(f"**{lang}**: {rec['why']}")
        lines.append("")
    return "\n".join(lines)


def plot(rows: list[dict[str, Any]], recs: dict[str, dict[str, Any]], path: Path) -> None:
    """nDCG@10 vs size, one line per overlap with CI bars, one panel per language (recommended retriever)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    langs = sorted(recs)
    fig, axes = plt.subplots(1, max(1, len(langs)), figsize=(5 * max(1, len(langs)), 4), squeeze=False)
    for ax, lang in zip(axes[0], langs):
        rec = recs[lang]
        sel = [r for r in rows if r["lang"] == lang and r["retriever"] == rec["retriever"] and r["mode"] == rec["mode"]]
        for ov in sorted({r["overlap_ratio"] for r in sel}):
            pts = sorted((r for r in sel if r["overlap_ratio"] == ov), key=lambda r: r["size_tokens"])
            x = [r["size_tokens"] for r in pts]
            y = [r["ndcg@10"] for r in pts]
            err = [[r["ndcg@10"] - r["ndcg@10_ci"][0] for r in pts], [r["ndcg@10_ci"][1] - r["ndcg@10"] for r in pts]]
            ax.errorbar(x, y, yerr=err, marker="o", capsize=3, label=f"overlap {ov:.0%}")
        ax.set_title(f"{lang}: nDCG@10, {rec['retriever']}, {rec['mode']}")
        ax.set_xlabel("chunk size (cl100k tokens)")
        ax.set_ylabel("nDCG@10 (95% bootstrap CI)")
        ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def write_report(rows: list[dict[str, Any]], out_dir: str | Path) -> AblationResult:
    """Mark recommendations and write ``ablation.json``, ``ablation.csv``, ``ablation.md``, ``ablation.png``."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    recs = recommend(rows)
    md = to_markdown(rows, recs)
    paths = {"json": str(out / "ablation.json"), "csv": str(out / "ablation.csv"), "markdown": str(out / "ablation.md"),
             "plot": str(out / "ablation.png")}
    Path(paths["json"]).write_text(json.dumps(rows, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    with open(paths["csv"], "w", newline="", encoding="utf-8") as f:
        if rows:
            w = csv.DictWriter(f, fieldnames=list(rows[0]))
            w.writeheader()
            for r in rows:
                w.writerow({k: (json.dumps(v) if isinstance(v, list) else v) for k, v in r.items()})
    Path(paths["markdown"]).write_text("# Ablation report\n\n" + md + "\n", encoding="utf-8")
    if rows:
        plot(rows, recs, Path(paths["plot"]))
    return AblationResult(rows, recs, md, paths)


def distractor_docs(paths: list[Path], lang: str | None, max_chars: int | None, root: Path | None = None) -> list[CorpusDoc]:
    """Markdown distractors (files in sorted order, whole files) until ``max_chars`` characters (None: all).

    When ``lang`` is given, files whose detected language differs are skipped.
    """
    from .langid import detect_language

    out: list[CorpusDoc] = []
    total = 0
    for p in sorted(paths):
        text = p.read_text(encoding="utf-8", errors="replace").removeprefix("\ufeff")
        if lang is not None and detect_language(text)[0] != lang:
            continue
        if max_chars is not None and total + len(text) > max_chars and out:
            continue
        rel = p.relative_to(root).as_posix() if root else p.as_posix()
        out.append(CorpusDoc(f"distractor/{rel}", text, False))
        total += len(text)
        if max_chars is not None and total >= max_chars:
            break
    return out


def default_distractors(data_root: str | Path, lang: str, max_chars: int, corpora: list[str],
                        max_file_chars: int = 50_000) -> list[CorpusDoc]:
    """A fixed, deterministic sample of distractor documents of one language from a data folder.

    ``corpora``: glob patterns of corpus folders relative to ``data_root`` (e.g. ``docs``, ``legal_*/raw``,
    ``faq``). A Markdown file belongs to language ``lang`` when a folder in its path is named ``lang`` or ends
    in ``_<lang>`` (``docs/fastapi/fr``, ``legal_fr/raw``). Files are taken whole, in sorted path order, one
    from each corpus in turn (so docs, legal and FAQ text are mixed evenly), skipping files over
    ``max_file_chars`` characters, until ``max_chars`` characters are reached. Doc ids are
    ``distractor/<path relative to data_root>``.
    """
    root = Path(data_root)
    queues: list[list[Path]] = []
    for pattern in corpora:
        for base in sorted(root.glob(pattern)):
            files = sorted(p for p in base.rglob("*.md") if p.is_file()
                           and any(part == lang or part.endswith("_" + lang) for part in p.relative_to(root).parts[:-1]))
            if files:
                queues.append(files)
    out: list[CorpusDoc] = []
    total = 0
    pos = [0] * len(queues)
    while total < max_chars and any(pos[i] < len(q) for i, q in enumerate(queues)):
        for i, q in enumerate(queues):
            while pos[i] < len(q) and total < max_chars:
                p = q[pos[i]]
                pos[i] += 1
                text = p.read_text(encoding="utf-8", errors="replace").removeprefix("\ufeff")
                if len(text) > max_file_chars or not text.strip():
                    continue
                out.append(CorpusDoc(f"distractor/{p.relative_to(root).as_posix()}", text, False))
                total += len(text)
                break
    return out


def run_ablation(golden_dirs: dict[str, Path], distractors: dict[str, list[CorpusDoc]], cfg: ChunkingConfig,
                 abl: AblationConfig, embedder, cache: EmbeddingCache | None, out_dir: str | Path,
                 progress=None) -> AblationResult:
    """Run the grid for each language folder in ``golden_dirs`` and write the report to ``out_dir``."""
    rows: list[dict[str, Any]] = []
    for lang, folder in sorted(golden_dirs.items()):
        questions, docs = load_golden(folder, abl.max_questions_per_language)
        corpus = [CorpusDoc(doc_id, text, True) for doc_id, text in sorted(docs.items())] + distractors.get(lang, [])
        rows.extend(evaluate_language(lang, questions, corpus, cfg, abl, embedder, cache, progress))
    return write_report(rows, out_dir)
