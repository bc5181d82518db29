"""Dedup of records (registry rows, LinkML entities) by identity, never by text similarity (SPEC §2, issue 12).

Two records are the same institution when they share an identifier (:func:`identity_keys`): an ISIL, a Wikidata
QID, an ``hc_id``, a GHCID, a GND, VIAF, ROR or ORCID id or a full URI of a LinkML entity, a registration
number (within one country) or a local id (a registry's own id, a LinkML ``id`` such as ``P:001`` whose prefix only
the file's own schema binds: within that file) — these scoped ids only
where they are unique within their file (a value that several rows of one file carry is a parent organisation's or
system's id, not the row's). Records without a shared
identifier are different institutions, however similar their text (rows of a registry that share a long
description but have other names or ISILs are all kept); only records whose whole text is identical after
normalisation *and* whose values (``meta.extra``: every mapped and unmapped column) are all equal (the same row
twice) are merged without an identifier: rows that differ in any value, shown in the text or not, are never merged.

Survivors (greedy, deterministic): records are visited by *higher data tier, then more identifiers, then longer
text, then smaller id*; the visited record, if not yet absorbed, is kept and absorbs every not-yet-decided record
that shares a key with it, its key set growing with the absorbed keys (so A~B by ISIL and B~C by QID end in one
institution, each merge logged with the key that matched). The kept record keeps the absorbed record's facts that
differ from its own in ``meta.extra["merged:<slot>"]`` (``; ``-joined when several), gets one ``meta.duplicates``
entry per absorbed chunk, and every absorbed chunk has one :class:`~heritage_pipeline.dedup.minhash.DedupRecord`
(reason ``same identity (<key>)``).

A record split over several chunks (a long LinkML entity) is one unit (its chunks share ``meta.source_id``): a unit
is kept or absorbed whole, and the chunks of one unit never absorb each other.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

from heritage_pipeline.core.config import DedupConfig
from heritage_pipeline.core.models import TIER_PRIORITY, Chunk
from heritage_pipeline.enrich.quality import composite_score

from .minhash import REASON_EXACT, DedupRecord, content_hash, dedup_chunks

RECORD_SOURCES = ("csv_registry", "yaml_instance")
REASON_IDENTITY = "same identity"
SCOPED_PREFIXES = ("local:", "reg:")  # identity keys valid only where unique within one file (see identity_dedup)
_QID = re.compile(r"(Q[1-9]\d*)$")
# meta.extra slot -> key prefix; values are `; `-joined lists
_GLOBAL_SLOTS = {"slot:isil_code": "isil", "slot:gnd_id": "gnd", "slot:viaf_id": "viaf", "slot:dbs_id": "dbs"}


def is_record(chunk: Chunk) -> bool:
    """A registry row or a LinkML entity chunk (deduplicated by identity, not by MinHash)."""
    return chunk.meta.source_type in RECORD_SOURCES


def _values(v: str | None) -> list[str]:
    return [p.strip() for p in (v or "").split(";") if p.strip()]


def identity_keys(chunk: Chunk) -> set[str]:
    """The identity keys of a record chunk, as ``scheme:value`` strings (case-folded value for ISIL-like codes).

    Global: ``isil:``, ``wd:`` (QID from an id or a Wikidata URL), ``hc:``, ``ghcid:``, ``gnd:``, ``viaf:``, ``dbs:``
    and ``id:<scheme>:`` for any other ``identifier:<scheme>`` of a LinkML entity. Scoped: ``reg:<country>:`` for a
    registration number, ``local:<doc_id>:local_id:`` for a registry's own local id and ``local:<doc_id>:<scheme>:`` for a
    LinkML identifier that is not global (:func:`_identifier_key`: an ``id`` such as ``P:001``); ``uri:`` for a
    LinkML identifier that is a full URI.
    """
    m, extra = chunk.meta, chunk.meta.extra or {}
    keys: set[str] = set()
    for slot, prefix in _GLOBAL_SLOTS.items():
        keys.update(f"{prefix}:{v.casefold()}" for v in _values(extra.get(slot)))
    for v in _values(extra.get("slot:wikidata_id")) + _values(extra.get("identifier:wikidata")):
        q = _QID.search(v)
        if q:
            keys.add(f"wd:{q.group(1)}")
    if m.hc_id:
        keys.add(f"hc:{m.hc_id}")
    if m.ghcid:
        keys.add(f"ghcid:{m.ghcid}")
    for k, v in extra.items():
        if k.startswith("identifier:"):
            scheme = k.split(":", 1)[1].casefold()
            if scheme == "wikidata":
                continue
            for val in _values(v):
                keys.add(_identifier_key(scheme, val, m.doc_id))
    for v in _values(extra.get("slot:registration_number")):
        keys.add(f"reg:{m.country_code or '?'}:{v}")
    for v in _values(extra.get("slot:local_id")):
        keys.add(f"local:{m.doc_id}:local_id:{v}")
    return keys


_URI = re.compile(r"^(?:https?://\S+|urn:\S+)$", re.I)
_CURIE = re.compile(r"^([A-Za-z][\w.\-]*):(\S+)$")
# identifier schemes (an identifier slot, an ``identifier_scheme`` or a CURIE prefix, case-folded) of registries that
# are global: the same value names the same institution in any file. Any other scheme (an ``id`` slot, a project's
# own ``P:001``) identifies within its own dataset only.
_GLOBAL_SCHEMES = {"isil": "isil", "hc_id": "hc", "ghcid": "ghcid", "gnd": "gnd", "viaf": "viaf", "ror": "ror",
                   "orcid": "orcid", "wikidata": "wd", "wd": "wd"}


def _identifier_key(scheme: str, val: str, doc_id: str) -> str:
    """Identity key of one LinkML ``identifier:<scheme>`` value (``scheme`` case-folded).

    Global: a registry scheme of :data:`_GLOBAL_SCHEMES` (``isil:``, ``hc:``, ``ror:``...), a CURIE whose prefix is
    one (``id: ISIL:NL-AsdRM`` -> ``isil:nl-asdrm``), a full URI (``uri:<value>``). Anything else, e.g. an ``id``
    slot ``P:001`` (a CURIE whose prefix the file's own schema binds, or a bare local value), is unique only within
    its dataset, taken as its file: ``local:<doc_id>:<scheme>:<value>`` (trial defect 1: two projects' ``P:001``
    were one person)."""
    prefix = _GLOBAL_SCHEMES.get(scheme)
    if prefix is None and not _URI.match(val):
        curie = _CURIE.match(val)
        if curie and curie.group(1).casefold() in _GLOBAL_SCHEMES:
            prefix, val = _GLOBAL_SCHEMES[curie.group(1).casefold()], curie.group(2)
    if prefix == "wd":
        q = _QID.search(val)
        return f"wd:{q.group(1)}" if q else f"local:{doc_id}:{scheme}:{val}"
    if prefix:
        return f"{prefix}:{val.casefold() if prefix in ('isil', 'gnd', 'viaf', 'ror', 'orcid') else val}"
    if _URI.match(val):
        return f"uri:{val}"
    return f"local:{doc_id}:{scheme}:{val}"


def key_label(key: str, doc_id: str | None = None) -> str:
    """Human wording of an identity key for a dedup reason.

    Args:
        key: an identity key (:func:`identity_keys`).
        doc_id: the file of a scoped key (``local:<doc_id>:...``), to leave its path out of the wording.
    Returns:
        ``isil:nl-hana``, ``wd:Q5``, ``ror:...`` as they are; ``uri:<u>`` as ``<u>``; ``id:<scheme>:<v>`` as
        ``<scheme>:<v>``; a local id as ``local id <v> (same file)`` (``<scheme> <v> (same file)`` for a LinkML
        identifier slot); a registration number as ``registration number <n> (<country>)``.
    """
    if key.startswith("uri:"):
        return key[4:]
    if key.startswith("local:") and doc_id and key.startswith(f"local:{doc_id}:"):
        scheme, _, val = key[len(f"local:{doc_id}:"):].partition(":")
        kind = "id" if scheme in ("id", "local_id") else scheme
        return f"local {kind} {val} (same file)"
    if key.startswith("reg:"):
        _, country, num = key.split(":", 2)
        return f"registration number {num} ({country})"
    return key


@dataclass
class IdentityStats:
    """What :func:`identity_dedup` did: records in, units, merges by identity and by identical text."""

    records_in: int = 0
    units: int = 0
    with_identity: int = 0
    merged_identity: int = 0
    merged_exact: int = 0
    keys: dict[str, int] = field(default_factory=dict)  # key scheme -> merges it caused
    ambiguous_keys: int = 0  # scoped ids (local id, registration number) repeated inside one file: not used


def _unit_content_hash(unit: list[Chunk]) -> str:
    """Hash of a record unit's text *and* every value it carries (``meta.extra``: mapped slots, unmapped columns,
    except the ``merged:`` facts dedup itself adds): two rows whose text is identical but that differ in any value
    (a column left out of the text, e.g. a long code column) are different records, never merged as exact copies."""
    values = sorted((k, str(v)) for c in unit for k, v in (c.meta.extra or {}).items() if not k.startswith("merged:"))
    return content_hash("\n".join(c.text for c in unit) + "\n\x00" + "\n".join(f"{k}\x01{v}" for k, v in values))


def _unit_key(c: Chunk) -> str:
    return f"{c.meta.doc_id}\x00{c.meta.source_id or c.id}"


def identity_dedup(chunks: list[Chunk], stats: IdentityStats | None = None) -> tuple[list[Chunk], list[DedupRecord]]:
    """Merge record chunks of one institution (module docstring). Returns (kept chunks in input order, log).

    Args:
        chunks: record chunks (registry rows, LinkML entities); other chunks are a caller error.
        stats: filled in place when given.
    Raises:
        ValueError: a chunk is not a record, or two chunks have the same id.
    """
    stats = stats if stats is not None else IdentityStats()
    stats.records_in = len(chunks)
    if len({c.id for c in chunks}) != len(chunks):
        raise ValueError("identity_dedup: chunk ids are not unique")
    bad = [c.id for c in chunks if not is_record(c)]
    if bad:
        raise ValueError(f"identity_dedup: {len(bad)} chunk(s) are not records, e.g. {bad[:3]}")
    units: dict[str, list[int]] = {}
    for i, c in enumerate(chunks):
        units.setdefault(_unit_key(c), []).append(i)
    names = list(units)
    stats.units = len(names)
    ukeys = {u: set().union(*(identity_keys(chunks[i]) for i in units[u])) for u in names}
    # A scoped id (a registry's local id, a registration number) that several records of one file carry is not a
    # record identity there (e.g. a library system's LIBID on each of its 88 outlets): it merges nothing.
    per_file: Counter[tuple[str, str]] = Counter(
        (k, chunks[units[u][0]].meta.doc_id) for u in names for k in ukeys[u] if k.startswith(SCOPED_PREFIXES))
    ambiguous = {k for (k, _), n in per_file.items() if n > 1}
    stats.ambiguous_keys = len(ambiguous)
    if ambiguous:
        ukeys = {u: ks - ambiguous for u, ks in ukeys.items()}
    uhash = {u: _unit_content_hash([chunks[i] for i in units[u]]) for u in names}
    stats.with_identity = sum(1 for u in names if ukeys[u])
    by_key: dict[str, list[str]] = {}
    for u in names:
        for k in ukeys[u]:
            by_key.setdefault(k, []).append(u)
        if not ukeys[u]:
            by_key.setdefault(f"text:{uhash[u]}", []).append(u)

    def rank(u: str) -> tuple:
        first = chunks[units[u][0]]
        return (-TIER_PRIORITY.get(first.meta.data_tier, 0), -len(ukeys[u]),
                -sum(len(chunks[i].text) for i in units[u]), first.id)

    decided: dict[str, str] = {}
    log: list[DedupRecord] = []
    drop: set[int] = set()
    for u in sorted(names, key=rank):
        if u in decided:
            continue
        decided[u] = u
        keep = chunks[units[u][0]]
        own = set(ukeys[u]) or {f"text:{uhash[u]}"}
        # keys in sorted order (popped from the end: alphabetical): a set's order changes with the process's string
        # hashing, and with it the key a merge was logged with and the order of duplicates / merged:<slot> values
        frontier = sorted(own, reverse=True)
        while frontier:
            key = frontier.pop()
            for other in sorted(by_key.get(key, []), key=rank):
                if other in decided:
                    continue
                if key.startswith("text:") and ukeys[other]:
                    continue  # identical text is a merge reason only between records without identifiers
                decided[other] = u
                reason = REASON_EXACT if key.startswith("text:") else \
                    f"{REASON_IDENTITY} ({key_label(key, keep.meta.doc_id)})"
                if key.startswith("text:"):
                    stats.merged_exact += 1
                else:
                    stats.merged_identity += 1
                    scheme = key.split(":", 1)[0]
                    stats.keys[scheme] = stats.keys.get(scheme, 0) + 1
                _absorb(keep, [chunks[i] for i in units[other]], reason, log)
                drop.update(units[other])
                new = ukeys[other] - own
                own |= new
                frontier.extend(sorted(new, reverse=True))
    kept = [c for i, c in enumerate(chunks) if i not in drop]
    assert len(kept) + len(log) == len(chunks)
    return kept, log


def _absorb(keep: Chunk, absorbed: list[Chunk], reason: str, log: list[DedupRecord]) -> None:
    """Record the merge of ``absorbed`` (one unit) into ``keep``: log rows, ``meta.duplicates`` and the absorbed
    record's differing facts in ``keep.meta.extra["merged:<slot>"]``."""
    extra = keep.meta.extra
    for d in absorbed:
        keep.meta.duplicates.append({"id": d.id, "source": d.meta.source_path, "reason": reason, "similarity": ""})
        log.append(DedupRecord(d.id, d.meta.source_path, keep.id, keep.meta.source_path, None, reason))
        for k, v in (d.meta.extra or {}).items():
            if not k.startswith(("slot:", "identifier:")) or not v:
                continue
            slot = k.split(":", 1)[1] if k.startswith("slot:") else k
            if v == extra.get(k):
                continue
            mk = f"merged:{slot}"
            have = _values(extra.get(mk))
            if v not in have:
                extra[mk] = "; ".join(have + [v])
        for field_name in ("settlement", "country_code", "custodian_type", "hc_id", "ghcid"):
            if getattr(keep.meta, field_name) is None and getattr(d.meta, field_name) is not None:
                setattr(keep.meta, field_name, getattr(d.meta, field_name))


