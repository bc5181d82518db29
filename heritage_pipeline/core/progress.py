"""Progress of long phases (model load, ablation grid...) as records of one Python logger.

Library code reports where it is with :func:`advance` (a counted phase) or :func:`phase` (a phase of unknown length);
it never prints. The command line attaches a handler that draws them (:mod:`heritage_pipeline.cli.console`); without
one, the records are ordinary INFO log records of ``heritage_pipeline.progress`` (e.g. in the run log), so the same
code runs quietly under Dagster, in tests and as a library. Standard ``logging`` is the transport because it already
crosses every module boundary without a callback argument and is thread-safe.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from contextlib import contextmanager

LOGGER = logging.getLogger("heritage_pipeline.progress")


def advance(phase: str, done: int, total: int | None, detail: str = "") -> None:
    """Report that ``done`` of ``total`` steps of ``phase`` are finished.

    Args:
        phase: the phase's name as shown to the user (e.g. ``"ablation grid"``); one progress bar per name.
        done: steps finished so far (0 announces the phase).
        total: number of steps of the phase, None when unknown.
        detail: what the last step was (shown beside the bar, and in the log).

    Returns:
        None.
    """
    LOGGER.info("%s: %s/%s %s", phase, done, "?" if total is None else total, detail,
                extra={"progress_phase": phase, "progress_done": done, "progress_total": total,
                       "progress_detail": detail})


@contextmanager
def phase(name: str, detail: str = "") -> Iterator[None]:
    """A phase of unknown length (e.g. loading a model): reported when it starts and when it ends (as 1/1).

    Args:
        name: the phase's name as shown to the user.
        detail: shown beside it while it runs.

    Returns:
        A context manager; the phase ends when the block exits (also on an exception).
    """
    t0 = time.perf_counter()
    advance(name, 0, 1, detail)
    try:
        yield
    finally:
        advance(name, 1, 1, f"{detail} ({time.perf_counter() - t0:.1f} s)".strip())
