"""LinkML instance YAML (and other YAML entity lists) -> one section (one chunk) per entity.

Layouts (LinkML's own, see linkml.io "Instance data"): one entity (a top-level mapping), a list of entities, a
container (a top-level mapping of lists: the schema's ``tree_root`` class, e.g. ``persons:`` / ``organizations:``),
a mapping keyed by id (``{P:001: {name: ...}, ...}``); several YAML documents (``---``) and Jekyll-style front-matter
fences are read. A LinkML *schema* (``classes:`` / ``slots:`` / ``enums:`` beside ``id``/``name``/``prefixes``/
``imports``) is not instance data: the file is skipped with that reason (:class:`NotInputData`); so is a file of
schema metadata only, a schema header (``id``/``prefixes``/``default_prefix`` without classes) or a prefix map such as
linkml-runtime's ``prefixmap/meta.yaml`` (:func:`schema_metadata_kind`).

Schema: the one the file names (a top-level ``schema:`` / ``$schema`` / ``@context`` / ``conforms_to`` path, or a
``# schema: PATH`` / ``# yaml-language-server: $schema=PATH`` comment in the first lines), else a sibling schema
file (a LinkML schema in the file's folder or its parent whose slots fit the entities best), else the heritage
custodian schema of ``data/schema/`` when the entities use its slots. Schemas are loaded with linkml-runtime's
:class:`~linkml_runtime.utils.schemaview.SchemaView` (imports such as ``linkml:types`` resolve offline from the
package). YAML that no schema fits (a Jekyll ``_data`` list of museums: ``name``, ``location``, ``url``) is still
one entity per item, read through the slot aliases, and says ``linkml_validation: no schema`` in its metadata.

Validation (:func:`validate_entity`) walks SchemaView's induced slots of the entity's class: required slots, slots
the class does not have (closed classes, as linkml's own JSON-Schema validator checks by default), single- vs
multivalued, enum ranges (permissible values), type ranges (integer, float, boolean, date, uri...), ``pattern``,
and inlined objects recursively. Why not ``linkml.validator``: it lives in the ``linkml`` package (generators, a
JSON-Schema compile per schema, some 40 more dependencies); linkml-runtime alone has the schema model and the
derivation (SchemaView) these checks need. An entity that fails validation is still chunked with what it has; its
errors go to ``meta.extra["linkml_errors"]`` and to ``ParsedDocument.meta["entities_invalid"]`` (the run summary).
Only an entity with no text at all (or an item that is not a mapping) is quarantined, as ``<file>#<entity ...>``.

Text of an entity (heritage seed ``_entity_to_text``): ``Name:``, ``Type:``, ``Description:``, ``Location:``,
collections, identifiers as ``scheme: value`` lines, ``Website:``, then every other slot as ``slot: value``
(nested objects as ``slot.sub: value``, lists joined with ``; ``). The roles (name, description, place, ...) come from
the slot aliases of ``configs/linkml_mappings.yaml``. Spans are the YAML node marks of the entity (code points).
Metadata: ``hc_id``, ``ghcid``, ``custodian_type``, ``country_code``, ``settlement``, ``data_tier``, and in
``meta.extra``: ``slot:<role>`` values, ``identifier:<scheme>`` values (``; ``-joined; the identity fields of record
dedup), ``linkml_class``, ``linkml_schema``, ``linkml_errors``.
"""

from __future__ import annotations

import datetime as _dt
import fnmatch
import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from heritage_pipeline.core.config import CONFIG_DIR, REPO_ROOT
from heritage_pipeline.core.structure import (DerivedTextBuilder, NotInputData, ParsedDocument, ParseError, Section,
                                              value_kind)

SCHEMA_ENUM = REPO_ROOT / "data" / "schema" / "meta" / "enums" / "InstitutionTypeCodeEnum.yaml"
DEFAULT_SCHEMA = REPO_ROOT / "data" / "schema" / "heritage_custodian_instances.yaml"
DEFAULT_LINKML_MAPPINGS = CONFIG_DIR / "linkml_mappings.yaml"
DATA_TIERS = ("TIER_1_AUTHORITATIVE", "TIER_2_VERIFIED", "TIER_3_CROWD_SOURCED", "TIER_4_INFERRED")
MAX_ERRORS_PER_ENTITY = 5
# GLAMORCUBESFIXPHDNT, as in the heritage_custodian LinkML schema (used when the schema file is not at hand).
_FALLBACK_CODES = {
    "G": "Gallery", "L": "Library", "A": "Archive", "M": "Museum", "O": "Official institution",
    "R": "Research center", "C": "Corporation", "U": "Unknown", "B": "Botanical garden/Zoo",
    "E": "Education provider", "S": "Collecting society", "F": "Feature - monument or landmark",
    "I": "Intangible heritage group",
    "X": "Mixed types", "P": "Personal collection", "H": "Holy site", "D": "Digital platform", "N": "NGO",
    "T": "Taste/smell heritage",
}
_SCHEMA_KEYS = frozenset({"classes", "slots", "enums", "types", "subsets"})
_SCHEMA_HEAD_KEYS = frozenset({"id", "name", "prefixes", "imports", "default_prefix", "default_range"})
_SCHEMA_REF_KEYS = ("schema", "$schema", "@context", "conforms_to", "conformsTo", "linkml_schema")
_SCHEMA_COMMENT = re.compile(r"^#\s*(?:schema:\s*|yaml-language-server:\s*\$schema=)(\S+)", re.M)
_NAME_SUBKEYS = ("has_name", "name", "label", "title", "value", "preferred_label")
# slots of the heritage schema that mark a file as heritage custodian data (``description`` is too generic)
_HERITAGE_MARKERS = frozenset({"hc_id", "ghcid", "preferred_label", "custodian_type", "custodian_place",
                               "collections", "identifiers", "data_tier", "alternative_labels"})


