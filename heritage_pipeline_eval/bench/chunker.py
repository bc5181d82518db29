"""Chunker benchmark: speed against tiktoken and peer chunkers, plus correctness counters, in one run.

``make bench`` (or ``python -m heritage_pipeline_eval.bench.chunker [--corpus DIR] [--reps N] [--json OUT]``) times, single process
and interleaved (each repetition runs every contestant once, in turn, so a load spike on this shared machine hits
them all), over the same Markdown corpus (default: every ``.md`` file of ``../shared/data``, else ``data/``):

* ``tiktoken_encode``: ``encode_ordinary`` of each document alone, the floor any token-exact chunker pays;
* ``rsbpe_count``: the project's counting backend (rs-bpe) counting each document alone, once: what the chunker's
  tokenizer calls cost at best (each character counted exactly once), so ``heritage`` against it shows how much of
  the chunker's time is its own Python work rather than tokenizing;
* ``heritage_scan``: the project's Markdown parser alone (:func:`heritage_pipeline.sources.markdown.parse_markdown`
  with the cyclic collector paused, as ``chunk_text`` runs it): the part of ``heritage``'s time spent before chunking;
* ``heritage``: :func:`heritage_pipeline.chunk_text` with the project defaults (hybrid, 700 tokens, 20 % overlap,
  hard cap 1200 tokens on prefix + text), counting with its default backend (rs-bpe, identical ids to tiktoken);
* ``heritage_tiktoken``: the same counting with tiktoken (``tokenizer_backend: tiktoken``), to show what the engine
  alone gains;
* ``heritage_cap700``: the same with the hard cap at 700 tokens, the peers' budget;
* ``chonkie_recursive``: Chonkie ``RecursiveChunker(chunk_size=700)`` with the same cl100k encoding (it has no
  overlap option);
* ``textsplitter_md``: semantic-text-splitter ``MarkdownSplitter`` (cl100k through tiktoken-rs) with capacity 700
  and overlap 140, the only peer known to cut no fitting table or code block.

Each repetition builds every contestant afresh (so memoised token counts, e.g. Chonkie's ``lru_cache``, do not
carry over; the project's module-level caches are cleared too). Printed per contestant: MB/s (MB = 10^6 bytes of
UTF-8 source; wall clock, median over repetitions), the ratio to the tiktoken floor and to Chonkie computed from CPU
time of this process (``time.process_time``; the median of the per-repetition ratios, robust to other processes
on this shared machine) and the same ratio from wall-clock time, chunks, the
largest chunk in tokens, chunks over the cap, whether offsets are exact, and how many fitting fenced code blocks and
tables were cut (a block "fits" when its own tokens are within the contestant's cap; "cut" means no single chunk
contains it; blocks found by an independent detector, not the project's scanner). Then the targets (issue 17 item 5:
>= 1.0x the tiktoken floor and >= 1.3x Chonkie; issue 3: >= 4x semantic-text-splitter) with PASS / FAIL, and the peak memory of the chunker against the size of the largest document.

The peers come from the optional ``bench`` extra (``pip install -e '.[bench]'``, done by ``make bench``); a missing
peer is reported and skipped, never faked.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import re
import statistics
import sys
import time
import tracemalloc
from pathlib import Path
from typing import Any, Callable

from heritage_pipeline.chunking.chunker import chunk_text, resolve_config
from heritage_pipeline.core.config import REPO_ROOT, config_from
from heritage_pipeline.core.models import join_prefix
from heritage_pipeline.core.text import normalize
from heritage_pipeline.core.tokenizer import get_tokenizer

TARGET = 700
OVERLAP_RATIO = 0.20
# A peer maps a document to its chunks: (chunk text, char start or None, char end or None, tokens it reports or -1,
# the string it embeds). The project's chunker embeds context prefix + text; the peers embed the text.
Chunked = tuple[str, "int | None", "int | None", int, str]
Peer = Callable[[str], list[Chunked]]


# ---------------------------------------------------------------------------------------------- corpus & blocks
def default_corpus() -> Path:
    shared = Path(os.environ.get("HERITAGE_SHARED_DATA", REPO_ROOT.parent / "shared" / "data"))
    return shared if shared.is_dir() else REPO_ROOT / "data"


def load_corpus(root: Path, max_mb: float | None = None) -> tuple[list[str], list[str], int]:
    """Every non-blank ``.md`` file under ``root`` (sorted by path): (paths, texts, total UTF-8 bytes).

    ``realworld/`` under the shared data (third-party files of every source type, added later) is left out: the
    benchmark's targets are defined on the 1,028 Markdown files of the other corpora."""
    paths, texts, total = [], [], 0
    for p in sorted(q for q in root.rglob("*.md") if q.relative_to(root).parts[0] != "realworld"):
        t = p.read_text(encoding="utf-8")
        if not t.strip():
            continue
        paths.append(str(p))
        texts.append(t)
        total += len(t.encode("utf-8"))
        if max_mb and total >= max_mb * 1e6:
            break
    return paths, texts, total


