"""Input accounting: every input file chunked, skipped or quarantined, and every part of a file (entity, message,
row) chunked, left out or quarantined, with repeated reasons grouped. Plain functions; the command line prints
:meth:`InputSummary.lines` (``chunk``, ``run``).

A file is *chunked* when it was parsed into at least one section, *skipped* when discovery or its parser refused
it for a stated reason (licence file, unsupported type, empty, a LinkML schema) or it parsed into nothing, and
*quarantined* when it could not be read or parsed. ``files == chunked + skipped + quarantined`` always holds
(:meth:`InputSummary.check`).

Reasons are grouped by their shape: quoted values and numbers are replaced (``'Z'`` -> ``'…'``, ``line 3`` ->
``line N``), so "invalid JSON at line 3" and "... at line 9" are one group; a group shows its count, the reason
(verbatim when all its members say the same) and at most three example locations.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from heritage_pipeline.core.models import QuarantineRecord

EXAMPLES = 3
PART_KINDS = {"yaml_instance": "entities", "conversation": "messages", "csv_registry": "rows"}
_QUOTED = re.compile(r"'[^'\n]*'|\"[^\"\n]*\"")
_NUMBER = re.compile(r"\d+(?:[.,]\d+)?")
# a quarantined line of a JSON Lines file (``file#line N``): a line is no entity, message or row, so it is listed as
# a line and not counted among the parts (registry rows are ``#row N (line L)``)
_LINE_PART = re.compile(r"#line \d+$")


def reason_key(reason: str) -> str:
    """The shape of a reason: quoted values -> ``'…'``, numbers -> ``N`` (see the module docstring)."""
    return _NUMBER.sub("N", _QUOTED.sub("'…'", reason))


@dataclass
class ReasonGroup:
    """One reason with how many items gave it and up to :data:`EXAMPLES` of them."""

    reason: str
    count: int
    examples: list[str]

    def line(self) -> str:
        more = f", … ({self.count - len(self.examples)} more)" if self.count > len(self.examples) else ""
        return f"{self.count} × {self.reason} (e.g. {', '.join(self.examples)}{more})"


def group_reasons(items: Iterable[tuple[str, str]]) -> list[ReasonGroup]:
    """Group ``(location, reason)`` pairs by :func:`reason_key`; groups sorted by count (then reason), examples in
    input order. A group's reason is the verbatim reason when all its members agree, else the key."""
    groups: dict[str, list[tuple[str, str]]] = {}
    for where, why in items:
        groups.setdefault(reason_key(why), []).append((where, why))
    out = []
    for key, members in groups.items():
        reasons = {why for _, why in members}
        out.append(ReasonGroup(next(iter(reasons)) if len(reasons) == 1 else key, len(members),
                               [w for w, _ in members[:EXAMPLES]]))
    return sorted(out, key=lambda g: (-g.count, g.reason))


def left_out_groups(items: Iterable[tuple[str, str]]) -> list[dict[str, Any]]:
    """The left-out parts of one file grouped by reason, JSON-able for ``ParsedDocument.meta["left_out_reasons"]``.

    Args:
        items: ``(location in the file, reason)`` of every left-out part (message, row).
    Returns:
        ``[{"reason", "key", "count", "examples"}]`` (:func:`group_reasons`; ``key`` is :func:`reason_key`, so that
        groups of several files merge in :func:`summarize_inputs`).
    """
    return [{"reason": g.reason, "key": reason_key(g.reason), "count": g.count, "examples": g.examples}
            for g in group_reasons(items)]


def _merge_left_out(per_file: Iterable[tuple[str, list[dict[str, Any]]]]) -> list[ReasonGroup]:
    """Merge the :func:`left_out_groups` of several files (examples prefixed ``<file>#``) into one list of groups."""
    merged: dict[str, ReasonGroup] = {}
    for path, groups in per_file:
        for g in groups or []:
            key = g.get("key") or reason_key(g["reason"])
            have = merged.get(key)
            ex = [f"{path}#{e}" for e in g.get("examples", [])]
            if have is None:
                merged[key] = ReasonGroup(g["reason"], int(g["count"]), ex[:EXAMPLES])
            else:
                have.count += int(g["count"])
                have.examples = (have.examples + ex)[:EXAMPLES]
                if have.reason != g["reason"]:
                    have.reason = key
    return sorted(merged.values(), key=lambda g: (-g.count, g.reason))


