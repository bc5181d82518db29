"""The consoles, the progress display and the quiet output of the command line.

* :data:`console` (stdout) carries results (the summary); :data:`err` (stderr) carries progress and errors.
* :func:`quiet_output` sends everything libraries write (Python warnings and logging, and what native code such as
  LanceDB's Rust log or Dagster's console logger writes to file descriptor 2) to a log file, while :data:`err` keeps
  writing to the terminal; ``-v`` leaves stderr alone and shows INFO logging there too.
* :class:`ProgressDisplay` draws the records of :mod:`heritage_pipeline.core.progress`: rich progress bars (with an
  ETA) on a terminal; on other output (CI logs, pipes) one line when a phase ends and one line per ``interval_s``
  for the innermost phase still running, so a log is readable and not one line per step.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
import time
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from heritage_pipeline.core.progress import LOGGER as PROGRESS_LOGGER

# Wide consoles when not on a terminal (CI logs): tables are not wrapped mid-row.
console = Console(stderr=False, width=None if sys.stdout.isatty() else 160)
err = Console(stderr=True, width=None if sys.stderr.isatty() else 160)


def run_config(verbose: int = 0) -> dict:
    """Dagster run config of the command line's runs: the console logger at WARNING (INFO with ``-v``).

    Args:
        verbose: the number of ``-v`` flags.

    Returns:
        A run config dict for ``dg.materialize`` / ``dg.execute_job``.
    """
    return {"loggers": {"console": {"config": {"log_level": "INFO" if verbose else "WARNING"}}}}


QUIET_RUN_CONFIG = run_config(0)


def _progress() -> Progress:
    """A rich progress bar on :data:`err` (description, bar, done/total, elapsed)."""
    return Progress(TextColumn("{task.description}"), BarColumn(), TextColumn("{task.completed}/{task.total}"),
                    TimeElapsedColumn(), console=err, transient=False)


class ProgressDisplay(logging.Handler):
    """Draws :mod:`heritage_pipeline.core.progress` records on :data:`err` and keeps each phase's wall time.

    Args:
        interval_s: on output that is not a terminal, the seconds between two lines about running phases (a
            phase's start is not printed; its end is, unless it is uncounted and took under 2 s).
        live: force the terminal (True) or line (False) display; default: whether :data:`err` is a terminal.

    Use as a context manager: the handler is attached to the progress logger for the duration of the block.
    :attr:`timings` maps each finished phase to its wall time in seconds, in the order phases finished.
    """

    def __init__(self, interval_s: float = 60.0, live: bool | None = None) -> None:
        super().__init__(logging.INFO)
        self.interval_s = interval_s
        self.live = err.is_terminal if live is None else live
        self.timings: dict[str, float] = {}
        self._started: dict[str, float] = {}
        self._printed: dict[str, float] = {}
        self._active: set[str] = set()
        self._tasks: dict[str, TaskID] = {}
        self._progress: Progress | None = None
        self._running: dict[str, tuple[int, int | None, str]] = {}  # phase -> (done, total, detail), line display
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._ticker: threading.Thread | None = None

    def __enter__(self) -> ProgressDisplay:
        if self.live:
            self._progress = Progress(SpinnerColumn(finished_text="[green]✓[/green]"), TextColumn("{task.description}"),
                                      BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), TextColumn("ETA"),
                                      TimeRemainingColumn(), TextColumn("[dim]{task.fields[detail]}"), console=err,
                                      transient=False, redirect_stderr=False)  # stderr is the log's
            self._progress.start()
        else:  # a step can take minutes without a record: say every interval_s what is still running
            self._ticker = threading.Thread(target=self._tick, name="progress-ticker", daemon=True)
            self._ticker.start()
        PROGRESS_LOGGER.addHandler(self)
        PROGRESS_LOGGER.setLevel(logging.INFO)
        return self

    def __exit__(self, *exc) -> None:
        PROGRESS_LOGGER.removeHandler(self)
        self._stop.set()
        if self._ticker is not None:
            self._ticker.join()
        if self._progress is not None:
            self._progress.stop()

    def _tick(self) -> None:
        """Every ``interval_s``: one line for the innermost running phase (the one started last, e.g. the ablation
        grid inside the ablation report), so nested phases do not double the lines."""
        while not self._stop.wait(1.0):
            now = time.perf_counter()
            with self._lock:
                if not self._running:
                    continue
                name = max(self._running, key=lambda n: self._started[n])
                if now - max(self._printed[n] for n in self._running) >= self.interval_s:
                    self._print_running(name, *self._running[name], now)
                    for n in self._running:
                        self._printed[n] = now

    def _print_running(self, name: str, done: int, total: int | None, detail: str, now: float) -> None:
        self._printed[name] = now
        elapsed = now - self._started[name]
        count = f"{done}/{total}, " if total and total > 1 else ""
        eta = f", ETA {elapsed / done * (total - done):.0f} s" if total and total > 1 and done else ""
        err.print(f"  … {name}: {count}{elapsed:.0f} s{eta}" + (f" — {detail}" if detail else ""), highlight=False)

    def emit(self, record: logging.LogRecord) -> None:  # noqa: D102 (logging.Handler API)
        name = getattr(record, "progress_phase", None)
        if name is None:
            return
        with self._lock:
            self._handle(name, record.progress_done, record.progress_total, record.progress_detail or "")

    def _handle(self, name: str, done: int, total: int | None, detail: str) -> None:
        now = time.perf_counter()
        if name not in self._active:  # a phase may run more than once (a model per embedder): times add up
            self._active.add(name)
            self._started[name] = now
            self._printed[name] = now
        elapsed = now - self._started[name]
        finished = total is not None and done >= total
        if finished:
            self._active.discard(name)
            self.timings[name] = self.timings.get(name, 0.0) + elapsed
        if self._progress is not None:
            if name not in self._tasks:
                self._tasks[name] = self._progress.add_task(name, total=total, detail=detail)
            self._progress.update(self._tasks[name], completed=done, total=total, detail=detail)
            if finished:
                self._tasks.pop(name)  # its finished bar stays; a rerun of the phase gets a new one
            return
        if not finished:
            self._running[name] = (done, total, detail)  # the ticker prints it
            return
        self._running.pop(name, None)
        if not (total and total > 1) and elapsed < 2.0:
            return  # a short uncounted phase: no line of its own (its time is in :attr:`timings`)
        count = f"{total}/{total} in " if total and total > 1 else ""
        err.print(f"✓ {name}: {count}{elapsed:.1f} s", highlight=False)


# Loggers of libraries that install their own stderr handlers: their records go to the log file instead.
_LIBRARY_LOGGERS = ("dagster", "lancedb", "transformers", "sentence_transformers", "docling", "docling_core",
                    "trafilatura", "urllib3", "httpx", "matplotlib", "PIL", "rdflib", "linkml_runtime", "distributed",
                    "numexpr", "py.warnings")

# INFO loggers that describe the machinery, not the run (Dagster's SQLite schema migrations): WARNING unless -vv.
_CHATTY_LOGGERS = ("alembic",)


@contextmanager
def quiet_output(log_path: Path, verbose: int = 0) -> Iterator[Path]:
    """Route library output to ``log_path`` for the duration of the block; :data:`err` stays on the terminal.

    Without ``-v``: Python warnings (each once per location) and INFO logging of every logger go to the log file,
    and file descriptor 2 is pointed at it too, so native libraries (LanceDB's Rust log, onnxruntime), Dagster's
    console logger and child processes write there as well. With ``verbose >= 1`` stderr is left alone and INFO
    logging also shows there; ``verbose >= 2`` logs DEBUG.

    Args:
        log_path: the log file (created with its folder; overwritten).
        verbose: the number of ``-v`` flags.

    Returns:
        A context manager yielding ``log_path``; on exit stderr, the logging handlers and the warning filters are
        restored.
    """
    log_path.parent.mkdir(parents=True, exist_ok=True)
    log = open(log_path, "w", encoding="utf-8", buffering=1)
    root = logging.getLogger()
    saved_handlers, saved_level = list(root.handlers), root.level
    saved_lib = {n: (list(logging.getLogger(n).handlers), logging.getLogger(n).propagate) for n in _LIBRARY_LOGGERS}
    handler = logging.StreamHandler(log)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    for h in saved_handlers:
        root.removeHandler(h)
    root.addHandler(handler)
    root.setLevel(logging.DEBUG if verbose >= 2 else logging.INFO)
    if verbose:
        shown = logging.StreamHandler(sys.stderr)
        shown.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
        shown.addFilter(lambda r: not hasattr(r, "progress_phase"))  # drawn by ProgressDisplay already
        root.addHandler(shown)
    for name in _LIBRARY_LOGGERS:
        lg = logging.getLogger(name)
        for h in list(lg.handlers):
            if isinstance(h, logging.StreamHandler) and getattr(h, "stream", None) in (sys.stderr, sys.stdout):
                lg.removeHandler(h)
        lg.propagate = True
    saved_levels = {n: logging.getLogger(n).level for n in _CHATTY_LOGGERS}
    for n in _CHATTY_LOGGERS:
        logging.getLogger(n).setLevel(logging.DEBUG if verbose >= 2 else logging.WARNING)
    logging.captureWarnings(True)
    saved_fd = None
    with warnings.catch_warnings():
        warnings.simplefilter("default")
        if not verbose:
            sys.stderr.flush()
            saved_fd = os.dup(2)
            os.dup2(log.fileno(), 2)
            err.file = os.fdopen(os.dup(saved_fd), "w", encoding="utf-8", buffering=1)
        try:
            yield log_path
        finally:
            sys.stderr.flush()
            if saved_fd is not None:
                err.file.flush()
                err.file.close()
                err.file = None  # back to sys.stderr
                os.dup2(saved_fd, 2)
                os.close(saved_fd)
            logging.captureWarnings(False)
            root.removeHandler(handler)
            for h in list(root.handlers):
                root.removeHandler(h)
            for h in saved_handlers:
                root.addHandler(h)
            root.setLevel(saved_level)
            for name, level in saved_levels.items():
                logging.getLogger(name).setLevel(level)
            for name, (handlers, propagate) in saved_lib.items():
                lg = logging.getLogger(name)
                lg.handlers[:] = handlers
                lg.propagate = propagate
            log.close()