@lru_cache(maxsize=1)
def custodian_type_codes() -> dict[str, str]:
    """GLAMORCUBESFIXPHDNT code -> label, read from the LinkML enum in ``data/schema`` when present."""
    try:
        data = yaml.safe_load(SCHEMA_ENUM.read_text(encoding="utf-8"))
        values = data["enums"]["InstitutionTypeCodeEnum"]["permissible_values"]
        return {code: (v or {}).get("description", code) for code, v in values.items()}
    except (OSError, KeyError, TypeError, yaml.YAMLError):
        return dict(_FALLBACK_CODES)


def type_label(code: str | None) -> str | None:
    """Human label of a custodian type code (``M`` -> ``Museum``)."""
    return custodian_type_codes().get(code) if code else None


# ------------------------------------------------------------------------------------------------ slot aliases
class LinkMLDefaults(BaseModel):
    model_config = ConfigDict(extra="forbid")
    schema_: str | None = Field(default=None, alias="schema")
    data_tier: str = "TIER_2_VERIFIED"
    roles: dict[str, list[str]] = Field(default_factory=dict)
    identifier_slots: dict[str, str] = Field(default_factory=dict)
    container_types: dict[str, str] = Field(default_factory=dict)


class LinkMLFileRule(BaseModel):
    model_config = ConfigDict(extra="forbid")
    pattern: str
    schema_: str | None = Field(default=None, alias="schema")
    data_tier: str | None = None
    roles: dict[str, list[str]] = Field(default_factory=dict)


class LinkMLMappings(BaseModel):
    """``configs/linkml_mappings.yaml`` (see the comments in that file)."""

    model_config = ConfigDict(extra="forbid")
    version: int = 1
    defaults: LinkMLDefaults = LinkMLDefaults()
    files: list[LinkMLFileRule] = Field(default_factory=list)

    def for_file(self, source_path: str) -> tuple[str | None, str, dict[str, list[str]]]:
        """(schema path or None, default data tier, roles) for a data-relative path: the first ``files`` rule whose
        glob matches overrides the defaults (its roles are tried before the default aliases)."""
        d = self.defaults
        for rule in self.files:
            if fnmatch.fnmatch(source_path, rule.pattern):
                roles = {k: list(rule.roles.get(k, [])) + list(v) for k, v in d.roles.items()}
                roles.update({k: v for k, v in rule.roles.items() if k not in roles})
                return rule.schema_ or d.schema_, rule.data_tier or d.data_tier, roles
        return d.schema_, d.data_tier, d.roles


def load_linkml_mappings(path: str | Path | None = None) -> LinkMLMappings:
    """Load the slot aliases (default ``configs/linkml_mappings.yaml``; built-in empty defaults when the file is
    absent). Raises ValueError naming the file and the bad key."""
    path = Path(path) if path else DEFAULT_LINKML_MAPPINGS
    return _load_mappings_cached(str(path), path.stat().st_mtime_ns if path.exists() else 0)


@lru_cache(maxsize=8)
def _load_mappings_cached(path: str, _mtime: int) -> LinkMLMappings:
    p = Path(path)
    if not p.exists():
        return LinkMLMappings()
    try:
        m = LinkMLMappings.model_validate(yaml.safe_load(p.read_text(encoding="utf-8")) or {})
    except ValidationError as exc:  # one line per bad key: "defaults.rolez: Extra inputs are not permitted"
        bad = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
        raise ValueError(f"{p}: invalid LinkML mapping file: {bad}") from None
    except (OSError, yaml.YAMLError) as exc:
        raise ValueError(f"{p}: invalid LinkML mapping file: {exc}".splitlines()[0]) from None
    for tier in [m.defaults.data_tier] + [r.data_tier for r in m.files if r.data_tier]:
        if tier not in DATA_TIERS:
            raise ValueError(f"{p}: data_tier {tier!r} is not one of {', '.join(DATA_TIERS)}")
    return m


@lru_cache(maxsize=65536)
def _norm_key(k: Any) -> str:
    """Alias matching key: case, accents and ``_``/``-``/space/``:``/``.`` differences ignored."""
    s = unicodedata.normalize("NFKD", str(k)).encode("ascii", "ignore").decode().lower()
    return re.sub(r"[\s_\-:.]+", "", s)


# ------------------------------------------------------------------------------------------------ YAML loading
class _Loader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
    """PyYAML's safe loader (libyaml's C parser when PyYAML was built with it: about 10x faster, same node marks in
    code points) with YAML 1.2 booleans: only ``true``/``false`` are booleans, so a country code ``NO`` or an answer
    ``yes`` stays a string (YAML 1.1 turns ``yes/no/on/off`` into booleans: the "Norway problem")."""


_Loader.yaml_implicit_resolvers = {
    k: [(tag, rx) for tag, rx in v if tag != "tag:yaml.org,2002:bool"] for k, v in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_Loader.add_implicit_resolver("tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF"))
_FENCE_LINE = re.compile(r"^(?:---|\.\.\.)[ \t]*$", re.M)


def _yaml_error(exc: yaml.YAMLError) -> ParseError:
    mark = getattr(exc, "problem_mark", None)
    where = f" at line {mark.line + 1} column {mark.column + 1}" if mark else ""
    return ParseError(f"invalid YAML{where}: {getattr(exc, 'problem', None) or exc}")


def load_yaml_documents(text: str) -> list[tuple[Any, yaml.Node]]:
    """``(value, node)`` of every non-empty YAML document of a text. ``---`` fences are document separators; a
    front-matter block (``---`` YAML ``---`` followed by text that is not YAML, as in a Jekyll page) gives the
    front matter only. Raises ParseError with the line and column for invalid YAML."""
    try:
        nodes = list(yaml.compose_all(text, Loader=_Loader))
    except yaml.YAMLError as exc:
        fences = list(_FENCE_LINE.finditer(text))
        if len(fences) >= 2 and text[: fences[0].start()].strip() == "":
            try:
                nodes = list(yaml.compose_all(text[: fences[1].end()], Loader=_Loader))
            except yaml.YAMLError:
                raise _yaml_error(exc) from None
        else:
            raise _yaml_error(exc) from None
    out = []
    for node in nodes:
        if node is None:
            continue
        value = _Loader("").construct_document(node)
        if value is not None:
            out.append((value, node))
    return out