_FENCE_OPEN = re.compile(r"^[ \t]*(`{3,}|~{3,})")
_TABLE_SEP = re.compile(r"^[ \t]*\|?[ \t]*:?-{3,}:?[ \t]*(\|[ \t]*:?-{3,}:?[ \t]*)*\|?[ \t]*$")
_WS = re.compile(r"\s+")
_TABLE_NOISE = re.compile(r"[\s|:\-]+")


def find_blocks(text: str) -> tuple[list[str], list[str]]:
    """Fenced code blocks (inner text, fence lines excluded; any indentation, so fences in lists count) and GFM pipe
    tables (header, delimiter and rows), found by a detector independent of the project's scanner (adapted from
    the reference harness in ``../shared/bench/metrics.py``)."""
    code: list[str] = []
    tables: list[str] = []
    lines = text.splitlines(keepends=True)
    i, n = 0, len(lines)
    while i < n:
        m = _FENCE_OPEN.match(lines[i])
        if m:
            ch, ln = m.group(1)[0], len(m.group(1))
            j = i + 1
            while j < n:
                s = lines[j].strip()
                if s and set(s) == {ch} and len(s) >= ln:
                    break
                j += 1
            code.append("".join(lines[i + 1 : j]))
            i = j + 1
            continue
        if "|" in lines[i] and i + 1 < n and "|" in lines[i + 1] and _TABLE_SEP.match(lines[i + 1].rstrip("\r\n")):
            j = i + 2
            while j < n and "|" in lines[j] and lines[j].strip():
                j += 1
            tables.append("".join(lines[i:j]))
            i = j
            continue
        i += 1
    return code, tables


def check_doc(doc: str, chunks: list[Chunked], count: Callable[[str], int], cap: int,
              blocks: tuple[list[str], list[str]], exact: Callable[[str, str, int, int | None], bool]) -> dict[str, int]:
    """Correctness counters of one document's chunks (see the module docstring). Tokens are counted afresh on the
    embedded string; ``len_wrong`` counts chunks whose reported token count differs from that."""
    code, tables = blocks
    r = dict(chunks=len(chunks), max_tokens=0, over=0, off_ok=0, with_off=0, empty=0, len_wrong=0, code_total=0,
             code_cut=0, code_cut_oversize=0, table_total=0, table_cut=0, table_cut_oversize=0)
    for text, start, end, reported, embedded in chunks:
        n_tok = count(embedded)
        r["len_wrong"] += reported >= 0 and reported != n_tok
        r["max_tokens"] = max(r["max_tokens"], n_tok)
        r["over"] += n_tok > cap
        r["empty"] += not text.strip()
        if start is not None:
            r["with_off"] += 1
            r["off_ok"] += exact(doc, text, start, end)
    for kind, items, norm in (("code", code, lambda s: _WS.sub("", s)), ("table", tables, lambda s: _TABLE_NOISE.sub("", s))):
        if not items:
            continue
        normed = [norm(c[0]) for c in chunks]  # noqa: B023
        for inner in items:
            key = norm(inner)
            if not key:
                continue
            r[f"{kind}_total"] += 1
            if not any(key in c for c in normed):
                if count(inner) > cap:
                    r[f"{kind}_cut_oversize"] += 1
                else:
                    r[f"{kind}_cut"] += 1
    return r


