"""Profile of cold ``heritage-pipeline run``s: per-stage seconds, chunks/s, peak memory, and the throughput targets.

Two cold runs (fresh output folder, embedding cache and ``DAGSTER_HOME`` each), each in its own process:

* ``bundled``: the bundled ``data/`` (raw + golden sets);
* ``full``: the same plus the shared FastAPI docs (``../shared/data/docs/fastapi/{en,fr,de}``) and the French
  heritage code (``../shared/data/legal_fr/concat``) under ``raw/document/``.

Per run: wall seconds of the process, the Dagster step durations summed per asset over the partition runs
(STEP_SUCCESS events of its event log), the enrichment sub-steps (``seconds_by_substep`` metadata of
``enriched_chunks``, absent for code that does not record it), final chunks, chunks/s and the peak resident memory
of the run's process (``os.wait4`` rusage, maxrss), its CPU seconds (user + system, same rusage) and the load
averages at its start and end. Then, in this process, the embedding-only time (wall and CPU seconds) of the full
run's final chunks with the same embedder (no cache, length-sorted batches): the floor.

Ratios (targets of issue 17):

* marginal ÷ embedding = (wall_full - wall_bundled) / embedding-only time of the chunks the full run adds (<= 1.3);
* keywords ÷ embedding = keyword seconds of the full run / embedding-only time of all its chunks (<= 0.25);
* ablation ÷ rest = ``ablation_report`` seconds / (wall_full - ``ablation_report`` seconds) (<= 1.0).

The same two ratios are also printed against the passage-vector seconds inside the runs (``passage_vectors``
sub-step: the embedding the enrichment does, cold cache), which share the runs' machine load, and the marginal ratio
in CPU seconds (cpu_full - cpu_bundled) / CPU seconds of the embedding-only pass: on this shared 2-core machine the
embedding-only pass runs minutes after the runs, under another load, and a 2-thread BLAS slows down several times in
wall time when another process takes a core, less so in CPU time.

Run it from the code to profile (``cd <checkout> && python -m heritage_pipeline_eval.bench.profile``, or with
``--code DIR`` to profile another checkout's ``heritage_pipeline``, e.g. main's, with this script).
Shared 2-core machine: compare the ratios within one run of this script.

Usage: python -m heritage_pipeline_eval.bench.profile [--code DIR] [--work DIR [--from-work]] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SHARED = Path(os.environ.get("HERITAGE_SHARED_DATA", REPO.parents[1] / "shared" / "data"))
if not SHARED.is_dir():
    SHARED = Path("/work/shared/data")


def build_data(work: Path, code: Path) -> dict[str, Path]:
    """The two data folders (copies: the run may write nothing into the repository). Returns name -> folder.

    Raises:
        FileNotFoundError: the shared FastAPI docs or legal code are missing.
    """
    out = {}
    for name in ("bundled", "full"):
        d = work / name / "data"
        if d.exists():
            shutil.rmtree(d)
        shutil.copytree(code / "data", d, ignore=shutil.ignore_patterns("output", "eval"))
        out[name] = d
    extra = {"shared_fastapi": SHARED / "docs" / "fastapi", "shared_legal_fr": SHARED / "legal_fr" / "concat"}
    for name, src in extra.items():
        if not src.is_dir():
            raise FileNotFoundError(f"{src}: shared corpus missing (set HERITAGE_SHARED_DATA)")
        dst = out["full"] / "raw" / "document" / name
        if name == "shared_fastapi":
            for lang in ("en", "fr", "de"):
                shutil.copytree(src / lang, dst / lang)
            shutil.copy(src / "LICENSE.fastapi-MIT.txt", dst / "LICENSE.fastapi-MIT.txt")
        else:
            shutil.copytree(src, dst)
    return out


def run_cold(name: str, data: Path, work: Path, code: Path) -> dict:
    """One cold ``heritage-pipeline run`` in a child process. Returns wall and CPU seconds (user + system of the
    run's process), peak RSS (MB), the 1-minute load average at its start and end, folders."""
    home, out = work / name / "dagster_home", work / name / "output"
    for p in (home, out):
        if p.exists():
            shutil.rmtree(p)
    home.mkdir(parents=True)
    env = {**os.environ, "DAGSTER_HOME": str(home), "PYTHONPATH": str(code)}
    cmd = [sys.executable, "-m", "heritage_pipeline.cli", "run", "--data-dir", str(data), "--out", str(out),
           "--config", str(code / "configs" / "chunking.yaml"),
           "--pipeline-config", str(code / "configs" / "pipeline.yaml")]
    log = open(work / name / "run.log", "w")
    load0 = os.getloadavg()[0]
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=code, env=env, stdout=log, stderr=subprocess.STDOUT)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    log.close()
    if proc.returncode not in (0, 1):
        raise RuntimeError(f"{name}: run exited {proc.returncode}, see {work / name / 'run.log'}")
    result = {"wall_s": wall, "cpu_s": usage.ru_utime + usage.ru_stime, "peak_rss_mb": usage.ru_maxrss / 1024,
              "exit": proc.returncode, "load": [round(load0, 2), round(os.getloadavg()[0], 2)]}
    (work / name / "run.json").write_text(json.dumps(result))
    return result | {"home": home, "out": out}