def is_linkml_schema(data: Any) -> bool:
    """A LinkML schema document: a mapping with a ``classes``/``slots``/``enums``/``types``/``subsets`` mapping and a
    schema header key (``id``, ``name``, ``prefixes``, ``imports``...), or ``classes`` whose values are class
    definitions. Instance files have ``id:`` too, so ``id`` alone never decides."""
    if not isinstance(data, dict):
        return False
    sections = [k for k in _SCHEMA_KEYS if isinstance(data.get(k), dict)]
    if not sections:
        return False
    if any(k in data for k in _SCHEMA_HEAD_KEYS):
        return True
    classes = data.get("classes")
    return isinstance(classes, dict) and all(v is None or isinstance(v, dict) for v in classes.values())


_NAMESPACE_END = ("/", "#", "_", ":")
_PREFIX_KEY = re.compile(r"^[A-Za-z_][\w.\-]{0,39}$")
_CONTEXT_ID_KEYS = frozenset({"@id", "@prefix", "@type", "@container", "prefix_prefix", "prefix_reference"})


@lru_cache(maxsize=1)
def _schema_definition_slots() -> frozenset[str]:
    """The slots of LinkML's ``SchemaDefinition`` (``id``, ``name``, ``prefixes``, ``default_prefix``, ``license``,
    ``imports``...), read from linkml-runtime's metamodel so that the list follows the installed LinkML version."""
    import dataclasses

    from linkml_runtime.linkml_model.meta import SchemaDefinition

    return frozenset(f.name for f in dataclasses.fields(SchemaDefinition))


def _is_namespace(value: Any) -> bool:
    """A prefix-map value: a namespace IRI string (``http://schema.org/``, ``...owl#``, ``...IAO_``), a JSON-LD term
    definition (``{"@id": "skosxl:Label"}``) or LinkML's ``{prefix_prefix, prefix_reference}`` form."""
    if isinstance(value, str):
        v = value.strip()
        return " " not in v and v.endswith(_NAMESPACE_END) and bool(re.match(r"^(?:https?://|urn:)\S+$", v))
    return isinstance(value, dict) and bool(value) and set(map(str, value)) <= _CONTEXT_ID_KEYS


def schema_metadata_kind(data: Any) -> str | None:
    """What kind of LinkML schema *metadata* file ``data`` is, or None for anything else (instance data, a schema
    with ``classes``/``slots``, which :func:`is_linkml_schema` recognises).

    Two shapes hold no instance data but were read as one entity each: a **schema header** (every top-level key a
    slot of LinkML's ``SchemaDefinition``, among them ``prefixes`` or ``default_prefix``: ``id``, ``name``,
    ``prefixes``, ``default_prefix``, ``imports`` without classes), and a **prefix map** (linkml-runtime's
    ``prefixmap/meta.yaml``, a JSON-LD ``@context``: at least two prefix-like keys, at least 90% of whose values
    are namespace IRIs or term definitions such as ``{"@id": "skosxl:Label"}``). ``id`` alone never decides
    (instances have ids); a mapping of names to web pages is not a prefix map unless the values are namespaces.

    Args:
        data: one parsed YAML/JSON document.
    Returns:
        ``"schema header"``, ``"prefix map"`` or None.
    """
    if not isinstance(data, dict) or not data:
        return None
    keys = {str(k) for k in data}
    if ("prefixes" in keys or "default_prefix" in keys) and keys <= _schema_definition_slots():
        return "schema header"
    body = data.get("@context") if keys == {"@context"} and isinstance(data.get("@context"), dict) else data
    if len(body) >= 2 and all(_PREFIX_KEY.match(str(k)) or str(k).startswith("@") for k in body):
        ns = sum(1 for v in body.values() if _is_namespace(v))
        if ns >= 0.9 * len(body):
            return "prefix map"
    return None


def _schema_metadata_detail(data: dict) -> str:
    """A short description of a schema header / prefix map for the skip reason (its keys or prefix count)."""
    body = data.get("@context") if set(map(str, data)) == {"@context"} else data
    if "prefixes" in data or "default_prefix" in data:  # (no key list: the summary groups the files under one reason)
        return "id / prefixes / imports, no classes or slots"
    return f"{len(body)} prefixes"


# ------------------------------------------------------------------------------------------------ schemas
@lru_cache(maxsize=32)
def _schema_view(path: str, _mtime: int):
    from linkml_runtime.utils.schemaview import SchemaView

    sv = SchemaView(path)
    sv.all_classes()  # load the imports now: a broken schema fails here, not per entity
    return sv


def schema_view(path: str | Path):
    """linkml-runtime SchemaView of a schema file (cached per path and modification time). Raises ParseError
    naming the schema when it cannot be loaded."""
    p = Path(path)
    try:
        return _schema_view(str(p.resolve()), p.stat().st_mtime_ns)
    except Exception as exc:  # SchemaView raises many kinds (FileNotFoundError, ValueError, YAML errors)
        raise ParseError(f"LinkML schema {p} cannot be loaded: {type(exc).__name__}: {exc}".splitlines()[0][:300]) from None


def _slot_names(sv) -> set[str]:
    names: set[str] = set()
    for cname in sv.all_classes():
        for s in sv.class_induced_slots(cname):
            names.add(s.alias or s.name)
    return names


# Share of a file's keys that must be slots of a sibling schema (one the file does not name) for it to be used.
SIBLING_SCHEMA_MIN_FIT = 0.5
SAMPLE_ENTITIES = 50  # entities of a file whose keys decide whether a sibling schema fits it


