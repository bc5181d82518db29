"""Ablation over chunking mode x size x overlap, per language and retriever, on golden sets: the report that
chooses the default chunk size and overlap.

Protocol (per language)
    Index = the golden documents + distractor documents (``--distractors DIR``: every Markdown file under DIR; by
    default a fixed sample of ``distractor_chars`` characters of the same language from the data folder's
    ``docs``, ``legal`` and ``FAQ`` corpora, :func:`default_distractors`). For each grid point the whole corpus is
    chunked with the pipeline's own chunker (:func:`chunk_corpus`), embedded with the pipeline's embedder (the
    embedding cache is shared across grid points, so unchanged chunks are never re-embedded), written to a
    temporary LanceDB table by :mod:`heritage_pipeline.index` (the same code, schema and full-text indexes as the
    main index; BM25 uses that language's stemmer and stop words), and every question is answered by three
    retrievers: ``bm25``, ``vector`` (cosine) and ``hybrid`` (weighted reciprocal-rank fusion, ``lancedb``
    settings of ``configs/pipeline.yaml``). Scores: :mod:`heritage_pipeline_eval.metrics` (relevance = the chunk's
    span contains the answer span; paragraph-overlap variant reported too; hits collapsed per question; ranx).

Report rows (``ablation.json``; CSV and Markdown hold the same rows), one per (lang, mode, size_tokens,
overlap_ratio, retriever): ``hit@5, mrr@10, ndcg@10`` and their percentile-bootstrap 95% CIs (``*_ci``),
``ndcg@10_paragraph``, ``answer_in_2000_tokens`` (share of questions whose answer lies in the first 2 000 cl100k
tokens of the ranked chunks, :func:`~heritage_pipeline_eval.metrics.answer_within_budget`), ``n_queries, n_chunks,
index_rows, index_dim, index_bytes`` (LanceDB folder on disk, FTS indexes included), ``build_s`` (chunk + embed
through the cache + write the index), ``p50_ms, p95_ms`` (search call per question; query embedding excluded),
``embedder``, ``recommended``, ``shared_with`` (null, or the grid point whose chunks were identical: its index
build, rankings and scores are reused, and ``build_s`` / latencies are that point's).

Work done once per language, not per grid point: parsing each document, embedding each distinct chunk text (and
through the embedding cache, once across runs), and the index build + retrieval + scoring of each distinct chunking
(:class:`GridMemo`; on the bundled golden sets overlap often changes no chunk at a size).

Recommendation rule (per language, written into the report with its margins)
    1. The retriever with the best mean nDCG@10 over the grid is the language's retriever.
    2. Among its rows, the eligible ones put the answer within the first 2 000 tokens for at least
       ``min_answer_in_budget`` of the questions (``ablation.min_answer_in_budget``, default 0.93, the issue's
       context-budget target; when no row reaches it, every row is eligible and the report says so).
    3. Among those, the candidates have nDCG@10 within 0.005 of the best eligible one (differences that small are
       far inside the bootstrap CI on these question counts).
    4. Among those, the highest ``answer_in_2000_tokens`` wins (a reader's context budget is finite); then the
       smaller size (cheaper per hit), the smaller overlap (fewer chunks), the mode name.
Deterministic: fixed bootstrap seed, fixed distractor sample, ties broken by chunk id; two runs give the same
metrics (timings naturally differ).
"""

from __future__ import annotations

import csv
import json
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np

from heritage_pipeline.chunking.chunker import Chunker
from heritage_pipeline.chunking.params import params_for
from heritage_pipeline.core.config import (RETRIEVER_LABELS, AblationConfig, ChunkingConfig, EmbedderConfig,
                                           LanceDBConfig)
from heritage_pipeline.embed.cache import EmbeddingCache, embed_with_cache
from heritage_pipeline.embed.embedders import make_embedder
from .metrics import (METRICS, GoldenQuestion, RetrievedChunk, answer_within_budget, bootstrap_ci, load_golden,
    per_query_metrics)
from heritage_pipeline.index.analysis import extract_identifiers, query_places
from heritage_pipeline.index.search import TIE_DECIMALS, gazetteer, rrf_fuse, search_table
from heritage_pipeline.index.schema import chunk_rows
from heritage_pipeline.index.writer import dir_bytes, open_table, write_partitions
from heritage_pipeline.sources.markdown import parse_markdown
from heritage_pipeline.core.models import Chunk, join_prefix
from heritage_pipeline.core.text import normalize
from heritage_pipeline.core.tokenizer import get_tokenizer

RETRIEVER_MODE = {"bm25": "fts", "vector": "vector", "hybrid": "hybrid"}
TIE_NDCG = 0.005
BUDGET_TOKENS = 2000  # context-budget metric (issue 6): the answer within the first 2000 cl100k tokens
LATENCY_SAMPLE = 50  # questions per grid point and retriever timed through LanceDB


@dataclass
class CorpusDoc:
    """A document of the ablation corpus; ``is_golden`` marks the golden set's own documents."""

    doc_id: str
    text: str
    is_golden: bool


