"""Helpers for the operations tests (defs, schedule, sensors, staleness, incremental runs, crashes, webserver, Dask).

:func:`make_project` builds a throw-away project: a small data folder (copies of real bundled files plus a
hand-written Markdown page), ``configs/chunking.yaml`` and ``configs/pipeline.yaml`` pointing at it, and a Dagster
home. Keywords use RAKE by default (KeyBERT costs ~0.2 s per chunk on 2 cores and is not what these tests are about;
pass ``keywords="keybert"`` to use it); the embedder is the real bundled MiniLM.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import time
from dataclasses import dataclass
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parent.parent
BUNDLED = REPO / "data"

# data-relative destination -> bundled source (real, openly licensed files; see data/SOURCES.md)
SMALL_FILES = {
    "raw/csv_registry/nl_erfgoedorganisaties_sample.csv": "raw/csv_registry/nl_erfgoedorganisaties_sample.csv",
    "raw/yaml_instance/koninklijke_bibliotheek.yaml": "raw/yaml_instance/koninklijke_bibliotheek.yaml",
    "raw/document/fastapi/en/environment-variables.md": "raw/document/fastapi/en/environment-variables.md",
}
HANDWRITTEN_MD = """# Visiting the city archive

## Opening hours

The reading room of the city archive is open from Tuesday to Friday, from nine in the morning until five in the
afternoon. Visitors who want to consult original documents should reserve them at least two days in advance
through the online catalogue, because many records are stored in an external depot.

## Collections

The archive keeps the records of the municipality since the fourteenth century, notarial deeds, church
registers of baptisms, marriages and burials, maps and drawings of the harbour, and a large collection of
photographs of the old town. Most registers have been digitised and can be searched by name.
"""
HANDWRITTEN_PATH = "raw/document/city-archive-visit.md"


@dataclass
class Project:
    root: Path
    data: Path
    out: Path
    home: Path
    chunking: Path
    pipeline: Path

    def env(self) -> dict[str, str]:
        """Environment for a subprocess (CLI, webserver) that must use this project's configs and Dagster home."""
        return {**os.environ, "DAGSTER_HOME": str(self.home), "HERITAGE_CHUNKING_CONFIG": str(self.chunking),
                "HERITAGE_PIPELINE_CONFIG": str(self.pipeline), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
                "TOKENIZERS_PARALLELISM": "false"}

    def definitions(self, **kw):
        from heritage_pipeline.definitions import build_definitions

        return build_definitions(self.chunking, self.pipeline, **kw)

    def set_chunking(self, dotted: str, value) -> None:
        """Edit one key of this project's chunking.yaml (as a user would)."""
        data = yaml.safe_load(self.chunking.read_text())
        node = data
        *parents, leaf = dotted.split(".")
        for p in parents:
            node = node.setdefault(p, {})
        node[leaf] = value
        self.chunking.write_text(yaml.safe_dump(data, sort_keys=False))


def make_project(root: Path, *, keywords: str = "rake", files: dict[str, str] | None = None,
                 extra: dict[str, str] | None = None, executor: dict | None = None) -> Project:
    """A small project under ``root`` (see the module docstring). ``extra``: data-relative path -> text to write."""
    data, out, home, cfg = root / "data", root / "out", root / "home", root / "configs"
    for d in (data, out, home, cfg):
        d.mkdir(parents=True, exist_ok=True)
    for dest, src in (SMALL_FILES if files is None else files).items():
        (data / dest).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(BUNDLED / src, data / dest)
    for dest, text in ({HANDWRITTEN_PATH: HANDWRITTEN_MD} if extra is None else extra).items():
        (data / dest).parent.mkdir(parents=True, exist_ok=True)
        (data / dest).write_text(text, encoding="utf-8")
    chunking = yaml.safe_load((REPO / "configs" / "chunking.yaml").read_text())
    chunking["context"]["keywords"]["method"] = keywords
    (cfg / "chunking.yaml").write_text(yaml.safe_dump(chunking, sort_keys=False))
    pipeline = yaml.safe_load((REPO / "configs" / "pipeline.yaml").read_text())
    pipeline.update({"data_dir": str(data), "output_dir": str(out)})
    pipeline["lancedb"]["uri"] = str(out / "lancedb")
    pipeline["ablation"]["languages"] = ["en"]
    if executor:
        pipeline["executor"] = {**pipeline.get("executor", {}), **executor}
    (cfg / "pipeline.yaml").write_text(yaml.safe_dump(pipeline, sort_keys=False))
    (home / "dagster.yaml").write_text("telemetry:\n  enabled: false\n")
    return Project(root, data, out, home, cfg / "chunking.yaml", cfg / "pipeline.yaml")


