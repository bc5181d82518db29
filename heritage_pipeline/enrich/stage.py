"""The enrichment stage: keywords, light NER, per-chunk language, tables and code blocks, section embeddings.

* ``meta.keywords``: ``embedding`` (default; :func:`~heritage_pipeline.enrich.keywords.embedding_keywords`:
  candidates from the chunk alone ranked by cosine to the chunk's passage vector, MMR diversity, ``top_k``), KeyBERT
  on the embedder resource's own model (no second model) batched per language, or RAKE
  (:func:`~heritage_pipeline.enrich.keywords.rake_keywords`); per-language stop words from ``stop-words``.
* ``meta.entities``: ``{label: [names]}`` for ORG, PRODUCT, LAW, API, CLASS, FUNC by rules
  (:func:`~heritage_pipeline.enrich.ner.simple_ner`).
* ``meta.lang`` = ``meta.language``: per-chunk language, ``meta.lang_confidence`` its detection's confidence
  (:func:`heritage_pipeline.enrich.langid.chunk_language`: inherited from the document below the threshold; a
  row of a single-language registry takes its file's language undetected, confidence None).
* tables and code blocks -> ``meta.table_*`` / ``meta.code_*`` (:func:`enrich_structure`).
* ``section_emb``: embedding of ``" › ".join(anchors)``, once per distinct breadcrumb (and never again with the
  embedding cache).
"""

from __future__ import annotations

import time
from contextlib import contextmanager
from functools import lru_cache

import numpy as np

from heritage_pipeline.chunking.ids import breadcrumb
from heritage_pipeline.core.config import ChunkingConfig
from heritage_pipeline.core.models import Chunk

from .keywords import embedding_keywords, is_registry_row, keybert_keywords, rake_keywords, record_keywords
from .langid import chunk_language, policy_from
from .ner import simple_ner


# ---------------------------------------------------------------------------------------------------- the stage
@contextmanager
def timed(timings: dict[str, float] | None, name: str):
    """Add the wall seconds of the ``with`` block to ``timings[name]`` (nothing when ``timings`` is None)."""
    t0 = time.perf_counter()
    try:
        yield
    finally:
        if timings is not None:
            timings[name] = timings.get(name, 0.0) + time.perf_counter() - t0


@lru_cache(maxsize=4)
def _tokenizer(name: str):
    from heritage_pipeline.core.tokenizer import get_tokenizer

    return get_tokenizer(name)


def enrich_structure(c: Chunk, config: ChunkingConfig) -> None:
    """Tables and code blocks of one chunk -> ``meta.table_text/table_digest/table_summary`` and
    ``meta.code_languages/code_paths/code_summary`` (:mod:`heritage_pipeline.enrich.tables`,
    :mod:`heritage_pipeline.enrich.codeblocks`). The chunk text is not touched."""
    from .codeblocks import code_meta
    from .tables import table_meta

    t = config.context.tables
    tm = table_meta(c.text, c.meta.context_prefix, fmt=t.render, max_rows=t.max_rows, summarize=t.summarize,
                    summarize_over_rows=t.summarize_over_rows, summarize_over_cols=t.summarize_over_cols)
    c.meta.table_text, c.meta.table_digest, c.meta.table_summary = tm.table_text, tm.table_digest, tm.table_summary
    cm = code_meta(c.text, c.meta.context_prefix, count_tokens=_tokenizer(config.tokenizer).count)
    c.meta.code_languages, c.meta.code_paths, c.meta.code_summary = cm.languages, cm.paths, cm.summary


def section_embeddings(chunks: list[Chunk], embedder, cache=None) -> int:
    """``section_emb`` = embedding of ``" › ".join(anchors)`` for every chunk with anchors (None without).

    Each distinct breadcrumb is embedded once per call, and at most once ever when ``cache``
    (:class:`heritage_pipeline.embed.cache.EmbeddingCache`) is given, with the embedder's short-text thread count
    (:func:`heritage_pipeline.embed.windows.short_texts`). Returns how many were embedded now."""
    from heritage_pipeline.embed.cache import embed_with_cache
    from heritage_pipeline.embed.windows import short_texts

    crumbs = sorted({breadcrumb(c.meta.anchors) for c in chunks if c.meta.anchors})
    if not crumbs:
        for c in chunks:
            c.section_emb = None
        return 0
    with short_texts(embedder):  # breadcrumbs are short: the backend's short-text threads (USE: 1)
        vecs, _, n_new = embed_with_cache(embedder, crumbs, cache, prefix=getattr(embedder, "passage_prefix", ""))
    table = {b: vecs[i].astype(float).round(6).tolist() for i, b in enumerate(crumbs)}
    for c in chunks:
        c.section_emb = table.get(breadcrumb(c.meta.anchors)) if c.meta.anchors else None
    return n_new