@dataclass
class AblationResult:
    rows: list[dict[str, Any]]
    recommendations: dict[str, dict[str, Any]]
    markdown: str
    paths: dict[str, str] = field(default_factory=dict)
    embedder_rows: list[dict[str, Any]] = field(default_factory=list)


def chunk_corpus(docs: list[CorpusDoc], cfg: ChunkingConfig, mode: str, size: int, overlap: float, lang: str,
                 parsed: dict | None = None) -> list[Chunk]:
    """Chunk every document with ``mode``, target ``size`` cl100k tokens and ``overlap`` (ratio of the size).

    Documents are parsed as Markdown; spans index ``doc.text`` (the golden offsets' text). Every chunk gets
    ``meta.lang = meta.language = lang`` (the golden set's language decides the BM25 analyser). ``parsed``: a dict
    kept across grid points of one language, ``(doc_id, max_level) -> ParsedDocument``, so each document is parsed
    once per language instead of once per grid point (the chunker does not modify a parsed document).
    """
    grid_cfg = cfg.model_copy(update={
        "mode": mode,
        "sliding_window": cfg.sliding_window.model_copy(update={"size_tokens": size, "overlap_ratio": overlap}),
    })
    chunker = Chunker(grid_cfg)
    params = params_for(grid_cfg, source_type="document", domain=None)
    chunks: list[Chunk] = []
    for d in docs:
        key = (d.doc_id, grid_cfg.hierarchy.max_level)
        doc = parsed.get(key) if parsed is not None else None
        if doc is None:
            doc = parse_markdown(d.text, doc_id=d.doc_id, source_path=d.doc_id, lang=lang,
                                 max_level=grid_cfg.hierarchy.max_level)
            if parsed is not None:
                parsed[key] = doc
        for c in chunker.chunk_document(doc, params):
            c.meta.lang = c.meta.language = lang
            chunks.append(c)
    return chunks


def chunking_key(chunks: list[Chunk]) -> str:
    """SHA-256 of everything of a chunking the index and the metrics see (id, document, span, text, context
    prefix, token count of every chunk, in order): two grid points with the same key have the same index and the
    same scores."""
    import hashlib

    h = hashlib.sha256()
    for c in chunks:
        h.update(json.dumps([c.id, c.meta.doc_id, c.spans.char_start, c.spans.char_end, c.text, c.meta.context_prefix,
                             c.meta.len_tokens], ensure_ascii=False).encode())
    return h.hexdigest()


@dataclass
class GridMemo:
    """What the grid points of one language share: parsed documents, passage vectors by embedded text (so a chunk
    identical across points is embedded, or read from the cache, once) and the rows of every distinct chunking
    (``chunking_key`` -> (label, rows)): a point whose chunks equal an earlier point's reuses its index build,
    rankings and scores instead of rebuilding them (on the bundled golden sets, overlap often changes no chunk)."""

    parsed: dict = field(default_factory=dict)
    vectors: dict[str, tuple[np.ndarray, int]] = field(default_factory=dict)
    points: dict[str, tuple[str, list[dict[str, Any]]]] = field(default_factory=dict)
    reused_points: int = 0


def _answer_tokens(chunks: dict[str, Chunk], docs: dict[str, str]) -> Callable[[GoldenQuestion, RetrievedChunk], int]:
    """cl100k tokens of a relevant chunk's embedded text up to the end of the answer (prefix included)."""
    tok = get_tokenizer("cl100k")

    def count(q: GoldenQuestion, hit: RetrievedChunk) -> int:
        c = chunks[hit.id]
        return tok.count(join_prefix(c.meta.context_prefix, normalize(docs[q.doc_id][hit.char_start : q.answer_end])))

    return count


def _hits(ids: list[tuple[str, float]], by_id: dict[str, Chunk]) -> list[RetrievedChunk]:
    out = []
    for cid, score in ids:
        c = by_id[cid]
        out.append(RetrievedChunk(cid, c.meta.doc_id, c.spans.char_start, c.spans.char_end, c.meta.len_tokens, score))
    return out