def _entity_key_sets(docs: list[Any]) -> list[set[str]]:
    """The key sets of the first :data:`SAMPLE_ENTITIES` entities of a file: the items of a top-level list, of a
    container's lists, or a top-level mapping itself."""
    out: list[set[str]] = []
    for d in docs:
        lists = [d] if isinstance(d, list) else [v for v in d.values() if isinstance(v, list)] if isinstance(d, dict) else []
        items = [x for lst in lists for x in lst if isinstance(x, dict)]
        if not items and isinstance(d, dict):
            items = [d]
        out += [{str(k) for k in x} for x in items[:SAMPLE_ENTITIES]]
    return out[:SAMPLE_ENTITIES]


def _entities_fit(sv, key_sets: list[set[str]]) -> bool:
    """Whether a schema fits a file's entities: on average, the best class of the schema for an entity holds more
    than :data:`SIBLING_SCHEMA_MIN_FIT` of that entity's keys (so most keys validate; a schema that shares only
    ``id``/``name`` with an entity does not fit it)."""
    if not key_sets:
        return False
    shares = [(_best_class(sv, ks)[1] / len(ks)) if ks else 0.0 for ks in key_sets]
    return sum(shares) / len(shares) > SIBLING_SCHEMA_MIN_FIT


def _named_count(docs: list[Any], text: str, file_path: Path | None) -> int:
    """How many of :func:`_schema_candidates`' first entries the file names itself (keys or a head comment)."""
    return len(_schema_candidates(docs, text, None if file_path is None else file_path, siblings=False))


def _schema_candidates(docs: list[Any], text: str, file_path: Path | None, *, siblings: bool = True) -> list[Path]:
    """Schema files a file names (keys or a head comment), then LinkML schemas beside it or in its parent folder."""
    out: list[Path] = []
    base = file_path.parent if file_path else None
    named: list[str] = []
    for d in docs:
        if isinstance(d, dict):
            named += [d[k] for k in _SCHEMA_REF_KEYS if isinstance(d.get(k), str)]
    named += _SCHEMA_COMMENT.findall("\n".join(text.splitlines()[:10]))
    for ref in named:
        p = Path(ref)
        if not p.is_absolute() and base is not None:
            p = base / p
        if p.suffix.lower() in (".yaml", ".yml") and p.is_file():
            out.append(p)
    if base is not None and siblings:
        for folder in (base, base.parent):
            if not folder.is_dir():
                continue
            for f in sorted(folder.glob("*.y*ml")):
                if f.suffix.lower() in (".yaml", ".yml") and f.resolve() != file_path.resolve() and _looks_like_schema(f):
                    out.append(f)
    return out


@lru_cache(maxsize=256)
def _looks_like_schema_cached(path: str, _mtime: int) -> bool:
    try:
        head = Path(path).read_text(encoding="utf-8", errors="replace")[:200_000]
        if not re.search(r"^(?:classes|slots|enums):", head, re.M):
            return False
        return is_linkml_schema(yaml.load(head, Loader=_Loader))
    except (OSError, yaml.YAMLError):
        return False


def _looks_like_schema(path: Path) -> bool:
    return _looks_like_schema_cached(str(path), path.stat().st_mtime_ns)


# ------------------------------------------------------------------------------------------------ validation
_TYPE_CHECKS = {
    "int": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "float": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "Decimal": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "Bool": lambda v: isinstance(v, bool),
    "XSDDate": lambda v: isinstance(v, _dt.date) or (isinstance(v, str) and _iso(v, date_only=True)),
    "XSDDateTime": lambda v: isinstance(v, _dt.datetime) or (isinstance(v, str) and _iso(v)),
    "XSDTime": lambda v: isinstance(v, (str, _dt.time)),
}


def _iso(v: str, date_only: bool = False) -> bool:
    try:
        (_dt.date if date_only else _dt.datetime).fromisoformat(v)
        return True
    except ValueError:
        return False


def _type_base(sv, rng: str) -> str | None:
    t = sv.get_type(rng) if rng else None
    seen = 0
    while t is not None and not t.base and t.typeof and seen < 10:
        t, seen = sv.get_type(t.typeof), seen + 1
    return t.base if t is not None else None


def validate_entity(sv, class_name: str, value: Any, *, path: str = "", depth: int = 0) -> list[str]:
    """Check one entity against the induced slots of ``class_name`` in SchemaView ``sv`` (see the module
    docstring). Returns error messages ``<slot path>: <problem>`` (empty when valid); never raises."""
    if not isinstance(value, dict):
        return [f"{path or '<entity>'}: is {value_kind(value, mapping='a mapping', sequence='a list')}, expected a {class_name} object"]
    slots = {(s.alias or s.name): s for s in sv.class_induced_slots(class_name)}
    errors: list[str] = []
    for name, s in slots.items():
        if s.required and value.get(name) in (None, "", []):
            errors.append(f"{path}{name}: required slot of {class_name} missing")
    for key, v in value.items():
        s = slots.get(str(key))
        where = f"{path}{key}"
        if s is None:
            errors.append(f"{where}: not a slot of {class_name}")
            continue
        if v is None:
            continue
        if isinstance(v, list) and not s.multivalued:
            errors.append(f"{where}: one value expected, got a list")
        items = list(v.values()) if isinstance(v, dict) and s.multivalued and s.range in sv.all_classes() \
            and not _is_object_of(sv, s.range, v) else (v if isinstance(v, list) else [v])
        rng = s.range or ""
        if rng in sv.all_enums():
            allowed = list(sv.get_enum(rng).permissible_values or {})
            bad = sorted({str(x) for x in items if str(x) not in set(allowed)})
            if bad and allowed:
                errors.append(f"{where}: {', '.join(map(repr, bad[:3]))} not in {rng} ({', '.join(list(allowed)[:8])}"
                              f"{'...' if len(allowed) > 8 else ''})")
        elif rng in sv.all_classes():
            for i, x in enumerate(items):
                if isinstance(x, dict) and depth < 4:
                    errors += validate_entity(sv, _designated(sv, rng, x), x,
                                              path=f"{where}{f'[{i}]' if len(items) > 1 else ''}.", depth=depth + 1)
                elif isinstance(x, list):
                    errors.append(f"{where}: nested list, expected {rng} objects or references")
        else:
            base = _type_base(sv, rng)
            check = _TYPE_CHECKS.get(base or "")
            for x in items:
                if isinstance(x, (dict, list)):
                    errors.append(f"{where}: is {value_kind(x, mapping='a mapping', sequence='a list')}, expected {rng}")
                    break
                if check is not None and not check(x):
                    errors.append(f"{where}: {x!r} is not a valid {rng}")
                    break
        if s.pattern:
            for x in items:
                if isinstance(x, (str, int, float)) and not re.search(s.pattern, str(x)):
                    errors.append(f"{where}: {str(x)!r} does not match the pattern {s.pattern}")
                    break
    return errors


