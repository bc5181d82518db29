"""The consoles and progress bars of the command line (wide when not on a terminal, so CI logs keep table rows).
"""

from __future__ import annotations

import sys

from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

# Wide consoles when not on a terminal (CI logs): tables are not wrapped mid-row.
console = Console(stderr=False, width=None if sys.stdout.isatty() else 160)
err = Console(stderr=True, width=None if sys.stderr.isatty() else 160)
QUIET_RUN_CONFIG = {"loggers": {"console": {"config": {"log_level": "WARNING"}}}}


def _progress() -> Progress:
    return Progress(TextColumn("{task.description}"), BarColumn(), TextColumn("{task.completed}/{task.total}"),
                    TimeElapsedColumn(), console=err, transient=False)