# ---------------------------------------------------------------------------------------------- contestants
def _clear_project_caches() -> None:
    from heritage_pipeline.chunking import chunker, ids

    ids.anchor_key.cache_clear()
    ids.slug_cached.cache_clear()
    chunker._CHUNKERS.clear()


def _raw_exact(doc: str, text: str, start: int, end: int | None) -> bool:
    return doc[start : start + len(text)] == text


def _normalized_exact(doc: str, text: str, start: int, end: int | None) -> bool:
    """The project's P-slice: ``text == normalize(raw[start:end])`` (documented normalisation: line endings, odd
    spaces, BOMs, NFC, trailing whitespace)."""
    return end is not None and normalize(doc[start:end]) == text


def make_contestants(names: list[str]) -> dict[str, tuple[Callable[[], Peer], int, Callable[..., bool], bool]]:
    """name -> (factory, cap in tokens, offset check, is_floor)."""
    enc = get_tokenizer("cl100k")._enc

    def floor() -> Peer:
        def peer(text: str) -> list[Chunked]:
            enc.encode_ordinary(text)
            return []
        return peer

    def scan_only() -> Peer:
        from heritage_pipeline.chunking.counting import gc_paused
        from heritage_pipeline.sources.markdown import parse_markdown

        def peer(text: str) -> list[Chunked]:
            with gc_paused():
                parse_markdown(text, doc_id="text", source_path="<text>")
            return []
        return peer

    def rsbpe_floor() -> Peer:
        count = get_tokenizer("cl100k", "rs-bpe").count

        def peer(text: str) -> list[Chunked]:
            count(text)
            return []
        return peer

    def heritage(**overrides: Any) -> Callable[[], Peer]:
        cfg = resolve_config(**overrides)

        def factory() -> Peer:
            def peer(text: str) -> list[Chunked]:
                return [(c.text, c.char_start, c.char_end, c.meta.len_tokens, c.embedding_text())
                        for c in chunk_text(text, config=cfg)]
            return peer
        return factory

    def chonkie_recursive() -> Peer:
        from chonkie import RecursiveChunker

        ch = RecursiveChunker(tokenizer=enc, chunk_size=TARGET)

        def peer(text: str) -> list[Chunked]:
            return [(c.text, c.start_index, c.end_index, c.token_count, c.text) for c in ch.chunk(text)]
        return peer

    def textsplitter_md() -> Peer:
        from semantic_text_splitter import MarkdownSplitter

        sp = MarkdownSplitter.from_tiktoken_model("gpt-3.5-turbo", capacity=TARGET, overlap=round(TARGET * OVERLAP_RATIO))

        def peer(text: str) -> list[Chunked]:
            return [(c, s, s + len(c), -1, c) for s, c in sp.chunk_indices(text)]
        return peer

    cap = config_from(None, {}).quality.length.max_tokens
    table = {
        "tiktoken_encode": (floor, 0, _raw_exact, True),
        "rsbpe_count": (rsbpe_floor, 0, _raw_exact, True),
        "heritage_scan": (scan_only, 0, _raw_exact, True),
        "heritage": (heritage(size_tokens=TARGET, overlap_ratio=OVERLAP_RATIO), cap, _normalized_exact, False),
        "heritage_cap700": (heritage(size_tokens=TARGET, overlap_ratio=OVERLAP_RATIO, max_tokens=TARGET), TARGET,
                            _normalized_exact, False),
        "heritage_tiktoken": (heritage(size_tokens=TARGET, overlap_ratio=OVERLAP_RATIO, tokenizer_backend="tiktoken"),
                              cap, _normalized_exact, False),
        "chonkie_recursive": (chonkie_recursive, TARGET, _raw_exact, False),
        "textsplitter_md": (textsplitter_md, TARGET, _raw_exact, False),
    }
    unknown = [n for n in names if n not in table]
    if unknown:
        raise SystemExit(f"unknown contestant(s) {unknown}; choose from {sorted(table)}")
    return {n: table[n] for n in names}


