"""The enrichment stage: keywords, light NER, per-chunk language, tables and code blocks, section embeddings.

* ``meta.keywords``: KeyBERT (MMR diversity, ``top_k``) on the embedder resource's own model (no second model), with
  per-language stop words from the ``stop-words`` package, batched per language; or RAKE
  (:func:`~heritage_pipeline.enrich.keywords.rake_keywords`).
* ``meta.entities``: ``{label: [names]}`` for ORG, PRODUCT, LAW, API, CLASS, FUNC by rules
  (:func:`~heritage_pipeline.enrich.ner.simple_ner`).
* ``meta.lang`` = ``meta.language``: per-chunk language, ``meta.lang_confidence`` its detection's confidence
  (:func:`heritage_pipeline.enrich.langid.chunk_language`: inherited from the document below the threshold).
* tables and code blocks -> ``meta.table_*`` / ``meta.code_*`` (:func:`enrich_structure`).
* ``section_emb``: embedding of ``" › ".join(anchors)``, once per distinct breadcrumb (and never again with the
  embedding cache).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from heritage_pipeline.chunking.ids import breadcrumb
from heritage_pipeline.core.config import ChunkingConfig
from heritage_pipeline.core.models import Chunk

from .keywords import keybert_keywords, rake_keywords
from .langid import chunk_language, policy_from
from .ner import simple_ner


# ---------------------------------------------------------------------------------------------------- the stage
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
    (:class:`heritage_pipeline.embed.cache.EmbeddingCache`) is given. Returns how many were embedded now."""
    from heritage_pipeline.embed.cache import embed_with_cache

    crumbs = sorted({breadcrumb(c.meta.anchors) for c in chunks if c.meta.anchors})
    if not crumbs:
        for c in chunks:
            c.section_emb = None
        return 0
    vecs, _, n_new = embed_with_cache(embedder, crumbs, cache, prefix=getattr(embedder, "passage_prefix", ""))
    table = {b: vecs[i].astype(float).round(6).tolist() for i, b in enumerate(crumbs)}
    for c in chunks:
        c.section_emb = table.get(breadcrumb(c.meta.anchors)) if c.meta.anchors else None
    return n_new


def enrich_chunks(chunks: list[Chunk], config: ChunkingConfig, embedder=None, doc_vectors: np.ndarray | None = None,
                  cache=None) -> list[Chunk]:
    """Fill, in place, on every chunk: ``meta.lang`` = ``meta.language`` and ``meta.lang_confidence``
    (:func:`heritage_pipeline.enrich.langid.chunk_language`: the document language unless the chunk's own detection
    is confident; a registry row always its file's), table and code metadata
    (:func:`enrich_structure`), ``meta.entities`` (:func:`simple_ner`, merged with entities already present),
    ``meta.keywords`` (KeyBERT batched per language, or RAKE) and ``section_emb``. Returns ``chunks``.

    ``embedder`` is required for KeyBERT keywords and section embeddings; ``doc_vectors`` ([n_chunks, dim], the
    window-mean passage vectors) are handed to KeyBERT so long chunks are not truncated; ``cache`` is the
    embedding cache used for the breadcrumbs. Raises ValueError when KeyBERT is configured without an embedder.
    """
    ctx = config.context
    policy = policy_from(config)
    for c in chunks:
        # (meta.language arrives as the document's language from the chunker; afterwards both are the chunk's)
        lang, conf = chunk_language(c.text, c.meta.language, policy=policy, source_type=c.meta.source_type)
        c.meta.lang = c.meta.language = lang
        c.meta.lang_confidence = round(conf, 4)
        enrich_structure(c, config)
        if ctx.entities.ner == "simple":
            found = simple_ner(c.text, ctx.entities.keep, c.meta.context_prefix, c.meta.lang)
            merged = {k: list(v) for k, v in c.meta.entities.items()}
            for label, names in found.items():
                bucket = merged.setdefault(label, [])
                bucket.extend(n for n in names if n not in bucket)
            c.meta.entities = merged
    method = ctx.keywords.method
    if method == "rake":
        for c in chunks:
            c.meta.keywords = rake_keywords(c.text, c.meta.lang, ctx.keywords.top_k)
    elif method == "keybert" and chunks:
        if embedder is None:
            raise ValueError("context.keywords.method is keybert but no embedder was given")
        kws = keybert_keywords([c.text for c in chunks], [c.meta.lang for c in chunks], embedder,
                               top_k=ctx.keywords.top_k, diversity=ctx.keywords.diversity, doc_vectors=doc_vectors,
                               cache=cache)
        for c, k in zip(chunks, kws):
            c.meta.keywords = k
    if ctx.section_embedding and embedder is not None and chunks:
        section_embeddings(chunks, embedder, cache)
    return chunks