def rank_all(tbl, questions: list[GoldenQuestion], qvecs: np.ndarray, chunks: list[Chunk], vectors: np.ndarray,
             lang: str, abl: AblationConfig, lcfg: LanceDBConfig) -> dict[str, dict[str, list[tuple[str, float]]]]:
    """Top-``k`` ``(chunk id, score)`` lists of every question for ``bm25``, ``vector`` and ``hybrid``.

    BM25 comes from the LanceDB table's full-text index (one query per question, ``lcfg.candidates`` deep). Vector
    search is exact cosine similarity, computed for all questions at once as ``qvecs @ vectors.T`` (the same
    ranking as LanceDB's flat cosine search over these L2-normalised vectors, without 10^5 round trips); hybrid is
    :func:`~heritage_pipeline.index.search.rrf_fuse` of the two ``candidates``-deep lists with the ``lcfg`` weights, the
    function the index's hybrid search uses. Ties are broken by chunk id. Flagged chunks follow ``lcfg.flagged`` in
    every list; a question holding an identifier or a gazetteer place (``lcfg.tiers``) is ranked by
    :func:`~heritage_pipeline.index.search.search_table` itself (identifier and field tiers). ``tests`` check both
    against :func:`~heritage_pipeline.index.search.search_table`.
    """
    ids = [c.id for c in chunks]
    id_rank = np.argsort(np.argsort(np.array(ids, dtype=object)))  # position of each id in sorted order
    sims = qvecs.astype(np.float32) @ vectors.astype(np.float32).T if len(chunks) else np.zeros((len(questions), 0))
    flagged = np.array([bool(c.quality.boilerplate or c.quality.degenerate) for c in chunks], dtype=bool)
    if lcfg.flagged == "exclude" and flagged.any():
        sims = np.where(flagged[None, :], -np.inf, sims)
    flag_of = dict(zip(ids, flagged.tolist()))
    depth = max(abl.k, lcfg.candidates)
    places = gazetteer(tbl) if lcfg.tiers else {}
    opts = dict(fts_lang=lang, columns=("id",), flagged=lcfg.flagged, candidates=lcfg.candidates, rrf_k=lcfg.rrf_k,
                vector_weight=lcfg.vector_weight, fts_weight=lcfg.fts_weight)
    out: dict[str, dict[str, list[tuple[str, float]]]] = {r: {} for r in ("bm25", "vector", "hybrid")}

    def demote(lst):
        return sorted(lst, key=lambda p: flag_of[p[0]]) if lcfg.flagged == "demote" else lst

    for i, q in enumerate(questions):
        order = np.lexsort((id_rank, -np.round(sims[i].astype(np.float64), TIE_DECIMALS)))[:depth]
        vec = [(ids[j], float(sims[i, j])) for j in order if np.isfinite(sims[i, j])]
        bm = [(r["id"], r["score"]) for r in search_table(tbl, q.question, mode="fts", k=depth, tiers=False, **opts)]
        if lcfg.tiers and (extract_identifiers(q.question) or query_places(q.question, places)):
            tiered = {m: [(r["id"], r["score"]) for r in search_table(tbl, q.question, mode=m, k=abl.k,
                                                                       query_vector=qvecs[i], **opts)]
                      for m in ("fts", "hybrid")}
            out["bm25"][q.qid], out["hybrid"][q.qid] = tiered["fts"], tiered["hybrid"]
        else:
            fused = rrf_fuse([[d for d, _ in vec], [d for d, _ in bm]], [lcfg.vector_weight, lcfg.fts_weight], lcfg.rrf_k)
            out["bm25"][q.qid] = demote(bm)[: abl.k]
            out["hybrid"][q.qid] = demote(fused)[: abl.k]
        out["vector"][q.qid] = demote(vec)[: abl.k]
    return out


