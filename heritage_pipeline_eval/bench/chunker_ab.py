"""A/B harness for chunker speed work: a base git revision against the working tree, in one process, interleaved.

``python -m heritage_pipeline_eval.bench.chunker_ab [--base REV] [--reps N] [--max-mb MB] [--corpus DIR]``
(the corpus defaults to the chunker benchmark's: ``$HERITAGE_SHARED_DATA`` or ``../shared/data``; from a worktree
whose parent has no ``shared/``, pass ``--corpus`` or set ``HERITAGE_SHARED_DATA``, else the small ``data/`` is used)
exports ``heritage_pipeline`` at ``REV`` (default ``HEAD``) with ``git archive`` into a temporary folder, imports
it and the working tree's copy side by side (each copy keeps its own module objects: the first is imported, its
``heritage_pipeline*`` entries are moved out of ``sys.modules`` and the second is imported fresh), and then, per
repetition, chunks the benchmark corpus with A and with B in alternating order, timing each with
``time.process_time`` (CPU time of this process, so that other processes on a shared machine count less than in
wall-clock time). Printed: CPU seconds of each side per repetition, the median ratio A/B (> 1: B is faster) and
whether both sides gave identical chunk records (in an untimed warm-up run) for every document (``model_dump`` compared; a speed change must
not change the output).

Written here rather than taken from a benchmarking library (pyperf, asv) because those time functions in
separate processes or separate checkouts, while this comparison must run both versions in one process, in
turn, under the same load.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

from heritage_pipeline_eval.bench.chunker import default_corpus, load_corpus

ROOT = Path(__file__).resolve().parents[2]


def _load_copy(src: Path) -> dict[str, Any]:
    """Import ``heritage_pipeline`` from ``src`` (a folder holding the package) and move its modules out of
    ``sys.modules``. Returns the moved modules by name.

    Raises:
        ImportError: when the package at ``src`` cannot be imported."""
    for name in [m for m in sys.modules if m == "heritage_pipeline" or m.startswith("heritage_pipeline.")]:
        del sys.modules[name]
    sys.path.insert(0, str(src))
    try:
        importlib.import_module("heritage_pipeline.chunking.chunker")
    finally:
        sys.path.remove(str(src))
    mods = {m: sys.modules.pop(m) for m in list(sys.modules)
            if m == "heritage_pipeline" or m.startswith("heritage_pipeline.")}
    if not str(Path(mods["heritage_pipeline"].__file__).resolve()).startswith(str(src.resolve())):
        raise ImportError(f"heritage_pipeline came from {mods['heritage_pipeline'].__file__}, not {src}")
    return mods


def _runner(mods: dict[str, Any]) -> Callable[[list[str]], tuple[float, list[Any]]]:
    """A function that chunks every document with this copy after clearing its caches. Returns (CPU s, chunks)."""
    ch = mods["heritage_pipeline.chunking.chunker"]
    ids = mods["heritage_pipeline.chunking.ids"]

    def run(docs: list[str]) -> tuple[float, list[Any]]:
        ids.anchor_key.cache_clear()
        ids.slug_cached.cache_clear()
        ch._CHUNKERS.clear()
        gc.collect()
        t = time.process_time()
        out = [ch.chunk_text(d) for d in docs]
        return time.process_time() - t, out

    return run


def main(argv: list[str] | None = None) -> int:
    """Run the comparison and print its figures. Returns 0, or 1 when the two outputs differ."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--base", default="HEAD", help="git revision for side A (default HEAD)")
    ap.add_argument("--reps", type=int, default=5, help="interleaved repetitions (default 5)")
    ap.add_argument("--max-mb", type=float, default=None, help="use only the first N MB of the corpus")
    ap.add_argument("--corpus", type=Path, default=None, help="folder of .md files (default: the bench corpus)")
    a = ap.parse_args(argv)
    _, docs, nbytes = load_corpus(a.corpus or default_corpus(), a.max_mb)
    with tempfile.TemporaryDirectory(prefix="chunker_ab_") as tmp:
        tar = Path(tmp) / "base.tar"
        subprocess.run(["git", "-C", str(ROOT), "archive", "-o", str(tar), a.base, "heritage_pipeline"], check=True)
        with tarfile.open(tar) as tf:
            tf.extractall(tmp, filter="data")
        side_a = _runner(_load_copy(Path(tmp)))
        side_b = _runner(_load_copy(ROOT))
    print(f"corpus: {len(docs)} documents, {nbytes / 1e6:.2f} MB; A = {a.base}, B = working tree {ROOT}")
    # an untimed warm-up of each side (tokenizer loading, lazy imports), whose outputs are compared
    oa, ob = side_a(docs)[1], side_b(docs)[1]
    same = all([c.model_dump() for c in x] == [c.model_dump() for c in y] for x, y in zip(oa, ob))
    del oa, ob
    ratios, ta, tb = [], [], []
    for rep in range(a.reps):
        order = [("A", side_a), ("B", side_b)] if rep % 2 == 0 else [("B", side_b), ("A", side_a)]
        res = {name: fn(docs)[0] for name, fn in order}
        ca, cb = res["A"], res["B"]
        ta.append(ca)
        tb.append(cb)
        ratios.append(ca / cb)
        print(f"rep {rep + 1}: A {ca:.3f} s CPU ({nbytes / 1e6 / ca:.2f} MB/s)  B {cb:.3f} s CPU "
              f"({nbytes / 1e6 / cb:.2f} MB/s)  A/B {ca / cb:.3f}")
    print(f"median A/B CPU ratio: {statistics.median(ratios):.3f} (> 1: B faster); median CPU s A "
          f"{statistics.median(ta):.3f}, B {statistics.median(tb):.3f}; identical output: {same}")
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
