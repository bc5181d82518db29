"""The pipeline hook of the heritage mentions: ``meta.mentioned_entities``, ``entity_types``,
``entities["HERITAGE"]`` on every chunk (one mention context per conversation / document; see
``docs/heritage-mentions.md``).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Iterable

from heritage_pipeline.sources.linkml import custodian_type_codes

from .gazetteer import Mention, default_gazetteer
from .mentions import MentionContext, find_mentions
from .names import QID_RE, keyword_type

if TYPE_CHECKING:
    from .gazetteer import Gazetteer


# Persistent identifiers of organisations, datasets and works written as their resolvable URIs (or the ``doi:`` /
# ``ark:`` forms): a chunk holding one carries an identifier even when its institution is not in the gazetteer
# (a dataset page's ``Koninklijke Bibliotheek (https://ror.org/02w4jbg70)``). Each pattern is its scheme's own id
# syntax: ROR (0 + 6 base-32 characters + 2 check digits), Wikidata Q-ids, ISNI (16 characters), VIAF, GND,
# ORCID, DOI, Handle and ARK.
PERSISTENT_ID_RE = re.compile(
    r"\bror\.org/0[a-z0-9]{6}\d{2}\b"
    r"|\bwikidata\.org/(?:wiki|entity)/Q\d+\b"
    r"|\bisni\.org/isni/\d{15}[\dX]\b"
    r"|\bviaf\.org/viaf/\d+\b"
    r"|\bd-nb\.info/gnd/[\dX-]+\b"
    r"|\borcid\.org/\d{4}-\d{4}-\d{4}-\d{3}[\dX]\b"
    r"|(?:\bdoi\.org/|\bdoi:\s?)10\.\d{4,9}/\S+"
    r"|\bhdl\.handle\.net/\d+(?:\.\d+)*/\S+"
    r"|\bark:/?\d{5}/\S+", re.I)


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
            text = mention_text(c)
            mentions = find_mentions(text, gaz, ctx) if text else []
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
            if any(m.kind == "identifier" for m in mentions) or (text and PERSISTENT_ID_RE.search(text)):
                c.meta.has_identifiers = True
            if len(names) >= 2:
                c.meta.has_relationships = True
    return chunks


# registry-row slots whose values are free text that may name other institutions (the other slots are the row's
# own name, type, place and identifiers: its own entity covers them)
FREE_TEXT_SLOTS = ("description", "provenance_note", "alternative_label", "aggregator_membership")


def mention_text(chunk) -> str:
    """The text searched for mentions: the chunk text, except for a mapped registry row, where only its free-text
    ``slot: value`` lines (:data:`FREE_TEXT_SLOTS`) are searched (``""`` when it has none). The row's own name,
    place and identifiers are its own entity (:func:`_own_entity`); searching them found the row itself again, or a
    place name as an institution, at a cost that dominated ``chunk`` on large registries."""
    m = chunk.meta
    if m.source_type != "csv_registry" or not any(k.startswith("slot:") for k in (m.extra or {})):
        return chunk.text
    return "\n".join(line for line in chunk.text.split("\n") if line.split(": ", 1)[0] in FREE_TEXT_SLOTS)


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
    ids += [f"wd:{wd}"] if QID_RE.match(wd) else []
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
