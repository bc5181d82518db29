"""The gazetteer of heritage institutions, built from the registries and LinkML instances in the data (see
``docs/heritage-mentions.md``).
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterable

from heritage_pipeline.core.config import REPO_ROOT

from .names import ARTICLES, MAX_NAME_TOKENS, QID_RE, TYPE_KEYWORDS, fold, keyword_type, name_tokens, stem_key


# ----------------------------------------------------------------------------------------------------- gazetteer
@dataclass
class Entity:
    """One heritage institution of the gazetteer (or found by pattern in a text)."""

    name: str
    type_code: str = "U"
    ids: set[str] = field(default_factory=set)  # ISIL codes, Wikidata ids, GHCIDs, hc_ids
    names: list[str] = field(default_factory=list)
    settlement: str | None = None
    country: str | None = None
    name_rank: int = 9  # 0 YAML, 1 curated registry, 2 Wikidata label, 9 pattern


@dataclass(frozen=True)
class Mention:
    """A resolved mention: ``surface`` is ``text[start:end]`` (code points); ``entity`` the canonical name."""

    surface: str
    start: int
    end: int
    entity: str
    type_code: str
    kind: str  # name | identifier | pattern | abbreviation | coreference
    ids: tuple[str, ...] = ()


class Gazetteer:
    """Heritage institutions indexed by folded name tokens and by identifier (see module docstring)."""

    def __init__(self, entities: Iterable[Entity] = ()) -> None:
        self.entities: list[Entity] = []
        self.by_tokens: dict[tuple[str, ...], int] = {}
        self.by_stems: dict[tuple[str, ...], int] = {}  # inflection-stripped keys of names of two or more words
        self.by_id: dict[str, int] = {}
        self.by_id_all: dict[str, list[int]] = {}
        self.max_tokens = 1
        for e in entities:
            self._index(e)

    def __len__(self) -> int:
        return len(self.entities)

    def _index(self, e: Entity) -> None:
        idx = len(self.entities)
        self.entities.append(e)
        for ident in e.ids:
            self.by_id.setdefault(ident, idx)
            self.by_id_all.setdefault(ident, []).append(idx)
        for name in dict.fromkeys([e.name, *e.names]):
            if QID_RE.match(name.strip()):
                continue  # a label that is a bare Wikidata id names nothing in running text (the ids still resolve)
            toks = tuple(t for t, _, _ in name_tokens(name))
            if not toks or len(toks) > MAX_NAME_TOKENS:
                continue
            keys = [toks]
            if len(toks) > 2 and toks[0] in ARTICLES:
                keys.append(toks[1:])
            for key in keys:
                if len(key) == 1 and (key[0] in TYPE_KEYWORDS or len(key[0]) < 3):
                    continue
                self.by_tokens.setdefault(key, idx)
                if len(key) >= 2:
                    self.by_stems.setdefault(stem_key(key), idx)
                self.max_tokens = max(self.max_tokens, len(key))

    @classmethod
    def from_records(cls, records: Iterable[dict[str, Any]]) -> "Gazetteer":
        """Merge registry records (``name``, ``rank``, ``type``, ``ids`` with ``isil:``/``wd:``/``ghcid:``/``hc:``
        prefixes, ``settlement``, ``country``) into entities (see module docstring)."""
        recs = [r for r in records if r.get("name")]
        isil_items: dict[str, set[str]] = {}
        for r in recs:
            wd = {i for i in r["ids"] if i.startswith("wd:")}
            for i in r["ids"]:
                if i.startswith("isil:"):
                    isil_items.setdefault(i, set()).update(wd)
        parent = list(range(len(recs)))

        def find(x: int) -> int:
            while parent[x] != x:
                parent[x] = parent[parent[x]]
                x = parent[x]
            return x

        owner: dict[str, int] = {}
        for k, r in enumerate(recs):
            for i in r["ids"]:
                if i.startswith("isil:") and len(isil_items.get(i, ())) > 1:
                    continue  # one ISIL on rows of different Wikidata items: not an identity
                if i in owner:
                    parent[find(k)] = find(owner[i])
                else:
                    owner[i] = k
        groups: dict[int, list[dict[str, Any]]] = {}
        for k, r in enumerate(recs):
            groups.setdefault(find(k), []).append(r)
        entities = []
        for members in groups.values():
            members.sort(key=lambda r: (bool(QID_RE.match(r["name"].strip())), r.get("rank", 9), r["name"]))
            best = members[0]
            names = list(dict.fromkeys(m["name"].strip() for m in members))
            typ = next((m["type"] for m in members if m.get("type")), None)
            typ = typ or next((t for t in (keyword_type(n) for n in names) if t), None) or "U"
            ent = Entity(name=best["name"].strip(), type_code=typ, ids=set().union(*(m["ids"] for m in members)),
                         names=names, settlement=next((m.get("settlement") for m in members if m.get("settlement")), None),
                         country=next((m.get("country") for m in members if m.get("country")), None),
                         name_rank=best.get("rank", 9))
            entities.append(ent)
        entities.sort(key=lambda e: (e.name_rank, fold(e.name), sorted(e.ids)))
        return cls(entities)

    def lookup_id(self, ident: str) -> Entity | None:
        """The entity holding identifier ``ident`` (``isil:NL-RIJ``, ``wd:Q190804``, ``ghcid:...``), or None."""
        i = self.by_id.get(ident)
        return self.entities[i] if i is not None else None

    def lookup_all(self, ident: str) -> list[Entity]:
        """Every entity holding ``ident`` (an ISIL can sit on several Wikidata items)."""
        return [self.entities[i] for i in self.by_id_all.get(ident, [])]


GAZETTEER_SOURCE_TYPES = ("csv_registry", "yaml_instance")  # the parsed_sections partitions the gazetteer reads
GAZETTEER_SUFFIXES = (".csv", ".tsv", ".yaml", ".yml")


def gazetteer_records(docs: Iterable[Any]) -> list[dict[str, Any]]:
    """Gazetteer records of parsed registry / LinkML instance documents: one per section (registry row or entity).

    Args:
        docs: :class:`~heritage_pipeline.core.structure.ParsedDocument` objects; those of other source types are
            ignored.

    Returns:
        Record dicts for :meth:`Gazetteer.from_records`, in document then section order.
    """
    out: list[dict[str, Any]] = []
    for doc in docs:
        if doc.source_type not in GAZETTEER_SOURCE_TYPES:
            continue
        for sec in doc.sections:
            out.append(_record(sec.meta, doc.source_type, doc.meta.get("registry_type")))
    return out


def _under(path: Path, roots: tuple[Path, ...]) -> bool:
    return any(path == r or r in path.parents for r in roots)


def build_gazetteer(docs: Iterable[Any], paths: Iterable[str] | None = None, base: str | Path | None = None) -> Gazetteer:
    """The gazetteer of the parsed documents that lie under the configured registry ``paths``: the one plain
    function behind both the ``gazetteer`` Dagster asset (over the stored ``parsed_sections`` of the registry and
    LinkML partitions) and the ``chunk`` command (over the same files parsed by the same parse stage).

    Args:
        docs: parsed documents (any source types; only registry / LinkML instance files with a ``.csv``, ``.tsv``,
            ``.yaml`` or ``.yml`` name under ``paths`` count).
        paths: ``context.entities.gazetteer`` (files or folders; relative ones resolve against ``base``), default
            ``raw/csv_registry`` and ``raw/yaml_instance``.
        base: the run's data folder (a document's relative ``source_path`` resolves against it too), default the
            bundled ``data/``.

    Returns:
        The :class:`Gazetteer`; documents are taken in the order of their resolved paths, so the result does not
        depend on the order of ``docs`` (partition order, language).
    """
    root = Path(base) if base is not None else REPO_ROOT / "data"
    roots = tuple(Path(p).resolve() for p in _gazetteer_paths(paths, base))
    chosen = []
    for d in docs:
        src = Path(d.source_path)
        full = (src if src.is_absolute() else root / src).resolve()
        if d.source_type in GAZETTEER_SOURCE_TYPES and full.suffix.lower() in GAZETTEER_SUFFIXES and _under(full, roots):
            chosen.append((str(full), d))
    chosen.sort(key=lambda t: t[0])
    return Gazetteer.from_records(gazetteer_records(d for _, d in chosen))


def gazetteer_files(paths: Iterable[str] | None = None, base: str | Path | None = None) -> list[tuple[Path, str]]:
    """``(file, source type)`` of every registry / LinkML instance file under the gazetteer ``paths``, sorted: the
    source type is the ``raw/<source_type>/`` folder the file lies in (as discovery types it), else its suffix's."""
    from heritage_pipeline.sources.discovery import is_ignored

    out: dict[Path, str] = {}
    for p in map(Path, _gazetteer_paths(paths, base)):
        files = sorted(f for f in p.rglob("*") if f.is_file() and not is_ignored(f.name)) if p.is_dir() else (
            [p] if p.is_file() else [])
        for f in files:
            if f.suffix.lower() not in GAZETTEER_SUFFIXES:
                continue
            folder = next((q.name for q in f.parents if q.parent.name == "raw" and q.name in GAZETTEER_SOURCE_TYPES), None)
            out.setdefault(f.resolve(), folder or ("csv_registry" if f.suffix.lower() in (".csv", ".tsv") else "yaml_instance"))
    return sorted(out.items())


