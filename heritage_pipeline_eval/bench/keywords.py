"""Keywords: cost against the embedding floor and quality, KeyBERT (before) vs embedding-ranked candidates (after).

Chunks: the pipeline's own parse + chunk + per-chunk language over the bundled ``data/raw`` and the shared real-world
files (``../shared/data/realworld``: Dutch erfgoed READMEs, German museum handouts, ...) plus the shared FastAPI
docs in de/fr; a fixed sample of ``--n`` chunks per language in nl, en, fr, de (at least ``--min-chars``
characters), every other chunk of the sample in the tuning split, the rest held out (by chunk id hash).

Measured in one run, same embedder (``configs/pipeline.yaml``), same chunk vectors:

* ``embedding``: the chunks' passage vectors (the embedding stage's work, the floor);
* ``keybert``: :func:`~heritage_pipeline.enrich.keywords.keybert_keywords` (the method before), no warm cache;
* ``embedding keywords cold``: :func:`~heritage_pipeline.enrich.keywords.embedding_keywords` with an empty
  candidate cache; ``warm``: the same again (every candidate vector cached, as in a rerun);
* ``overlap@6``: |ours ∩ KeyBERT's| / |KeyBERT's| per chunk, mean;
* ``P@6`` on the hand-judged set ``data/eval/keywords/judged.jsonl`` (per chunk the phrases judged relevant among
  the union of both methods' keywords, judged without knowing which method proposed them): |ours ∩ relevant| /
  |ours|, mean, per split and language. ``--write-judging`` writes the file to judge (``relevant`` empty).

Usage: python -m heritage_pipeline_eval.bench.keywords [--n 25] [--write-judging]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[2]
SHARED = REPO.parents[1] / "shared" / "data" if (REPO.parents[1] / "shared").is_dir() else Path("/work/shared/data")
JUDGED = REPO / "data" / "eval" / "keywords" / "judged.jsonl"
LANGS = ("nl", "en", "fr", "de")


def sample_chunks(n: int, min_chars: int) -> list[dict]:
    """``n`` chunks per language of :data:`LANGS` (fixed order by chunk id hash), each ``{id, lang, split, text,
    passage}`` (``passage`` = the string the embedding stage embeds)."""
    from heritage_pipeline.core.config import load_chunking_config, load_pipeline_config
    from heritage_pipeline.enrich.langid import detect_chunk_language
    from heritage_pipeline.sources.discovery import discover, load_source
    from heritage_pipeline.stages import chunk_documents, parse_sources, passage_text

    cfg = load_chunking_config()
    ecfg = load_pipeline_config().embedder
    sources = [s for s in discover(REPO / "data") + discover(SHARED / "realworld") if s.status != "skipped"]
    for lang in ("de", "fr"):
        for p in sorted((SHARED / "docs" / "fastapi" / lang).rglob("*.md"))[:40]:
            sources.append(load_source(p, source_type="document", rel_path=f"fastapi/{lang}/{p.name}"))
    docs = parse_sources(sources, cfg).docs
    chunks = chunk_documents(docs, cfg)
    by_lang: dict[str, list] = defaultdict(list)
    for c in chunks:
        if len(c.text) < min_chars:
            continue
        lang = detect_chunk_language(c.text, c.meta.language)
        if lang in LANGS:
            c.meta.lang = lang
            by_lang[lang].append(c)
    out = []
    for lang in LANGS:
        pool = sorted(by_lang[lang], key=lambda c: hashlib.sha256(c.id.encode()).hexdigest())[:n]
        for i, c in enumerate(pool):
            out.append({"id": c.id, "lang": lang, "split": "tune" if i % 2 == 0 else "heldout", "text": c.text,
                        "passage": passage_text(c, ecfg.context_prefix), "source": c.meta.source_path})
    return out


def precision(ours: list[str], relevant: set[str]) -> float:
    """|ours ∩ relevant| / |ours| (0.0 for no keyword)."""
    return sum(1 for k in ours if k in relevant) / len(ours) if ours else 0.0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=25, help="chunks per language (nl, en, fr, de)")
    ap.add_argument("--min-chars", type=int, default=300)
    ap.add_argument("--write-judging", action="store_true", help=f"write {JUDGED} with empty judgements")
    args = ap.parse_args()

    from heritage_pipeline.core.config import load_pipeline_config
    from heritage_pipeline.embed.cache import EmbeddingCache
    from heritage_pipeline.embed.embedders import make_embedder
    from heritage_pipeline.enrich.keywords import embedding_keywords, keybert_keywords

    t0 = time.perf_counter()
    items = sample_chunks(args.n, args.min_chars)
    counts = ", ".join(f"{lg} {sum(1 for i in items if i['lang'] == lg)}" for lg in LANGS)
    print(f"sample: {len(items)} chunks ({counts}), "
          f"mean {np.mean([len(i['text']) for i in items]):.0f} chars, built in {time.perf_counter() - t0:.0f} s")
    emb = make_embedder(load_pipeline_config().embedder)
    emb.embed_passages(["warm up"])
    texts, langs = [i["text"] for i in items], [i["lang"] for i in items]
    t0 = time.perf_counter()
    vecs, _ = emb.embed_passages([i["passage"] for i in items])
    t_emb = time.perf_counter() - t0
    with tempfile.TemporaryDirectory() as tmp:
        cache = EmbeddingCache(Path(tmp) / "c.sqlite")
        t0 = time.perf_counter()
        ours = embedding_keywords(texts, langs, emb, vecs, top_k=6, diversity=0.5, cache=cache)
        t_cold = time.perf_counter() - t0
        t0 = time.perf_counter()
        again = embedding_keywords(texts, langs, emb, vecs, top_k=6, diversity=0.5, cache=cache)
        t_warm = time.perf_counter() - t0
        cache.close()
    assert again == ours
    t0 = time.perf_counter()
    kb = keybert_keywords(texts, langs, emb, top_k=6, diversity=0.5, doc_vectors=vecs)
    t_kb = time.perf_counter() - t0
    print(f"embedder {emb.model_id}: chunk vectors {t_emb:.2f} s ({len(items) / t_emb:.1f} chunks/s)")
    print(f"keybert (before):          {t_kb:.2f} s = {t_kb / t_emb:.2f}x embedding")
    print(f"embedding keywords cold:   {t_cold:.2f} s = {t_cold / t_emb:.3f}x embedding (empty candidate cache)")
    print(f"embedding keywords warm:   {t_warm:.2f} s = {t_warm / t_emb:.3f}x embedding (candidates cached)")
    overlap = [len(set(o) & set(k)) / len(k) for o, k in zip(ours, kb) if k]
    by_lang = {lg: np.mean([len(set(o) & set(k)) / len(k) for o, k, la in zip(ours, kb, langs) if k and la == lg])
               for lg in LANGS}
    print(f"overlap@6 with KeyBERT: {np.mean(overlap):.3f} over {len(overlap)} chunks; by language: "
          + ", ".join(f"{lg} {v:.3f}" for lg, v in by_lang.items()))
    if args.write_judging:
        JUDGED.parent.mkdir(parents=True, exist_ok=True)
        with open(JUDGED, "w", encoding="utf-8") as f:
            for it, o, k in zip(items, ours, kb):
                row = {"id": it["id"], "lang": it["lang"], "split": it["split"], "source": it["source"],
                       "text": it["text"], "candidates": sorted(set(o) | set(k)), "relevant": []}
                f.write(json.dumps(row, ensure_ascii=False) + "\n")
        print(f"wrote {JUDGED} ({len(items)} chunks to judge)")
        return
    if not JUDGED.exists():
        print(f"(no {JUDGED}: run with --write-judging and judge it)")
        return
    judged = {r["id"]: r for r in map(json.loads, JUDGED.read_text(encoding="utf-8").splitlines())}
    rows = [(it, o, k) for it, o, k in zip(items, ours, kb) if it["id"] in judged]
    unjudged = sum(1 for it, o, k in rows for p in set(o) | set(k) if p not in judged[it["id"]]["candidates"])
    print(f"hand-judged: {len(rows)} of {len(items)} chunks in the judged set; {unjudged} proposed phrases not judged "
          "(counted as not relevant)")
    for split in ("tune", "heldout", "all"):
        sel = [(it, o, k) for it, o, k in rows if split == "all" or it["split"] == split]
        if not sel:
            continue
        p_kb = np.mean([precision(k, set(judged[it["id"]]["relevant"])) for it, o, k in sel])
        p_ours = np.mean([precision(o, set(judged[it["id"]]["relevant"])) for it, o, k in sel])
        parts = []
        for lg in LANGS:
            sub = [(it, o, k) for it, o, k in sel if it["lang"] == lg]
            if sub:
                rel = [set(judged[it["id"]]["relevant"]) for it, _, _ in sub]
                before = np.mean([precision(k, r) for (_, _, k), r in zip(sub, rel)])
                after = np.mean([precision(o, r) for (_, o, _), r in zip(sub, rel)])
                parts.append(f"{lg} {before:.3f}->{after:.3f}")
        per_lang = ", ".join(parts)
        print(f"P@6 {split:8s} ({len(sel)} chunks): KeyBERT {p_kb:.3f} -> ours {p_ours:.3f}   [{per_lang}]")


if __name__ == "__main__":
    main()