# ---------------------------------------------------------------------------------------------- running
def run(corpus: Path, names: list[str], reps: int, budget_s: float, max_mb: float | None) -> dict[str, Any]:
    paths, docs, nbytes = load_corpus(corpus, max_mb)
    if not docs:
        raise SystemExit(f"no Markdown files under {corpus}")
    tok = get_tokenizer("cl100k", "tiktoken")  # the counters check every chunk against tiktoken itself
    blocks = [find_blocks(d) for d in docs]
    n_code = sum(len(b[0]) for b in blocks)
    n_tab = sum(len(b[1]) for b in blocks)
    print(f"# corpus {corpus}: {len(docs)} docs, {nbytes / 1e6:.2f} MB, {n_code} fenced code blocks, {n_tab} tables; "
          f"target {TARGET} tokens, overlap {OVERLAP_RATIO:.0%}; {reps} interleaved repetitions; python {sys.version.split()[0]}",
          flush=True)
    contestants = make_contestants(names)
    peers: dict[str, Peer] = {}
    results: dict[str, dict[str, Any]] = {}
    for name, (factory, cap, exact, is_floor) in contestants.items():
        try:
            peers[name] = factory()
            peers[name](docs[0][:2000])  # warm-up: lazy imports, compiled regexes
            results[name] = {"name": name, "times": [], "cap": cap, "floor": is_floor}
        except ImportError as exc:
            results[name] = {"name": name, "error": f"not installed ({exc}); run `make bench` or pip install -e '.[bench]'"}
        except Exception as exc:  # a peer that fails here is reported, not hidden
            results[name] = {"name": name, "error": f"{type(exc).__name__}: {exc}"[:300]}
    outputs: dict[str, list[Any]] = {}
    t_start = time.perf_counter()
    for rep in range(reps):
        for name in list(peers):
            peer = contestants[name][0]()  # afresh: no memoised counts carried from the previous repetition
            _clear_project_caches()
            peer(docs[0][:2000])
            gc.collect()
            c0, t0 = time.process_time(), time.perf_counter()
            out = [peer(d) for d in docs]
            results[name]["times"].append(time.perf_counter() - t0)
            results[name].setdefault("cpu", []).append(time.process_time() - c0)
            if rep == 0:
                outputs[name] = out
            del out
        if time.perf_counter() - t_start > budget_s:
            break
    floor = results.get("tiktoken_encode", {})
    chonkie = results.get("chonkie_recursive", {})
    for name, peer in peers.items():
        r = results[name]
        ts = r["times"]
        r["reps"] = len(ts)
        r["mbps"] = nbytes / 1e6 / statistics.median(ts)
        if floor.get("cpu"):
            r["x_floor"] = statistics.median(f / t for f, t in zip(floor["cpu"], r["cpu"]))
            r["x_floor_wall"] = statistics.median(f / t for f, t in zip(floor["times"], ts))
        if chonkie.get("cpu"):
            r["x_chonkie"] = statistics.median(c / t for c, t in zip(chonkie["cpu"], r["cpu"]))
            r["x_chonkie_wall"] = statistics.median(c / t for c, t in zip(chonkie["times"], ts))
        if r["floor"]:
            continue
        _, cap, exact, _ = contestants[name]
        agg: dict[str, int] = {}
        for doc, chunks, bl in zip(docs, outputs[name], blocks):
            st = check_doc(doc, chunks, tok.count, cap, bl, exact)
            for k, v in st.items():
                agg[k] = max(agg.get(k, 0), v) if k == "max_tokens" else agg.get(k, 0) + v
        r.update(agg)
    results["_memory"] = memory_profile(docs, paths)
    return {"corpus": str(corpus), "docs": len(docs), "mb": nbytes / 1e6, "code_blocks": n_code, "tables": n_tab,
            "results": results}