def latency_ms(tbl, questions: list[GoldenQuestion], qvecs: np.ndarray, lang: str, abl: AblationConfig,
               lcfg: LanceDBConfig, retriever: str, sample: int = LATENCY_SAMPLE) -> tuple[float, float]:
    """p50 and p95 milliseconds of one LanceDB search call (``search_table``, top ``k``; query embedding excluded)
    over a fixed, evenly spaced sample of at most ``sample`` questions."""
    step = max(1, len(questions) // sample)
    lat = []
    for i in range(0, len(questions), step)[:sample]:
        t = time.perf_counter()
        search_table(tbl, questions[i].question, mode=RETRIEVER_MODE[retriever], k=abl.k, query_vector=qvecs[i],
                     fts_lang=lang, candidates=lcfg.candidates, rrf_k=lcfg.rrf_k, vector_weight=lcfg.vector_weight,
                     fts_weight=lcfg.fts_weight, columns=("id",), flagged=lcfg.flagged, tiers=lcfg.tiers)
        lat.append((time.perf_counter() - t) * 1000)
    return (float(np.percentile(lat, 50)), float(np.percentile(lat, 95))) if lat else (0.0, 0.0)


def score_rankings(questions: list[GoldenQuestion], rankings: dict[str, list[RetrievedChunk]], abl: AblationConfig,
                   answer_tokens=None) -> dict[str, Any]:
    """Metric means, bootstrap CIs, paragraph-variant nDCG and the context-budget share for one retriever run."""
    scores = per_query_metrics(questions, rankings, "contains", abl.k)
    para = per_query_metrics(questions, rankings, "paragraph", abl.k)
    budget = np.array([answer_within_budget(q, rankings[q.qid], BUDGET_TOKENS, answer_tokens=answer_tokens)
                       for q in questions], dtype=float)
    row: dict[str, Any] = {}
    for m in METRICS:
        row[m] = round(float(scores[m].mean()), 4)
        lo, hi = bootstrap_ci(scores[m], abl.bootstrap_samples, abl.seed)
        row[f"{m}_ci"] = [round(lo, 4), round(hi, 4)]
    row["ndcg@10_paragraph"] = round(float(para["ndcg@10"].mean()), 4)
    row["answer_in_2000_tokens"] = round(float(budget.mean()), 4)
    return row


def evaluate_point(lang: str, questions: list[GoldenQuestion], qvecs: np.ndarray, docs: dict[str, str],
                   corpus: list[CorpusDoc], cfg: ChunkingConfig, abl: AblationConfig, lcfg: LanceDBConfig,
                   embedder, ecfg: EmbedderConfig, cache: EmbeddingCache | None, mode: str, size: int, overlap: float,
                   retrievers: list[str] | None = None, memo: GridMemo | None = None) -> list[dict[str, Any]]:
    """Rows of one grid point (one per retriever): chunk, embed, index, retrieve, score.

    ``memo`` (one per language and embedder, :class:`GridMemo`) shares parsing, vectors and whole results between
    grid points; a reused point's rows say ``shared_with`` (the point whose index and scores they are) and keep
    that point's ``build_s`` and latencies.
    """
    t0 = time.perf_counter()
    chunks = chunk_corpus(corpus, cfg, mode, size, overlap, lang, memo.parsed if memo is not None else None)
    key = chunking_key(chunks) if memo is not None else ""
    label = f"{mode} {size}/{overlap:.2f}"
    if memo is not None and key in memo.points and not retrievers:
        first, first_rows = memo.points[key]
        memo.reused_points += 1
        return [{**r, "mode": mode, "size_tokens": size, "overlap_ratio": overlap, "shared_with": first,
                 "recommended": False} for r in first_rows]
    texts = [c.embedding_text() for c in chunks]
    if memo is not None:
        todo = list(dict.fromkeys(t for t in texts if t not in memo.vectors))
        if todo:
            new_vecs, new_wins, _ = embed_with_cache(embedder, todo, cache, prefix=ecfg.passage_prefix)
            for t, v, w in zip(todo, new_vecs, new_wins):
                memo.vectors[t] = (v, w)
        vectors = (np.stack([memo.vectors[t][0] for t in texts]) if texts
                   else np.zeros((0, embedder.dim), np.float32))
        wins = [memo.vectors[t][1] for t in texts]
    else:
        vectors, wins, _ = embed_with_cache(embedder, texts, cache, prefix=ecfg.passage_prefix)
    for c, w in zip(chunks, wins):
        c.meta.embedding_model, c.meta.embedding_windows = embedder.model_id, w
    by_id = {c.id: c for c in chunks}
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="ablation-") as tmp:
        part = f"{lang}|document"
        write_partitions(tmp, "chunks", {part: chunk_rows(chunks, vectors, part, langs=[lang])})
        build_s = time.perf_counter() - t0
        index_bytes = dir_bytes(tmp)
        tbl = open_table(tmp, "chunks")
        counter = _answer_tokens(by_id, docs)
        ranked = rank_all(tbl, questions, qvecs, chunks, vectors, lang, abl, lcfg)
        for retriever in retrievers or abl.retrievers:
            rankings = {qid: _hits(lst, by_id) for qid, lst in ranked[retriever].items()}
            p50, p95 = latency_ms(tbl, questions, qvecs, lang, abl, lcfg, retriever)
            row: dict[str, Any] = {"lang": lang, "mode": mode, "size_tokens": size, "overlap_ratio": overlap,
                                   "retriever": retriever}
            row.update(score_rankings(questions, rankings, abl, counter))
            row.update({"n_queries": len(questions), "n_chunks": len(chunks), "index_rows": len(chunks),
                        "index_dim": int(vectors.shape[1]) if len(chunks) else embedder.dim,
                        "index_bytes": index_bytes, "build_s": round(build_s, 2),
                        "p50_ms": round(p50, 2), "p95_ms": round(p95, 2),
                        "multi_window_chunks": int(sum(1 for w in wins if w > 1)),
                        "distractor_docs": sum(1 for d in corpus if not d.is_golden),
                        "distractor_chars": sum(len(d.text) for d in corpus if not d.is_golden),
                        "embedder": f"{embedder.model_id} ({embedder.backend})", "recommended": False,
                        "shared_with": None})
            rows.append(row)
    if memo is not None and not retrievers:
        memo.points[key] = (label, rows)
    return rows


