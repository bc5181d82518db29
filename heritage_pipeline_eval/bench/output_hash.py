"""SHA-256 over every chunk record the chunker produces for a fixed set of inputs and configurations.

Speed work on the chunker must not change its output. This script chunks

* every ``.md`` file of ``../shared/data`` (read as UTF-8, a leading BOM kept, as the benchmark reads them) in several
  configurations (``CONFIGS``: the project default, the benchmark's 700 / 20 %, the 700 cap, sliding, hierarchical,
  the legal / FAQ / tech presets, adaptive overlap);
* the same files with CRLF line endings and with a non-breaking space after every tenth word (the chunker's other
  token-offset modes: normalisation that changes lengths, and that keeps them);
* the derived documents (HTML, websites, conversations, CSV registries, LinkML YAML) of the bundled ``data/raw``
  through the pipeline's own parse stage,

and prints one SHA-256 per configuration over the records (every field of :class:`~heritage_pipeline.core.models.Chunk`
as JSON except ``meta.extraction_date``, which is the day of the run). ``--write FILE`` stores the hashes,
``--check FILE`` compares against stored ones (exit 1 on a difference), ``--dump DIR`` writes one JSONL file per
configuration so two versions can be diffed record by record.

Usage: ``.venv/bin/python -m heritage_pipeline_eval.bench.output_hash [--check heritage_pipeline_eval/bench/output_hashes.json]``
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import sys
import time
from pathlib import Path
from typing import Any, Iterable

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from heritage_pipeline import chunk_text  # noqa: E402
from heritage_pipeline.chunking.chunker import resolve_config  # noqa: E402
from heritage_pipeline.core.config import config_from  # noqa: E402
from heritage_pipeline.core.models import Chunk  # noqa: E402

SHARED = Path(os.environ.get("HERITAGE_SHARED_DATA", REPO.parent / "shared" / "data"))

# name -> (chunk_text overrides, domain)
CONFIGS: dict[str, tuple[dict[str, Any], str | None]] = {
    "default": ({}, None),
    "bench_700_20": ({"size_tokens": 700, "overlap_ratio": 0.2}, None),
    "cap700": ({"size_tokens": 700, "overlap_ratio": 0.2, "max_tokens": 700}, None),
    "sliding": ({"mode": "sliding"}, None),
    "sliding_small": ({"mode": "sliding", "size_tokens": 300, "max_tokens": 400, "min_tokens": 100,
                       "overlap_ratio": 0.3}, None),
    "hierarchical": ({"mode": "hierarchical"}, None),
    "legal": ({}, "legal"),
    "faq": ({}, "faq"),
    "tech_adaptive": ({"adaptive_overlap": True}, "tech"),
}
# configurations also run on the CRLF and non-breaking-space variants of the corpus
VARIANT_CONFIGS = ("bench_700_20", "sliding_small")
_WORD_GAP = re.compile(r"(?<=\w) (?=\w)")


def record(c: Chunk) -> str:
    """The chunk as canonical JSON, without the run date."""
    d = c.model_dump(mode="json")
    d["meta"].pop("extraction_date", None)
    return json.dumps(d, ensure_ascii=False, sort_keys=True)


def markdown_corpus() -> list[tuple[str, str]]:
    # realworld/ (third-party files of every source type, added to the shared data later) is not part of the fixed
    # corpus the stored hashes and the chunker benchmark are defined on: 1,028 Markdown files
    files = sorted(p for p in SHARED.rglob("*.md") if p.relative_to(SHARED).parts[0] != "realworld")
    return [(str(p.relative_to(SHARED)), p.read_text(encoding="utf-8")) for p in files]


def crlf(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\n", "\r\n")


def nbsp(text: str) -> str:
    """A non-breaking space for every tenth space between two word characters (same length after normalisation)."""
    k = 0

    def repl(m: re.Match[str]) -> str:
        nonlocal k
        k += 1
        return "\u00a0" if k % 10 == 0 else " "

    return _WORD_GAP.sub(repl, text)


def derived_records() -> Iterable[str]:
    from heritage_pipeline.sources.discovery import discover
    from heritage_pipeline.stages import chunk_documents, parse_sources

    cfg = config_from(None, {})
    parsed = parse_sources(discover(REPO / "data"), cfg)
    for c in chunk_documents(parsed.docs, cfg):
        yield record(c)


def run(dump: Path | None, derived: bool = True) -> dict[str, Any]:
    corpus = markdown_corpus()
    if not corpus:
        raise SystemExit(f"no Markdown files under {SHARED}")
    out: dict[str, Any] = {"files": len(corpus), "chars": sum(len(t) for _, t in corpus), "hashes": {}, "chunks": {}}
    jobs: list[tuple[str, str, list[tuple[str, str]]]] = [(n, n, corpus) for n in CONFIGS]
    for n in VARIANT_CONFIGS:
        jobs.append((f"{n}+crlf", n, [(p, crlf(t)) for p, t in corpus]))
        jobs.append((f"{n}+nbsp", n, [(p, nbsp(t)) for p, t in corpus]))
    for label, name, docs in jobs:
        overrides, domain = CONFIGS[name]
        cfg = resolve_config(**overrides)
        t0 = time.perf_counter()
        records = (record(c) for path, text in docs for c in chunk_text(text, config=cfg, doc_id=path, domain=domain))
        _hash_into(out, label, records, dump / f"{label}.jsonl" if dump else None, t0)
    if derived:
        _hash_into(out, "derived_data_raw", derived_records(), dump / "derived.jsonl" if dump else None)
    return out


def _hash_into(out: dict, label: str, records: Iterable[str], dump_file: Path | None, t0: float | None = None) -> None:
    """SHA-256 over ``records`` (one JSON line each) into ``out["hashes"][label]``, their count into
    ``out["chunks"][label]``; the lines also go to ``dump_file`` when given."""
    h = hashlib.sha256()
    n = 0
    fh = open(dump_file, "w", encoding="utf-8") if dump_file else None
    try:
        for r in records:
            h.update(r.encode("utf-8") + b"\n")
            n += 1
            if fh:
                fh.write(r + "\n")
    finally:
        if fh:
            fh.close()
    out["hashes"][label] = h.hexdigest()
    out["chunks"][label] = n
    took = f"  ({time.perf_counter() - t0:.1f} s)" if t0 is not None else ""
    print(f"{label:<22} {n:>6} chunks  {h.hexdigest()}{took}", flush=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--write", type=Path, help="store the hashes in this JSON file")
    ap.add_argument("--check", type=Path, help="compare with the hashes stored in this JSON file")
    ap.add_argument("--dump", type=Path, help="write the records, one JSONL file per configuration, to this folder")
    ap.add_argument("--no-derived", action="store_true", help="skip the derived documents of data/raw (docling is slow)")
    a = ap.parse_args(argv)
    if a.dump:
        a.dump.mkdir(parents=True, exist_ok=True)
    res = run(a.dump, derived=not a.no_derived)
    if a.write:
        a.write.write_text(json.dumps(res, indent=1) + "\n")
    if a.check:
        ref = json.loads(a.check.read_text())
        bad = [k for k, v in res["hashes"].items() if ref["hashes"].get(k) != v]
        missing = [k for k in ref["hashes"] if k not in res["hashes"]]
        for k in bad:
            print(f"DIFFERENT  {k}: {res['chunks'][k]} chunks (stored: {ref['chunks'].get(k)})")
        if bad:
            return 1
        print(f"identical to {a.check} ({len(res['hashes'])} hashes" +
              (f"; not run: {', '.join(missing)})" if missing else ")"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