@dataclass
class PartCounts:
    """Parts of one kind (entities, messages, rows): read, chunked, left out (stated reason), quarantined."""

    read: int = 0
    chunked: int = 0
    left_out: int = 0
    quarantined: int = 0


@dataclass
class InputSummary:
    files: int = 0
    chunked: int = 0
    skipped: list[ReasonGroup] = field(default_factory=list)
    quarantined: list[ReasonGroup] = field(default_factory=list)
    parts: dict[str, PartCounts] = field(default_factory=dict)
    quarantined_parts: dict[str, list[ReasonGroup]] = field(default_factory=dict)
    left_out_parts: dict[str, list[ReasonGroup]] = field(default_factory=dict)  # kind -> left-out reasons
    no_schema: list[ReasonGroup] = field(default_factory=list)  # LinkML files that no schema fits (not validated)
    invalid_entities: list[ReasonGroup] = field(default_factory=list)
    n_invalid_entities: int = 0
    statuses: dict[str, str] = field(default_factory=dict)  # file -> chunked | skipped | quarantined
    registries: list[str] = field(default_factory=list)  # one line per registry file: the column mapping it got
    ragged: list[str] = field(default_factory=list)  # one line per registry file with ragged rows (kept; warned)
    n_ragged: int = 0

    @property
    def n_skipped(self) -> int:
        return sum(g.count for g in self.skipped)

    @property
    def n_quarantined(self) -> int:
        return sum(g.count for g in self.quarantined)

    def check(self) -> None:
        """Raise AssertionError when the file counts do not add up (a bug, never bad input)."""
        assert self.chunked + self.n_skipped + self.n_quarantined == self.files == len(self.statuses), self

    def lines(self) -> list[str]:
        """The summary as console lines (plain text; grouped reasons indented under their heading)."""
        out = [f"inputs: {self.files} files = {self.chunked} chunked + {self.n_skipped} skipped + "
               f"{self.n_quarantined} quarantined"]
        for title, groups in (("skipped files", self.skipped), ("quarantined files", self.quarantined)):
            if groups:
                out.append(f"{title} ({sum(g.count for g in groups)}):")
                out += [f"  {g.line()}" for g in groups]
        for kind, c in sorted(self.parts.items()):
            out.append(f"{kind}: {c.read} read = {c.chunked} chunked + {c.left_out} left out + {c.quarantined} quarantined")
        for kind, groups in sorted(self.left_out_parts.items()):
            if groups:
                out.append(f"left out {kind} ({sum(g.count for g in groups)}):")
                out += [f"  {g.line()}" for g in groups]
        for kind, groups in sorted(self.quarantined_parts.items()):
            n = sum(g.count for g in groups)
            what = "parts of files" if kind == "parts" else kind
            out.append(f"quarantined {what} ({n} {'record' if n == 1 else 'records'}):")
            out += [f"  {g.line()}" for g in groups]
        if self.registries:
            out.append(f"registry column mappings ({len(self.registries)} files):")
            out += [f"  {line}" for line in self.registries]
        if self.ragged:
            out.append(f"ragged registry rows ({self.n_ragged} in {len(self.ragged)} "
                       f"file{'s' if len(self.ragged) != 1 else ''}; chunked, field count other than the header's):")
            out += [f"  {line}" for line in self.ragged]
        for g in self.no_schema:
            out.append(f"LinkML files not validated: {g.line()}")
        if self.invalid_entities:
            out.append(f"entities chunked with LinkML validation errors ({self.n_invalid_entities}; errors in "
                       "meta.extra.linkml_errors):")
            out += [f"  {g.line()}" for g in self.invalid_entities]
        return out


