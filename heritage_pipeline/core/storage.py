"""Where every artefact of a run lives (one layout), and the one atomic writer every stage uses.

Layout under the output folder (``output_dir`` of ``configs/pipeline.yaml``)::

    chunks.jsonl                          the final chunks (lancedb_index)
    quarantine.jsonl                      every quarantined file or part (lancedb_index)
    lancedb/                              the LanceDB table
    ablation/                             the ablation report files
    storage/<asset>/<lang>/<source_type>.parquet   the partitioned intermediates (the IO manager)
    storage/quarantine/<lang>/<source_type>.jsonl  parse-stage quarantine records of one partition
    storage/dedup_log/<lang>/<source_type>.parquet the dedup log of one partition
    storage/gazetteer.json                the entity gazetteer (the gazetteer asset)
    storage/languages.json                detected language per file hash (discovery)
    cache/embeddings.sqlite               the embedding cache
    cache/models/                         locally derived models (ONNX export, model2vec)

Atomic writes: the content goes to a temporary name beside the target (unique per process and call), then one
rename replaces the target, so a reader or a crash sees the old file or the new one, never a part.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any


def atomic_write(path: Any, write: Callable[[Any], None]) -> None:
    """Write a file atomically: ``write(tmp)`` fills a temporary file beside ``path``, then it replaces ``path``.

    Args:
        path: the target (a ``pathlib.Path`` or a ``UPath`` for an fsspec URI; the parent is created).
        write: called with the temporary path; it must create the file there.

    Raises:
        OSError: from the write or the rename (the temporary file is removed, the target untouched).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp")
    try:
        write(tmp)
        if hasattr(tmp, "replace") and isinstance(tmp, Path):
            tmp.replace(path)  # local: one rename(2), overwriting
        else:
            tmp.rename(path)  # object stores: copy then delete, the target appears whole
    except BaseException:
        try:
            tmp.unlink()
        except OSError:
            pass
        raise


def write_text_atomic(path: str | Path, text: str) -> None:
    """Write ``text`` as UTF-8 to ``path`` atomically (:func:`atomic_write`)."""
    atomic_write(Path(path), lambda tmp: tmp.write_text(text, encoding="utf-8"))


@dataclass(frozen=True)
class OutputLayout:
    """The paths of one output folder (see the module docstring)."""

    root: Path

    @property
    def storage(self) -> Path:
        return self.root / "storage"

    @property
    def chunks_jsonl(self) -> Path:
        return self.root / "chunks.jsonl"

    @property
    def quarantine_jsonl(self) -> Path:
        return self.root / "quarantine.jsonl"

    @property
    def lancedb(self) -> Path:
        return self.root / "lancedb"

    @property
    def ablation(self) -> Path:
        return self.root / "ablation"

    @property
    def embedding_cache(self) -> Path:
        return self.root / "cache" / "embeddings.sqlite"

    @property
    def model_cache(self) -> Path:
        return self.root / "cache" / "models"

    @property
    def gazetteer(self) -> Path:
        """``storage/gazetteer.json``: the entities of the gazetteer asset."""
        return self.storage / "gazetteer.json"

    def partition_file(self, asset: str, source_type: str, lang: str) -> Path:
        """``storage/<asset>/<lang>/<source_type>.parquet``."""
        return self.storage / asset / lang / f"{source_type}.parquet"

    def partition_quarantine(self, source_type: str, lang: str) -> Path:
        """``storage/quarantine/<lang>/<source_type>.jsonl``."""
        return self.storage / "quarantine" / lang / f"{source_type}.jsonl"

    def partition_skipped(self, source_type: str, lang: str) -> Path:
        """``storage/skipped/<lang>/<source_type>.json``: ``{path: why}`` of the files their parser skipped whole."""
        return self.storage / "skipped" / lang / f"{source_type}.json"

    def dedup_log(self, source_type: str, lang: str) -> Path:
        """``storage/dedup_log/<lang>/<source_type>.parquet``."""
        return self.storage / "dedup_log" / lang / f"{source_type}.parquet"
