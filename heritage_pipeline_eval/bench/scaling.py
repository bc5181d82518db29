"""Scale-out on Dask: throughput of the partition runs with 1 and with 2 Dask workers.

For each worker count W (default 1 then 2), starts a local Dask cluster of W single-threaded worker processes and
runs ``heritage-pipeline run --executor dask --parallel-runs W`` over a copy of the data folder, cold (fresh outputs,
fresh embedding cache, fresh Dagster home), so both arms do the same work. Reports the wall time of the whole
command and of the partition runs (the part Dask parallelises; the index and report run in-process afterwards), the
chunks produced per second, and the speed-up of W=2 over W=1. A warm-up run per cluster loads the models in every
worker first, so the timed run measures steady-state throughput.

    python -m heritage_pipeline_eval.bench.scaling [--data DIR] [--workers 1 2] [--repeat 1] [--threads-per-worker N]

Model threads (torch / numpy BLAS) per worker: by default cores / workers, i.e. both arms share the machine's cores
(W=1 runs its model on every core); ``--threads-per-worker 1`` gives every worker one thread in every arm, which
measures how throughput grows with workers that each bring their own core (a cluster).

On a shared 2-core machine the ratio is bounded by the cores actually free (the 1-minute load average at the start and
end of each arm is printed); compare ratios within one invocation, repeat with ``--repeat``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import tempfile
import time
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]
DEFAULT_DATA = REPO / "data"


def _project(tmp: Path, data: Path) -> tuple[Path, Path]:
    cfg = tmp / "configs"
    cfg.mkdir(parents=True)
    shutil.copy(REPO / "configs" / "chunking.yaml", cfg / "chunking.yaml")
    pipeline = yaml.safe_load((REPO / "configs" / "pipeline.yaml").read_text())
    pipeline.update({"data_dir": str(data), "output_dir": str(tmp / "out")})
    pipeline["lancedb"]["uri"] = str(tmp / "out" / "lancedb")
    (cfg / "pipeline.yaml").write_text(yaml.safe_dump(pipeline, sort_keys=False))
    home = tmp / "home"
    home.mkdir()
    (home / "dagster.yaml").write_text("telemetry:\n  enabled: false\n")
    return cfg, home


def _warmup_data(data: Path, n: int) -> Path:
    """The smallest file of each of ``n`` source-type folders: enough partitions to load the models in every worker."""
    out = Path(tempfile.mkdtemp(prefix="hp-bench-dask-warm-")) / "data"
    folders = [d for d in sorted((data / "raw").iterdir()) if d.is_dir()]
    for d in folders[:n]:
        files = sorted((f for f in d.rglob("*") if f.is_file() and not f.name.lower().startswith("license")),
                       key=lambda f: f.stat().st_size)
        if files:
            dest = out / files[0].relative_to(data)
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(files[0], dest)
    return out


def run_arm(data: Path, workers: int, warm: bool, threads: int = 0) -> dict:
    from distributed import LocalCluster

    from heritage_pipeline.cli import main

    from heritage_pipeline.defs.executors import worker_env

    # threads = 0: model threads = cores / workers (the CLI's default: the machine's cores shared by the workers);
    # threads = N: N model threads per worker in every arm (per-worker scaling, as on a cluster of N-core workers)
    env = worker_env(workers) if not threads else {"HERITAGE_TORCH_THREADS": str(threads), "OMP_NUM_THREADS": str(threads)}
    with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None,
                      env=env) as cluster:
        result = {}
        for label in (["warm-up"] if warm else []) + ["timed"]:
            tmp = Path(tempfile.mkdtemp(prefix=f"hp-bench-dask-{workers}-"))
            cfg, home = _project(tmp, _warmup_data(data, workers + 1) if label == "warm-up" else data)
            os.environ["DAGSTER_HOME"] = str(home)
            load0 = os.getloadavg()[0]
            t0 = time.perf_counter()
            rc = main(["run", "--config", str(cfg / "chunking.yaml"), "--pipeline-config", str(cfg / "pipeline.yaml"),
                       "--executor", "dask", "--dask-address", cluster.scheduler_address, "--parallel-runs", str(workers)])
            wall = time.perf_counter() - t0
            if rc != 0:
                raise SystemExit(f"run failed with {workers} worker(s)")
            partition_s, chunks = _partition_phase(home)
            result = {"workers": workers, "model_threads_per_worker": env["HERITAGE_TORCH_THREADS"], "wall_s": round(wall, 1), "partition_runs_s": round(partition_s, 1),
                      "chunks": chunks, "chunks_per_s": round(chunks / partition_s, 2) if partition_s else None,
                      "load_avg_1min_start_end": [round(load0, 2), round(os.getloadavg()[0], 2)]}
            print(f"{label:>8} W={workers}: command {wall:7.1f} s, partition runs {partition_s:7.1f} s, "
                  f"{chunks} chunks, {result['chunks_per_s']} chunks/s, machine load {load0:.1f} -> "
                  f"{os.getloadavg()[0]:.1f}", flush=True)
            shutil.rmtree(tmp, ignore_errors=True)
    return result


def _partition_phase(home: Path) -> tuple[float, int]:
    """(first partition run start -> last partition run end in seconds, chunks materialised by embedded_chunks)."""
    import dagster as dg

    with dg.DagsterInstance.from_config(str(home)) as inst:
        runs = [r for r in inst.get_runs() if r.tags.get("dagster/partition")]
        records = {r.run_id: inst.get_run_record_by_id(r.run_id) for r in runs}
        start = min(rec.start_time for rec in records.values())
        end = max(rec.end_time for rec in records.values())
        chunks = 0
        for rec in inst.fetch_materializations(dg.AssetKey("embedded_chunks"), limit=10_000).records:
            md = rec.asset_materialization.metadata
            chunks += int(md["dagster/row_count"].value) if "dagster/row_count" in md else 0
    return end - start, chunks


def main() -> None:
    # a shell's background job ignores SIGINT and SIGTERM and its children inherit that; Dagster maps SIGTERM to
    # SIGINT's handler, stops its compute-log `tail` helpers with SIGTERM and waits 30 s for each that ignores it
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=str(DEFAULT_DATA))
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--no-warmup", action="store_true")
    ap.add_argument("--threads-per-worker", type=int, default=0,
                    help="model threads per worker in every arm (default 0: cores / workers)")
    args = ap.parse_args()
    data = Path(tempfile.mkdtemp(prefix="hp-bench-dask-data-")) / "data"
    shutil.copytree(args.data, data, ignore=shutil.ignore_patterns("output", "golden", "eval"))
    results = [run_arm(data, w, not args.no_warmup, args.threads_per_worker) for _ in range(args.repeat)
               for w in args.workers]
    print(json.dumps(results, indent=1))
    by_w: dict[int, list[float]] = {}
    for r in results:
        by_w.setdefault(r["workers"], []).append(r["partition_runs_s"])
    if 1 in by_w:
        base = min(by_w[1])
        for w, times in sorted(by_w.items()):
            print(f"W={w}: best partition phase {min(times):.1f} s, speed-up vs W=1 {base / min(times):.2f}x")


if __name__ == "__main__":
    main()