def evaluate_language(lang: str, questions: list[GoldenQuestion], docs: dict[str, str], corpus: list[CorpusDoc],
                      cfg: ChunkingConfig, abl: AblationConfig, lcfg: LanceDBConfig, embedder, ecfg: EmbedderConfig,
                      cache: EmbeddingCache | None, progress=None, grid_done: int = 0,
                      grid_total: int | None = None) -> list[dict[str, Any]]:
    """All grid rows for one language (see module docstring).

    Each finished grid point is also reported as the progress phase ``ablation grid``
    (:func:`heritage_pipeline.core.progress.advance`): ``grid_done`` points were finished before this language, of
    ``grid_total`` in the whole run (default: this language's points).
    """
    from heritage_pipeline.core.progress import advance

    n_points = len(abl.modes) * len(abl.sizes) * len(abl.overlaps)
    grid_total = grid_total if grid_total is not None else grid_done + n_points
    rows: list[dict[str, Any]] = []
    advance("ablation grid", grid_done, grid_total, f"{lang}: embedding {len(questions)} questions")
    qvecs = embedder.embed_queries([q.question for q in questions]) if questions else np.zeros((0, embedder.dim))
    memo = GridMemo()
    for mode in abl.modes:
        for size in abl.sizes:
            for overlap in abl.overlaps:
                point = evaluate_point(lang, questions, qvecs, docs, corpus, cfg, abl, lcfg, embedder, ecfg, cache,
                                       mode, size, overlap, memo=memo)
                rows.extend(point)
                grid_done += 1
                advance("ablation grid", grid_done, grid_total,
                        f"{lang} {mode}-mode chunks, {size} tokens, {overlap:.0%} overlap")
                if progress and point and point[0].get("shared_with"):
                    progress(f"{lang} {mode} size={size} overlap={overlap:.2f}: same {point[0]['n_chunks']} chunks as "
                             f"{point[0]['shared_with']}: index and scores shared")
                elif progress:
                    best = max(point, key=lambda r: r["ndcg@10"])
                    progress(f"{lang} {mode} size={size} overlap={overlap:.2f}: {point[0]['n_chunks']} chunks, "
                             f"best nDCG@10 {best['ndcg@10']:.3f} ({best['retriever']}), build {point[0]['build_s']:.1f} s")
    return rows


def recommend(rows: list[dict[str, Any]], min_answer_in_budget: float = 0.93) -> dict[str, dict[str, Any]]:
    """Mark the recommended row per language (rule in the module docstring); returns lang -> explanation."""
    out: dict[str, dict[str, Any]] = {}
    for lang in sorted({r["lang"] for r in rows}):
        lr = [r for r in rows if r["lang"] == lang]
        by_ret: dict[str, list[float]] = {}
        for r in lr:
            by_ret.setdefault(r["retriever"], []).append(r["ndcg@10"])
        retriever = max(sorted(by_ret), key=lambda k: float(np.mean(by_ret[k])))
        cand = [r for r in lr if r["retriever"] == retriever]
        for r in cand:
            r["recommended"] = False
        eligible = [r for r in cand if r["answer_in_2000_tokens"] >= min_answer_in_budget] or cand
        best = max(r["ndcg@10"] for r in eligible)
        ties = [r for r in eligible if r["ndcg@10"] >= best - TIE_NDCG]
        chosen = sorted(ties, key=lambda r: (-r["answer_in_2000_tokens"], r["size_tokens"], r["overlap_ratio"], r["mode"]))[0]
        chosen["recommended"] = True
        others = ", ".join(f"{_label(k)} {np.mean(v):.3f}" for k, v in sorted(by_ret.items()) if k != retriever)
        why = (f"{_label(retriever)} retrieval has the best mean nDCG@10 over the grid "
               f"({np.mean(by_ret[retriever]):.3f}; {others}). Chosen: {chosen['mode']} chunking, "
               f"{chosen['size_tokens']} tokens, "
               f"{chosen['overlap_ratio']:.0%} overlap: nDCG@10 {chosen['ndcg@10']:.3f} "
               f"(95% CI {chosen['ndcg@10_ci'][0]:.3f}-{chosen['ndcg@10_ci'][1]:.3f}), MRR@10 {chosen['mrr@10']:.3f}, "
               f"hit@5 {chosen['hit@5']:.3f}, answer within 2000 tokens {chosen['answer_in_2000_tokens']:.3f}, "
               f"{chosen['n_chunks']} chunks.")
        if len(eligible) < len(cand):
            why += (f" {len(cand) - len(eligible)} of {len(cand)} settings put the answer within 2000 tokens for fewer "
                    f"than {min_answer_in_budget:.0%} of the questions and were not eligible.")
        elif min(r["answer_in_2000_tokens"] for r in cand) < min_answer_in_budget:
            why += f" No setting puts the answer within 2000 tokens for {min_answer_in_budget:.0%} of the questions."
        if len(ties) > 1:
            why += (f" {len(ties)} eligible settings are within {TIE_NDCG} nDCG@10 of the best ({best:.3f}); among them this one "
                    "puts the answer inside a 2000-token context most often (then: smaller size, smaller overlap).")
        top = max(cand, key=lambda r: (r["ndcg@10"], -r["size_tokens"]))
        if top is not chosen:
            why += (f" The highest nDCG@10 is {top['mode']} chunking {top['size_tokens']}/{top['overlap_ratio']:.0%} at "
                    f"{top['ndcg@10']:.3f} with answer within 2000 tokens {top['answer_in_2000_tokens']:.3f}: "
                    + _compare_to_top(top, chosen) + ".")
        sizes = sorted({r["size_tokens"] for r in cand})
        trend = [max(r["ndcg@10"] for r in cand if r["size_tokens"] == s) for s in sizes]
        budget = [max(r["answer_in_2000_tokens"] for r in cand if r["size_tokens"] == s) for s in sizes]
        why += (" Best nDCG@10 by size: " + ", ".join(f"{s}: {v:.3f}" for s, v in zip(sizes, trend)) +
                "; best answer-within-2000-tokens by size: " + ", ".join(f"{s}: {v:.3f}" for s, v in zip(sizes, budget)) + ".")
        ov = {}
        for r in cand:
            ov.setdefault((r["mode"], r["size_tokens"]), set()).add(r["n_chunks"])
        if all(len(v) == 1 for v in ov.values()) and len({r["overlap_ratio"] for r in cand}) > 1:
            why += (" Overlap changed no chunk count at any size/mode (the chunker's overlap had no effect on these "
                    "documents), so the overlap ranking is not informative here.")
        out[lang] = {"retriever": retriever, "mode": chosen["mode"], "size_tokens": chosen["size_tokens"],
                     "overlap_ratio": chosen["overlap_ratio"], "ndcg@10": chosen["ndcg@10"],
                     "mrr@10": chosen["mrr@10"], "hit@5": chosen["hit@5"],
                     "answer_in_2000_tokens": chosen["answer_in_2000_tokens"], "why": why}
    return out


