"""Dedup measurements on real data (issue 5). Prints figures; asserts nothing.

1. zh FAQ page (English text, one sentence repeated thousands of times): chunks, exact / near drops, time.
2. Parallel FastAPI pages en/fr/de: drops per language partition (as the pipeline runs) and across the three
   languages pooled (are code-only chunks near-duplicates across translations?).
3. Planted near-duplicates with known pairs: real chunks (FastAPI en, Code du patrimoine, GRSciColl FAQ, golden en)
   de-duplicated first so the pool has no natural pairs >= threshold, then light edits (duplicates by construction)
   and heavy edits (not duplicates) planted; precision / recall of the dedup at the configured threshold (0.90),
   plus how many planted pairs have an exact Jaccard >= 0.90 at all (the shingle measure's own ceiling).
4. Time for N chunks (default 100 000) built from the pool with random edits, vs 10 000 in the same run.

Usage: python -m heritage_pipeline_eval.bench.dedup [--shared /work/shared/data] [--n 100000] [--seed 7]
"""

from __future__ import annotations

import argparse
import random
import resource
import time
from collections import Counter, defaultdict
from pathlib import Path

from heritage_pipeline.chunking.chunker import chunk_text
from heritage_pipeline.core.config import DedupConfig
from heritage_pipeline.dedup.minhash import DedupStats, candidate_pairs, dedup_chunks, jaccard, shingle_hashes
from heritage_pipeline.core.models import Chunk, ChunkMeta, Spans

DUP_EDITS = ("case_punct", "append_sentence", "one_word", "two_percent", "trim_tail")
NON_DUP_EDITS = ("fifteen_percent", "first_half")
BOILER = "Last updated on 12 March 2024. Report an error in this page."


def chunks_of(path: Path, rel: str, domain: str | None = None) -> list[Chunk]:
    """Chunks of one file with ids made unique across files (``<rel>#<id>``)."""
    cs = chunk_text(path.read_text(encoding="utf-8"), source_path=rel, domain=domain)
    return [c.model_copy(update={"id": f"{rel}#{c.id}"}) for c in cs]


