"""Search latency benchmark: `search` command wall time (process start included), `serve` start-up, and served
query latency (p50/p95 over N queries) next to LanceDB's own query time for the same queries.

The queries are the heritage golden set's questions (cycled to ``--queries``); the index is a run's
(``--out``, holding ``lancedb/``) or, when it has none, one built from the heritage set's files
(:func:`heritage_pipeline_eval.heritage_eval.build_index`). The server listens on 127.0.0.1 only, the request loop is
bounded by ``--queries`` and the server is stopped (SIGTERM to its own pid) at the end.

Run: ``python -m heritage_pipeline_eval.bench.search [--out DIR] [--queries 1000] [--cli-runs 3]``.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]


def _load() -> str:
    """The 1/5/15-minute load averages (``os.getloadavg``), printed beside the figures."""
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def _pct(xs, q):
    return round(float(np.percentile(xs, q)), 2)


def cli_wall(out: Path, mode: str, runs: int, server: bool) -> list[float]:
    """Seconds of ``heritage-pipeline search`` runs (a new Python process each)."""
    walls = []
    for i in range(runs):
        cmd = [sys.executable, "-m", "heritage_pipeline.cli", "search", f"Bibliothek DE-{i + 1}", "--out", str(out),
               "--mode", mode, "--json"] + ([] if server else ["--no-server"])
        t = time.perf_counter()
        r = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=300)
        walls.append(time.perf_counter() - t)
        if r.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)} failed: {r.stderr[-500:]}")
    return walls


def ensure_index(out: Path | None, tmp: Path, cache: str | None = None) -> Path:
    """A run output folder with ``lancedb/chunks``: ``out`` when it has one, else one built in ``tmp``."""
    if out and (out / "lancedb").exists():
        return out
    from heritage_pipeline.core.config import load_pipeline_config
    from heritage_pipeline_eval.heritage_eval import build_index, load_golden

    data = Path(os.environ.get("HERITAGE_SHARED_DATA", ROOT.parent / "shared" / "data"))
    golden = load_golden(ROOT / "data" / "golden" / "heritage")
    files = sorted({r["path"] for q in golden for r in q["relevant"]})
    build_index(data, files, str(tmp / "lancedb"), load_pipeline_config(), cache)
    return tmp


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", help="a run's output folder with lancedb/ (default: build one from the heritage set)")
    ap.add_argument("--queries", type=int, default=1000, help="served queries per mode (default 1000)")
    ap.add_argument("--cache", help="embedding cache (SQLite) for building the index")
    ap.add_argument("--cli-runs", type=int, default=3, help="search command runs per mode (default 3)")
    args = ap.parse_args(argv)
    from heritage_pipeline.core.config import load_pipeline_config
    from heritage_pipeline.index.api import Searcher
    from heritage_pipeline.index.search import fts_column
    from heritage_pipeline_eval.heritage_eval import load_golden

    questions = [q["question"] for q in load_golden(ROOT / "data" / "golden" / "heritage")]
    with tempfile.TemporaryDirectory(prefix="bench-search-") as tmp:
        out = ensure_index(Path(args.out) if args.out else None, Path(tmp), args.cache)
        print(f"index: {out / 'lancedb'}; load average {_load()}")
        res: dict = {}
        for mode in ("fts", "hybrid"):
            w = cli_wall(out, mode, args.cli_runs, server=False)
            res[f"cli_{mode}_s"] = w
            print(f"search --mode {mode} (in-process, process start included): median {np.median(w):.2f} s "
                  f"(runs: {', '.join(f'{x:.2f}' for x in w)})")
        t0 = time.perf_counter()
        srv = subprocess.Popen([sys.executable, "-m", "heritage_pipeline.cli", "serve", "--out", str(out)], cwd=ROOT,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
        try:
            state = out / "serve.json"
            while not state.exists():
                if srv.poll() is not None or time.perf_counter() - t0 > 300:
                    raise RuntimeError(f"serve did not start: {srv.stdout.read()[-800:]}")
                time.sleep(0.05)
            st = json.loads(state.read_text())
            ready = time.perf_counter() - t0
            print(f"serve: ready (index open, model loaded, one warm query per mode) in {ready:.2f} s")
            for mode in ("fts", "hybrid"):
                w = cli_wall(out, mode, args.cli_runs, server=True)
                print(f"search --mode {mode} through serve (process start included): median {np.median(w):.2f} s")
            base = f"http://{st['host']}:{st['port']}/search"
            for mode in ("fts", "hybrid"):
                lat, took = [], []
                for i in range(args.queries):
                    body = json.dumps({"query": questions[i % len(questions)], "k": 10, "mode": mode}).encode()
                    rq = urllib.request.Request(base, data=body, headers={"Content-Type": "application/json"})
                    t = time.perf_counter()
                    with urllib.request.urlopen(rq, timeout=30) as r:
                        took.append(json.load(r)["took_ms"])
                    lat.append((time.perf_counter() - t) * 1000)
                print(f"served {mode}: {args.queries} queries, client p50 {_pct(lat, 50)} ms, p95 {_pct(lat, 95)} ms; "
                      f"server-side search p50 {_pct(took, 50)} ms, p95 {_pct(took, 95)} ms")
        finally:
            os.killpg(srv.pid, signal.SIGTERM)
            srv.wait(timeout=30)
        s = Searcher(str(out / "lancedb"), pipeline_config=load_pipeline_config().with_paths(output_dir=out))
        qv = s.embedder.embed_queries(questions)
        fts, vec = [], []
        for i in range(args.queries):
            q = questions[i % len(questions)]
            col, text = fts_column(s.table, q, None)
            t = time.perf_counter()
            s.table.search(text, query_type="fts", fts_columns=col).select(["id", "_score"]).limit(10).to_arrow()
            fts.append((time.perf_counter() - t) * 1000)
            t = time.perf_counter()
            (s.table.search(qv[i % len(questions)], query_type="vector", vector_column_name="vector")
             .distance_type("cosine").select(["id", "_distance"]).limit(10).to_arrow())
            vec.append((time.perf_counter() - t) * 1000)
        print(f"LanceDB alone (same queries, in-process): BM25 query p50 {_pct(fts, 50)} ms, p95 {_pct(fts, 95)} ms; "
              f"vector query p50 {_pct(vec, 50)} ms, p95 {_pct(vec, 95)} ms ({s.table.count_rows()} rows)")
        print(f"load average at the end: {_load()} (the machine's 1/5/15-min run queue; compare runs at like load)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