def register_languages(instance, project: Project) -> list[tuple[str, str]]:
    """Add the languages of the project's raw files to the instance; returns the (source_type, lang) partitions."""
    from heritage_pipeline.incremental.discovery import discover_once

    parts = sorted({s.partition for s in discover_once(project.data)})
    langs = sorted({lang for _, lang in parts})
    known = set(instance.get_dynamic_partitions("language"))
    if set(langs) - known:
        instance.add_dynamic_partitions("language", sorted(set(langs) - known))
    return parts


def materialize_partition(defs, instance, source_type: str, lang: str, selection=None):
    """Materialise the partitioned assets (or ``selection``) of one partition in process; returns the result."""
    import dagster as dg

    from heritage_pipeline.defs.automation import PARTITIONED_KEYS

    key = dg.MultiPartitionKey({"source_type": source_type, "language": lang})
    if selection is None or "enriched_chunks" in selection:
        materialize_gazetteer(defs, instance)
    return dg.materialize(list(defs.assets), selection=list(selection or PARTITIONED_KEYS), partition_key=key,
                          instance=instance, resources=defs.resources, raise_on_error=True)


def materialize_gazetteer(defs, instance):
    """What ``heritage-pipeline run`` does before the partition runs: parse every registered registry / LinkML
    partition that has input files, then materialise the gazetteer from them; returns the gazetteer run's result."""
    import dagster as dg

    from heritage_pipeline.incremental.discovery import discover_once
    from heritage_pipeline.defs.automation import PARSE_KEYS
    from heritage_pipeline.enrich.gazetteer import GAZETTEER_SOURCE_TYPES

    settings = defs.resources["settings"]
    langs = set(instance.get_dynamic_partitions("language"))
    parts = sorted({s.partition for s in discover_once(settings.data_dir) if s.status != "skipped"})
    for st, lang in parts:
        if st in GAZETTEER_SOURCE_TYPES and lang in langs:
            dg.materialize(list(defs.assets), selection=list(PARSE_KEYS), instance=instance, resources=defs.resources,
                           partition_key=dg.MultiPartitionKey({"source_type": st, "language": lang}), raise_on_error=True)
    return dg.materialize(list(defs.assets), selection=["gazetteer"], instance=instance, resources=defs.resources,
                          raise_on_error=True)


def materialize_index(defs, instance):
    import dagster as dg

    return dg.materialize(list(defs.assets), selection=["lancedb_index"], instance=instance, resources=defs.resources,
                          raise_on_error=True)


def metadata(result, asset: str) -> dict:
    """Materialisation metadata of ``asset`` in a run result, as plain values."""
    mats = [m for m in result.get_asset_materialization_events() if m.asset_key.to_user_string() == asset]
    assert mats, f"{asset} was not materialised"
    from heritage_pipeline.defs.metadata import plain

    return {k: plain(v) for k, v in mats[-1].materialization.metadata.items()}


def index_rows(uri: str | Path, table: str = "chunks") -> list[dict]:
    """Every index row (vector as a list), sorted by id."""
    import lancedb

    db = lancedb.connect(str(uri))
    if table not in db.table_names():
        return []
    rows = db.open_table(table).to_arrow().to_pylist()
    return sorted(rows, key=lambda r: r["id"])


def default_signals() -> None:
    """``preexec_fn`` for test subprocesses: SIGTERM and SIGINT back to their defaults. A shell that starts jobs in
    the background makes them ignore both, the children inherit that, and Dagster's compute-log ``tail`` helpers,
    stopped with SIGTERM, then cost 30 s each."""
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def descendants(pid: int) -> list[int]:
    """PIDs of every descendant of ``pid`` (Linux /proc), children first."""
    out: list[int] = []
    todo = [pid]
    while todo:
        p = todo.pop()
        try:
            kids = [int(c) for t in Path(f"/proc/{p}/task").iterdir()
                    for c in (t / "children").read_text().split()]
        except OSError:
            continue
        out.extend(kids)
        todo.extend(kids)
    return out


def stop_tree(pid: int, timeout: float = 10.0) -> None:
    """Stop ``pid`` and its descendants by PID: SIGTERM, then SIGKILL after ``timeout`` for any still alive
    (dagster processes started from non-interactive shells may ignore SIGTERM)."""
    pids = [pid] + descendants(pid)
    for p in reversed(pids):
        try:
            os.kill(p, signal.SIGTERM)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and any(_alive(p) for p in pids):
        time.sleep(0.2)
    for p in pids:
        if _alive(p):
            try:
                os.kill(p, signal.SIGKILL)
            except ProcessLookupError:
                pass
    for p in pids:
        try:
            os.waitpid(p, os.WNOHANG)
        except ChildProcessError:
            pass


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0]
    except OSError:
        return False
    return state != "Z"