def parse_gazetteer_files(paths: Iterable[str] | None = None, base: str | Path | None = None, config=None) -> list[Any]:
    """The registry / LinkML instance files under ``paths``, read and parsed by the pipeline's own read and parse
    stage (:func:`heritage_pipeline.sources.discovery.load_source`, :func:`heritage_pipeline.sources.dispatch.parse_source`),
    as the ``parsed_sections`` asset parses them. Unreadable or unparsable files give no document (the pipeline
    quarantines them where it reads them as sources).

    Args:
        paths, base: as for :func:`build_gazetteer`.
        config: the chunking config given to the parsers (default the model defaults; the registry and LinkML
            parsers read none of it today).

    Returns:
        Parsed documents, in file order.
    """
    from heritage_pipeline.core.config import ChunkingConfig
    from heritage_pipeline.sources.discovery import load_source
    from heritage_pipeline.sources.dispatch import parse_source

    cfg = config or ChunkingConfig()
    docs = []
    for f, st in gazetteer_files(paths, base):
        # the language is not detected: no gazetteer record depends on it
        out = parse_source(load_source(f, source_type=st, lang="und"), cfg)
        if out.doc is not None:
            docs.append(out.doc)
    return docs


def gazetteer_to_json(gaz: Gazetteer) -> str:
    """The gazetteer's entities as JSON (one object per entity, ids sorted): what the ``gazetteer`` asset stores.

    Returns:
        A JSON array; :func:`gazetteer_from_json` rebuilds an equal gazetteer (same entities, same indexes).
    """
    return json.dumps([{"name": e.name, "type_code": e.type_code, "ids": sorted(e.ids), "names": e.names,
                        "settlement": e.settlement, "country": e.country, "name_rank": e.name_rank}
                       for e in gaz.entities], ensure_ascii=False, indent=0)