@dataclass
class ParsedFile:
    """What the summary needs of one parsed file: its sections' metadata, its parser's meta counts and skips."""

    path: str
    source_type: str
    n_sections: int
    meta: dict[str, Any]
    skipped: list[str]
    section_metas: list[dict[str, Any]]


def summarize_inputs(statuses: dict[str, tuple[str, str]], parsed: Iterable[ParsedFile],
                     quarantined: Iterable[QuarantineRecord]) -> InputSummary:
    """Account for every input file and part.

    Args:
        statuses: input path -> (discovery status ``ok``/``skipped``/``quarantined``, reason), one entry per file.
        parsed: the files that parsed into a document (any order).
        quarantined: quarantine records of the run: whole files (``path``) and parts (``path#location``), from
            discovery and parsing; duplicates (same path and reason) are counted once.

    Returns:
        The :class:`InputSummary` (its counts add up: see :meth:`InputSummary.check`).
    """
    docs = {p.path: p for p in parsed if p.path in statuses}  # stored documents of files that are gone: ignored
    records = list({(q.path, q.reason): q for q in quarantined}.values())
    whole = {q.path: q.reason for q in records if "#" not in q.path}
    parts = [q for q in records if "#" in q.path]
    s = InputSummary(files=len(statuses))
    skipped_items: list[tuple[str, str]] = []
    quarantined_items: list[tuple[str, str]] = []
    for path, (status, reason) in sorted(statuses.items()):
        doc = docs.get(path)
        if status == "quarantined" or (doc is None and path in whole):
            quarantined_items.append((path, whole.get(path) or reason))
            s.statuses[path] = "quarantined"
        elif status == "skipped":
            skipped_items.append((path, reason))
            s.statuses[path] = "skipped"
        elif doc is None:  # parsed nowhere and not quarantined: its parser skipped it (the reason is in statuses)
            skipped_items.append((path, reason or "skipped by its parser"))
            s.statuses[path] = "skipped"
        elif doc.n_sections == 0:
            why = doc.skipped[0].split(": ", 1)[-1] if doc.skipped else "no text to chunk"
            skipped_items.append((path, f"parsed, nothing to chunk ({why})"))
            s.statuses[path] = "skipped"
        else:
            s.chunked += 1
            s.statuses[path] = "chunked"
    s.skipped = group_reasons(skipped_items)
    s.quarantined = group_reasons(quarantined_items)
    part_items: dict[str, list[tuple[str, str]]] = {}
    for q in parts:
        kind = PART_KINDS.get(q.source_type or "", "parts")
        if _LINE_PART.search(q.path):  # a JSON Lines line that is no conversation: not a message (see _LINE_PART)
            kind = "lines"
        part_items.setdefault(kind, []).append((q.path, q.reason))
    s.quarantined_parts = {k: group_reasons(v) for k, v in part_items.items()}
    left_per_kind: dict[str, list[tuple[str, list[dict[str, Any]]]]] = {}
    no_schema: list[tuple[str, str]] = []
    invalid: list[tuple[str, str]] = []
    parts_per_file: dict[str, int] = {}
    for q in parts:
        parts_per_file[q.path.split("#", 1)[0]] = parts_per_file.get(q.path.split("#", 1)[0], 0) + 1
    for doc in docs.values():
        kind = PART_KINDS.get(doc.source_type)
        if kind is None:
            continue
        c = s.parts.setdefault(kind, PartCounts())
        m = doc.meta
        if kind == "entities":  # read = chunked + quarantined (an entity is never left out)
            read, chunked, left = int(m.get("entities", doc.n_sections)), int(m.get("entities_chunked", doc.n_sections)), 0
            quar = read - chunked
        elif kind == "messages":
            read, chunked = int(m.get("messages", doc.n_sections)), int(m.get("messages_chunked", doc.n_sections))
            left, quar = int(m.get("messages_left_out", 0)), int(m.get("messages_quarantined", 0))
        else:
            quar = parts_per_file.get(doc.path, 0)
            chunked = int(m.get("rows_chunked", doc.n_sections))
            left = int(m.get("rows_left_out", 0))
            read = int(m.get("rows", chunked + left + quar))
        c.read, c.chunked, c.left_out, c.quarantined = c.read + read, c.chunked + chunked, c.left_out + left, c.quarantined + quar
        if kind == "entities" and not m.get("linkml_schema"):
            no_schema.append((doc.path, "no schema names or fits the file (meta.extra.linkml_validation)"))
        if m.get("left_out_reasons"):
            left_per_kind.setdefault(kind, []).append((doc.path, m["left_out_reasons"]))
        if kind == "rows" and m.get("registry_type"):
            s.registries.append(registry_mapping_line(doc.path, m))
        if kind == "rows" and m.get("ragged_rows"):
            s.n_ragged += int(m["ragged_rows"]["count"])
            s.ragged.append(f"{doc.path}: {m['ragged_rows']['message']}")
        for i, sm in enumerate(doc.section_metas):
            errs = (sm.get("extra") or {}).get("linkml_errors")
            if errs:
                s.n_invalid_entities += 1
                label = (sm.get("extra") or {}).get("slot:preferred_label") or f"entity {i}"
                invalid += [(f"{doc.path}#{label}", e) for e in _split_errors(errs)]
    s.invalid_entities = group_reasons(invalid)
    s.left_out_parts = {k: _merge_left_out(v) for k, v in left_per_kind.items()}
    s.no_schema = group_reasons(no_schema)
    s.check()
    return s