def memory_profile(docs: list[str], paths: list[str]) -> dict[str, Any]:
    """Peak Python memory (tracemalloc, includes numpy) of ``chunk_text``: on the largest document repeated 1, 2 and
    4 times (linear means the peak per character stays flat), and over the whole corpus one document at a time
    (which must stay near the largest document's peak, not grow with the corpus). ``result`` is what the returned
    chunks themselves occupy."""
    big = max(range(len(docs)), key=lambda i: len(docs[i]))
    chunk_text(docs[big][:5000])

    def peak(fn) -> tuple[int, int]:
        gc.collect()
        tracemalloc.start()
        out = fn()
        cur, p = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        del out
        return p, cur

    scaling = []
    for k in (1, 2, 4):
        text = "\n\n".join([docs[big]] * k)
        p, cur = peak(lambda: chunk_text(text))
        scaling.append({"copies": k, "chars": len(text), "peak_mb": p / 1e6, "result_mb": cur / 1e6})
    corpus_peak, _ = peak(lambda: [len(chunk_text(d)) for d in docs])
    return {"largest_doc": Path(paths[big]).name, "largest_doc_chars": len(docs[big]), "scaling": scaling,
            "corpus_one_at_a_time_peak_mb": corpus_peak / 1e6}


def report(res: dict[str, Any]) -> list[str]:
    lines = []
    rs = res["results"]
    lines.append(f"{'contestant':<18} {'MB/s':>7} {'x floor':>8} {'(wall)':>7} {'x chonkie':>9} {'(wall)':>7} {'chunks':>7} "
                 f"{'max tok':>7} {'over cap':>8} {'offsets':>8} {'code cut':>9} {'tables cut':>10}")
    for name, r in rs.items():
        if name.startswith("_"):
            continue
        if "error" in r:
            lines.append(f"{name:<18} SKIPPED: {r['error']}")
            continue
        xf = f"{r['x_floor']:.2f}" if "x_floor" in r else "-"
        xc = f"{r['x_chonkie']:.2f}" if "x_chonkie" in r else "-"
        xfw = f"{r['x_floor_wall']:.2f}" if "x_floor_wall" in r else "-"
        xcw = f"{r['x_chonkie_wall']:.2f}" if "x_chonkie_wall" in r else "-"
        head = f"{name:<18} {r['mbps']:7.2f} {xf:>8} {xfw:>7} {xc:>9} {xcw:>7}"
        if r["floor"]:
            lines.append(f"{head} {'-':>7} {'-':>7} {'-':>8} {'-':>8} {'-':>9} {'-':>10}")
            continue
        off = "none" if not r["with_off"] else ("exact" if r["off_ok"] == r["chunks"] else f"{100 * r['off_ok'] / r['chunks']:.1f}%")
        cc = f"{r['code_cut']}(+{r['code_cut_oversize']})"
        tc = f"{r['table_cut']}(+{r['table_cut_oversize']})"
        lines.append(f"{head} {r['chunks']:>7} {r['max_tokens']:>7} {r['over']:>8} {off:>8} {cc:>9} {tc:>10}")
    lines.append("(cap: 1200 for heritage, 700 for the others; cut = fitting blocks not inside one chunk, (+N) = cut "
                 "blocks over the cap that cannot fit; ratios = median of per-repetition ratios of CPU time, wall clock "
                 "in brackets; targets are judged on the CPU-time ratios)")
    ts = rs.get("textsplitter_md")
    for name in ("heritage", "heritage_cap700"):
        h = rs.get(name)
        if not h or "error" in h:
            continue
        lines.append("")
        shared = Path(os.environ.get("HERITAGE_SHARED_DATA", REPO_ROOT.parent / "shared" / "data"))
        note = "" if Path(res["corpus"]).resolve() == shared.resolve() else \
            f" - NOTE: the targets are defined on the Markdown files of {shared}; this run used {res['corpus']}"
        lines.append(f"targets of issues 17 (item 5) and 3 for {name} (CPU-time ratios){note}:")
        checks = []
        if "x_floor" in h:
            checks.append((f">= 1.0 x tiktoken encode_ordinary: {h['x_floor']:.2f}", h["x_floor"] >= 1.0))
        if "x_chonkie" in h:
            checks.append((f">= 1.3 x Chonkie RecursiveChunker: {h['x_chonkie']:.2f}", h["x_chonkie"] >= 1.3))
        if ts and "error" not in ts:
            ratio = statistics.median(t / o for t, o in zip(ts["cpu"], h["cpu"]))
            checks.append((f">= 4 x semantic-text-splitter MarkdownSplitter with overlap: {ratio:.2f}", ratio >= 4.0))
        ok = h["code_cut"] == 0 and h["table_cut"] == 0 and h["over"] == 0 and h["off_ok"] == h["chunks"] \
            and h["len_wrong"] == 0 and h["empty"] == 0
        checks.append((f"fitting code cut {h['code_cut']}, fitting tables cut {h['table_cut']}, over the cap {h['over']}, "
                       f"inexact offsets {h['chunks'] - h['off_ok']}, wrong len_tokens {h['len_wrong']}, empty "
                       f"{h['empty']}", ok))
        for text, passed in checks:
            lines.append(f"  {'PASS' if passed else 'FAIL'}  {text}")
        rb = rs.get("rsbpe_count")
        if rb and "error" not in rb and rb.get("cpu"):
            share = statistics.median(b / t for b, t in zip(rb["cpu"], h["cpu"]))
            lines.append(f"  (counting every character once with rs-bpe takes {share:.0%} of {name}'s CPU time; "
                         f"rs-bpe alone runs at {rb['x_floor']:.2f}x the tiktoken floor)")
        sc = rs.get("heritage_scan")
        if sc and "error" not in sc and sc.get("cpu"):
            share = statistics.median(b / t for b, t in zip(sc["cpu"], h["cpu"]))
            lines.append(f"  (the Markdown parser alone takes {share:.0%} of {name}'s CPU time)")
    mem = rs.get("_memory")
    if mem:
        lines.append("")
        sc = mem["scaling"]
        per = ", ".join(f"x{s['copies']}: {s['peak_mb']:.1f} MB ({1e6 * s['peak_mb'] / s['chars']:.1f} B/char, "
                        f"chunks {s['result_mb']:.1f} MB)" for s in sc)
        lines.append(f"peak memory of chunk_text (tracemalloc) on the largest document {mem['largest_doc']} "
                     f"({mem['largest_doc_chars'] / 1e6:.2f} M chars) repeated: {per}; whole corpus one document at a "
                     f"time: {mem['corpus_one_at_a_time_peak_mb']:.1f} MB")
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m heritage_pipeline_eval.bench.chunker", description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", type=Path, default=None, help="folder of .md files (default: ../shared/data, else data/)")
    ap.add_argument("--contestants",
                    default="tiktoken_encode,rsbpe_count,heritage_scan,heritage,heritage_cap700,heritage_tiktoken,"
                            "chonkie_recursive,"
                            "textsplitter_md")
    ap.add_argument("--reps", type=int, default=5, help="interleaved repetitions (default 5)")
    ap.add_argument("--budget-s", type=float, default=300.0, help="stop repeating after this many seconds")
    ap.add_argument("--max-mb", type=float, default=None, help="use only the first N MB of the corpus")
    ap.add_argument("--json", type=Path, default=None, help="also write the raw results here")
    a = ap.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    res = run(a.corpus or default_corpus(), [s for s in a.contestants.split(",") if s], a.reps, a.budget_s, a.max_mb)
    for line in report(res):
        print(line)
    if a.json:
        a.json.write_text(json.dumps(res, indent=1, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