def stored_run(name: str, work: Path) -> dict:
    """A run of an earlier ``--work`` folder: ``run.json`` when written, else the CLI's ``wall time`` line of
    ``run.log``, else the wall time from the Dagster run records (first run start to last run end: the process start-up and model loading before the first run are
    not in it, peak memory unknown)."""
    import dagster as dg

    home, out = work / name / "dagster_home", work / name / "output"
    if (work / name / "run.json").exists():
        return json.loads((work / name / "run.json").read_text()) | {"home": home, "out": out}
    import re

    m = re.search(r"^wall time: ([0-9.]+) s", (work / name / "run.log").read_text(errors="replace"), re.M)
    if m:  # the CLI's own wall time (from its start, model loading included)
        return {"wall_s": float(m.group(1)), "peak_rss_mb": float("nan"), "exit": None, "home": home, "out": out}
    recs = dg.DagsterInstance.from_config(str(home)).get_run_records()
    start = min(r.start_time for r in recs if r.start_time)
    end = max(r.end_time for r in recs if r.end_time)
    return {"wall_s": end - start, "peak_rss_mb": float("nan"), "exit": None, "home": home, "out": out}


def step_seconds(home: Path) -> tuple[dict[str, float], dict[str, float]]:
    """(seconds per step key summed over every run, enrichment sub-step seconds summed over partitions)."""
    import dagster as dg

    inst = dg.DagsterInstance.from_config(str(home))
    steps: dict[str, float] = defaultdict(float)
    subs: dict[str, float] = defaultdict(float)
    for run in inst.get_runs():
        for rec in inst.all_logs(run.run_id, of_type=dg.DagsterEventType.STEP_SUCCESS):
            steps[rec.dagster_event.step_key] += rec.dagster_event.event_specific_data.duration_ms / 1000
        for rec in inst.all_logs(run.run_id, of_type=dg.DagsterEventType.ASSET_MATERIALIZATION):
            mat = rec.dagster_event.event_specific_data.materialization
            value = mat.metadata.get("seconds_by_substep")
            if value is not None:  # a table of (sub-step, seconds) rows (older runs: a JSON object)
                from heritage_pipeline.defs.metadata import plain

                rows = plain(value)
                pairs = rows.items() if isinstance(rows, dict) else ((r["sub-step"], r["seconds"]) for r in rows)
                for k, v in pairs:
                    subs[k] += float(v)
    return dict(steps), dict(subs)


def final_chunks(out: Path) -> list:
    """The embedded_chunks of every partition of a run's output folder."""
    import pyarrow.parquet as pq

    from heritage_pipeline.core.models import table_to_chunks

    chunks = []
    for p in sorted((out / "storage" / "embedded_chunks").rglob("*.parquet")):
        chunks += table_to_chunks(pq.read_table(p))
    return chunks


def embedding_only(chunks: list, code: Path) -> tuple[float, float]:
    """(wall seconds, CPU seconds of this process) to embed the chunks' passage texts with the configured embedder,
    no cache (model loaded and warmed up first, not counted)."""
    from heritage_pipeline.core.config import load_pipeline_config
    from heritage_pipeline.embed.embedders import make_embedder
    from heritage_pipeline.stages import passage_text

    ecfg = load_pipeline_config(code / "configs" / "pipeline.yaml").embedder
    emb = make_embedder(ecfg)
    emb.embed_passages(["warm up"])
    texts = [passage_text(c, ecfg.context_prefix) for c in chunks]
    t0, c0 = time.perf_counter(), time.process_time()
    emb.embed_passages(texts)
    return time.perf_counter() - t0, time.process_time() - c0


