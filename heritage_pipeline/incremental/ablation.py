"""The ablation report's memo: the stored report is reused while the golden sets, the distractor documents, the
config and the code are unchanged.

``<ablation dir>/ablation.data_version.json`` holds the memo key (:func:`ablation_memo`) and the recommendations;
it is written last, after the report files, and removed before they are rewritten, so a crash in between
recomputes the report next time. Plain functions: the ``ablation_report`` asset is a shell around them.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from heritage_pipeline.core.storage import write_text_atomic
from heritage_pipeline.incremental.versions import digest

MEMO_NAME = "ablation.data_version.json"


def ablation_memo(code_version: str, files: list[Path]) -> str:
    """SHA-256 (hex) of the asset's code version and the path and content of every input file (golden sets,
    distractor documents): the report's data version."""
    return digest("ablation_report", code_version,
                  *(f"{p}:{hashlib.sha256(p.read_bytes()).hexdigest()}" for p in files))


@dataclass
class StoredReport:
    """A reusable stored report: its rows, Markdown, recommendations and file paths."""

    rows: list[dict[str, Any]]
    markdown: str
    recommendations: dict[str, dict]
    paths: dict[str, str]


def stored_report(out_dir: Path, memo: str) -> StoredReport | None:
    """The report stored in ``out_dir`` when its memo equals ``memo`` and its files are there, else None."""
    try:
        stored = json.loads((out_dir / MEMO_NAME).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if stored.get("data_version") != memo or not (out_dir / "ablation.json").exists() or not (out_dir / "ablation.md").exists():
        return None
    return StoredReport(json.loads((out_dir / "ablation.json").read_text(encoding="utf-8")),
                        (out_dir / "ablation.md").read_text(encoding="utf-8"), stored.get("recommendations", {}),
                        {"json": str(out_dir / "ablation.json"), "plot": str(out_dir / "ablation.png")})


def forget_report(out_dir: Path) -> None:
    """Remove the memo before the report files are rewritten in place (no memo until they are whole)."""
    (out_dir / MEMO_NAME).unlink(missing_ok=True)


def remember_report(out_dir: Path, memo: str, recommendations: dict[str, dict]) -> None:
    """Write the memo (atomically, last): the report in ``out_dir`` belongs to ``memo``."""
    write_text_atomic(out_dir / MEMO_NAME, json.dumps({"data_version": memo, "recommendations": recommendations},
                                                      ensure_ascii=False, default=str) + "\n")
