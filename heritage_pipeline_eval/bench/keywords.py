"""Keywords per second: KeyBERT (MiniLM, the embedder resource's model, MMR, per-language stop words) batched per
partition vs one call per chunk, and RAKE, on real chunks (FastAPI en docs, Code du patrimoine fr).

The window-mean passage vectors are computed first (the embedding stage needs them anyway and the cache keeps
them), then timed separately from keyword extraction. Timings on a shared 2-core machine are noisy: compare the
ratios printed within one run.

Usage: python -m heritage_pipeline_eval.bench.keywords [--n 64] [--single 8]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from heritage_pipeline.chunking.chunker import chunk_text
from heritage_pipeline.core.config import EmbedderConfig
from heritage_pipeline.embed.embedders import make_embedder
from heritage_pipeline.enrich.keywords import keybert_keywords, rake_keywords


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--shared", default=str(Path(__file__).resolve().parents[3] / "shared" / "data"))
    ap.add_argument("--n", type=int, default=64, help="chunks per language")
    ap.add_argument("--single", type=int, default=8, help="chunks embedded one call at a time")
    args = ap.parse_args()
    shared = Path(args.shared)
    parts = {"en": [], "fr": []}
    for p in sorted((shared / "docs" / "fastapi" / "en").rglob("*.md")):
        if p.name != "release-notes.md":
            parts["en"] += [c.text for c in chunk_text(p.read_text(encoding="utf-8"))]
    for p in sorted((shared / "legal_fr" / "concat").rglob("*.md")):
        parts["fr"] += [c.text for c in chunk_text(p.read_text(encoding="utf-8"), domain="legal")]
    texts, langs = [], []
    for lang, ts in parts.items():
        texts += ts[: args.n]
        langs += [lang] * min(args.n, len(ts))
    emb = make_embedder(EmbedderConfig(model="minilm"))
    emb.embed_passages(["warm up"])
    keybert_keywords(["warm up text about museums and archives"], ["en"], emb, top_k=6, diversity=0.5)
    t0 = time.perf_counter()
    vecs, _ = emb.embed_passages(texts)
    t_vec = time.perf_counter() - t0
    t0 = time.perf_counter()
    kws = keybert_keywords(texts, langs, emb, top_k=6, diversity=0.5, doc_vectors=vecs)
    t_kb = time.perf_counter() - t0
    n_kw = sum(len(k) for k in kws)
    t0 = time.perf_counter()
    for i in range(args.single):
        keybert_keywords([texts[i]], [langs[i]], emb, top_k=6, diversity=0.5, doc_vectors=vecs[i : i + 1])
    t_single = (time.perf_counter() - t0) / args.single
    t0 = time.perf_counter()
    rk = [rake_keywords(t, lang, 6) for t, lang in zip(texts, langs)]
    t_rake = time.perf_counter() - t0
    print(f"{len(texts)} chunks ({langs.count('en')} en, {langs.count('fr')} fr), mean {sum(map(len, texts)) / len(texts):.0f} chars")
    print(f"passage vectors (window mean, needed by the embedding stage anyway): {t_vec:.1f} s = {len(texts) / t_vec:.1f} chunks/s")
    print(f"KeyBERT batched per partition: {t_kb:.1f} s, {n_kw} keywords = {n_kw / t_kb:.1f} keywords/s, "
          f"{len(texts) / t_kb:.2f} chunks/s ({1000 * t_kb / len(texts):.0f} ms/chunk)")
    print(f"KeyBERT one call per chunk: {1000 * t_single:.0f} ms/chunk = {6 / t_single:.1f} keywords/s "
          f"(batched is {t_single / (t_kb / len(texts)):.1f}x faster per chunk)")
    print(f"KeyBERT incl. passage vectors: {n_kw / (t_kb + t_vec):.1f} keywords/s")
    print(f"RAKE: {t_rake:.2f} s, {sum(len(k) for k in rk)} keywords = {sum(len(k) for k in rk) / t_rake:.0f} keywords/s")
    for t, k, r in list(zip(texts, kws, rk))[:: max(1, len(texts) // 4)]:
        print(f"  KeyBERT {k}\n  RAKE    {r}")


if __name__ == "__main__":
    main()