def _load(pair) -> str:
    """``start -> end`` of a pair of 1-minute load averages (``?`` when not recorded)."""
    return f"{pair[0]:.2f} -> {pair[1]:.2f}" if pair else "?"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--code", default=str(REPO), help="checkout whose heritage_pipeline is profiled (default: this one)")
    ap.add_argument("--work", default="", help="work folder (default: a temporary folder, removed)")
    ap.add_argument("--json", default="", help="also write the figures to this JSON file")
    ap.add_argument("--from-work", action="store_true",
                    help="do not run: read the runs of an earlier --work folder (its Dagster homes and outputs)")
    args = ap.parse_args()
    code = Path(args.code).resolve()
    if str(code) not in sys.path:
        sys.path.insert(0, str(code))
    if args.from_work and not args.work:
        ap.error("--from-work needs --work")
    work = Path(args.work) if args.work else Path(tempfile.mkdtemp(prefix="hp-profile-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        data = None if args.from_work else build_data(work, code)
        runs = {}
        for name in ("bundled", "full"):
            r = stored_run(name, work) if args.from_work else run_cold(name, data[name], work, code)
            r["steps"], r["substeps"] = step_seconds(r["home"])
            r["chunks"] = final_chunks(r["out"])
            runs[name] = r
        bundled_ids = {c.id for c in runs["bundled"]["chunks"]}
        added = [c for c in runs["full"]["chunks"] if c.id not in bundled_ids]
        rest = [c for c in runs["full"]["chunks"] if c.id in bundled_ids]
        load_emb = os.getloadavg()[0]
        (t_added, c_added), (t_rest, _) = embedding_only(added, code), embedding_only(rest, code)
        t_all = t_added + t_rest  # the full run's chunks, embedded in two calls (the added ones, the others)
        load_emb = [round(load_emb, 2), round(os.getloadavg()[0], 2)]
    finally:
        if not args.work:
            shutil.rmtree(work, ignore_errors=True)
    print(f"code: {code}")
    keys = sorted({k for r in runs.values() for k in r["steps"]}, key=lambda k: -runs["full"]["steps"].get(k, 0))
    print(f"{'step (s, summed over partitions)':38s} {'bundled':>9s} {'full':>9s}")
    for k in keys:
        print(f"  {k:36s} {runs['bundled']['steps'].get(k, 0):9.1f} {runs['full']['steps'].get(k, 0):9.1f}")
    subs = sorted({k for r in runs.values() for k in r["substeps"]}, key=lambda k: -runs["full"]["substeps"].get(k, 0))
    for k in subs:
        print(f"    enriched_chunks.{k:19s} {runs['bundled']['substeps'].get(k, 0):9.1f} {runs['full']['substeps'].get(k, 0):9.1f}")
    for name, r in runs.items():
        n = len(r["chunks"])
        print(f"{name}: wall {r['wall_s']:.1f} s, cpu {r.get('cpu_s', float('nan')):.1f} s, {n} chunks, "
              f"{n / r['wall_s']:.1f} chunks/s, peak RSS {r['peak_rss_mb']:.0f} MB, exit {r['exit']}, "
              f"load {_load(r.get('load'))}")
    full, bundled = runs["full"], runs["bundled"]
    marginal = full["wall_s"] - bundled["wall_s"]
    kw = full["substeps"].get("keywords")
    abl = full["steps"].get("ablation_report", 0.0)
    print(f"embedding-only ({len(added)} added chunks): {t_added:.1f} s (cpu {c_added:.1f} s); all "
          f"{len(full['chunks'])} chunks: {t_all:.1f} s; load {_load(load_emb)}")
    print(f"marginal / embedding-only: {marginal:.1f} / {t_added:.1f} = {marginal / t_added:.2f}x (target <= 1.3)")
    if "cpu_s" in full and "cpu_s" in bundled:
        m_cpu = full["cpu_s"] - bundled["cpu_s"]
        print(f"cpu: marginal / embedding-only: {m_cpu:.1f} / {c_added:.1f} = {m_cpu / c_added:.2f}x")
    if kw is not None:
        print(f"keywords / embedding-only: {kw:.1f} / {t_all:.1f} = {kw / t_all:.3f}x (target <= 0.25)")
    else:
        print("keywords / embedding-only: n/a (this code does not record enrichment sub-steps)")
    print(f"ablation / rest of run: {abl:.1f} / {full['wall_s'] - abl:.1f} = {abl / (full['wall_s'] - abl):.2f}x "
          "(target <= 1.0)")
    pv_full, pv_bundled = full["substeps"].get("passage_vectors"), bundled["substeps"].get("passage_vectors")
    if pv_full and pv_bundled is not None:
        # the same ratios against the embedding done inside the runs (enrichment's passage vectors, cold cache):
        # measured under the same machine load as the rest of the run, unlike the separate embedding-only pass
        print(f"in-run: marginal / marginal passage-vector seconds: {marginal:.1f} / {pv_full - pv_bundled:.1f} = "
              f"{marginal / (pv_full - pv_bundled):.2f}x; keywords / passage vectors: {kw:.1f} / {pv_full:.1f} = "
              f"{kw / pv_full:.3f}x")
    if args.json:
        Path(args.json).write_text(json.dumps({
            "code": str(code),
            "runs": {n: {k: v for k, v in r.items() if k in ("wall_s", "cpu_s", "load", "peak_rss_mb", "steps",
                                                                  "substeps", "exit")}
                     | {"chunks": len(r["chunks"])} for n, r in runs.items()},
            "embedding_only_added_s": t_added, "embedding_only_added_cpu_s": c_added, "embedding_only_all_s": t_all,
            "embedding_only_load": load_emb, "added_chunks": len(added),
        }, indent=1))


if __name__ == "__main__":
    main()
