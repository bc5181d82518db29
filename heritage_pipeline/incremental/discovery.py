"""Discovery memoised: per process on the (path, size, mtime) of every raw file, and across runs through the
remembered language of each file's bytes (``<storage>/languages.json``), so a run over unchanged files does no
language detection and never loads the language models. Used by the ``raw_sources`` asset, the language sensor
and ``heritage-pipeline run``.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

from heritage_pipeline.core.storage import atomic_write
from heritage_pipeline.enrich.langid import LanguagePolicy
from heritage_pipeline.incremental.versions import digest, source_hash
from heritage_pipeline.sources.discovery import RawSource, discover


@lru_cache(maxsize=8)
def _discover_cached(data_dir: str, stamp: tuple, cache_path: str | None,
                     policy: LanguagePolicy | None = None) -> list[RawSource]:
    if cache_path is None:
        return discover(data_dir, policy=policy)
    from upath import UPath

    path = UPath(cache_path)
    # a new language detector, or another language policy (candidates, thresholds), invalidates the remembered languages
    version = source_hash("sources.discovery") + ":" + digest("language_policy", repr(policy or LanguagePolicy()))[:12]
    try:
        stored = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        stored = {}
    langs = dict(stored.get("languages", {})) if stored.get("version") == version else {}
    before = dict(langs)
    sources = discover(data_dir, lang_cache=langs, policy=policy)
    if langs != before:
        payload = json.dumps({"version": version, "languages": langs}, sort_keys=True)
        atomic_write(path, lambda tmp: tmp.write_text(payload, encoding="utf-8"))
    return sources


def discover_once(data_dir: str | Path, cache_dir: str | None = None,
                  policy: LanguagePolicy | None = None) -> list[RawSource]:
    """Discovery memoised per process on the (path, size, mtime) of every file: partitions of one run share it.

    Args:
        data_dir: the data folder (``<data_dir>/raw/<source_type>/...``).
        cache_dir: the storage folder or URI: remember each file's detected language by content hash in
            ``<cache_dir>/languages.json``; None detects every time.
        policy: the chunking config's language policy (fallback languages, candidates).

    Returns:
        Every raw source, sorted by path (:func:`heritage_pipeline.sources.discovery.discover`).
    """
    raw = Path(data_dir) / "raw"
    stamp = tuple(sorted((str(p), p.stat().st_size, p.stat().st_mtime_ns) for p in raw.rglob("*") if p.is_file())) if raw.is_dir() else ()
    return _discover_cached(str(data_dir), stamp, f"{str(cache_dir).rstrip('/')}/languages.json" if cache_dir else None,
                            policy)