def _is_object_of(sv, class_name: str, value: dict) -> bool:
    """A dict that is one object of ``class_name`` (its keys are slots), not a mapping keyed by id."""
    names = {(s.alias or s.name) for s in sv.class_induced_slots(class_name)}
    return bool(value) and all(str(k) in names for k in value)


def _designated(sv, class_name: str, value: dict) -> str:
    """The class an object names through its type designator slot (``type``/``category`` with
    ``designates_type``), when that is ``class_name`` or one of its descendants; else ``class_name``."""
    try:
        ds = sv.get_type_designator_slot(class_name)
    except Exception:
        ds = None
    if ds is not None:
        named = value.get(ds.alias or ds.name)
        if isinstance(named, str):
            local = named.split(":")[-1].split("/")[-1]
            if local in sv.class_descendants(class_name):
                return local
    return class_name


def _entity_classes(sv) -> list[str]:
    """Classes that entities can have: not abstract, not mixins, not the container (tree_root)."""
    out = []
    for name, c in sv.all_classes().items():
        if c.abstract or c.mixin or c.tree_root:
            continue
        out.append(name)
    return out


def _best_class(sv, keys: set[str]) -> tuple[str | None, int]:
    """The entity class whose slots cover most of ``keys`` (ties: schema order), with the overlap."""
    best, score = None, 0
    for name in _entity_classes(sv):
        names = {(s.alias or s.name) for s in sv.class_induced_slots(name)}
        n = len(keys & names) - len(keys - names) * 0.01
        if best is None or n > score:
            best, score = name, n
    overlap = len(keys & {(s.alias or s.name) for s in sv.class_induced_slots(best)}) if best else 0
    return best, overlap


def _container_slots(sv) -> dict[str, str]:
    """``{slot: range class}`` of the containers' multivalued object slots: the tree_root class(es), or, when the
    schema marks none, classes whose every slot is a multivalued slot of another class (``Container`` of
    personinfo)."""
    roots = [n for n, c in sv.all_classes().items() if c.tree_root]
    if not roots:
        for n in sv.all_classes():
            ss = sv.class_induced_slots(n)
            if ss and all(s.multivalued and s.range in sv.all_classes() for s in ss):
                roots.append(n)
    out: dict[str, str] = {}
    for r in roots:
        for s in sv.class_induced_slots(r):
            if s.range in sv.all_classes():
                out[s.alias or s.name] = s.range
    return out


# ------------------------------------------------------------------------------------------------ entities
@dataclass
class _Entity:
    value: Any
    node: Any
    where: str            # location for messages: "entity 3", "persons[1]", "P:001"
    class_name: str | None
    container_key: str | None = None


def _node_items(node) -> list[tuple[Any, Any]]:
    """(key node, value node) pairs of a mapping node."""
    return list(node.value) if isinstance(node, yaml.MappingNode) else []


def _entities_of(data: Any, node, sv, containers: dict[str, str], doc_index: int) -> tuple[list[_Entity], str]:
    """The entities of one YAML document and the layout name (see the module docstring)."""
    tag = f"doc {doc_index} " if doc_index else ""
    if isinstance(data, list):
        return [_Entity(v, n, f"{tag}entity {i}", None) for i, (v, n) in enumerate(zip(data, node.value))], "list"
    if not isinstance(data, dict):
        raise ParseError(f"top level is {value_kind(data, mapping='a mapping', sequence='a list')}; expected an "
                         "entity mapping, a list of entities or a container of lists")
    pairs = _node_items(node)
    by_key = {str(k.value): (data.get(_construct_key(k)), v) for k, v in pairs if isinstance(k, yaml.ScalarNode)}
    # a container: its keys are the container slots of the schema, or (without a schema) every value is a list of
    # mappings or a mapping of mappings
    container_keys = [k for k in by_key if k in containers]
    if not container_keys and not (sv is not None and _fits_one_entity(sv, data)):
        list_like = [k for k, (v, _) in by_key.items()
                     if isinstance(v, list) and v and all(isinstance(x, dict) for x in v)]
        if list_like and all(isinstance(v, list) or k in _SCHEMA_REF_KEYS or k == "data_tier" for k, (v, _) in by_key.items()):
            container_keys = list_like
    if container_keys:
        out: list[_Entity] = []
        for k in container_keys:
            v, vn = by_key[k]
            rng = containers.get(k)
            if isinstance(v, list):
                out += [_Entity(x, xn, f"{tag}{k}[{i}]", rng, k) for i, (x, xn) in enumerate(zip(v, vn.value))]
            elif isinstance(v, dict):
                out += _keyed(v, vn, sv, rng, f"{tag}{k}", k)
        return out, "container"
    values = list(data.values())
    if values and all(isinstance(v, dict) for v in values) and not _keys_are_slots(sv, data):
        return _keyed(data, node, sv, None, tag.strip(), None), "keyed by id"
    return [_Entity(data, node, f"{tag}entity 0", None)], "one entity"


def _construct_key(knode) -> Any:
    return _Loader("").construct_object(knode)