def registry_mapping_line(path: str, meta: dict[str, Any]) -> str:
    """One summary line for a registry file: its mapping (configured name, ``inferred`` or ``identifier_list``),
    ``column -> slot`` pairs, unmapped columns (how many are in the record text, which code columns are in
    ``meta.extra`` only) and the registry-level custodian type and country defaults."""
    mapping = meta.get("column_mapping") or {}
    unmapped = [c for c in meta.get("columns") or [] if c not in mapping]
    pairs = ", ".join(f"{c} -> {s}" for c, s in mapping.items()) or "no column mapped"
    line = f"{path}: {meta.get('registry_type')}{' (headerless)' if meta.get('headerless') else ''}: {pairs}"
    if unmapped:
        codes = [c for c in meta.get("columns_out_of_text") or [] if c in unmapped]
        shown = len(unmapped) - len(codes)
        line += f"; {len(unmapped)} unmapped ({shown} in the text after the slots"
        line += f", {len(codes)} code column{'s' if len(codes) != 1 else ''} in meta.extra only: {', '.join(codes[:5])})" \
            if codes else ")"
    if meta.get("custodian_type_default"):
        line += f"; default type {meta['custodian_type_default']} ({meta.get('custodian_type_default_source')})"
    if meta.get("country_code_default"):
        line += f"; default country {meta['country_code_default']} ({meta.get('country_code_default_source')})"
    return line


def _split_errors(joined: str) -> list[str]:
    """The single errors of a ``; ``-joined ``linkml_errors`` value (the ``(and N more)`` tail dropped)."""
    joined = re.sub(r" \(and \d+ more\)$", "", joined)
    return [e for e in re.split(r"; (?=[\w.\[\]<>]+: )", joined) if e]


def parsed_file(doc) -> ParsedFile:
    """:class:`ParsedFile` of a :class:`~heritage_pipeline.core.structure.ParsedDocument`."""
    return ParsedFile(doc.source_path, doc.source_type, len(doc.sections), dict(doc.meta), list(doc.skipped),
                      [s.meta for s in doc.sections])


