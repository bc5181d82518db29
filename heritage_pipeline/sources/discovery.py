"""Raw source discovery: find input files, decode them, detect their language, decide their partition.

Layout: ``<data_dir>/raw/<source_type>/**/<file>`` where ``source_type`` is one of
``document, website, conversation, csv_registry, yaml_instance``. Outside that layout (CLI ``chunk``), the source
type is inferred from the extension (:data:`EXTENSION_TYPES`).

Every file found is accounted for: ``ok`` (will be parsed), ``skipped`` (empty, unsupported type, a licence or
provenance file beside the data; with the reason) or ``quarantined`` (unreadable, binary, undecodable, too large;
with the reason). Only version-control, operating-system and editor files and the project's own outputs are
ignored without a record (:func:`is_ignored`); a ``Sources.md`` or ``manifest.json`` is input like any other file.
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa

from heritage_pipeline.core.config import SOURCE_TYPES
from heritage_pipeline.core.text import strip_markup
from heritage_pipeline.enrich.langid import (MAX_CHARS, UNDETERMINED, LanguagePolicy, detect_language, document_language,
                                             folder_language, resolve_folder_languages)
from heritage_pipeline.core.text import DecodeError, decode_bytes

EXTENSION_TYPES = {
    ".md": "document", ".markdown": "document", ".txt": "document", ".rst": "document", ".pdf": "document",
    ".html": "website", ".htm": "website", ".xhtml": "website",
    ".json": "conversation", ".jsonl": "conversation",
    ".csv": "csv_registry", ".tsv": "csv_registry",
    ".yaml": "yaml_instance", ".yml": "yaml_instance",
}
# Ignored without a record (not input by any reading): version control, OS and editor files, the project's outputs.
IGNORED_DIRS = frozenset({".git", ".hg", ".svn", ".bzr", "_darcs", ".idea", ".vscode", ".ipynb_checkpoints",
                          "__pycache__", ".dagster_home", ".venv"})
IGNORED_GLOBS = (".ds_store", "._*", "thumbs.db", "ehthumbs.db", "desktop.ini", ".directory", ".gitignore",
                 ".gitattributes", ".gitmodules", ".gitkeep", ".keep", ".hgignore", "*~", "*.swp", "*.swo", "*.swx",
                 ".#*", "#*#", "*.quarantine.jsonl", "*.dedup_log.parquet", "*.tmp")
# Skipped with a reason (still listed in the summary): licence texts and licence notes that sit beside the data.
PROVENANCE_GLOBS = ("license", "license.*", "licence", "licence.*", "copying", "copying.*", "*.note.txt")
MAX_FILE_BYTES = 200 * 1024 * 1024
_PARAGRAPHS = re.compile(r"\n\s*\n")


@dataclass
class RawSource:
    """One input file. ``path`` is data-relative (POSIX) under a data dir, else as given; ``text`` is decoded
    (leading BOM removed) and empty unless ``status == "ok"``."""

    path: str
    abs_path: str
    source_type: str
    lang: str = UNDETERMINED
    lang_confidence: float | None = None  # the file's own detection (langid.document_language), None if not run
    status: str = "ok"
    reason: str = ""
    encoding: str = ""
    sha256: str = ""
    n_bytes: int = 0
    text: str = field(default="", repr=False)

    @property
    def partition(self) -> tuple[str, str]:
        return self.source_type, self.lang


RAW_SCHEMA = pa.schema([(name, {"n_bytes": pa.int64(), "lang_confidence": pa.float64()}.get(name, pa.string()))
                        for name in ("path", "abs_path", "source_type", "lang", "lang_confidence", "status", "reason",
                                     "encoding", "sha256", "n_bytes", "text")])


def sources_to_table(sources: list[RawSource]) -> pa.Table:
    return pa.Table.from_pylist([asdict(s) for s in sources], schema=RAW_SCHEMA)


def table_to_sources(table: pa.Table) -> list[RawSource]:
    return [RawSource(**row) for row in table.to_pylist()]  # (a table stored before lang_confidence: None)


def is_ignored(name: str) -> bool:
    """A version-control, OS or editor file or folder, or an output of this project (see :data:`IGNORED_GLOBS`,
    :data:`IGNORED_DIRS`); such files are not input and get no record. Compared case-insensitively."""
    low = name.lower()
    return low in IGNORED_DIRS or any(fnmatch.fnmatch(low, g) for g in IGNORED_GLOBS)


def provenance_reason(name: str) -> str | None:
    """Why a file is skipped as provenance (a licence text or note beside the data), or None."""
    low = name.lower()
    if any(fnmatch.fnmatch(low, g) for g in PROVENANCE_GLOBS):
        return "licence or provenance file beside the data, not input"
    return None


def infer_source_type(path: str | Path) -> str | None:
    """Source type from the extension (``.md`` -> document, ``.json`` -> conversation, ...), or None."""
    return EXTENSION_TYPES.get(Path(path).suffix.lower())


def discover(data_dir: str | Path, *, lang_cache: dict[str, Any] | None = None,
             policy: LanguagePolicy | None = None) -> list[RawSource]:
    """All input files under ``<data_dir>/raw/<source_type>/``, decoded and language-tagged, sorted by path.

    ``lang_cache`` (see :func:`load_source`) lets unchanged files skip language detection. ``policy`` (the
    chunking config's ``language`` section, :func:`heritage_pipeline.enrich.langid.policy_from`): a file with no
    confident detection takes its source folder's language or the policy default (:func:`resolve_source_languages`:
    a registry never takes the language of other files).
    Raises FileNotFoundError naming the folder when ``<data_dir>/raw`` does not exist.
    """
    root = Path(data_dir)
    raw = root / "raw"
    if not raw.is_dir():
        raise FileNotFoundError(f"{raw}: no raw input folder (expected {raw}/<source_type>/...)")
    out: list[RawSource] = []
    for entry in sorted(raw.iterdir()):
        if is_ignored(entry.name):
            continue
        if entry.is_file():
            out.append(RawSource(entry.relative_to(root).as_posix(), str(entry), "document", status="skipped",
                                 reason=f"directly under raw/: put it in raw/<source_type>/ ({', '.join(SOURCE_TYPES)})"))
            continue
        if entry.name not in SOURCE_TYPES:
            for f in iter_files(entry):
                out.append(RawSource(f.relative_to(root).as_posix(), str(f), "document", status="skipped",
                                     reason=f"folder raw/{entry.name} is not a source type ({', '.join(SOURCE_TYPES)})"))
            continue
        for f in iter_files(entry):
            out.append(load_source(f, source_type=entry.name, rel_path=f.relative_to(root).as_posix(),
                                   lang_cache=lang_cache, policy=policy))
    out.sort(key=lambda s: s.path)
    resolve_source_languages(out, policy)
    return out


# Source types whose language is the file's own (its header and rows): a registry does not take, nor give, the
# language of other files in its folder, so a file's language never depends on which other files one command reads
# (the trial's Berlin museums CSV: "und" alone, "en" beside other English registries).
SELF_CONTAINED_LANGUAGE_TYPES = frozenset({"csv_registry"})


def resolve_source_languages(sources: list[RawSource], policy: LanguagePolicy | None = None, *,
                             absolute: bool = False) -> None:
    """Give each ``ok`` source with no confident language of its own (``und``) one, in place: a registry
    (:data:`SELF_CONTAINED_LANGUAGE_TYPES`) takes its folder's name when that is a language code, else the policy
    default; any other file takes its folder's language as the other non-registry files of the folder show it
    (:func:`~heritage_pipeline.enrich.langid.resolve_folder_languages`).

    Args:
        sources: the sources of one discovery or one ``chunk`` command.
        policy: the chunking config's language policy (default :class:`LanguagePolicy`).
        absolute: group by ``abs_path`` (files given on a command line) instead of the data-relative ``path``.
    """
    pol = policy or LanguagePolicy()

    def where(s: RawSource) -> str:
        return Path(s.abs_path).as_posix() if absolute else s.path

    ok = [s for s in sources if s.status == "ok"]
    voting = [s for s in ok if s.source_type not in SELF_CONTAINED_LANGUAGE_TYPES]
    for s, lang in zip(voting, resolve_folder_languages([(where(s), s.lang) for s in voting], pol)):
        s.lang = lang
    for s in ok:
        if s.source_type in SELF_CONTAINED_LANGUAGE_TYPES and s.lang == UNDETERMINED:
            s.lang = folder_language(where(s), pol.candidates) or pol.default


def iter_files(folder: str | Path) -> list[Path]:
    """Every file under ``folder`` (recursively, sorted) except the ignored ones (:func:`is_ignored` on any part of
    the path below ``folder``). Symbolic links to files count as files."""
    base = Path(folder)
    return [f for f in sorted(base.rglob("*"))
            if f.is_file() and not any(is_ignored(part) for part in f.relative_to(base).parts)]


def load_source(path: str | Path, *, source_type: str | None = None, rel_path: str | None = None,
                lang: str | None = None, lang_cache: dict[str, Any] | None = None,
                policy: LanguagePolicy | None = None) -> RawSource:
    """Read, decode and language-tag one file. Never raises: problems become ``skipped``/``quarantined``.

    ``lang_cache``: ``{"<source_type>:<sha256 of the bytes>": [language, confidence]}`` (a bare language string,
    as older caches hold, is read too), read and filled in place, so that a file
    whose bytes were seen before is not run through language detection again (detection is deterministic).
    """
    p = Path(path)
    shown = rel_path or str(path)
    if (why := provenance_reason(p.name)) is not None:
        return RawSource(shown, str(p), source_type or infer_source_type(p) or "document", status="skipped", reason=why)
    st = source_type or infer_source_type(p)
    if st is None:
        return RawSource(shown, str(p), "document", status="skipped",
                         reason=f"unsupported file type {p.suffix or '(no extension)'}; pass --source-type to force one")
    try:
        size = p.stat().st_size
        if size > MAX_FILE_BYTES:
            return RawSource(shown, str(p), st, status="quarantined", n_bytes=size,
                             reason=f"file is {size / 1e6:.0f} MB, over the {MAX_FILE_BYTES / 1e6:.0f} MB limit")
        data = p.read_bytes()
    except OSError as exc:
        return RawSource(shown, str(p), st, status="quarantined", reason=f"cannot read file: {exc.strerror or exc}")
    digest = hashlib.sha256(data).hexdigest()
    src = RawSource(shown, str(p), st, sha256=digest, n_bytes=len(data))
    if p.suffix.lower() == ".pdf":
        src.status, src.reason = "ok", ""
        src.lang = lang or UNDETERMINED
        return src
    try:
        decoded = decode_bytes(data, name=shown)
    except DecodeError as exc:
        src.status, src.reason = "quarantined", str(exc).removeprefix(f"{shown}: ")
        return src
    src.encoding = decoded.encoding
    if decoded.warning:  # (an ok file's reason is otherwise empty: the raw_sources table shows it next to the encoding)
        src.reason = decoded.warning.removeprefix(f"{shown}: ")
    if not decoded.text.strip():
        src.status, src.reason = "skipped", "empty file (no text)"
        return src
    src.text = decoded.text
    key = f"{st}:{digest}"
    if lang:
        src.lang = lang
    elif lang_cache is not None and key in lang_cache:
        cached = lang_cache[key]
        src.lang, src.lang_confidence = (cached, None) if isinstance(cached, str) else (cached[0], cached[1])
    else:
        src.lang, src.lang_confidence = source_language(decoded.text, st, policy)
        if lang_cache is not None:
            lang_cache[key] = [src.lang, src.lang_confidence]
    return src


def detect_source_language(text: str, source_type: str, policy: LanguagePolicy | None = None) -> str:
    """Document-level language for partitioning (ISO 639-1, ``mul`` for mixed, ``und`` if nothing was detected
    confidently): the language of :func:`source_language`."""
    return source_language(text, source_type, policy)[0]


def source_language(text: str, source_type: str, policy: LanguagePolicy | None = None) -> tuple[str, float]:
    """Document-level language and its confidence in [0, 1] (:func:`heritage_pipeline.enrich.langid.document_language`).

    A CSV registry votes with groups of 20 rows (at most 400 rows, evenly spaced over the whole file), each group
    the words of the header and the rows' cells that hold words (identifiers, numbers and URLs left out): one
    language per file from all rows (short names alone came out ``ha`` / ``pcm`` with the full language model).
    When no group is confident (a file of one or two rows: ``naam,plaats`` / ``Café Museum,Zwolle`` scores 0.47),
    the header words and all row words are detected as one text, and its language is taken when the header's own
    vocabulary names the same language (:func:`~heritage_pipeline.sources.columns.header_language`): two pieces of
    evidence that agree, instead of the folder's or the default language, when that detection's confidence reaches
    :data:`HEADER_AGREEMENT_MIN_CONFIDENCE`; its confidence is that detection's.
    All-capitals words of the cells are lower-cased for the vote: the detector's character n-grams are
    case-sensitive and come from mixed-case text, so upper-case exports (``MUSCLE SHOALS PUBLIC LIBRARY``) among
    mixed-case English names voted ``lb``.

    Returns:
        (ISO 639-1 code, ``mul`` or ``und``; confidence, 0.0 when undetermined).
    """
    if source_type == "csv_registry":
        return _registry_language(text, policy)
    if source_type == "conversation":
        segments = _json_strings(text)
    elif source_type == "yaml_instance":
        segments = [m.group(1) for m in re.finditer(r":\s*[>|]?-?\s*\n?((?:[^\n:]{30,}\n?)+)", text)] or [text]
    else:
        segments = _PARAGRAPHS.split(strip_markup(text)[:400_000])
    return document_language(segments, markup=False, policy=policy)


def _registry_language(text: str, policy: LanguagePolicy | None) -> tuple[str, float]:
    """:func:`source_language` of a CSV registry (see there)."""
    from heritage_pipeline.sources.columns import header_language

    lines = text.splitlines()
    rows = [" ".join(_fold_capitals(c.strip()) for c in re.split(r"[,;\t|]", line)
                     if _WORDY_CELL.search(c) and "://" not in c)
            for line in lines[1:]]
    rows = [r for r in rows if r]
    step = max(1, len(rows) // 400)
    rows = rows[::step]
    header = " ".join(_WORDY_CELL.findall(lines[0])) if lines else ""
    segments = [header + "\n" + "\n".join(rows[i : i + 20]) for i in range(0, len(rows), 20)]
    lang, conf = document_language(segments, markup=False, policy=policy)
    if lang != UNDETERMINED or not lines:
        return lang, conf
    named, _ = header_language(re.split(r"[,;\t|]", lines[0]))
    if named is None:
        return lang, conf
    pol = policy or LanguagePolicy()
    whole, whole_conf = detect_language((header + "\n" + "\n".join(rows))[:MAX_CHARS], markup=False,
                                        backend=pol.backend, candidates=pol.candidates)
    return (whole, whole_conf) if whole == named and whole_conf >= HEADER_AGREEMENT_MIN_CONFIDENCE else (UNDETERMINED, 0.0)


_WORDY_CELL = re.compile(r"[^\W\d_]{3,}")
# The whole-file detection of a registry no group of rows decided must reach this confidence *and* agree with its
# header's vocabulary: a header and one row of Dutch ("naam,plaats" / "Café Museum,Zwolle Stad") score nl 0.43, an
# English header over Dutch names ("name,city" / the same row) en 0.10, a names-only Wikidata sample 0.21-0.31.
HEADER_AGREEMENT_MIN_CONFIDENCE = 0.35
_CAPITALS_WORD = re.compile(r"\b[^\W\d_]{2,}\b")


def _fold_capitals(cell: str) -> str:
    """``cell`` with its all-capitals words lower-cased (``EAGLE RIVER Library`` -> ``eagle river Library``)."""
    return _CAPITALS_WORD.sub(lambda m: m.group().lower() if m.group().isupper() else m.group(), cell)


def _json_strings(text: str) -> list[str]:
    """Message texts of a conversation export, for language detection only (at most ~200; [] when the JSON is
    invalid or nested too deeply: the parse stage then quarantines the file with the reason)."""
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        return []
    out: list[str] = []

    def walk(v) -> None:
        if len(out) > 200:
            return
        if isinstance(v, dict):
            for k, x in v.items():
                if k in ("text", "extracted_content", "thinking") and isinstance(x, str) and x.strip():
                    out.append(x)
                else:
                    walk(x)
        elif isinstance(v, list):
            for x in v:
                walk(x)

    try:
        walk(data)
    except RecursionError:
        return out
    return out