def _fits_one_entity(sv, data: dict) -> bool:
    cls, overlap = _best_class(sv, {str(k) for k in data})
    return cls is not None and overlap >= max(1, len(data) // 2)


def _keys_are_slots(sv, data: dict) -> bool:
    """The keys of a mapping of mappings are slot names (one entity with nested objects), not ids."""
    if sv is None:
        roles = {_norm_key(a) for aliases in load_linkml_mappings().defaults.roles.values() for a in aliases}
        return any(_norm_key(k) in roles for k in data)
    return _fits_one_entity(sv, data)


def _keyed(data: dict, node, sv, cls: str | None, where: str, container_key: str | None) -> list[_Entity]:
    """Entities of a mapping keyed by id: the key becomes the class's identifier slot (``id`` without one)."""
    out = []
    for k, vn in _node_items(node):
        key = _construct_key(k)
        v = data.get(key)
        if isinstance(v, dict):
            c = cls
            id_slot = "id"
            if sv is not None:
                c = c or _best_class(sv, {str(x) for x in v})[0]
                ident = sv.get_identifier_slot(c) if c else None
                id_slot = (ident.alias or ident.name) if ident is not None else "id"
            v = {id_slot: key, **v} if id_slot not in v else v
        out.append(_Entity(v, vn, f"{where + ' ' if where else ''}{key}".strip(), cls, container_key))
    return out


def _lookup(entity: dict, alias: str) -> Any:
    """Value of an alias in an entity: keys compared with :func:`_norm_key`, dots reach into nested mappings."""
    cur: Any = entity
    for part in alias.split("."):
        if not isinstance(cur, dict):
            return None
        want = _norm_key(part)
        cur = next((v for k, v in cur.items() if _norm_key(k) == want), None)
        if cur is None:
            return None
    return cur


def _consumed_key(entity: dict, alias: str) -> str | None:
    want = _norm_key(alias.split(".")[0])
    return next((str(k) for k in entity if _norm_key(k) == want), None)


def _scalar(v: Any) -> str | None:
    """A display string of a role value: a scalar, the name of a named object, the first of a list."""
    if v is None or isinstance(v, bool):
        return None if v is None else str(v).lower()
    if isinstance(v, (str, int, float, _dt.date)):
        s = " ".join(str(v).split())
        return s or None
    if isinstance(v, dict):
        for k in _NAME_SUBKEYS:
            if k in v:
                return _scalar(v[k])
        return None
    if isinstance(v, list):
        vals = [x for x in (_scalar(x) for x in v) if x]
        return "; ".join(vals) if vals else None
    return None


def _flatten(prefix: str, v: Any, out: list[str], depth: int = 0) -> None:
    """``slot: value`` lines of a slot value (nested objects ``slot.sub``, lists joined with ``; ``)."""
    if v is None or v == "" or v == [] or v == {}:
        return
    if isinstance(v, dict):
        if depth >= 6:
            return
        for k, x in v.items():
            _flatten(f"{prefix}.{k}", x, out, depth + 1)
        return
    if isinstance(v, list):
        if all(not isinstance(x, (dict, list)) for x in v):
            vals = [s for s in (_scalar(x) for x in v) if s]
            if vals:
                out.append(f"{prefix}: {'; '.join(vals)}")
            return
        merged: dict[str, list[str]] = {}
        for x in v:
            sub: list[str] = []
            _flatten(prefix, x, sub, depth + 1)
            for line in sub:
                k, _, val = line.partition(": ")
                merged.setdefault(k, []).append(val)
        out.extend(f"{k}: {'; '.join(dict.fromkeys(vals))}" for k, vals in merged.items())
        return
    s = _scalar(v)
    if s:
        out.append(f"{prefix}: {s}")


def _type_code(v: Any) -> str | None:
    """A GLAMORCUBESFIXPHDNT code from a type value: the code itself or its label in any case (``Museum``)."""
    s = _scalar(v)
    if not s:
        return None
    codes = custodian_type_codes()
    if s in codes:
        return s
    low = s.casefold()
    return next((c for c, label in codes.items() if label.casefold() == low), None)


@dataclass
class EntityRecord:
    """What one entity contributes: its text, label, metadata and chunk key."""

    text: str
    label: str | None
    meta: dict[str, Any]
    key: str


def entity_record(value: dict, *, roles: dict[str, list[str]], identifier_slots: dict[str, str],
                  container_type: str | None, default_tier: str, fallback_id: str) -> EntityRecord:
    """Text and metadata of one entity (see the module docstring). ``roles``: role -> aliases; ``identifier_slots``:
    alias -> scheme; ``container_type``: custodian type code implied by the container key; ``fallback_id``: the
    source id when the entity has no identifier. Never raises."""
    consumed: set[str] = set()

    def role(name: str) -> tuple[Any, str | None]:
        for alias in roles.get(name, []):
            v = _lookup(value, alias)
            if v not in (None, "", [], {}):
                key = _consumed_key(value, alias)
                if key and "." not in alias:
                    consumed.add(key)
                return v, alias
        return None, None

    label = _scalar(role("preferred_label")[0])
    alt = _scalar(role("alternative_labels")[0])
    description = _scalar(role("description")[0])
    type_raw, _ = role("custodian_type")
    code = _type_code(type_raw) or container_type
    settlement = _scalar(role("settlement")[0])
    region = _scalar(role("region")[0])
    country = _scalar(role("country")[0])
    website = _scalar(role("website")[0])
    tier = _scalar(role("data_tier")[0])
    place = value.get("custodian_place")
    if isinstance(place, dict) and all(k in ("settlement", "country", "region") for k in place):
        consumed.add("custodian_place")
    idents: list[tuple[str, str]] = []
    id_norm = {_norm_key(k): s for k, s in identifier_slots.items()}
    for k, v in value.items():
        scheme = id_norm.get(_norm_key(k))
        if scheme and _scalar(v) and not isinstance(v, (dict, list)):
            idents.append((scheme, _scalar(v)))  # type: ignore[arg-type]
            consumed.add(str(k))
    if isinstance(value.get("identifiers"), list):
        ok = True
        for ident in value["identifiers"]:
            if isinstance(ident, dict) and ident.get("identifier_scheme") and ident.get("identifier_value") is not None:
                idents.append((str(ident["identifier_scheme"]), str(ident["identifier_value"])))
            else:
                ok = False
        if ok:
            consumed.add("identifiers")
    collections = value.get("collections")
    coll_lines = []
    if isinstance(collections, list) and all(isinstance(c, dict) and c.get("collection_name") for c in collections):
        consumed.add("collections")
        for c in collections:
            d = _scalar(c.get("description"))
            coll_lines.append(f"Collection: {_scalar(c['collection_name'])}" + (f" ({d})" if d else ""))
    lines: list[str] = []
    if label:
        lines.append(f"Name: {label}")
    if alt:
        lines.append(f"Also known as: {alt}")
    if code:
        lines.append(f"Type: {type_label(code) or code}")
    elif type_raw is not None and _scalar(type_raw):
        lines.append(f"Type: {_scalar(type_raw)}")
    if description:
        lines.append(f"Description: {description}")
    loc = ", ".join(dict.fromkeys(p for p in (settlement, region, country) if p))
    if loc:
        lines.append(f"Location: {loc}")
    lines += coll_lines
    lines += [f"{scheme}: {v}" for scheme, v in dict.fromkeys(idents)]
    if website:
        lines.append(f"Website: {website}")
    rest: list[str] = []
    for k, v in value.items():
        if str(k) not in consumed:
            _flatten(str(k), v, rest)
    seen = set(lines)
    lines += [line for line in rest if line not in seen]
    by_scheme: dict[str, str] = {}
    for scheme, v in dict.fromkeys(idents):
        key = f"identifier:{scheme}"
        by_scheme[key] = f"{by_scheme[key]}; {v}" if key in by_scheme else v
    hc_id = next((v for s, v in idents if s == "hc_id"), None)
    ghcid = next((v for s, v in idents if s == "ghcid"), None)
    any_id = next((v for s, v in idents if s not in ("hc_id", "ghcid")), None)
    place_country, raw_settlement = None, settlement
    if settlement and not country and "," in settlement:
        # "London, UK" in one location slot: the town is the settlement, a trailing country name its country
        head, _, tail = settlement.rpartition(",")
        # a two-letter tail is a state as often as a country ("Chicago, IL" is not Israel): names only
        # (two-letter short forms that are no ISO code, such as UK, are names)
        from .columns import COUNTRY_SHORT_FORMS

        short = len(tail.strip()) <= 2 and tail.strip().casefold() not in COUNTRY_SHORT_FORMS
        place_country = None if short else _country_code(tail)
        if place_country and head.strip():
            settlement = head.split(",")[0].strip()
    country_code = (country if country and re.fullmatch(r"[A-Z]{2}", country) else _country_code(country)) \
        or place_country or (ghcid[:2] if ghcid and ghcid[2:3] == "-" else None)
    extra = {f"slot:{r}": v for r, v in (("preferred_label", label), ("alternative_labels", alt),
                                          ("description", description), ("settlement", raw_settlement),
                                          ("region", region), ("country", country), ("website", website)) if v}
    extra.update(by_scheme)
    from heritage_pipeline.chunking.ids import slug

    key_src = ghcid or (hc_id.rsplit("/", 1)[-1] if hc_id else None) or any_id or label
    meta = {
        "source_id": hc_id or ghcid or any_id or fallback_id,
        "hc_id": hc_id,
        "ghcid": ghcid,
        "custodian_type": code,
        "country_code": country_code,
        "settlement": settlement,
        "region_code": region,
        "data_tier": tier if tier in DATA_TIERS else default_tier,
        "primary_class": "custodian",
        "has_identifiers": bool(idents),
        "has_collections": bool(coll_lines),
        "mentioned_classes": ["CustodianCollection"] if coll_lines else [],
        "extra": extra,
    }
    return EntityRecord("\n".join(lines), label, meta, slug(str(key_src)) if key_src else "")


# ------------------------------------------------------------------------------------------------ parse
def parse_instances(text: str, *, doc_id: str, source_path: str, lang: str, abs_path: str | Path | None = None,
                    mappings: LinkMLMappings | None = None) -> tuple[ParsedDocument, list[tuple[str, str]]]:
    """Parse a LinkML instance file (or a YAML list of entities) into one standalone section (one chunk) per entity.

    Args:
        text: the decoded file.
        doc_id, source_path, lang: identity of the document (``source_path`` data-relative, matched against the
            ``files`` patterns of the mapping file).
        abs_path: the file on disk, to find a schema it names or a sibling schema (None: only the default schema).
        mappings: slot aliases (default: :func:`load_linkml_mappings`).

    Returns:
        ``(document, problems)``; a problem is ``("entity <where> (<label>)", reason)`` for an item that is not a
        mapping or an entity with no text (quarantined parts). Validation errors do not make problems (see the
        module docstring); ``document.meta`` counts ``entities`` read, ``entities_chunked``, ``entities_invalid``,
        and names ``linkml_schema`` and ``layout``.

    Raises:
        NotInputData: the file is a LinkML schema (``"LinkML schema, not instance data"``).
        ParseError: invalid YAML, a top level that is a scalar, no entity at all, or a schema that cannot be loaded.
    """
    mappings = mappings or load_linkml_mappings()
    docs = load_yaml_documents(text)
    if docs and any(is_linkml_schema(d) for d, _ in docs):
        raise NotInputData("LinkML schema, not instance data")
    kinds = [schema_metadata_kind(d) for d, _ in docs]
    if docs and all(kinds):  # every document a schema header or prefix map: nothing in the file is an entity
        raise NotInputData(f"LinkML schema, not instance data ({kinds[0]}: {_schema_metadata_detail(docs[0][0])})")
    if not docs:
        raise ParseError("empty YAML document: no entity")
    default_schema, default_tier, roles = mappings.for_file(source_path)
    file_path = Path(abs_path) if abs_path else None
    keys = _top_keys([d for d, _ in docs])
    sv, schema_file = _choose_schema([d for d, _ in docs], text, file_path, default_schema, keys)
    containers = _container_slots(sv) if sv is not None else {}
    entities: list[_Entity] = []
    layouts = []
    for i, (data, node) in enumerate(docs):
        ents, layout = _entities_of(data, node, sv, containers, i if len(docs) > 1 else 0)
        entities += ents
        layouts.append(layout)
    builder = DerivedTextBuilder()
    sections: list[Section] = []
    problems: list[tuple[str, str]] = []
    invalid = 0
    keys_seen: set[str] = set()
    file_tier = _file_tier([d for d, _ in docs])
    schema_name = str(sv.schema.name) if sv is not None else None
    ctypes = {_norm_key(k): v for k, v in mappings.defaults.container_types.items()}
    for i, ent in enumerate(entities):
        raw = ent.value
        if not isinstance(raw, dict):
            problems.append((ent.where, f"is {value_kind(raw, mapping='a mapping', sequence='a list')}, expected a mapping"))
            continue
        rec = entity_record(raw, roles=roles, identifier_slots=mappings.defaults.identifier_slots,
                            container_type=ctypes.get(_norm_key(ent.container_key or "")),
                            default_tier=file_tier or default_tier, fallback_id=f"{doc_id}#entity-{i}")
        where = ent.where + (f" ({rec.label})" if rec.label else "")
        if sv is not None:
            cls = ent.class_name or _best_class(sv, {str(k) for k in raw})[0]
            cls = _designated(sv, cls, raw) if cls else None
            errors = validate_entity(sv, cls, raw) if cls else [f"no class of schema {schema_name} fits this entity"]
            rec.meta["extra"]["linkml_class"] = cls or ""
            rec.meta["extra"]["linkml_schema"] = schema_name or ""
            if errors:
                invalid += 1
                more = f" (and {len(errors) - MAX_ERRORS_PER_ENTITY} more)" if len(errors) > MAX_ERRORS_PER_ENTITY else ""
                rec.meta["extra"]["linkml_errors"] = "; ".join(errors[:MAX_ERRORS_PER_ENTITY]) + more
        else:
            rec.meta["extra"]["linkml_validation"] = "no schema"
        if not rec.text.strip():
            problems.append((where, "entity has no text (no name, description or other slot value)"))
            continue
        bi = builder.add("entity", rec.text, ent.node.start_mark.index, ent.node.end_mark.index)
        if bi is None:
            problems.append((where, "entity has no text (no name, description or other slot value)"))
            continue
        key = rec.key or f"entity-{i}"
        if key in keys_seen:
            key = f"{key}-{i}"
        keys_seen.add(key)
        sections.append(Section(anchors=[rec.label or ent.where], level=1, first=bi, last=bi + 1, meta=rec.meta,
                                standalone=True, key=key))
    meta = {"entities": len(entities), "entities_chunked": len(sections), "entities_invalid": invalid,
            "linkml_schema": str(schema_file) if schema_file else None, "layout": ", ".join(dict.fromkeys(layouts))}
    doc = ParsedDocument(doc_id=doc_id, source_path=source_path, source_type="yaml_instance", lang=lang,
                         text=builder.text, blocks=builder.blocks, sections=sections, text_is_raw=False, meta=meta)
    return doc, problems


def _top_keys(docs: list[Any]) -> set[str]:
    """Slot names used by the entities of a file (one level into containers and lists), to pick a schema."""
    keys: set[str] = set()
    for d in docs:
        items = d if isinstance(d, list) else [d]
        for it in items:
            if not isinstance(it, dict):
                continue
            for k, v in it.items():
                keys.add(str(k))
                vals = v if isinstance(v, list) else list(v.values()) if isinstance(v, dict) else []
                for x in vals[:50]:
                    if isinstance(x, dict):
                        keys.update(str(kk) for kk in x)
    return keys


def _choose_schema(docs: list[Any], text: str, file_path: Path | None, default_schema: str | None,
                   keys: set[str]):
    """(SchemaView or None, schema path or None): a named or sibling schema whose slots fit the file's keys best,
    else the default (heritage) schema when the file uses its marker slots, else none."""
    candidates = _schema_candidates(docs, text, file_path)
    named = set(candidates[:_named_count(docs, text, file_path)])
    if default_schema and keys & _HERITAGE_MARKERS:
        path = Path(default_schema)
        path = path if path.is_absolute() else REPO_ROOT / path
        candidates.append(path)
        named.add(path)  # chosen by the file's own heritage marker slots
    best = None
    for cand in candidates:  # named schemas first: they win ties
        sv = schema_view(cand)
        score = len(keys & _slot_names(sv))
        # a schema the file does not name must fit it: at least half of the file's keys are its slots (an unrelated
        # schema in the same folder shares only generic keys such as id/type, and validating against it reports
        # every other key as "not a slot")
        # and one of its classes must hold most of each entity's keys (:func:`_entities_fit`): a toy ``organization``
        # schema saved beside Person and Animal examples fitted their union of keys by id, name, age_in_years (over
        # two classes) and reported primary_email/pets as "not a slot of organization" (trial defect 11)
        fits = cand in named or (score >= max(2, SIBLING_SCHEMA_MIN_FIT * len(keys))
                                 and _entities_fit(sv, _entity_key_sets(docs)))
        if score and fits and (best is None or score > best[0]):
            best = (score, sv, cand)
    return (best[1], best[2]) if best is not None else (None, None)


def _country_code(name: str | None) -> str | None:
    """ISO 3166 alpha-2 code of a country name or code in nl/en/fr/de (``Germany``, ``UK``, ``NL``), else None."""
    from .columns import _fold, country_names

    return country_names().get(_fold(name.strip())) if name and name.strip() else None


def _file_tier(docs: list[Any]) -> str | None:
    """A data tier the file states at its top level (``data_tier:`` beside a container's lists)."""
    for d in docs:
        if isinstance(d, dict) and d.get("data_tier") in DATA_TIERS and any(isinstance(v, list) for v in d.values()):
            return d["data_tier"]
    return None