def parsed_files_from_storage(storage: str | Path) -> list[ParsedFile]:
    """:class:`ParsedFile` of every document stored by the ``parsed_sections`` asset under ``storage``
    (``parsed_sections/<language>/<source_type>.parquet``), reading only the structure columns."""
    import pyarrow.parquet as pq

    out: list[ParsedFile] = []
    root = Path(storage) / "parsed_sections"
    for f in sorted(root.glob("*/*.parquet")) if root.is_dir() else []:
        t = pq.read_table(f, columns=["source_path", "source_type", "n_sections", "structure"])
        for path, st, n, raw in zip(*(t.column(c).to_pylist() for c in ("source_path", "source_type", "n_sections", "structure"))):
            structure = json.loads(raw or "{}")
            out.append(ParsedFile(path, st, int(n or 0), structure.get("meta") or {}, structure.get("skipped") or [],
                                  [s.get("meta") or {} for s in structure.get("sections") or []]))
    return out


@dataclass
class TextQuality:
    """Per-document text findings the terminal summary reports beside the input accounting: documents whose
    chunks hold a fenced code block without a closing fence (``quality.unclosed_fence``) and running page
    headers/footers excluded from the embedded text (``doc.meta["excluded_counts"]["running_lines"]``)."""

    unclosed_fence_chunks: dict[str, int] = field(default_factory=dict)  # document path -> flagged chunks
    running_lines: dict[str, int] = field(default_factory=dict)  # document path -> excluded running lines

    def lines(self) -> list[str]:
        """Console lines, none when there is nothing to report (each list shows at most :data:`EXAMPLES` files)."""
        out = []
        if self.unclosed_fence_chunks:
            docs = sorted(self.unclosed_fence_chunks)
            out.append(f"unclosed code fences: {len(docs)} document{'s' if len(docs) != 1 else ''} "
                       f"({sum(self.unclosed_fence_chunks.values())} chunks flagged quality.unclosed_fence), e.g. "
                       + ", ".join(docs[:EXAMPLES]))
        if self.running_lines:
            top = sorted(self.running_lines.items(), key=lambda kv: (-kv[1], kv[0]))
            out.append(f"running headers/footers excluded from the embedded text: {sum(self.running_lines.values())} "
                       f"lines in {len(top)} document{'s' if len(top) != 1 else ''}, e.g. "
                       + ", ".join(f"{p} ({n})" for p, n in top[:EXAMPLES]))
        return out


def text_quality(chunks: Iterable[Any], parsed: Iterable[ParsedFile]) -> TextQuality:
    """:class:`TextQuality` of a run from its chunks (``meta.source_path``, ``quality.unclosed_fence``) and its
    parsed files (``meta["excluded_counts"]``).

    Args:
        chunks: :class:`~heritage_pipeline.core.models.Chunk` objects (before or after deduplication).
        parsed: the run's :class:`ParsedFile` records.

    Returns:
        The counts per document path.
    """
    q = TextQuality()
    for c in chunks:
        if c.quality.unclosed_fence:
            q.unclosed_fence_chunks[c.meta.source_path] = q.unclosed_fence_chunks.get(c.meta.source_path, 0) + 1
    for p in parsed:
        n = int((p.meta.get("excluded_counts") or {}).get("running_lines", 0) or 0)
        if n:
            q.running_lines[p.path] = n
    return q


def text_quality_from_storage(storage: str | Path, parsed: Iterable[ParsedFile]) -> TextQuality:
    """:func:`text_quality` of a pipeline run, reading the ``chunks`` asset's parquet files under ``storage``
    (``chunks/<language>/<source_type>.parquet``, the ``source_path`` and ``record`` columns)."""
    import pyarrow.parquet as pq

    q = text_quality((), parsed)
    root = Path(storage) / "chunks"
    for f in sorted(root.glob("*/*.parquet")) if root.is_dir() else []:
        t = pq.read_table(f, columns=["source_path", "record"])
        for path, rec in zip(t.column("source_path").to_pylist(), t.column("record").to_pylist()):
            # the record is the chunk's JSON (core.models.chunks_to_table); only candidates are decoded
            if rec and "unclosed_fence" in rec and (json.loads(rec).get("quality") or {}).get("unclosed_fence"):
                q.unclosed_fence_chunks[path] = q.unclosed_fence_chunks.get(path, 0) + 1
    return q