def _compare_to_top(top: dict[str, Any], chosen: dict[str, Any]) -> str:
    """One clause comparing the best-ranking row with the chosen one, every word computed from the two rows."""
    if top["size_tokens"] == chosen["size_tokens"]:
        what = f"at the same size ({top['size_tokens']} tokens)"
        if top["overlap_ratio"] != chosen["overlap_ratio"]:
            what += f" {top['overlap_ratio']:.0%} overlap instead of {chosen['overlap_ratio']:.0%}"
        if top["mode"] != chosen["mode"]:
            what += f" {top['mode']} mode instead of {chosen['mode']}"
    else:
        what = (f"{'larger' if top['size_tokens'] > chosen['size_tokens'] else 'smaller'} chunks "
                f"({top['size_tokens']} vs {chosen['size_tokens']} tokens)")
    d_ndcg = top["ndcg@10"] - chosen["ndcg@10"]
    d_budget = top["answer_in_2000_tokens"] - chosen["answer_in_2000_tokens"]
    budget = ("put the answer within 2000 tokens as often" if abs(d_budget) < 5e-4 else
              f"put the answer within 2000 tokens {'more' if d_budget > 0 else 'less'} often ({d_budget:+.3f})")
    return f"{what} rank the right passage {d_ndcg:+.3f} nDCG@10 higher and {budget}"


def describe_corpus(golden_dirs: dict[str, Path], inputs: dict[str, tuple[list, dict, list]]) -> list[str]:
    """What the report was measured on, per language, read from the golden sets and the corpus actually used.

    Args:
        golden_dirs: language -> golden-set folder (its optional ``manifest.json`` names the source data set).
        inputs: language -> (questions, golden documents, corpus documents) as evaluated.

    Returns:
        One sentence per language (questions, golden documents and their source, distractors in documents and
        characters; "no distractor documents" when there were none).
    """
    out = []
    for lang, (questions, docs, corpus) in sorted(inputs.items()):
        src = ""
        manifest = Path(golden_dirs[lang]) / "manifest.json"
        if manifest.is_file():
            try:
                name = json.loads(manifest.read_text(encoding="utf-8")).get("src")
            except ValueError:
                name = None
            src = f" from {name}" if name else ""
        distractors = [d for d in corpus if not d.is_golden]
        dist = (f"{len(distractors)} distractor documents ({sum(len(d.text) for d in distractors):,} characters)"
                if distractors else "no distractor documents")
        out.append(f"{lang}: {len(questions)} questions on {len(docs)} golden documents{src} "
                   f"({golden_dirs[lang]}), with {dist}.")
    return out


def compare_embedders(lang: str, questions: list[GoldenQuestion], docs: dict[str, str], corpus: list[CorpusDoc],
                      cfg: ChunkingConfig, abl: AblationConfig, lcfg: LanceDBConfig, rec: dict[str, Any],
                      cache: EmbeddingCache | None, progress=None) -> list[dict[str, Any]]:
    """Vector and hybrid rows of every ``abl.embedder_candidates`` model at the language's recommended setting."""
    rows = []
    for ecfg in abl.embedder_candidates:
        emb = make_embedder(ecfg)
        t = time.perf_counter()
        qvecs = emb.embed_queries([q.question for q in questions])
        q_per_s = len(questions) / max(time.perf_counter() - t, 1e-9)
        for r in evaluate_point(lang, questions, qvecs, docs, corpus, cfg, abl, lcfg, emb, ecfg, cache, rec["mode"],
                                rec["size_tokens"], rec["overlap_ratio"], retrievers=["vector", "hybrid"]):
            r["queries_per_s"] = round(q_per_s, 1)
            r.pop("recommended", None)
            rows.append(r)
            if progress:
                progress(f"{lang} embedder {r['embedder']} {r['retriever']}: nDCG@10 {r['ndcg@10']:.3f}")
    return rows


def _label(retriever: str) -> str:
    """The retriever's display name (``hybrid`` -> ``BM25+vector``: "hybrid" names a chunking mode in the report)."""
    return RETRIEVER_LABELS.get(retriever, retriever)


