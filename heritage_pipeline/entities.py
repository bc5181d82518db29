"""Heritage-institution mentions and their resolution: gazetteer, mention extraction, coreference.

Every chunk of every source type gets ``meta.mentioned_entities`` (canonical names, in order of first mention) and
``meta.entity_types`` (the sorted set of their GLAMORCUBESFIXPHDNT codes, as in the heritage seed), plus
``meta.entities["HERITAGE"]`` (the same names, next to the rule-based ORG/LAW/... labels). A registry row or a
LinkML instance always mentions its own institution first, whether the gazetteer knows it or not.

Gazetteer (:class:`Gazetteer`)
    Built from the registries in the data through the pipeline's own parsers: CSV/TSV registries (ISIL rows, the
    Dutch organisations list; ``preferred_label``, ``isil_code``, ``wikidata_id``, ``settlement`` slots) and LinkML
    instance YAML (``preferred_label``, ``custodian_type``, identifiers, ``ghcid``). Records that share a Wikidata
    id, a GHCID or an ISIL (an ISIL only when it does not belong to two different Wikidata items) are merged into
    one entity; its canonical name is the YAML label, else the Dutch list's, else the first registry label. Its type
    is the YAML ``custodian_type``, else inferred from type keywords in any of its names, else ``U`` (Unknown).
    Labels that are bare Wikidata ids are not matched in text (such an entity is found by its identifiers only).
    Names starting with an article (``Het Utrechts Archief``) are also indexed without it, and names of two or more
    words also by their inflection-stripped form (``des Deutschen Museums`` finds ``Deutsches Museum``).

Mentions (:func:`find_mentions`), in this order, later ones only where earlier ones found nothing:
    ``name``: gazetteer names, longest first, on case- and accent-folded word tokens; a name of one or two words
    must start with a capital in the text (one-word names must match exactly, and a bare type word is never a
    name). ``identifier``: GHCIDs (``NL-NH-AMS-M-RM``) and ISIL codes (``NL-0100030000``, ``DE-MUS-814517``) that
    are in the gazetteer, or any well-formed ISIL right after the word "ISIL". ``pattern``: names built around a
    type keyword that the gazetteer does not know (``Musée du Louvre``, ``Stadsarchief Amsterdam``, ``British
    Library``, ``le musée Carnavalet``, ``les archives municipales de Bordeaux``): a run of capitalised words (with
    connectors such as of/van/de/du/für and French adjectives such as nationale/municipale) holding a keyword
    (museum, musée, archief, Archiv, bibliotheek, library, zoo, ...) or a Dutch/German compound ending in one
    (``Rijksmuseum``, ``Stadtarchiv``), with at least one capitalised word that is not a keyword or an article.
    ``abbreviation``: a parenthesised short form right after a mention (``Koninklijke Bibliotheek (KB)``)
    defines an alias; later, that alias, the initials of an entity already mentioned in the same context (``KB``,
    ``BnF``, ``NHA``) or its distinctive word (``the Stedelijk``, ``la Mazarine``, ``die Staatsbibliothek``)
    resolve to it. ``coreference``: definite descriptions (``the museum``, ``het archief``, ``het stadsarchief``,
    ``la bibliothèque``, ``das Museum``, ``the institution``) resolve to the most recent entity of that type (any
    type for ``institution``) mentioned before them in the same context.

Context
    :class:`MentionContext` carries what was mentioned so far. The pipeline keeps one context per conversation
    (messages in ``message_index`` order) and one per document (chunks in text order); registry rows and YAML
    entities are standalone. Without an antecedent a description, initials or a short form are not a mention.

Measured on hand-labelled NL/EN/FR/DE sets (``data/eval/entities``): ``python -m heritage_pipeline.evaluate_sources
entities`` (development set) and ``... entities --gold data/eval/entities/test.jsonl`` (held-out set). Known
weak spots: names without a type word (Mauritshuis, Naturalis, Centre Pompidou), German inflected names the
gazetteer does not hold (kept in their inflected form), adjectives taken for short forms (``Zeeuwse``).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import unicodedata
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterable

import regex

from .config import REPO_ROOT
from .linkml import custodian_type_codes

_WORD = regex.compile(r"[\p{L}\p{N}]+")
_QID = re.compile(r"^Q\d+$")
_ISIL = re.compile(r"(?<![\w-])([A-Z]{2}-[A-Za-z0-9][A-Za-z0-9:/\-]{0,13})(?![\w-])")
_GHCID = re.compile(r"(?<![\w-])[A-Z]{2}-[A-Z0-9]{1,3}-[A-Z]{3}-[A-Z]-[A-Z0-9-]+(?![\w-])")
_ISIL_CUE = re.compile(r"\bISIL\b[\s:=()\-–codeCODE]{0,12}$")
MAX_NAME_TOKENS = 10

# Type keywords (accent-folded, lower case) -> GLAMORCUBESFIXPHDNT code. Multilingual (NL, EN, FR, DE + a few
# neighbours seen in the registries). Multi-word keys are matched as token sequences.
TYPE_KEYWORDS: dict[str, str] = {
    **dict.fromkeys("museum musea museums musee musees museo musei museu muzeum museet museen".split(), "M"),
    **dict.fromkeys("archief archieven archive archives archiv archivo archivio archiwum arkiv archivum "
                    "erfgoedcentrum".split(), "A"),
    **dict.fromkeys("bibliotheek bibliotheken bibliotheque bibliotheques bibliothek bibliotheken library libraries "
                    "biblioteca biblioteka mediatheque mediatheek erfgoedbibliotheken".split(), "L"),
    **dict.fromkeys("gallery galerie galleria kunsthal kunsthalle pinakothek pinacotheque".split(), "G"),
    **dict.fromkeys("zoo dierentuin tierpark tiergarten hortus arboretum aquarium".split(), "B"),
    **dict.fromkeys(["botanical garden", "botanic garden", "jardin botanique", "botanischer garten"], "B"),
    **dict.fromkeys("instituut institute institut kenniscentrum".split(), "R"),
    **dict.fromkeys("university universiteit universite universitat universitaet hogeschool".split(), "E"),
    **dict.fromkeys("kerk church eglise kirche cathedral kathedraal cathedrale abdij abbey abbaye abtei "
                    "klooster monastery synagoge synagogue moskee mosque basiliek basilica basilique".split(), "H"),
    **dict.fromkeys("kasteel castle chateau schloss".split(), "F"),
    **dict.fromkeys(["historische vereniging", "historical society", "heemkundekring", "oudheidkundige kring",
                     "geschichtsverein", "societe historique", "genootschap"], "S"),
    **dict.fromkeys("ministerie ministry ministere ministerium rijksdienst".split(), "O"),
}
# Dutch/German compounds ending in a keyword (Rijksmuseum, Stadsarchief, Stadtbibliothek, Universiteitsbibliotheek).
COMPOUND_SUFFIXES: dict[str, str] = {"museum": "M", "musea": "M", "archief": "A", "archieven": "A", "archiv": "A",
                                     "bibliotheek": "L", "bibliothek": "L", "galerie": "G", "kunsthalle": "G",
                                     "tierpark": "B", "universitat": "E", "universiteit": "E", "kerk": "H", "kirche": "H"}
ARTICLES = frozenset("the de het een le la les l der die das den dem des ein eine".split())
CONNECTORS = frozenset("of for and the van voor en de der den het du des d la le l les et fur zu am im von und "
                       "s t".split())
CONJUNCTIONS = frozenset("and en et und".split())
HEAD_SEPARATORS = frozenset("of from van uit by door".split())
PREPOSITIONS = frozenset("of for voor fur zu am im and en et und in at bij op aan dans chez".split())
FRENCH_ADJECTIVES = frozenset("national nationale nationaux nationales municipal municipale municipales municipaux "
                              "departemental departementale departementales departementaux regional regionale "
                              "regionales communal communale communales royal royale royales diocesain diocesaine "
                              "diocesaines universitaire interuniversitaire historique historiques "
                              "intercommunal intercommunale patrimoniale".split())
# Definite descriptions for coreference: (determiners, heads) per language; head -> type code ("*" = any type).
_DESCRIPTION_HEADS: dict[str, str] = {
    "museum": "M", "musee": "M", "museo": "M", "archive": "A", "archives": "A", "archief": "A", "archiv": "A",
    "library": "L", "bibliotheek": "L", "bibliotheque": "L", "bibliothek": "L", "mediatheque": "L",
    "gallery": "G", "galerie": "G", "zoo": "B", "dierentuin": "B", "institute": "R", "instituut": "R",
    "institut": "R", "university": "E", "universiteit": "E", "universite": "E", "universitat": "E",
    "institution": "*", "instelling": "*", "einrichtung": "*", "organisation": "*", "organization": "*",
    "organisatie": "*", "garden": "B", "tuin": "B", "jardin": "B", "garten": "B", "hortus": "B",
}
_DESCRIPTION_DETERMINERS = frozenset("the this that het dit dat de deze die le la l les ce cet cette ces das dieses "
                                     "diese dieser dem des der".split())


def fold(s: str) -> str:
    """Case- and accent-folded form used for matching (NFKD, combining marks removed, casefold)."""
    d = unicodedata.normalize("NFKD", s)
    return "".join(ch for ch in d if not unicodedata.combining(ch)).casefold()


def _tokens(text: str) -> list[tuple[str, int, int]]:
    """Word tokens of ``text`` as (folded token, start, end) in code points."""
    return [(fold(m.group()), m.start(), m.end()) for m in _WORD.finditer(text)]


def keyword_type(name: str) -> str | None:
    """GLAMORCUBESFIXPHDNT code of the first type keyword in ``name`` (``Stadsarchief Amsterdam`` -> ``A``)."""
    toks = [t for t, _, _ in _tokens(name)]
    for i, t in enumerate(toks):
        if i + 1 < len(toks) and f"{t} {toks[i + 1]}" in TYPE_KEYWORDS:
            return TYPE_KEYWORDS[f"{t} {toks[i + 1]}"]
        if t in TYPE_KEYWORDS:
            return TYPE_KEYWORDS[t]
        code = _compound_type(t)
        if code:
            return code
    return None


def _compound_type(tok: str) -> str | None:
    for suffix, code in COMPOUND_SUFFIXES.items():
        if tok.endswith(suffix) and len(tok) > len(suffix) + 2:
            return code
    return None


_INFLECTIONS = ("en", "em", "er", "es", "e", "s")


def stem_key(tokens: tuple[str, ...]) -> tuple[str, ...]:
    """Tokens without one Dutch/German inflectional ending each (``des Deutschen Museums`` and ``Deutsches Museum``
    share ``deutsch museum``; ``Zeeuwse``/``Zeeuws``): used only for names of two or more words."""
    out = []
    for t in tokens:
        for suf in _INFLECTIONS:
            if t.endswith(suf) and len(t) - len(suf) >= 4:
                t = t[: -len(suf)]
                break
        out.append(t)
    return tuple(out)


def initials(name: str) -> str:
    """Initials of the non-connector words of a name (``Bibliothèque nationale de France`` -> ``BNF``)."""
    words = [w for w in _WORD.findall(name) if fold(w) not in CONNECTORS]
    return "".join(fold(w)[0] for w in words).upper() if len(words) >= 2 else ""


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
            if _QID.match(name.strip()):
                continue  # a label that is a bare Wikidata id names nothing in running text (the ids still resolve)
            toks = tuple(t for t, _, _ in _tokens(name))
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
            members.sort(key=lambda r: (bool(_QID.match(r["name"].strip())), r.get("rank", 9), r["name"]))
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


def registry_records(paths: Iterable[str | Path]) -> list[dict[str, Any]]:
    """Gazetteer records from registry files (CSV/TSV) and LinkML instance files (YAML) under ``paths``
    (files or folders), read with the pipeline's own parsers. Unreadable files are skipped (they are quarantined
    where the pipeline reads them as sources)."""
    from .discovery import is_ignored
    from .linkml import parse_instances
    from .registry import parse_registry
    from .structure import ParseError
    from .text import DecodeError, decode_bytes

    files: list[Path] = []
    for p in map(Path, paths):
        if p.is_dir():
            files.extend(sorted(f for f in p.rglob("*") if f.is_file() and not is_ignored(f.name)))
        elif p.is_file():
            files.append(p)
    out: list[dict[str, Any]] = []
    for f in files:
        suffix = f.suffix.lower()
        if suffix not in (".csv", ".tsv", ".yaml", ".yml"):
            continue
        try:
            text = decode_bytes(f.read_bytes(), name=str(f)).text
            if suffix in (".csv", ".tsv"):
                doc, _ = parse_registry(text, doc_id=f.name, source_path=str(f), lang="und")
            else:
                doc, _ = parse_instances(text, doc_id=f.name, source_path=str(f), lang="und")
        except (OSError, DecodeError, ParseError, ValueError):
            continue
        for sec in doc.sections:
            out.append(_record(sec.meta, doc.source_type, doc.meta.get("registry_type")))
    return out


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
    if _QID.match(wd):
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
    return Gazetteer.from_records(registry_records(paths))


def default_gazetteer(paths: Iterable[str] | None = None, base: str | Path | None = None) -> Gazetteer:
    """The gazetteer of the registries under ``paths`` (default ``raw/csv_registry`` and ``raw/yaml_instance``;
    relative paths resolve against ``base``, the run's data folder, default the bundled ``data/``), cached until a
    file changes."""
    resolved = _gazetteer_paths(paths, base)
    return _cached_gazetteer(resolved, _stamp(resolved))


def gazetteer_fingerprint(paths: Iterable[str] | None = None, base: str | Path | None = None) -> str:
    """SHA-256 (hex) of the gazetteer built from ``paths``: every entity's name, type, ids, names, settlement,
    country and rank, in order. Registry edits that do not touch these (an address, a URL) keep the fingerprint, so
    they do not invalidate the mentions found in other partitions; a renamed or added institution changes it.
    Computed once per gazetteer (cached with it until a registry file changes): every enrichment step asks for it."""
    resolved = _gazetteer_paths(paths, base)
    return _cached_fingerprint(resolved, _stamp(resolved))


@lru_cache(maxsize=4)
def _cached_fingerprint(paths: tuple[str, ...], stamp: tuple) -> str:
    h = hashlib.sha256()
    for e in _cached_gazetteer(paths, stamp).entities:
        h.update(json.dumps([e.name, e.type_code, sorted(e.ids), e.names, e.settlement, e.country, e.name_rank],
                            ensure_ascii=False).encode("utf-8") + b"\n")
    return h.hexdigest()


# ------------------------------------------------------------------------------------------------------ mentions
@dataclass
class MentionContext:
    """What was mentioned so far in one conversation or document (for abbreviations and coreference)."""

    history: list[Mention] = field(default_factory=list)
    aliases: dict[str, Mention] = field(default_factory=dict)  # short form (as written) -> mention it stands for

    def last_of(self, type_code: str) -> Mention | None:
        for m in reversed(self.history):
            if type_code == "*" or m.type_code == type_code:
                return m
        return None


class _Scan:
    """Tokens of one text, which of them are already part of a mention, and the run test."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.toks = _tokens(text)
        self.taken = [False] * len(self.toks)

    def word(self, k: int) -> str:
        return self.text[self.toks[k][1] : self.toks[k][2]]

    def cap(self, k: int) -> bool:
        return self.word(k)[:1].isupper()

    def claim(self, i: int, j: int) -> bool:
        if i >= j or any(self.taken[i:j]):
            return False
        for k in range(i, j):
            self.taken[k] = True
        return True

    def joined(self, i: int, j: int) -> bool:
        """Tokens i..j-1 form one run: only spaces, hyphens or apostrophes between them."""
        t = self.text
        return all(_RUN_GAP.fullmatch(t[self.toks[k][2] : self.toks[k + 1][1]]) for k in range(i, j - 1))

    def span(self, i: int, j: int) -> tuple[str, int, int]:
        s, e = self.toks[i][1], self.toks[j - 1][2]
        return self.text[s:e], s, e


_RUN_GAP = re.compile(r"[ \t\-'’]{0,3}")


def _is_keyword(t: str) -> bool:
    return t in TYPE_KEYWORDS or bool(_compound_type(t))


def find_mentions(text: str, gazetteer: Gazetteer, context: MentionContext | None = None) -> list[Mention]:
    """Heritage-institution mentions in ``text`` in text order (see module docstring); updates ``context``."""
    ctx = context if context is not None else MentionContext()
    sc = _Scan(text)
    found = _gazetteer_names(sc, gazetteer)
    found += _identifiers(sc, gazetteer, found, ctx)
    found += _pattern_names(sc)
    found.sort(key=lambda m: m.start)
    for m in found:  # a parenthesised short form right after a mention defines an alias: "Koninklijke Bibliotheek (KB)"
        pm = re.match(r"\s*\(([A-Za-z][A-Za-z&\-]{1,9})\)", text[m.end :])
        if pm:
            ctx.aliases.setdefault(pm.group(1), m)
    found += _resolve_context(sc, found, ctx)
    found.sort(key=lambda m: m.start)
    ctx.history.extend(found)
    return found


def _gazetteer_names(sc: _Scan, gazetteer: Gazetteer) -> list[Mention]:
    out: list[Mention] = []
    toks = sc.toks
    i = 0
    while i < len(toks):
        hit = None
        for n in range(min(gazetteer.max_tokens, len(toks) - i), 0, -1):
            key = tuple(t for t, _, _ in toks[i : i + n])
            idx = gazetteer.by_tokens.get(key)
            if idx is None and n >= 2:
                idx = gazetteer.by_stems.get(stem_key(key))
            if idx is None or not sc.joined(i, i + n):
                continue
            surface = sc.span(i, i + n)[0]
            if n <= 2 and not (surface[:1].isupper() or surface[:1].isdigit()):
                continue
            ent = gazetteer.entities[idx]
            if n == 1 and surface not in ent.names and surface != ent.name:
                continue
            hit = (n, ent)
            break
        if hit is None:
            i += 1
            continue
        n, ent = hit
        sc.claim(i, i + n)
        surface, s, e = sc.span(i, i + n)
        out.append(Mention(surface, s, e, ent.name, ent.type_code, "name", tuple(sorted(ent.ids))))
        i += n
    return out


def _identifiers(sc: _Scan, gazetteer: Gazetteer, found: list[Mention], ctx: MentionContext) -> list[Mention]:
    """GHCIDs known to the gazetteer, then ISIL codes (an ISIL shared by several entities resolves to the one
    mentioned most recently before it, e.g. ``Pergamonmuseum (DE-MUS-814517)``)."""
    out: list[Mention] = []
    text = sc.text

    def token_range(a: int, b: int) -> tuple[int, int]:
        ti = [k for k, (_, s, e) in enumerate(sc.toks) if s >= a and e <= b]
        return (ti[0], ti[-1] + 1) if ti else (0, 0)

    for m in _GHCID.finditer(text):
        ent = gazetteer.lookup_id(f"ghcid:{m.group()}")
        if ent is not None and sc.claim(*token_range(m.start(), m.end())):
            out.append(Mention(m.group(), m.start(), m.end(), ent.name, ent.type_code, "identifier", tuple(sorted(ent.ids))))
    for m in _ISIL.finditer(text):
        code = m.group(1)
        if _GHCID.match(text, m.start()):
            continue
        candidates = gazetteer.lookup_all(f"isil:{code}")
        if not candidates and not _ISIL_CUE.search(text[max(0, m.start() - 20) : m.start()]):
            continue
        if not sc.claim(*token_range(m.start(), m.end())):
            continue
        if candidates:
            before = [f for f in found if f.end <= m.start()] + list(reversed(ctx.history))
            recent = {x.entity for x in sorted(before, key=lambda f: -f.end)}
            ent = next((c for name in recent for c in candidates if c.name == name), candidates[0])
            out.append(Mention(code, m.start(), m.end(), ent.name, ent.type_code, "identifier", tuple(sorted(ent.ids))))
        else:
            out.append(Mention(code, m.start(), m.end(), code, "U", "identifier", (f"isil:{code}",)))
    return out


def _pattern_names(sc: _Scan) -> list[Mention]:
    """Capitalised names around a type keyword (see module docstring)."""
    out: list[Mention] = []
    toks, n = sc.toks, len(sc.toks)
    i = 0
    while i < n:
        if sc.taken[i]:
            i += 1
            continue
        j = _grow_run(sc, i)
        if j == i:
            i += 1
            continue
        start, end = _trim_run(sc, i, j)
        run = toks[start:end]
        kw = [k for k, (t, _, _) in enumerate(run) if _is_keyword(t)
              or (k + 1 < len(run) and f"{t} {run[k + 1][0]}" in TYPE_KEYWORDS)]
        content = [k for k, (t, _, _) in enumerate(run)
                   if sc.cap(start + k) and t not in ARTICLES and t not in TYPE_KEYWORDS]
        if kw and len(run) >= 2 and content and sc.claim(start, end):
            surface, s, e = sc.span(start, end)
            canonical = " ".join(surface.split())
            out.append(Mention(surface, s, e, canonical[:1].upper() + canonical[1:], keyword_type(surface) or "U",
                               "pattern"))
        i = max(end if end > i else j, i + 1)
    return out


def _grow_run(sc: _Scan, i: int) -> int:
    """End of the run of name words starting at token ``i`` (``i`` when none starts there)."""
    toks, n = sc.toks, len(sc.toks)
    j = i
    if not sc.cap(i):
        # French style "le musée Carnavalet", "les archives municipales de Bordeaux": a lower-case keyword opens a name
        # when a capitalised word follows, directly or after adjectives and connectors
        if not (toks[i][0] in TYPE_KEYWORDS and _lower_keyword_name(sc, i)):
            return i
        j = i + 1
    while j < n and not sc.taken[j] and (j == i or sc.joined(j - 1, j + 1)):
        t = toks[j][0]
        if sc.cap(j) or (sc.word(j)[:1].isdigit() and j > i):
            j += 1
        elif j > i and (t in CONNECTORS or t in FRENCH_ADJECTIVES):
            j += 1
        else:
            break
    return j


def _lower_keyword_name(sc: _Scan, i: int) -> bool:
    toks, n = sc.toks, len(sc.toks)
    k = i + 1
    while k < n and not sc.taken[k] and sc.joined(k - 1, k + 1) and not sc.cap(k):
        if toks[k][0] not in FRENCH_ADJECTIVES and toks[k][0] not in CONNECTORS:
            return False
        k += 1
    return k < n and not sc.taken[k] and sc.joined(k - 1, k + 1) and sc.cap(k) and (k == i + 1 or toks[k - 1][0] in CONNECTORS)


def _trim_run(sc: _Scan, i: int, j: int) -> tuple[int, int]:
    """Cut a run to the name in it: leading lower-case connectors and articles, everything up to a lower-case
    article or of/van/from that precedes the first keyword ("Visit the ...", "Collections of ..."), everything after a conjunction that follows a keyword ("A Museum and the B
    Library"), a capitalised common noun after a compound keyword ("das Bundesarchiv Personalakten von ..."), and
    trailing connectors."""
    toks = sc.toks
    end = j
    seen_kw = False
    for k in range(i, j):
        t = toks[k][0]
        if seen_kw and t in CONJUNCTIONS:
            end = k
            break
        if _compound_type(t) and k + 2 < j and sc.cap(k + 1) and toks[k + 2][0] in CONNECTORS and not sc.cap(k + 2):
            end = k + 1  # compound head + capitalised word + lower-case connector: the word is a noun, not a place
            break
        seen_kw = seen_kw or _is_keyword(t)
    while end > i and toks[end - 1][0] in CONNECTORS and not sc.cap(end - 1):
        end -= 1
    start = i
    while start < end and (toks[start][0] in ARTICLES or toks[start][0] in PREPOSITIONS
                           or (toks[start][0] in CONNECTORS and not sc.cap(start))):
        start += 1  # a capitalised name particle stays ("Van Gogh Museum"); "Im Stadtarchiv Köln" loses "Im"
    first_kw = next((k for k in range(start, end) if _is_keyword(toks[k][0])), None)
    if first_kw is not None:
        # "Visit the Louvre Museum", "Collections of Limburgs Museum", "Friends of the Rijksmuseum": a lower-case
        # article or "of/van/from" before the first keyword opens the name after it
        cuts = [k for k in range(start + 1, first_kw)
                if not sc.cap(k) and (toks[k][0] in ARTICLES or toks[k][0] in HEAD_SEPARATORS)]
        if cuts:
            start = cuts[-1] + 1
            while start < end and toks[start][0] in ARTICLES and not sc.cap(start):
                start += 1
    return start, end


def _distinctive(name: str) -> str | None:
    """The word a short form of a name would use: its first capitalised word that is not an article or a plain
    type word (``Musée du Louvre`` -> ``louvre``, ``Staatsbibliothek zu Berlin`` -> ``staatsbibliothek``)."""
    for w in _WORD.findall(name):
        f = fold(w)
        if w[:1].isupper() and f not in ARTICLES and f not in TYPE_KEYWORDS and f not in CONNECTORS and len(f) >= 4:
            return f
    return None


def _resolve_context(sc: _Scan, found: list[Mention], ctx: MentionContext) -> list[Mention]:
    """Abbreviations, short forms and definite descriptions, resolved in text order against earlier mentions."""
    text, toks, n = sc.text, sc.toks, len(sc.toks)
    events: list[tuple[int, str, Any]] = [(m.start, "mention", m) for m in found]
    for k, (t, s, e) in enumerate(toks):
        if sc.taken[k]:
            continue
        word = sc.word(k)
        if 2 <= len(word) <= 6 and sum(ch.isupper() for ch in word) >= 2 and word[:1].isupper():
            events.append((s, "abbr", k))
        elif t in _DESCRIPTION_DETERMINERS and k + 1 < n and not sc.taken[k + 1] and _description_type(toks[k + 1][0], sc.word(k + 1)):
            if text[e : toks[k + 1][1]].strip(" '’") != "":
                continue
            if k + 2 < n and sc.joined(k + 1, k + 3) and (sc.cap(k + 2) or toks[k + 2][0] in FRENCH_ADJECTIVES):
                continue  # "the Museum Boijmans", "les archives municipales ...": a name, not a description
            events.append((s, "desc", k))
        elif word[:1].isupper() and len(t) >= 4:
            events.append((s, "short", k))
    events.sort(key=lambda ev: (ev[0], ev[1] != "mention"))
    history = list(ctx.history)
    out: list[Mention] = []

    def add(k0: int, k1: int, target: Mention, kind: str) -> None:
        if sc.claim(k0, k1):
            surface, s, e = sc.span(k0, k1)
            m = Mention(surface, s, e, target.entity, target.type_code, kind, target.ids)
            out.append(m)
            history.append(m)

    for _, kind, payload in events:
        if kind == "mention":
            history.append(payload)
            continue
        k = payload
        if kind == "abbr":
            word = sc.word(k)
            target = ctx.aliases.get(word)
            if target is None:
                target = next((m for m in reversed(history) if initials(m.entity) == word.upper()), None)
            if target is not None:
                add(k, k + 1, target, "abbreviation")
        elif kind == "short":
            stem = stem_key((toks[k][0],))[0]
            owners = {m.entity: m for m in reversed(history)
                      if (d := _distinctive(m.entity)) and stem_key((d,))[0] == stem}
            if len(owners) == 1:
                add(k, k + 1, next(iter(owners.values())), "abbreviation")
        else:
            want = _description_type(toks[k + 1][0], sc.word(k + 1))
            target = next((m for m in reversed(history) if want == "*" or m.type_code == want), None)
            if target is not None:
                add(k, k + 2, target, "coreference")
    return out


def _description_type(head: str, word: str) -> str | None:
    """Type code a description head refers to (``museum`` -> ``M``, ``institution`` -> any; a compound such as
    ``stadsarchief`` -> ``A`` only when written in lower case: a capitalised one may be a short name), or None.
    ``head`` is the folded token, ``word`` as written."""
    return _DESCRIPTION_HEADS.get(head) or (_compound_type(head) if word[:1].islower() else None)


def annotate_texts(texts: list[str], gazetteer: Gazetteer, *, context: MentionContext | None = None) -> list[list[Mention]]:
    """Mentions of each text, resolved in order within one shared context (e.g. the messages of a conversation).
    The rules are the same for every language (keywords and descriptions of NL, EN, FR and DE are all active)."""
    ctx = context if context is not None else MentionContext()
    return [find_mentions(t, gazetteer, ctx) for t in texts]


# ------------------------------------------------------------------------------------------------- pipeline hook
def mention_context_key(chunk) -> tuple[str, str]:
    """The coreference context a chunk belongs to: ``(doc_id, conversation_id)``, or ``(doc_id, chunk id)`` for a
    registry row or YAML entity (each its own context). A chunk's mentions depend on every chunk of its context, so
    incremental runs reuse enrichment per whole context, never per chunk."""
    m = chunk.meta
    if m.source_type in ("csv_registry", "yaml_instance"):
        return (m.doc_id, chunk.id)
    return (m.doc_id, m.conversation_id or "")


def annotate_chunks(chunks: list, gazetteer: Gazetteer | None = None, *, paths: Iterable[str] | None = None) -> list:
    """Fill ``mentioned_entities``, ``entity_types`` and ``entities["HERITAGE"]`` on chunks in place (and, where one
    type is unambiguous, ``custodian_type``; ``has_identifiers``/``has_relationships`` when found). Returns ``chunks``.

    Contexts: one per (document, conversation) in ``message_index``/span order; registry rows and YAML entities are
    each their own context and always mention their own institution first (:func:`_own_entity`).
    """
    gaz = gazetteer if gazetteer is not None else default_gazetteer(paths)
    groups: dict[tuple, list] = {}
    for c in chunks:
        groups.setdefault(mention_context_key(c), []).append(c)
    for members in groups.values():
        members.sort(key=lambda c: (c.meta.message_index if c.meta.message_index is not None else -1,
                                    c.spans.char_start, c.id))
        ctx = MentionContext()
        for c in members:
            mentions = find_mentions(c.text, gaz, ctx)
            own = _own_entity(c, gaz)
            if own is not None:  # a registry row or an instance is about its own institution, known or not
                mentions = [own] + [m for m in mentions if m.entity != own.entity and not set(m.ids) & set(own.ids)]
            names = list(dict.fromkeys(m.entity for m in mentions))
            types = sorted({m.type_code for m in mentions})
            c.meta.mentioned_entities = names
            c.meta.entity_types = types
            if names:
                c.meta.entities = {**c.meta.entities, "HERITAGE": names}
            known = [t for t in types if t != "U"]
            if c.meta.custodian_type is None and len(known) == 1 and c.meta.source_type != "document":
                c.meta.custodian_type = known[0]
            if any(m.kind == "identifier" for m in mentions):
                c.meta.has_identifiers = True
            if len(names) >= 2:
                c.meta.has_relationships = True
    return chunks


def _own_entity(chunk, gaz: Gazetteer) -> Mention | None:
    """The institution a registry row or LinkML instance chunk describes: the gazetteer entity holding its ISIL,
    Wikidata id or GHCID when there is one, else its ``preferred_label`` with the declared or keyword type."""
    m = chunk.meta
    if m.source_type not in ("csv_registry", "yaml_instance"):
        return None
    extra = m.extra or {}
    ids = [f"isil:{v.strip()}" for v in (extra.get("slot:isil_code") or "").split(";") if v.strip()]
    ids += [f"ghcid:{m.ghcid}"] if m.ghcid else []
    wd = (extra.get("slot:wikidata_id") or "").rsplit("/", 1)[-1]
    ids += [f"wd:{wd}"] if _QID.match(wd) else []
    for ident in ids:
        ent = gaz.lookup_id(ident)
        if ent is not None and (len(gaz.lookup_all(ident)) == 1 or ident.startswith(("wd:", "ghcid:"))):
            return Mention(ent.name, 0, 0, ent.name, ent.type_code, "name", tuple(sorted(ent.ids)))
    label = (extra.get("slot:preferred_label") or (m.anchors[0] if m.anchors else "")).strip()
    if not label:
        return None
    code = m.custodian_type or keyword_type(label) or "U"
    return Mention(label, 0, 0, label, code, "name", tuple(ids))


ANNOTATION_FIELDS = ("mentioned_entities", "entity_types", "custodian_type", "has_identifiers", "has_relationships")


def copy_annotation(src, dst) -> None:
    """Copy what :func:`annotate_chunks` sets (``ANNOTATION_FIELDS`` and ``entities["HERITAGE"]``) from chunk
    ``src`` to chunk ``dst``: refreshes the mentions of an already enriched chunk from a freshly annotated copy of
    its un-enriched original, leaving keywords, NER labels and quality untouched."""
    for name in ANNOTATION_FIELDS:
        setattr(dst.meta, name, getattr(src.meta, name))
    entities = {k: v for k, v in dst.meta.entities.items() if k != "HERITAGE"}
    if "HERITAGE" in src.meta.entities:
        entities["HERITAGE"] = list(src.meta.entities["HERITAGE"])
    dst.meta.entities = entities


def heritage_version(config, data_dir: str | Path | None = None) -> str:
    """What the heritage mentions of a chunk depend on besides its context: the gazetteer's fingerprint, or ``""``
    when ``context.entities.heritage`` is off."""
    ent = config.context.entities
    return gazetteer_fingerprint(ent.gazetteer, data_dir) if ent.heritage else ""


def annotate_heritage(chunks: list, config, data_dir: str | Path | None = None) -> list:
    """The enrichment-stage hook: :func:`annotate_chunks` with the gazetteer of ``context.entities.gazetteer``
    (relative paths under ``data_dir``, default the bundled ``data/``), unless ``context.entities.heritage`` is
    false. Returns ``chunks``."""
    ent = config.context.entities
    if not ent.heritage or not chunks:
        return chunks
    return annotate_chunks(chunks, default_gazetteer(ent.gazetteer, data_dir))


def type_codes() -> dict[str, str]:
    """The GLAMORCUBESFIXPHDNT codes (from the LinkML enum) that entity types are drawn from."""
    return custodian_type_codes()
