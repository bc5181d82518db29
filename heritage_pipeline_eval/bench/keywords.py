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
import math
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
    ap.add_argument("--write-missing", type=Path, help="write the proposed phrases not yet judged (jsonl) there")
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
    missing = {it["id"]: sorted(p for p in set(o) | set(k) if p not in judged[it["id"]]["candidates"])
               for it, o, k in rows}
    full = [(it, o, k) for it, o, k in rows if not missing[it["id"]]]
    print(f"hand-judged: {len(rows)} of {len(items)} chunks in the judged set; "
          f"{sum(map(len, missing.values()))} proposed phrases not judged in {sum(1 for m in missing.values() if m)} "
          f"chunks; fully judged (every top-6 phrase of both methods judged): {len(full)} chunks, "
          + ", ".join(f"{lg} {sum(1 for it, _, _ in full if it['lang'] == lg)}" for lg in LANGS))
    if args.write_missing:
        # chunks of the sample with a phrase not judged, and chunks not in the set at all (their ids changed with
        # the chunker since the set was judged)
        with open(args.write_missing, "w", encoding="utf-8") as f:
            for it, o, k in zip(items, ours, kb):
                todo = missing[it["id"]] if it["id"] in judged else sorted(set(o) | set(k))
                if todo:
                    f.write(json.dumps({"id": it["id"], "lang": it["lang"], "split": it["split"],
                                        "source": it["source"], "text": it["text"], "to_judge": todo},
                                       ensure_ascii=False) + "\n")
        print(f"wrote {args.write_missing}: the unjudged phrases, sorted alphabetically (method not shown)")
    rel = {i: set(judged[i]["relevant"]) for i in judged}
    a = agreement(list(judged.values()))
    if a:
        print(f"inter-judge agreement on {a['n']} phrases judged twice in {a['chunks']} chunks: raw {a['raw']:.3f}, "
              f"Cohen's kappa {a['kappa']:.3f} (both relevant {a['both']}, only first judge {a['first']}, "
              f"only second judge {a['second']}, neither {a['neither']})")
    for split in ("tune", "heldout", "all"):
        sel = [(it, o, k) for it, o, k in full if split == "all" or it["split"] == split]
        if not sel:
            continue
        for lg in (*LANGS, "all"):
            sub = [(it, o, k) for it, o, k in sel if lg == "all" or it["lang"] == lg]
            if not sub:
                continue
            pk = np.array([precision(k, rel[it["id"]]) for it, o, k in sub])
            po = np.array([precision(o, rel[it["id"]]) for it, o, k in sub])
            nk = np.mean([ndcg(k, rel[it["id"]]) for it, o, k in sub])
            no = np.mean([ndcg(o, rel[it["id"]]) for it, o, k in sub])
            lo, hi, p_sign, wins, losses = paired_stats(po - pk)
            print(f"{split:8s} {lg:3s} n={len(sub):3d}  P@6 KeyBERT {pk.mean():.3f} ours {po.mean():.3f} "
                  f"diff {po.mean() - pk.mean():+.3f} [95% bootstrap {lo:+.3f}, {hi:+.3f}]  "
                  f"sign test {wins}+/{losses}- p={p_sign:.3g}  nDCG@6 KeyBERT {nk:.3f} ours {no:.3f}")


def agreement(rows: list[dict]) -> dict | None:
    """Raw agreement and Cohen's kappa between the first judge of each row's ``judgements`` and each later judge, on
    the phrases both judged.

    Args:
        rows: judged-set rows; a row judged by one judge only (no ``judgements`` or one entry) is skipped.

    Returns:
        ``{n, chunks, raw, kappa, both, first, second, neither}``, or None when no phrase was judged twice.
    """
    both = first = second = neither = chunks = 0
    for r in rows:
        js = r.get("judgements", [])
        if len(js) < 2:
            continue
        pairs = [(p, js[0], j) for j in js[1:] for p in set(js[0]["candidates"]) & set(j["candidates"])]
        chunks += bool(pairs)
        for p, j0, j in pairs:
            a, b = p in j0["relevant"], p in j["relevant"]
            both += a and b
            first += a and not b
            second += b and not a
            neither += not a and not b
    n = both + first + second + neither
    if not n:
        return None
    raw = (both + neither) / n
    pe = ((both + first) * (both + second) + (second + neither) * (first + neither)) / n**2
    return {"n": n, "chunks": chunks, "raw": raw, "kappa": (raw - pe) / (1 - pe) if pe < 1 else 1.0,
            "both": both, "first": first, "second": second, "neither": neither}


def ndcg(ours: list[str], relevant: set[str], k: int = 6) -> float:
    """Binary-gain nDCG@k of the ranked list ``ours`` (ideal = min(k, |relevant|) relevant phrases first).

    Args:
        ours: ranked keywords, best first.
        relevant: the phrases judged relevant.
        k: cut-off.

    Returns:
        nDCG in [0, 1]; 0.0 when nothing is relevant.
    """
    dcg = sum(1 / np.log2(i + 2) for i, p in enumerate(ours[:k]) if p in relevant)
    ideal = sum(1 / np.log2(i + 2) for i in range(min(k, len(relevant))))
    return dcg / ideal if ideal else 0.0


def paired_stats(diff: np.ndarray, n_boot: int = 10000, seed: int = 0) -> tuple[float, float, float, int, int]:
    """Paired bootstrap 95% interval of the mean per-chunk difference and a two-sided exact sign test.

    Args:
        diff: per-chunk differences (ours - KeyBERT).
        n_boot: bootstrap resamples (fixed seed, so the figures repeat).
        seed: RNG seed.

    Returns:
        (low, high, sign-test p, chunks where ours is better, chunks where KeyBERT is better).
    """
    rng = np.random.default_rng(seed)
    means = diff[rng.integers(0, len(diff), size=(n_boot, len(diff)))].mean(axis=1)
    wins, losses = int((diff > 0).sum()), int((diff < 0).sum())
    # exact two-sided binomial sign test (ties dropped), written out with math.comb: scipy is only a transitive
    # dependency of the project, and this is three lines
    n = wins + losses
    tail = sum(math.comb(n, i) for i in range(min(wins, losses) + 1)) / 2 ** n if n else 0.5
    p = min(1.0, 2 * tail)
    return float(np.percentile(means, 2.5)), float(np.percentile(means, 97.5)), float(p), wins, losses

if __name__ == "__main__":
    main()