def gazetteer_from_json(text: str) -> Gazetteer:
    """The gazetteer stored by :func:`gazetteer_to_json` (entities in stored order).

    Raises:
        ValueError: ``text`` is not such a JSON array.
    """
    rows = json.loads(text)
    if not isinstance(rows, list):
        raise ValueError("a stored gazetteer is a JSON array of entities")
    return Gazetteer([Entity(name=r["name"], type_code=r["type_code"], ids=set(r["ids"]), names=list(r["names"]),
                             settlement=r["settlement"], country=r["country"], name_rank=r["name_rank"]) for r in rows])


def fingerprint(gaz: Gazetteer) -> str:
    """SHA-256 (hex) of every entity's name, type, ids, names, settlement, country and rank, in order: the
    gazetteer asset's data version. Registry edits that touch none of these (an address, a URL) keep it."""
    h = hashlib.sha256()
    for e in gaz.entities:
        h.update(json.dumps([e.name, e.type_code, sorted(e.ids), e.names, e.settlement, e.country, e.name_rank],
                            ensure_ascii=False).encode("utf-8") + b"\n")
    return h.hexdigest()


def _record(meta: dict[str, Any], source_type: str, registry_type: str | None) -> dict[str, Any]:
    extra = meta.get("extra") or {}
    ids: set[str] = set()
    if source_type == "yaml_instance":
        name = extra.get("slot:preferred_label", "")
        for key, value in extra.items():
            if key.startswith("identifier:"):
                scheme = key.split(":", 1)[1].lower()
                prefix = {"isil": "isil", "wikidata": "wd"}.get(scheme)
                if prefix:
                    ids.update(f"{prefix}:{v.strip()}" for v in value.split(";") if v.strip())
        if meta.get("ghcid"):
            ids.add(f"ghcid:{meta['ghcid']}")
        if meta.get("hc_id"):
            ids.add(f"hc:{meta['hc_id']}")
        rank = 0
    else:
        name = extra.get("slot:preferred_label", "")
        rank = 2 if registry_type == "wikidata_isil" else 1
    for v in (extra.get("slot:isil_code") or "").split(";"):
        if v.strip():
            ids.add(f"isil:{v.strip()}")
    wd = (extra.get("slot:wikidata_id") or "").rsplit("/", 1)[-1].strip()
    if QID_RE.match(wd):
        ids.add(f"wd:{wd}")
    return {"name": name, "rank": rank, "type": meta.get("custodian_type"), "ids": ids,
            "settlement": meta.get("settlement"), "country": meta.get("country_code")}