def enrich_chunks(chunks: list[Chunk], config: ChunkingConfig, embedder=None, doc_vectors: np.ndarray | None = None,
                  cache=None, timings: dict[str, float] | None = None) -> list[Chunk]:
    """Fill, in place, on every chunk: ``meta.lang`` = ``meta.language`` and ``meta.lang_confidence``
    (:func:`heritage_pipeline.enrich.langid.chunk_language`: the document language unless the chunk's own detection
    is confident; a registry row always its file's), table and code metadata
    (:func:`enrich_structure`), ``meta.entities`` (:func:`simple_ner`, merged with entities already present),
    ``meta.keywords`` (KeyBERT batched per language, or RAKE) and ``section_emb``. Returns ``chunks``.

    Registry rows (:func:`~heritage_pipeline.enrich.keywords.is_registry_row`) get their slot values as keywords
    (:func:`~heritage_pipeline.enrich.keywords.record_keywords`) and no section embedding (``section_emb`` None: the
    row is its own section).

    Args:
        chunks: the chunks to enrich (modified in place).
        config: the chunking config (``context.*``).
        embedder: required for ``embedding`` / ``keybert`` keywords and section embeddings.
        doc_vectors: window-mean passage vectors of the embedding stage, [n_chunks, dim] or only the rows of the
            chunks that are not registry records, in order; ``embedding`` keywords rank against them (required for
            that method), KeyBERT gets them so long chunks are not truncated.
        cache: the embedding cache (breadcrumbs, keyword candidates).
        timings: when given, wall seconds per sub-step are added to it (``langid``, ``tables_code``, ``ner``,
            ``keywords``, ``section_embeddings``), for the profile (:mod:`heritage_pipeline_eval.bench.profile`).

    Returns:
        ``chunks``.

    Raises:
        ValueError: an embedding-based keyword method is configured without an embedder or chunk vectors.
    """
    ctx = config.context
    policy = policy_from(config)
    for c in chunks:
        with timed(timings, "langid"):
            # (meta.language arrives as the document's language from the chunker; afterwards both are the chunk's)
            lang, conf = chunk_language(c.text, c.meta.language, policy=policy, source_type=c.meta.source_type)
            c.meta.lang = c.meta.language = lang
            c.meta.lang_confidence = round(conf, 4) if conf is not None else None
        with timed(timings, "tables_code"):
            enrich_structure(c, config)
        if ctx.entities.ner == "simple":
            with timed(timings, "ner"):
                found = simple_ner(c.text, ctx.entities.keep, c.meta.context_prefix, c.meta.lang)
                merged = {k: list(v) for k, v in c.meta.entities.items()}
                for label, names in found.items():
                    bucket = merged.setdefault(label, [])
                    bucket.extend(n for n in names if n not in bucket)
                c.meta.entities = merged
    method = ctx.keywords.method
    records = [c for c in chunks if is_registry_row(c)]
    prose = [c for c in chunks if not is_registry_row(c)]
    if doc_vectors is not None and len(doc_vectors) == len(chunks) and records:
        doc_vectors = doc_vectors[[i for i, c in enumerate(chunks) if not is_registry_row(c)]]
    with timed(timings, "keywords"):
        if method != "none":
            for c in records:  # a registry row's keywords are its slot values: no KeyBERT / RAKE on `slot: value` lines
                c.meta.keywords = record_keywords(c)
        if method == "rake":
            for c in prose:
                c.meta.keywords = rake_keywords(c.text, c.meta.lang, ctx.keywords.top_k)
        elif method == "embedding" and prose:
            if embedder is None or doc_vectors is None:
                raise ValueError("context.keywords.method is embedding but no embedder / chunk vectors were given")
            kws = embedding_keywords([c.text for c in prose], [c.meta.lang for c in prose], embedder, doc_vectors,
                                     top_k=ctx.keywords.top_k, diversity=ctx.keywords.diversity, cache=cache)
            for c, k in zip(prose, kws):
                c.meta.keywords = k
        elif method == "keybert" and prose:
            if embedder is None:
                raise ValueError("context.keywords.method is keybert but no embedder was given")
            kws = keybert_keywords([c.text for c in prose], [c.meta.lang for c in prose], embedder,
                                   top_k=ctx.keywords.top_k, diversity=ctx.keywords.diversity, doc_vectors=doc_vectors,
                                   cache=cache)
            for c, k in zip(prose, kws):
                c.meta.keywords = k
    if ctx.section_embedding and embedder is not None and prose:
        with timed(timings, "section_embeddings"):
            section_embeddings(prose, embedder, cache)
    for c in records:  # a row is its own section: its breadcrumb is its name, already in the passage vector
        c.section_emb = None
    return chunks