def dedup_records_and_prose(chunks: list[Chunk], cfg: DedupConfig, *, min_tokens: int = 300, max_tokens: int = 1200,
                            identity_stats: IdentityStats | None = None) -> tuple[list[Chunk], list[DedupRecord]]:
    """The dedup stage: records (:func:`is_record`) by identity (:func:`identity_dedup`), everything else by exact
    hash + MinHash (:func:`heritage_pipeline.dedup.minhash.dedup_chunks`). Kept records get ``quality.dup_penalty``
    0 and their composite ``quality.score`` like prose does. Returns (kept chunks in input order, log: prose drops
    then record merges).

    Args:
        chunks: every chunk of the run (ids unique).
        cfg: the MinHash settings (prose only).
        min_tokens, max_tokens: useful-length band of the quality score (cl100k tokens).
    """
    records = [c for c in chunks if is_record(c)]
    prose = [c for c in chunks if not is_record(c)]
    kept_p, log_p = dedup_chunks(prose, cfg, min_tokens=min_tokens, max_tokens=max_tokens) if prose else ([], [])
    kept_r, log_r = identity_dedup(records, identity_stats) if records else ([], [])
    for c in kept_r:
        c.quality.dup_penalty = 0.0
        c.quality.score = 0.0 if c.quality.degenerate else composite_score(
            c.quality.readability, c.meta.len_tokens, min_tokens, 0.0, max_tokens)
    keep_ids = {c.id for c in kept_p} | {c.id for c in kept_r}
    return [c for c in chunks if c.id in keep_ids], log_p + log_r