DEFAULT_GAZETTEER = (os.path.join("raw", "csv_registry"), os.path.join("raw", "yaml_instance"))


def _gazetteer_paths(paths: Iterable[str] | None, base: str | Path | None = None) -> tuple[str, ...]:
    """Absolute registry paths: relative ones resolve against ``base`` (the run's data folder), default the bundled
    ``data/`` of the repository."""
    root = Path(base) if base is not None else REPO_ROOT / "data"
    raw = list(paths) if paths is not None else list(DEFAULT_GAZETTEER)
    return tuple(str(p if Path(p).is_absolute() else root / p) for p in raw)


def _stamp(paths: tuple[str, ...]) -> tuple:
    out = []
    for p in map(Path, paths):
        files = [p] if p.is_file() else (sorted(f for f in p.rglob("*") if f.is_file()) if p.is_dir() else [])
        out.extend((str(f), f.stat().st_mtime_ns, f.stat().st_size) for f in files)
    return tuple(out)


@lru_cache(maxsize=4)
def _cached_gazetteer(paths: tuple[str, ...], stamp: tuple) -> Gazetteer:
    return build_gazetteer(parse_gazetteer_files(paths), paths)


def default_gazetteer(paths: Iterable[str] | None = None, base: str | Path | None = None) -> Gazetteer:
    """The gazetteer of the registries under ``paths`` (default ``raw/csv_registry`` and ``raw/yaml_instance``;
    relative paths resolve against ``base``, the run's data folder, default the bundled ``data/``), cached until a
    file changes."""
    resolved = _gazetteer_paths(paths, base)
    return _cached_gazetteer(resolved, _stamp(resolved))


