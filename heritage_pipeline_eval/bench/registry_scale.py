"""Registry throughput at national scale: ``chunk`` rows/s, ``run`` marginal cost per row vs embedding alone.

The registry is built by recombining real values (:func:`build_registry`): names, places and type words from the
real registries of ``data/eval/registries`` and ``data/raw/csv_registry`` (parsed with the pipeline's own
mapping) whose file language (the pipeline's own per-file detection) is one of :data:`LANGUAGES` (Dutch, English,
French, German) or has no words to tell (an identifier list, a multilingual Wikidata lookup); row ``k`` taking name
``k mod n_names`` + a place + an ISIL made distinct per row (a real ISIL prefix and the row number in base 36, at
most 16 characters as ISO 15511 allows). Every row is a distinct institution (distinct name and ISIL), so identity
dedup keeps them all. (The Japanese library list was once a source too: its 13 kanji type labels stood on every row
and every 20-row group of the file's language vote read as Chinese, so the whole registry landed in
``zh|csv_registry``.) Without type words among the sources the ``type`` column is left out.

Modes (each prints its figures):

* ``chunk`` (default ``--rows 9000``): the ``heritage-pipeline chunk`` command with the default settings and the
  configured model, as a user runs it (a subprocess, model load included); rows/s = rows / wall seconds.
* ``run`` (default ``--rows 100000``; ``--rows 20000`` on a loaded machine): ``heritage-pipeline run`` over a data
  folder holding only the registry, cold, at ``--base-rows`` (default 1000) and at ``--rows``; marginal seconds per
  row = (T(rows) - T(base)) / (rows - base). The same for the embedder alone (the same model, backend and batch
  size, on the row texts the pipeline embeds: prefix + text), and the ratio run / embedding. Peak memory: the
  largest resident set of the ``run`` process tree (sampled every 0.5 s with psutil). Then the unchanged re-run of
  the big registry (same output folder) and its wall time. CPU seconds (user + system of the command) are printed
beside wall times: on a shared machine the wall time depends on the other jobs (the load average is printed).
  Then the big run's seconds per step (Dagster STEP_SUCCESS durations, wall) and the partition it landed in.

Usage::

    python -m heritage_pipeline_eval.bench.registry_scale chunk [--rows 9000]
    python -m heritage_pipeline_eval.bench.registry_scale run [--rows 100000] [--base-rows 1000]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from heritage_pipeline.core.text import decode_bytes  # noqa: E402
from heritage_pipeline.sources.registry import parse_registry  # noqa: E402

SOURCES = [REPO / "data" / "eval" / "registries", REPO / "data" / "raw" / "csv_registry"]
LANGUAGES = ("nl", "en", "fr", "de", "und", "mul")  # file languages whose values the synthetic registry takes
_B36 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"
LAST_CPU_S = 0.0


def _b36(n: int) -> str:
    out = ""
    while True:
        n, r = divmod(n, 36)
        out = _B36[r] + out
        if n == 0:
            return out


def real_values() -> dict[str, list[str]]:
    """Distinct real names, places, type words and ISIL prefixes from the bundled registries (their own mapping)
    whose file language is one of :data:`LANGUAGES`."""
    from heritage_pipeline.sources.discovery import detect_source_language

    names: dict[str, None] = {}
    places: dict[str, None] = {}
    types: dict[str, None] = {}
    prefixes: dict[str, None] = {}
    for root in SOURCES:
        for f in sorted(p for p in root.rglob("*") if p.suffix in (".csv", ".tsv")):
            text = decode_bytes(f.read_bytes(), name=str(f)).text
            if detect_source_language(text, "csv_registry") not in LANGUAGES:
                continue
            doc, _ = parse_registry(text, doc_id=f.name, source_path=str(f), lang="und")
            for s in doc.sections:
                x = s.meta["extra"]
                if x.get("slot:preferred_label"):
                    names[x["slot:preferred_label"]] = None
                if x.get("slot:settlement"):
                    places[x["slot:settlement"]] = None
                if x.get("slot:custodian_type"):
                    types[x["slot:custodian_type"]] = None
                for code in (x.get("slot:isil_code") or "").split("; "):
                    if "-" in code:
                        prefixes[code.split("-", 1)[0] + "-" + code.split("-", 1)[1][:3]] = None
    return {"names": list(names), "places": list(places), "types": list(types), "prefixes": list(prefixes)}


def build_registry(path: Path, rows: int) -> Path:
    """Write a ``;``-separated registry of ``rows`` distinct institutions (module docstring) to ``path``."""
    v = real_values()
    names, places, types, prefixes = v["names"], v["places"], v["types"], v["prefixes"]
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        f.write("naam;plaats;type;ISIL\n" if types else "naam;plaats;ISIL\n")
        for k in range(rows):
            name = names[k % len(names)]
            lap = k // len(names)
            if lap:  # a later lap gets a real place as qualifier, so every name is distinct
                name = f"{name} ({places[(k + lap) % len(places)]} {lap})"
            isil = f"{prefixes[k % len(prefixes)]}{_b36(k)}"[:16]
            cells = [name, places[(k * 7) % len(places)]] + ([types[k % len(types)]] if types else []) + [isil]
            f.write(";".join(c.replace(";", ",").replace('"', "'") for c in cells) + "\n")
    return path


class _PeakRSS:
    """Largest summed RSS (bytes) of a process and its descendants, sampled every ``interval`` seconds."""

    def __init__(self, pid: int, interval: float = 0.5) -> None:
        import psutil

        self.proc, self.interval, self.peak = psutil.Process(pid), interval, 0
        self._stop = threading.Event()
        self._t = threading.Thread(target=self._run, daemon=True)
        self._t.start()

    def _run(self) -> None:
        import psutil

        while not self._stop.is_set():
            try:
                procs = [self.proc] + self.proc.children(recursive=True)
                total = 0
                for p in procs:
                    try:
                        total += p.memory_info().rss
                    except psutil.Error:
                        pass
                self.peak = max(self.peak, total)
            except psutil.Error:
                return
            self._stop.wait(self.interval)

    def stop(self) -> int:
        self._stop.set()
        self._t.join()
        return self.peak


def _timed(cmd: list[str], cwd: Path, env: dict | None = None) -> tuple[float, int, str]:
    """Run ``cmd``: (wall seconds, peak RSS bytes of its process tree, output). The CPU seconds (user + system) of
    the command are left in :data:`LAST_CPU_S` (the machine is shared: wall time depends on the load)."""
    global LAST_CPU_S
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    mem = _PeakRSS(p.pid)
    out, _ = p.communicate()
    dt = time.perf_counter() - t0
    peak = mem.stop()
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    LAST_CPU_S = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    if p.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({p.returncode}):\n{out[-3000:]}")
    return dt, peak, out


def bench_chunk(rows: int) -> dict:
    tmp = Path(tempfile.mkdtemp(prefix="hp-bench-reg-chunk-"))
    reg = build_registry(tmp / "registry.csv", rows)
    cmd = [sys.executable, "-m", "heritage_pipeline.cli", "chunk", str(reg), "--out", str(tmp / "chunks.jsonl")]
    dt, peak, out = _timed(cmd, REPO)
    n = sum(1 for _ in open(tmp / "chunks.jsonl", encoding="utf-8"))
    shutil.rmtree(tmp, ignore_errors=True)
    cpu = LAST_CPU_S
    res = {"rows": rows, "chunks": n, "seconds": round(dt, 2), "rows_per_s": round(rows / dt, 1),
           "cpu_seconds": round(cpu, 2), "rows_per_cpu_s": round(rows / cpu, 1) if cpu else None,
           "peak_rss_mb": round(peak / 2**20), "load_1min_after": round(os.getloadavg()[0], 2)}
    print(f"chunk: {rows} rows -> {n} chunks in {dt:.1f} s wall = {rows / dt:.0f} rows/s; {cpu:.1f} CPU s = "
          f"{rows / cpu if cpu else 0:.0f} rows per CPU second (peak RSS {peak / 2**20:.0f} MB, 1-minute load "
          f"{os.getloadavg()[0]:.2f} on {os.cpu_count()} cores)")
    return res


def _project(tmp: Path, data: Path) -> Path:
    cfg = tmp / "configs"
    cfg.mkdir(parents=True)
    shutil.copy(REPO / "configs" / "chunking.yaml", cfg / "chunking.yaml")
    pipeline = yaml.safe_load((REPO / "configs" / "pipeline.yaml").read_text())
    pipeline.update({"data_dir": str(data), "output_dir": str(tmp / "out")})
    pipeline["lancedb"]["uri"] = str(tmp / "out" / "lancedb")
    (cfg / "pipeline.yaml").write_text(yaml.safe_dump(pipeline, sort_keys=False))
    return cfg


def _run_once(rows: int, tmp: Path | None = None) -> tuple[float, int, Path]:
    tmp = tmp or Path(tempfile.mkdtemp(prefix=f"hp-bench-reg-run-{rows}-"))
    data = tmp / "data"
    if not (data / "raw" / "csv_registry" / "registry.csv").exists():
        build_registry(data / "raw" / "csv_registry" / "registry.csv", rows)
        cfg = _project(tmp, data)
    else:
        cfg = tmp / "configs"
    home = tmp / "home"
    home.mkdir(exist_ok=True)
    (home / "dagster.yaml").write_text("telemetry:\n  enabled: false\n")
    env = {**os.environ, "DAGSTER_HOME": str(home)}
    cmd = [sys.executable, "-m", "heritage_pipeline.cli", "run", "--config", str(cfg / "chunking.yaml"),
           "--pipeline-config", str(cfg / "pipeline.yaml")]
    dt, peak, _ = _timed(cmd, REPO, env)
    return dt, peak, tmp


def _embed_alone(rows: int, embedder, ecfg) -> tuple[float, float]:
    """(wall seconds, CPU seconds of this process) to embed the passage texts of a ``rows``-row registry alone
    (parse + chunk untimed)."""
    from heritage_pipeline import stages as P
    from heritage_pipeline.core.config import load_chunking_config

    tmp = Path(tempfile.mkdtemp(prefix="hp-bench-reg-emb-"))
    reg = build_registry(tmp / "r.csv", rows)
    doc, _ = parse_registry(reg.read_text(encoding="utf-8"), doc_id="r.csv", source_path="r.csv", lang="und")
    chunks = P.chunk_documents([doc], load_chunking_config())
    texts = [P.passage_text(c, ecfg.context_prefix) for c in chunks]
    t0, c0 = time.perf_counter(), time.process_time()
    embedder.embed_passages(texts)
    dt, cpu = time.perf_counter() - t0, time.process_time() - c0
    shutil.rmtree(tmp, ignore_errors=True)
    return dt, cpu


def bench_run(rows: int, base: int) -> dict:
    from heritage_pipeline.core.config import load_pipeline_config
    from heritage_pipeline.embed.embedders import make_embedder

    ecfg = load_pipeline_config().embedder
    embedder = make_embedder(ecfg)
    embedder.embed_passages(["warm-up"])
    (e_base, ec_base), (e_big, ec_big) = _embed_alone(base, embedder, ecfg), _embed_alone(rows, embedder, ecfg)
    t_base, _, tmp_base = _run_once(base)
    c_base = LAST_CPU_S
    t_big, peak, tmp_big = _run_once(rows)
    c_big = LAST_CPU_S
    steps = _step_seconds(tmp_big / "home")
    partitions = sorted(f"{q.parent.name}|{q.stem}" for q in (tmp_big / "out" / "storage" / "embedded_chunks").glob("*/*.parquet"))
    t_rerun, _, _ = _run_once(rows, tmp_big)
    c_rerun = LAST_CPU_S
    m_run = (t_big - t_base) / (rows - base)
    m_emb = (e_big - e_base) / (rows - base)
    mc_run = (c_big - c_base) / (rows - base)
    mc_emb = (ec_big - ec_base) / (rows - base)
    res = {"rows": rows, "base_rows": base, "run_s": {"base": round(t_base, 1), "big": round(t_big, 1)},
           "embed_alone_s": {"base": round(e_base, 1), "big": round(e_big, 1)},
           "marginal_ms_per_row": {"run": round(1000 * m_run, 3), "embed_alone": round(1000 * m_emb, 3)},
           "ratio_run_over_embed": round(m_run / m_emb, 3) if m_emb > 0 else None,
           "run_cpu_s": {"base": round(c_base, 1), "big": round(c_big, 1)},
           "embed_alone_cpu_s": {"base": round(ec_base, 1), "big": round(ec_big, 1)},
           "marginal_cpu_ms_per_row": {"run": round(1000 * mc_run, 3), "embed_alone": round(1000 * mc_emb, 3)},
           "ratio_cpu_run_over_embed": round(mc_run / mc_emb, 3) if mc_emb > 0 else None,
           "peak_rss_mb": round(peak / 2**20), "unchanged_rerun_s": round(t_rerun, 1),
           "unchanged_rerun_cpu_s": round(c_rerun, 1),
           "model": f"{ecfg.model} ({ecfg.backend})", "load_1min": round(os.getloadavg()[0], 2),
           "partitions": partitions, "step_seconds_big": {k: round(v, 1) for k, v in steps.items()}}
    print(f"run: {rows} rows in {t_big:.1f} s, {base} rows in {t_base:.1f} s -> marginal {1000 * m_run:.2f} ms/row; "
          f"embedding alone {e_big:.1f} s / {e_base:.1f} s -> {1000 * m_emb:.2f} ms/row; ratio "
          f"{res['ratio_run_over_embed']}x (wall); CPU: run {1000 * mc_run:.2f} ms/row, embedding alone "
          f"{1000 * mc_emb:.2f} ms/row, ratio {res['ratio_cpu_run_over_embed']}x; peak RSS {peak / 2**20:.0f} MB; "
          f"unchanged re-run {t_rerun:.1f} s wall / {c_rerun:.1f} CPU s")
    print(f"{rows}-row run: partitions {', '.join(partitions)}; seconds per step (wall, Dagster STEP_SUCCESS):")
    for k, v in sorted(steps.items(), key=lambda kv: -kv[1]):
        print(f"  {k:<40} {v:8.1f}")
    for t in (tmp_base, tmp_big):
        shutil.rmtree(t, ignore_errors=True)
    return res


def _step_seconds(home: Path) -> dict[str, float]:
    """Wall seconds per asset step, summed over the Dagster runs of the instance at ``home`` (STEP_SUCCESS)."""
    import dagster as dg

    inst = dg.DagsterInstance.from_config(str(home))
    out: dict[str, float] = {}
    for run in inst.get_runs():
        for rec in inst.all_logs(run.run_id, of_type=dg.DagsterEventType.STEP_SUCCESS):
            key = rec.dagster_event.step_key
            out[key] = out.get(key, 0.0) + rec.dagster_event.event_specific_data.duration_ms / 1000
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("mode", choices=["chunk", "run"])
    ap.add_argument("--rows", type=int, help="registry rows (default: 9000 for chunk, 100000 for run)")
    ap.add_argument("--base-rows", type=int, default=1000, help="run: the small registry of the marginal cost")
    args = ap.parse_args(argv)
    print(f"machine: {os.cpu_count()} cores, 1-minute load {os.getloadavg()[0]:.2f}")
    if args.mode == "chunk":
        res = bench_chunk(args.rows or 9000)
    else:
        rows = args.rows or 100000
        if rows <= args.base_rows:
            ap.error("--rows must exceed --base-rows")
        res = bench_run(rows, args.base_rows)
    print(json.dumps(res))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