def edit(text: str, kind: str, rng: random.Random, vocab: list[str]) -> str:
    words = text.split(" ")
    if kind == "case_punct":
        return text.upper().replace(",", " ,").replace(".", " .")
    if kind == "append_sentence":
        return text + " " + BOILER
    if kind == "one_word":
        words[rng.randrange(len(words))] = rng.choice(vocab)
        return " ".join(words)
    if kind in ("two_percent", "fifteen_percent"):
        k = max(1, round(len(words) * (0.02 if kind == "two_percent" else 0.15)))
        for i in rng.sample(range(len(words)), k):
            words[i] = rng.choice(vocab)
        return " ".join(words)
    if kind == "trim_tail":
        return " ".join(words[: int(len(words) * 0.95)])
    if kind == "first_half":
        return " ".join(words[: len(words) // 2])
    raise ValueError(kind)


def mk(i: int, text: str, src: str) -> Chunk:
    return Chunk(id=f"bench#{i:06d}", text=text, meta=ChunkMeta(source_type="document", source_id=src, source_path=src,
                                                                doc_id=src), spans=Spans(char_start=0, char_end=len(text)))


def pool(shared: Path) -> list[str]:
    texts = []
    for p in sorted((shared / "docs" / "fastapi" / "en").rglob("*.md")):
        if p.name != "release-notes.md":
            texts += [c.text for c in chunks_of(p, str(p))]
    for p in sorted((shared / "legal_fr" / "concat").rglob("*.md")):
        texts += [c.text for c in chunks_of(p, str(p), "legal")]
    for p in sorted((shared / "faq" / "gbif_grscicoll" / "en").glob("*.md")):
        texts += [c.text for c in chunks_of(p, str(p), "faq")]
    for p in sorted((shared / "golden" / "en" / "docs").glob("*.md")):
        texts += [c.text for c in chunks_of(p, str(p))]
    texts = [t for t in texts if len(t.split()) >= 60]
    kept, _ = dedup_chunks([mk(i, t, "pool") for i, t in enumerate(texts)], DedupConfig())
    return [c.text for c in kept]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--shared", default=str(Path(__file__).resolve().parents[3] / "shared" / "data"))
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()
    shared = Path(args.shared)
    cfg = DedupConfig()
    print(f"config: threshold {cfg.threshold}, num_perm {cfg.num_perm}, shingle_words {cfg.shingle_words}")

    # 1. zh FAQ page
    zh = chunks_of(shared / "faq" / "gbif_grscicoll" / "zh" / "faq.md", "faq/gbif_grscicoll/zh/faq.md", "faq")
    st = DedupStats()
    kept, log = dedup_chunks(zh, cfg, stats=st)
    print(f"\n[1] zh/faq.md: {len(zh)} chunks -> {len(kept)} kept; dropped exact {st.dropped_exact}, near "
          f"{st.dropped_near}; LSH candidates {st.lsh_candidates}, rejected by exact Jaccard {st.rejected_candidates}; "
          f"{st.seconds['total']:.2f} s")

    # 2. FastAPI parallel pages
    per_lang = {}
    for lang in ("en", "fr", "de"):
        cs = []
        for p in sorted((shared / "docs" / "fastapi" / lang).rglob("*.md")):
            if p.name != "release-notes.md":
                cs += chunks_of(p, f"{lang}/{p.relative_to(shared / 'docs' / 'fastapi' / lang)}")
        per_lang[lang] = cs
        st = DedupStats()
        k, lg = dedup_chunks([c.model_copy(deep=True) for c in cs], cfg, stats=st)
        print(f"[2] fastapi/{lang}: {len(cs)} chunks, dropped exact {st.dropped_exact}, near {st.dropped_near}")
        for r in lg[:3]:
            print(f"      {r.dropped_id} ~ {r.kept_id} ({r.similarity}, {r.reason})")
    pooled = [c.model_copy(deep=True) for cs in per_lang.values() for c in cs]
    st = DedupStats()
    k, lg = dedup_chunks(pooled, cfg, stats=st)
    cross = [r for r in lg if r.dropped_source.split("/")[0] != r.kept_source.split("/")[0]]
    print(f"[2] fastapi en+fr+de pooled: {len(pooled)} chunks, dropped {len(lg)} ({len(cross)} across languages)")
    for r in cross[:5]:
        print(f"      {r.dropped_id} ~ {r.kept_id} ({r.similarity})")

    # 3. planted set
    rng = random.Random(args.seed)
    t0 = time.perf_counter()
    base = pool(shared)
    vocab = sorted({w for t in base[:200] for w in t.split()})
    print(f"\n[3] pool: {len(base)} real chunks with no pair >= {cfg.threshold} ({time.perf_counter() - t0:.1f} s)")
    chunks, cluster, kind_of = [], {}, {}
    for b, text in enumerate(base):
        cid = len(chunks)
        chunks.append(mk(cid, text, f"base{b}"))
        cluster[chunks[-1].id] = b
        kind_of[chunks[-1].id] = "base"
        if b % 2 == 0:  # half of the pool gets planted variants
            for kind in DUP_EDITS + NON_DUP_EDITS:
                if rng.random() < 0.5:
                    continue
                c = mk(len(chunks), edit(text, kind, rng, vocab), f"variant{b}")
                chunks.append(c)
                cluster[c.id] = b if kind in DUP_EDITS else -1 - len(chunks)
                kind_of[c.id] = kind
    sets = {c.id: shingle_hashes(c.text, cfg.shingle_words) for c in chunks}
    base_id = {cluster[c.id]: c.id for c in chunks if kind_of[c.id] == "base"}
    st = DedupStats()
    kept, log = dedup_chunks(chunks, cfg, stats=st)
    kept_ids = {c.id for c in kept}
    tp = sum(1 for r in log if cluster[r.dropped_id] == cluster[r.kept_id] and cluster[r.kept_id] >= 0)
    precision = tp / len(log) if log else 1.0
    found, total, ceiling = Counter(), Counter(), Counter()
    for c in chunks:
        k = kind_of[c.id]
        if k == "base":
            continue
        b = int(c.meta.source_id[len("variant"):])
        total[k] += 1
        both_kept = c.id in kept_ids and base_id[b] in kept_ids
        found[k] += not both_kept
        ceiling[k] += jaccard(sets[c.id], sets[base_id[b]]) >= cfg.threshold
    dup_total = sum(total[k] for k in DUP_EDITS)
    dup_found = sum(found[k] for k in DUP_EDITS)
    dup_ceiling = sum(ceiling[k] for k in DUP_EDITS)
    print(f"[3] planted: {len(chunks)} chunks, {dup_total} planted duplicate pairs, "
          f"{sum(total[k] for k in NON_DUP_EDITS)} planted non-duplicates")
    print(f"    drop level: precision {precision:.4f} ({tp}/{len(log)} drops inside a true cluster); planted pairs no longer "
          f"both kept {dup_found}/{dup_total} (a base dropped for a sibling variant counts, so this overstates recall); "
          f"planted pairs with exact Jaccard >= {cfg.threshold}: {dup_ceiling}/{dup_total}")
    # pair level: every planted (base, variant) pair vs the pairs the detector confirms (LSH candidate + exact
    # Jaccard >= threshold), computed on all chunks (exact duplicates included: they are candidates with J = 1)
    ids = [c.id for c in chunks]
    confirmed = {(ids[a], ids[b]) for a, b, j in candidate_pairs([sets[i] for i in ids], cfg) if j >= cfg.threshold}
    confirmed |= {(b, a) for a, b in confirmed}
    planted = [(base_id[cluster[c.id]], c.id, kind_of[c.id]) for c in chunks if kind_of[c.id] in DUP_EDITS]
    hit = Counter(k for b, v, k in planted if (b, v) in confirmed)
    in_cluster = sum(1 for a, b in confirmed if a < b and cluster[a] == cluster[b] and cluster[a] >= 0)
    n_conf = len(confirmed) // 2
    print(f"    pair level: precision {in_cluster / max(1, n_conf):.4f} ({in_cluster}/{n_conf} confirmed pairs inside a "
          f"true cluster), recall {sum(hit.values()) / len(planted):.4f} ({sum(hit.values())}/{len(planted)} planted "
          f"base-variant pairs confirmed); per edit: " + ", ".join(f"{k} {hit[k]}/{total[k]}" for k in DUP_EDITS))
    wrongly = Counter(kind_of[r.dropped_id] for r in log if kind_of[r.dropped_id] in NON_DUP_EDITS)
    wrongly.update(kind_of[r.kept_id] for r in log if kind_of[r.kept_id] in NON_DUP_EDITS)
    for k in DUP_EDITS:
        print(f"    {k:16s} dup      found {found[k]:4d}/{total[k]:4d}   exact J>=thr {ceiling[k]:4d}")
    for k in NON_DUP_EDITS:
        print(f"    {k:16s} non-dup  wrongly merged {wrongly[k]:4d}/{total[k]:4d}   exact J>=thr {ceiling[k]:4d}")

    # 4. time for N chunks
    for n in (10_000, args.n):
        rng = random.Random(args.seed + n)
        big = []
        for i in range(n):
            t = base[rng.randrange(len(base))]
            r = rng.random()
            t = edit(t, "two_percent", rng, vocab) if r < 0.3 else (edit(t, "fifteen_percent", rng, vocab) if r < 0.6 else t)
            big.append(mk(i, t, f"s{i % 997}"))
        rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        st = DedupStats()
        t0 = time.perf_counter()
        kept, log = dedup_chunks(big, cfg, stats=st)
        dt = time.perf_counter() - t0
        rss = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss0) / 1024
        words = sum(len(c.text.split()) for c in big) / n
        print(f"\n[4] {n} chunks (mean {words:.0f} words): {dt:.1f} s ({n / dt:.0f} chunks/s), +{rss:.0f} MB peak RSS; "
              f"dropped exact {st.dropped_exact}, near {st.dropped_near}; candidates {st.lsh_candidates}; "
              f"stages {st.seconds}")


if __name__ == "__main__":
    main()