def to_markdown(rows: list[dict[str, Any]], recs: dict[str, dict[str, Any]], embedder_rows: list[dict[str, Any]] = (),
                corpus: list[str] | None = None, presets: dict[str, Any] | None = None) -> str:
    """The report's Markdown: recommendation per language, what it was measured on, the embedders, every row.

    Args:
        rows: the grid rows; recs: the recommendations (:func:`recommend`); embedder_rows: :func:`compare_embedders`.
        corpus: sentences describing the evaluated corpus (:func:`describe_corpus`); omitted when None.
        presets: the domain presets of the chunking config (``domains.presets``: name -> size_tokens and
            overlap_ratio), named as not re-tuned by this report; omitted when None.

    Returns:
        Markdown text.
    """
    if not rows:
        return ("No golden set was evaluated: no `<golden>/<lang>/golden.jsonl` was found for the configured "
                "languages (`ablation.languages`), so there is nothing to report.")
    lines = ["## Recommendation", ""]
    for lang, rec in recs.items():
        lines.append(f"**{lang}** ({_label(rec['retriever'])} retrieval, {rec['mode']} chunking, {rec['size_tokens']} "
                     f"tokens / {rec['overlap_ratio']:.0%} overlap): {rec['why']}")
        lines.append("")
    if corpus:
        lines += ["Measured on: " + " ".join(corpus), ""]
    if presets:
        shown = ", ".join(f"{name} {p.size_tokens}/{p.overlap_ratio:.0%}" for name, p in sorted(presets.items()))
        lines += [f"The domain presets of the chunking config ({shown}) are applied by the pipeline to documents "
                  "their rules match; this report measures the sizes of `ablation.sizes` on the corpus above and "
                  "does not re-tune those presets.", ""]
    if embedder_rows:
        lines += ["## Embedders at the recommended setting", "",
                  "| lang | embedder | retriever | hit@5 | MRR@10 | nDCG@10 (95% CI) | in 2000 tok | dim | queries/s |",
                  "|---|---|---|---|---|---|---|---|---|"]
        for r in embedder_rows:
            lines.append(f"| {r['lang']} | {r['embedder']} | {_label(r['retriever'])} | {r['hit@5']:.3f} | {r['mrr@10']:.3f} | "
                         f"{r['ndcg@10']:.3f} ({r['ndcg@10_ci'][0]:.3f}-{r['ndcg@10_ci'][1]:.3f}) | "
                         f"{r['answer_in_2000_tokens']:.3f} | {r['index_dim']} | {r['queries_per_s']} |")
        lines.append("")
    lines += ["## All settings", "",
              "| lang | chunking mode | size | overlap | retriever | hit@5 | MRR@10 | nDCG@10 (95% CI) | nDCG@10 para | in 2000 tok | chunks | index KB | build s | p50 / p95 ms |",
              "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        mark = " **★**" if r["recommended"] else ""
        lines.append(f"| {r['lang']} | {r['mode']} | {r['size_tokens']} | {r['overlap_ratio']:.2f} | {_label(r['retriever'])}{mark} | "
                     f"{r['hit@5']:.3f} | {r['mrr@10']:.3f} | {r['ndcg@10']:.3f} ({r['ndcg@10_ci'][0]:.3f}-{r['ndcg@10_ci'][1]:.3f}) | "
                     f"{r['ndcg@10_paragraph']:.3f} | {r['answer_in_2000_tokens']:.3f} | {r['n_chunks']} | "
                     f"{r['index_bytes'] // 1024} | {r['build_s']:.1f} | {r['p50_ms']:.1f} / {r['p95_ms']:.1f} |")
    lines.append("")
    return "\n".join(lines)


def plot(rows: list[dict[str, Any]], recs: dict[str, dict[str, Any]], path: Path) -> None:
    """nDCG@10 vs size with 95% CI bars, one line per (mode, overlap), one panel per language (its retriever)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    langs = sorted(recs)
    fig, axes = plt.subplots(1, max(1, len(langs)), figsize=(6 * max(1, len(langs)), 4.5), squeeze=False)
    for ax, lang in zip(axes[0], langs):
        rec = recs[lang]
        sel = [r for r in rows if r["lang"] == lang and r["retriever"] == rec["retriever"]]
        modes = sorted({r["mode"] for r in sel})
        overlaps = sorted({r["overlap_ratio"] for r in sel})
        n = len(modes) * len(overlaps)
        for i, (mode, ov) in enumerate((m, o) for m in modes for o in overlaps):
            pts = sorted((r for r in sel if r["overlap_ratio"] == ov and r["mode"] == mode), key=lambda r: r["size_tokens"])
            if not pts:
                continue
            x = [r["size_tokens"] + (i - (n - 1) / 2) * 6 for r in pts]  # small dodge so CI bars do not overlap
            y = [r["ndcg@10"] for r in pts]
            err = [[r["ndcg@10"] - r["ndcg@10_ci"][0] for r in pts], [r["ndcg@10_ci"][1] - r["ndcg@10"] for r in pts]]
            ax.errorbar(x, y, yerr=err, marker="o", capsize=3, label=f"{mode} chunking, overlap {ov:.0%}")
        star = next((r for r in sel if r["recommended"]), None)
        if star:
            ax.scatter([star["size_tokens"]], [star["ndcg@10"]], marker="*", s=220, color="black", zorder=5, label="recommended")
        ax.set_title(f"{lang}: nDCG@10 ({_label(rec['retriever'])} retrieval)")
        ax.set_xlabel("chunk size (cl100k tokens)")
        ax.set_ylabel("nDCG@10, 95% bootstrap CI")
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def write_report(rows: list[dict[str, Any]], out_dir: str | Path, embedder_rows: list[dict[str, Any]] = (),
                 recs: dict[str, dict[str, Any]] | None = None, corpus: list[str] | None = None,
                 presets: dict[str, Any] | None = None) -> AblationResult:
    """Mark recommendations and write ``ablation.json``, ``ablation.csv``, ``ablation.md``, ``ablation.png``
    (and ``embedders.json`` when embedders were compared); ``corpus`` and ``presets`` see :func:`to_markdown`."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    recs = recs if recs is not None else recommend(rows)
    md = to_markdown(rows, recs, list(embedder_rows), corpus, presets)
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
    if embedder_rows:
        paths["embedders"] = str(out / "embedders.json")
        Path(paths["embedders"]).write_text(json.dumps(list(embedder_rows), indent=1) + "\n", encoding="utf-8")
    if rows:
        plot(rows, recs, Path(paths["plot"]))
    return AblationResult(rows, recs, md, paths, list(embedder_rows))


def read_distractor_files(paths: list[Path]) -> dict[Path, tuple[str, str]]:
    """Each Markdown file's text (BOM removed) and detected language, read and detected once, for
    :func:`distractor_docs` called once per golden language (detecting every file again per language cost about
    half a second of the bundled run per extra language).

    Args:
        paths: Markdown files.

    Returns:
        path -> (text, ISO 639-1 code of :func:`heritage_pipeline.enrich.langid.detect_language`, or ``und``).
    """
    from heritage_pipeline.enrich.langid import detect_language

    out: dict[Path, tuple[str, str]] = {}
    for p in paths:
        text = p.read_text(encoding="utf-8", errors="replace").removeprefix("\ufeff")
        out[p] = (text, detect_language(text)[0])
    return out


def distractor_docs(paths: list[Path], lang: str | None, max_chars: int | None, root: Path | None = None,
                    files: dict[Path, tuple[str, str]] | None = None) -> list[CorpusDoc]:
    """Markdown distractors from explicit files (sorted order, whole files) until ``max_chars`` characters (None: all).

    When ``lang`` is given, files whose detected language differs are skipped.

    Args:
        paths: Markdown files.
        lang: the golden set's language, or None for every file.
        max_chars: character budget (None: all files).
        root: doc ids are relative to it when given.
        files: :func:`read_distractor_files` of ``paths`` (text and language), so callers looping over languages
            read and detect each file once; read and detected here when None.

    Returns:
        The distractor documents.
    """
    from heritage_pipeline.enrich.langid import detect_language

    out: list[CorpusDoc] = []
    total = 0
    for p in sorted(paths):
        if files is not None and p in files:
            text, detected = files[p]
        else:
            text = p.read_text(encoding="utf-8", errors="replace").removeprefix("\ufeff")
            detected = detect_language(text)[0] if lang is not None else None
        if lang is not None and detected != lang:
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
                 abl: AblationConfig, embedders: dict[str, Any], cache: EmbeddingCache | None, out_dir: str | Path,
                 progress=None, lcfg: LanceDBConfig | None = None, ecfg: EmbedderConfig | None = None) -> AblationResult:
    """Run the grid for each language folder in ``golden_dirs`` and write the report to ``out_dir``.

    ``embedders``: language -> embedder (key ``default`` for the others), or one embedder for all languages.
    """
    lcfg = lcfg or LanceDBConfig()
    ecfg = ecfg or EmbedderConfig()
    if not isinstance(embedders, dict):
        embedders = {"default": embedders}
    rows: list[dict[str, Any]] = []
    inputs = {}
    n_points = len(abl.modes) * len(abl.sizes) * len(abl.overlaps)
    for i, (lang, folder) in enumerate(sorted(golden_dirs.items())):
        questions, docs = load_golden(folder, abl.max_questions_per_language)
        corpus = [CorpusDoc(doc_id, text, True) for doc_id, text in sorted(docs.items())] + distractors.get(lang, [])
        inputs[lang] = (questions, docs, corpus)
        emb = embedders.get(lang, embedders.get("default"))
        rows.extend(evaluate_language(lang, questions, docs, corpus, cfg, abl, lcfg, emb, ecfg, cache, progress,
                                      grid_done=i * n_points, grid_total=len(golden_dirs) * n_points))
    recs = recommend(rows, abl.min_answer_in_budget)
    embedder_rows: list[dict[str, Any]] = []
    if abl.embedder_candidates:
        for lang, (questions, docs, corpus) in inputs.items():
            embedder_rows += compare_embedders(lang, questions, docs, corpus, cfg, abl, lcfg, recs[lang], cache, progress)
    return write_report(rows, out_dir, embedder_rows, recs, describe_corpus(golden_dirs, inputs), cfg.domains.presets)
