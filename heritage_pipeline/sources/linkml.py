"""LinkML heritage-custodian instance YAML -> one section (one chunk) per entity.

A file holds one entity (a mapping) or a list of them. Each entity is validated against
:class:`CustodianInstance`, a pydantic model of the slots the pipeline uses (heritage seed: ``hc_id``, ``ghcid``,
``preferred_label``, ``description``, ``custodian_type``, ``custodian_place``, ``collections``, ``identifiers``,
``data_tier``); other slots are allowed and kept. An invalid entity is reported with the file, the entity and the
field; the other entities proceed. The chunk text follows the seed: name, description, place, collections,
identifiers (``scheme: value``). Spans come from the YAML node marks (code-point offsets).
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from heritage_pipeline.core.config import REPO_ROOT
from heritage_pipeline.core.structure import DerivedTextBuilder, ParsedDocument, ParseError, Section, value_kind

SCHEMA_ENUM = REPO_ROOT / "data" / "schema" / "meta" / "enums" / "InstitutionTypeCodeEnum.yaml"
# GLAMORCUBESFIXPHDNT, as in the heritage_custodian LinkML schema (used when the schema file is not at hand).
_FALLBACK_CODES = {
    "G": "Gallery", "L": "Library", "A": "Archive", "M": "Museum", "O": "Official institution",
    "R": "Research center", "C": "Corporation", "U": "Unknown", "B": "Botanical garden/Zoo",
    "E": "Education provider", "S": "Collecting society", "F": "Feature - monument or landmark",
    "I": "Intangible heritage group",
    "X": "Mixed types", "P": "Personal collection", "H": "Holy site", "D": "Digital platform", "N": "NGO",
    "T": "Taste/smell heritage",
}


@lru_cache(maxsize=1)
def custodian_type_codes() -> dict[str, str]:
    """GLAMORCUBESFIXPHDNT code -> label, read from the LinkML enum in ``data/schema`` when present."""
    try:
        data = yaml.safe_load(SCHEMA_ENUM.read_text(encoding="utf-8"))
        values = data["enums"]["InstitutionTypeCodeEnum"]["permissible_values"]
        return {code: (v or {}).get("description", code) for code, v in values.items()}
    except (OSError, KeyError, TypeError, yaml.YAMLError):
        return dict(_FALLBACK_CODES)


class Place(BaseModel):
    model_config = ConfigDict(extra="allow")
    settlement: str | None = None
    country: str | None = None
    region: str | None = None


class Collection(BaseModel):
    model_config = ConfigDict(extra="allow")
    collection_name: str
    collection_type: str | None = None
    description: str | None = None


class Identifier(BaseModel):
    model_config = ConfigDict(extra="allow")
    identifier_scheme: str
    identifier_value: str

    @field_validator("identifier_value", mode="before")
    @classmethod
    def _stringify(cls, v: Any) -> Any:
        return str(v) if isinstance(v, (int, float)) else v


class CustodianInstance(BaseModel):
    """The slots of a heritage custodian instance that the pipeline reads (others are kept, not checked)."""

    model_config = ConfigDict(extra="allow")
    hc_id: str | None = None
    ghcid: str | None = None
    preferred_label: str = Field(min_length=1)
    description: str | None = None
    custodian_type: str | None = None
    custodian_place: Place | None = None
    collections: list[Collection] = Field(default_factory=list)
    identifiers: list[Identifier] = Field(default_factory=list)
    data_tier: str | None = None

    @field_validator("custodian_type")
    @classmethod
    def _known_code(cls, v: str | None) -> str | None:
        if v is not None and v not in custodian_type_codes():
            raise ValueError(f"{v!r} is not a GLAMORCUBESFIXPHDNT code ({''.join(custodian_type_codes())})")
        return v

    @field_validator("data_tier")
    @classmethod
    def _tier(cls, v: str | None) -> str | None:
        allowed = ("TIER_1_AUTHORITATIVE", "TIER_2_VERIFIED", "TIER_3_CROWD_SOURCED", "TIER_4_INFERRED")
        if v is not None and v not in allowed:
            raise ValueError(f"{v!r} is not one of {', '.join(allowed)}")
        return v


def entity_text(e: CustodianInstance) -> str:
    """Searchable text of an entity (heritage seed ``_entity_to_text``)."""
    parts = [f"Name: {e.preferred_label}"]
    if e.custodian_type:
        parts.append(f"Type: {custodian_type_codes().get(e.custodian_type, e.custodian_type)}")
    if e.description:
        parts.append(f"Description: {' '.join(e.description.split())}")
    if e.custodian_place:
        place = " ".join(p for p in (e.custodian_place.settlement, e.custodian_place.country) if p)
        if place:
            parts.append(f"Location: {place}")
    for c in e.collections:
        parts.append(f"Collection: {c.collection_name}" + (f" ({c.description})" if c.description else ""))
    for ident in e.identifiers:
        parts.append(f"{ident.identifier_scheme}: {ident.identifier_value}")
    return "\n".join(parts)


class _Loader(yaml.SafeLoader):
    """PyYAML's safe loader with YAML 1.2 booleans: only ``true``/``false`` are booleans, so a country code ``NO`` or
    an answer ``yes`` stays a string (YAML 1.1 turns ``yes/no/on/off`` into booleans: the "Norway problem")."""


_Loader.yaml_implicit_resolvers = {
    k: [(tag, rx) for tag, rx in v if tag != "tag:yaml.org,2002:bool"] for k, v in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_Loader.add_implicit_resolver("tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF"))


def load_yaml_entities(text: str) -> list[tuple[Any, Any]]:
    """``(value, node)`` for every entity of a YAML text: a document that is a mapping is one entity, a document
    that is a list holds one entity per item; several documents (``---``) are allowed. Raises ParseError with the
    line and column for invalid YAML, or when a document is neither a mapping nor a list."""
    try:
        nodes = list(yaml.compose_all(text, Loader=_Loader))
        docs = list(yaml.load_all(text, Loader=_Loader))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1} column {mark.column + 1}" if mark else ""
        raise ParseError(f"invalid YAML{where}: {getattr(exc, 'problem', None) or exc}") from None
    out: list[tuple[Any, Any]] = []
    for data, node in zip(docs, nodes):
        if data is None:
            continue
        if isinstance(data, dict):
            out.append((data, node))
        elif isinstance(data, list):
            out.extend(zip(data, node.value))
        else:
            kind = value_kind(data, mapping="a mapping", sequence="a list")
            raise ParseError(f"top level is {kind}; expected an entity mapping or a list of entities")
    if not out:
        raise ParseError("empty YAML document: no entity")
    return out


def parse_instances(text: str, *, doc_id: str, source_path: str, lang: str) -> tuple[ParsedDocument, list[tuple[str, str]]]:
    """Parse a LinkML instance file into one standalone section (one chunk) per entity.

    Returns (document, problems); a problem is ``("entity <i> (<label>)", "field <dotted.path>: <message>")`` for an
    entity that fails :class:`CustodianInstance` validation (all failing fields are listed, at most five). Raises
    :class:`ParseError` for unreadable YAML or a top level that is not an entity or a list of entities.
    """
    pairs = load_yaml_entities(text)
    entities = [p[0] for p in pairs]
    nodes = [p[1] for p in pairs]
    builder = DerivedTextBuilder()
    sections: list[Section] = []
    problems: list[tuple[str, str]] = []
    for i, (raw, n) in enumerate(zip(entities, nodes)):
        label = raw.get("preferred_label") if isinstance(raw, dict) else None
        where = f"entity {i}" + (f" ({label})" if label else "")
        if not isinstance(raw, dict):
            kind = value_kind(raw, mapping="a mapping", sequence="a list")
            problems.append((where, f"is {kind}, expected a mapping"))
            continue
        try:
            ent = CustodianInstance.model_validate(raw)
        except ValidationError as exc:
            errs = exc.errors()
            msgs = [f"field {'.'.join(str(p) for p in e['loc']) or '<entity>'}: {e['msg']}" for e in errs[:5]]
            more = f" (and {len(errs) - 5} more)" if len(errs) > 5 else ""
            problems.append((where, "; ".join(msgs) + more))
            continue
        bi = builder.add("entity", entity_text(ent), n.start_mark.index, n.end_mark.index)
        if bi is None:
            continue
        place = ent.custodian_place
        tier = ent.data_tier or "TIER_2_VERIFIED"
        sections.append(
            Section(
                anchors=[ent.preferred_label],
                level=1,
                first=bi,
                last=bi + 1,
                meta={
                    "source_id": ent.hc_id or f"{doc_id}#entity-{i}",
                    "hc_id": ent.hc_id,
                    "ghcid": ent.ghcid,
                    "custodian_type": ent.custodian_type,
                    "country_code": (place.country if place and place.country else None)
                    or (ent.ghcid[:2] if ent.ghcid and ent.ghcid[2:3] == "-" else None),
                    "settlement": place.settlement if place else None,
                    "region_code": place.region if place else None,
                    "data_tier": tier,
                    "primary_class": "custodian",
                    "has_identifiers": bool(ent.identifiers or ent.ghcid),
                    "has_collections": bool(ent.collections),
                    "mentioned_classes": ["CustodianCollection"] if ent.collections else [],
                    "extra": _entity_extra(ent),
                },
                standalone=True,
                key=_entity_key(ent, i),
            )
        )
    doc = ParsedDocument(doc_id=doc_id, source_path=source_path, source_type="yaml_instance", lang=lang,
                         text=builder.text, blocks=builder.blocks, sections=sections, text_is_raw=False)
    return doc, problems


def _entity_extra(ent: CustodianInstance) -> dict[str, str]:
    """Flat string metadata of an entity: ``slot:preferred_label`` and ``identifier:<scheme>`` (values joined by
    ``; ``), read by the heritage gazetteer (:mod:`heritage_pipeline.enrich`)."""
    extra = {"slot:preferred_label": ent.preferred_label}
    for ident in ent.identifiers:
        key = f"identifier:{ident.identifier_scheme}"
        extra[key] = f"{extra[key]}; {ident.identifier_value}" if key in extra else ident.identifier_value
    return extra


def _entity_key(ent: CustodianInstance, i: int) -> str:
    from heritage_pipeline.chunking.ids import slug

    return slug(ent.ghcid or ent.hc_id.rsplit("/", 1)[-1] if (ent.ghcid or ent.hc_id) else f"entity-{i}")


def type_label(code: str | None) -> str | None:
    """Human label of a custodian type code (``M`` -> ``Museum``)."""
    return custodian_type_codes().get(code) if code else None


def schema_path() -> Path:
    return SCHEMA_ENUM
