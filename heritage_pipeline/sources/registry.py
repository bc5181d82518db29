"""CSV/TSV registries -> one section (one chunk) per row, columns mapped to LinkML slots.

The file is decoded with its real encoding by discovery (UTF-8 with or without BOM, CP1252/Latin-1 detected, see
:func:`heritage_pipeline.core.text.decode_bytes`). The delimiter is sniffed among ``, ; TAB |``
(:func:`sniff_delimiter`). Tab-separated files are read without quote processing (Wikidata exports contain labels
such as ``\\"Jan van Arkel\\`` that a quoting reader would merge with the following rows); in other files a record
whose unbalanced quote runs over several lines (:func:`_swallowed_rows`) is reported and that one line is re-read
without quote processing, so it cannot swallow the rest of the file.

The mapping: a configured one from ``configs/csv_mappings.yaml`` wins (the first mapping whose ``match`` columns
are all present; ``registry_type`` is its name); otherwise the columns are mapped from the header confirmed by
the values, and a table none of whose columns maps to a name or identifier slot is skipped as "not a registry"
(:data:`ENTITY_SLOTS`) (:mod:`heritage_pipeline.sources.columns`; ``registry_type`` ``inferred``, or ``inferred_headerless``
for a file whose first row is data). A one-column file of identifiers (ISIL, Wikidata, GND), with or without a
header line, is a registry of type ``identifier_list``: one chunk per code. The mapping used and its evidence are
in the document's ``meta`` (``column_mapping``, ``mapping_evidence``) and in the run summary. Unmapped columns go
to ``meta.extra`` under their own name, mapped ones as ``slot:<slot>``. Chunk text is ``slot: value`` lines
(:func:`record_text`: name, type, place, identifiers first), then the unmapped columns as ``column: value`` lines in
header order (a museum's ``Summary``, a library's ``area``: retrieval needs them); long code columns (mapped code
slots, and unmapped columns of codes: :func:`~heritage_pipeline.sources.columns.code_columns`, listed in
``meta["columns_out_of_text"]``) stay in ``meta.extra`` only. A website or e-mail cell that is not a URL / address
(``See footnote below``) is not claimed as the slot: it stays under its column name.
``data_tier``: the first matching ``files`` rule of the mapping file, else the configured mapping's tier (e.g.
``TIER_2_VERIFIED`` for the Wikidata export, as the schema's ``DataTierEnum`` classes Wikidata), else
``defaults.data_tier`` (``TIER_1_AUTHORITATIVE``, SPEC §2). ``custodian_type``: the GLAMORCUBESFIXPHDNT code of the row's type column (its
value stays verbatim in the text and in ``meta.extra["slot:custodian_type"]``, e.g. ``custodian_type: 公共図書館(市立)
(23)`` with ``meta.custodian_type`` ``L``: the text shows the source, the metadata its code), else the type words of
its name (:func:`~heritage_pipeline.sources.columns.type_code`; never from a place), else, for a
row with no type value of its own, the registry default (:func:`registry_type_default`: configured, or the type at
least ``defaults.type_agreement`` of the typed rows share); type values that name no code are counted in
``meta.custodian_type_unrecognised``. ``country_code``: the row's ISIL prefix, else its country column, else the shape of its
address (:func:`postal_country`: a US ZIP code with a USPS state code, a postcode format of one country), never a
place name; rows without any take the registry's country when at least ``defaults.country_agreement`` of all rows
show it (:func:`registry_country_default`). A row's anchor (its entity) is its name; a row without a name has none.
Ragged rows (surplus cells with values, or fewer cells than the header with one failing its column's pattern; trailing
empty fields left out are an export habit, not ragged: :func:`_ragged`) keep the cells they have, placed by position
(missing cells are empty, surplus cells become ``column_<n>``); a cell of a patterned slot (ISIL, URL, e-mail...) failing its
check there stays under its column name; the cells not placed in a slot are shown in the row's text too, so text
and ``meta.extra`` hold the same values, and one warning per file names the line
numbers (grouped ranges, :func:`ragged_summary`: ``doc.meta["ragged_rows"]``, the log and the run summary). A row the reader
cannot parse is reported as a problem (quarantined by the caller as ``<file>#row N (line L)``); the other rows
proceed. Each row's span is its character range in the decoded file, line ending excluded.
"""

from __future__ import annotations

import csv
import fnmatch
import logging
import re
from collections import Counter
from pathlib import Path, PurePath
from dataclasses import asdict
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field

from heritage_pipeline.core.config import CONFIG_DIR
from heritage_pipeline.core.structure import DerivedTextBuilder, NotInputData, ParsedDocument, ParseError, Section

from .columns import (CODE_SLOTS, IDENTIFIER_SLOTS, SAMPLE_ROWS, VALUE_CHECKS, ColumnEvidence, InferredMapping,
                      _fold, code_columns, country_names, infer_mapping, looks_headerless, slot_sort_key, type_code)

DEFAULT_MAPPINGS = CONFIG_DIR / "csv_mappings.yaml"
# A table is a registry (of institutions) when some column names them: a name or an identifier. A CSV with none
# (a stock-price table: Date, Open, High, Low, Close) would become one nameless, identifier-less chunk per row that no
# question about an institution can retrieve, crowding the index and the record tiers. Such a file is *skipped* with
# the reason (NotInputData), not quarantined: it is readable, just not input for this source type, and it is never
# read as a table document behind the user's back (csv_registry promises one chunk per institution, SPEC §2). A
# configured mapping (configs/csv_mappings.yaml) always wins, so a team that does want such rows configures them.
ENTITY_SLOTS = frozenset({"preferred_label", "alternative_label"}) | IDENTIFIER_SLOTS
# slots whose values have a pattern of their own (checked on ragged rows, where cells may sit in the wrong column)
_PATTERNED_SLOTS = IDENTIFIER_SLOTS | {"website", "email", "telephone", "postal_code", "latitude", "longitude",
                                       "coordinates", "registration_date"}
# slots whose value is checked on every row: a cell that is not a URL / e-mail address ("See footnote below") stays
# under its column name instead of being claimed as the website
_CELL_CHECKED_SLOTS = frozenset({"website", "email"})
_log = logging.getLogger(__name__)
_LINE_END = re.compile(r"\r\n|\r|\n")
_ISIL_COUNTRY = re.compile(r"^([A-Z]{2})-")


class RegistryMapping(BaseModel):
    model_config = ConfigDict(extra="forbid")
    description: str = ""
    match: list[str] = Field(min_length=1)
    data_tier: str = "TIER_1_AUTHORITATIVE"
    custodian_type: str | None = None  # registry-level default type code for rows without a type of their own
    columns: dict[str, str]


class RegistryDefaults(BaseModel):
    """Registry-wide defaults (``defaults:`` in ``csv_mappings.yaml``)."""

    model_config = ConfigDict(extra="forbid")
    data_tier: str = "TIER_1_AUTHORITATIVE"  # SPEC §2: registries are authoritative unless configured otherwise
    custodian_type: str | None = None
    # the inferred registry default: the type at least this share of the typed rows agree on (0-1)
    type_agreement: float = Field(default=0.9, ge=0.5, le=1.0)
    # rows without a country of their own take the country at least this share of all rows show (0-1)
    country_agreement: float = Field(default=0.9, ge=0.5, le=1.0)


class RegistryFileRule(BaseModel):
    """Per-file overrides: the first rule whose glob ``pattern`` matches the data-relative path applies."""

    model_config = ConfigDict(extra="forbid")
    pattern: str
    data_tier: str | None = None
    custodian_type: str | None = None


class MappingsFile(BaseModel):
    model_config = ConfigDict(extra="forbid")
    version: int = 1
    defaults: RegistryDefaults = RegistryDefaults()
    files: list[RegistryFileRule] = Field(default_factory=list)
    mappings: dict[str, RegistryMapping] = Field(default_factory=dict)

    def for_file(self, source_path: str, mapping: RegistryMapping | None) -> tuple[str, str | None]:
        """(data tier, default custodian type or None) for a data-relative path: the first matching ``files`` rule,
        else the file's configured mapping entry, else ``defaults``."""
        rule = next((r for r in self.files if fnmatch.fnmatch(source_path, r.pattern)), None)
        tier = (rule.data_tier if rule else None) or (mapping.data_tier if mapping else None) or self.defaults.data_tier
        ctype = (rule.custodian_type if rule else None) or (mapping.custodian_type if mapping else None) \
            or self.defaults.custodian_type
        return tier, ctype


def load_mappings_file(path: str | Path | None = None) -> MappingsFile:
    """Load ``configs/csv_mappings.yaml`` (or ``path``) whole: mappings, defaults and per-file rules.

    Raises:
        ValueError: the file is not a valid mapping file (the message names the file).
    """
    path = Path(path) if path else DEFAULT_MAPPINGS
    if not path.exists():
        return MappingsFile()
    try:
        return MappingsFile.model_validate(yaml.safe_load(path.read_text(encoding="utf-8")) or {})
    except Exception as exc:
        raise ValueError(f"{path}: invalid registry mapping file: {exc}") from None


def load_mappings(path: str | Path | None = None) -> dict[str, RegistryMapping]:
    """Load the column -> slot mappings (default ``configs/csv_mappings.yaml``); ValueError names the file."""
    return load_mappings_file(path).mappings


class _LineReader:
    """Feeds lines to ``csv.reader`` while tracking the offset of the next unread character."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def __iter__(self) -> "_LineReader":
        return self

    def __next__(self) -> str:
        if self.pos >= len(self.text):
            raise StopIteration
        m = _LINE_END.search(self.text, self.pos)
        end = m.end() if m else len(self.text)
        line = self.text[self.pos : end]
        self.pos = end
        return line


DELIMITERS = ",;\t|"


def sniff_delimiter(text: str, sample_lines: int = 50) -> str:
    """The delimiter among ``, ; TAB |`` under which the first ``sample_lines`` non-blank lines split most
    consistently: the share of rows with as many fields as the header (ragged rows lower it), then the number of
    header fields; a delimiter that leaves the header in one field never wins. Falls back to ``,``.

    Written here instead of ``csv.Sniffer``, which guesses from character frequencies and picks the wrong
    delimiter on registries whose values contain commas (``"Amsterdam, NL"``) or on files of a single row.
    """
    lines = [ln for ln in text.splitlines()[: sample_lines * 2] if ln.strip()][:sample_lines]
    best, best_score = ",", (-1.0, 0)
    for d in DELIMITERS:
        quoting = csv.QUOTE_NONE if d == "\t" else csv.QUOTE_MINIMAL
        try:
            counts = [len(r) for r in csv.reader(lines, delimiter=d, quoting=quoting, strict=False)]
        except csv.Error:
            continue
        if not counts or counts[0] < 2:
            continue
        score = (sum(c == counts[0] for c in counts) / len(counts), counts[0])
        if score > best_score:
            best, best_score = d, score
    return best


def parse_registry(text: str, *, doc_id: str, source_path: str, lang: str,
                   mappings: dict[str, RegistryMapping] | MappingsFile | None = None) -> tuple[ParsedDocument, list[tuple[str, str]]]:
    """Parse a registry file into one standalone section per row (module docstring). Returns (document, problems).

    Args:
        text: the decoded file.
        doc_id, source_path, lang: identity of the document (``source_path`` selects the ``files`` rules).
        mappings: the configured mappings (a dict, or the whole :class:`MappingsFile`); default the project's file.
    Returns:
        The document (``meta``: ``registry_type``, ``delimiter``, ``columns``, ``column_mapping``,
        ``mapping_evidence``, ``headerless``, ``rows``/``rows_chunked``/``rows_left_out``, ``custodian_type_default``,
        ``country_code_default``, ``ragged_rows`` when some rows' field count differs from the header's)
        and the problems (location, reason) of rows that could not be read.
    Raises:
        ParseError: empty file, or a single column that is not a list of identifiers.
        NotInputData: no configured mapping and no column maps to a name or identifier slot (:data:`ENTITY_SLOTS`):
            "not a registry" (the file is skipped with that reason).
    """
    if mappings is None:
        settings = load_mappings_file()
    elif isinstance(mappings, MappingsFile):
        settings = mappings
    else:
        settings = MappingsFile(mappings=mappings)
    delimiter = sniff_delimiter(text)
    quoting = csv.QUOTE_NONE if delimiter == "\t" else csv.QUOTE_MINIMAL
    sample = list(csv.reader([ln for ln in text.splitlines()[: SAMPLE_ROWS + 1]], delimiter=delimiter,
                             quoting=quoting, strict=False))
    if not sample or not any(c.strip() for r in sample for c in r):
        raise ParseError("empty registry: no header row")
    first = [h.strip() for h in sample[0]]
    ident_slot = None
    if len(first) < 2:
        ident_slot = _identifier_list_slot([r[0].strip() for r in sample if r and r[0].strip()])
        if ident_slot is None:
            raise ParseError(f"header has {len(first)} column(s) with delimiter {delimiter!r}: not a delimited "
                             "registry, and its lines are not a list of identifiers (ISIL, Wikidata, GND)")
    lines = _LineReader(text)
    reader = csv.reader(lines, delimiter=delimiter, quoting=quoting, strict=False)
    name, mapping = _pick_mapping(first, settings.mappings)
    inferred: InferredMapping | None = None
    if ident_slot is not None:
        headerless = VALUE_CHECKS[ident_slot](first[0]) if first else True
        header = [first[0] if not headerless else "column_1"]
        columns = {header[0]: ident_slot}
        name = "identifier_list"
        inferred = InferredMapping(columns, [ColumnEvidence(header[0], 0, ident_slot, "identifier list", 0.0, 1.0,
                                                            len(sample))], headerless)
    elif mapping is not None:
        header, headerless, columns = first, False, dict(mapping.columns)
    else:
        headerless = looks_headerless(first, sample[1:])
        header = [f"column_{i + 1}" for i in range(len(first))] if headerless else first
        inferred = infer_mapping(header, sample if headerless else sample[1:], headerless=headerless)
        columns = inferred.columns
        name = "inferred_headerless" if headerless else "inferred"
        if not any(slot in ENTITY_SLOTS for slot in columns.values()):
            raise NotInputData(_not_a_registry_reason(header, columns))
    if not headerless:
        try:
            next(reader)
        except csv.Error as exc:
            raise ParseError(f"header row cannot be parsed: {exc}") from None
    tier, type_default = settings.for_file(source_path, mapping)
    out_of_text = set(code_columns(header, sample if headerless else sample[1:], columns))
    builder = DerivedTextBuilder()
    sections: list[Section] = []
    problems: list[tuple[str, str]] = []
    ragged_lines: list[tuple[int, int]] = []  # (start offset, fields) of rows whose field count differs from the header
    untyped: Counter[str] = Counter()  # type-column values that name no custodian type code (row count per value)
    row_no = 0
    while True:
        start = lines.pos
        try:
            row = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:
            row_no += 1
            problems.append((f"row {row_no} (line {text.count(chr(10), 0, start) + 1})", f"cannot be parsed: {exc}"))
            lines.pos = _line_end(text, start)  # skip the offending line only; the reader resynchronises there
            continue
        end = lines.pos
        row_no += 1
        if quoting != csv.QUOTE_NONE and _swallowed_rows(text[start:end], delimiter):
            # an unbalanced quote swallowed the following lines: report it and read that one line without quoting
            line_end = _line_end(text, start)
            problems.append((f"row {row_no} (line {text.count(chr(10), 0, start) + 1})",
                             f"unbalanced quote (the record ran over {text.count(chr(10), start, end)} lines); the "
                             "line was read without quote processing"))
            row = next(csv.reader([text[start:line_end].rstrip("\r\n")], delimiter=delimiter, quoting=csv.QUOTE_NONE))
            end = line_end
            lines.pos = line_end
        if not any(c.strip() for c in row):
            continue
        if ident_slot is not None and not VALUE_CHECKS[ident_slot](row[0].strip()):
            problems.append((f"row {row_no} (line {text.count(chr(10), 0, start) + 1})",
                             f"not a {ident_slot} in a list of identifiers: {row[0].strip()[:60]!r}"))
            continue
        ragged = _ragged(row, header, columns)
        if ragged:
            ragged_lines.append((start, len(row)))  # (offsets; line numbers counted once at the end)
        slots, extra = _map_row(header, row, columns, ragged=ragged)
        # unmapped columns follow the mapped slots as `column: value` lines (retrieval finds a museum by its
        # Summary), except long code columns; on a ragged row every unplaced cell is shown, so the text holds what
        # the metadata holds
        shown = extra if ragged else {k: v for k, v in extra.items() if k not in out_of_text}
        body = "\n".join(filter(None, [record_text(slots), *(f"{k}: {v}" for k, v in shown.items())]))
        if not body:
            body = "\n".join(f"{k}: {v}" for k, v in extra.items())
        raw_end = _trim_end(text, start, end)
        bi = builder.add("registry_row", body, start, raw_end)
        if bi is None:
            continue
        label = slots.get("preferred_label", "")
        isil = slots.get("isil_code", "")
        m = _ISIL_COUNTRY.match(isil)
        country = m.group(1) if m else country_names().get(_fold(slots.get("country", ""))) or postal_country(slots)
        row_type = type_code(slots.get("custodian_type", "")) or type_code(label)  # never from a place name
        if row_type is None and slots.get("custodian_type"):  # a type of its own that names no code: no default
            untyped[slots["custodian_type"]] += 1
        sections.append(
            Section(
                anchors=[label] if label else [],  # a row without a name has no entity of its own
                level=1,
                first=bi,
                last=bi + 1,
                meta={
                    "source_id": f"{doc_id}#row-{row_no}",
                    "registry_type": name,
                    "row_index": row_no,
                    "data_tier": tier,
                    "primary_class": "custodian",
                    "custodian_type": row_type,
                    "settlement": slots.get("settlement") or None,
                    "country_code": country,
                    "has_identifiers": any(slots.get(s) for s in IDENTIFIER_SLOTS),
                    "extra": {**{f"slot:{k}": v for k, v in slots.items()}, **extra},
                },
                standalone=True,
                key=f"row-{row_no:06d}",
            )
        )
    default, default_source = registry_type_default(
        [s.meta["custodian_type"] for s in sections], type_default, settings.defaults.type_agreement,
        file_name=PurePath(source_path).name)
    if default:
        for sec in sections:
            # the default is for rows without a type of their own: a row whose type column says something the type
            # words do not know ("アーカイブズ", "Sonstige") keeps no code rather than one its own text contradicts
            if sec.meta["custodian_type"] is None and not sec.meta["extra"].get("slot:custodian_type"):
                sec.meta["custodian_type"] = default
    country_default, country_source = registry_country_default(
        [s.meta["country_code"] for s in sections], settings.defaults.country_agreement)
    if country_default:
        for sec in sections:
            if sec.meta["country_code"] is None:
                sec.meta["country_code"] = country_default
    meta = {"registry_type": name, "delimiter": delimiter, "columns": header, "column_mapping": columns,
            "headerless": headerless, "data_tier": tier, "custodian_type_default": default,
            "custodian_type_default_source": default_source,
            "country_code_default": country_default, "country_code_default_source": country_source,
            "custodian_type_unrecognised": dict(untyped.most_common(10)),
            "columns_out_of_text": [h for h in header if h in out_of_text],
            "rows": row_no, "rows_chunked": len(sections), "rows_left_out": row_no - len(sections) - len(problems)}
    if inferred is not None:
        meta["mapping_evidence"] = [asdict(e) for e in inferred.evidence]
    if ragged_lines:
        numbered, line, pos = [], 1, 0
        for start, n_fields in ragged_lines:  # one pass over the text, however many rows are ragged
            line += text.count("\n", pos, start)
            pos = start
            numbered.append((line, n_fields))
        meta["ragged_rows"] = ragged_summary(numbered, len(header))
        _log.warning("%s: %s", source_path, meta["ragged_rows"]["message"])
    doc = ParsedDocument(doc_id=doc_id, source_path=source_path, source_type="csv_registry", lang=lang,
                         text=builder.text, blocks=builder.blocks, sections=sections, text_is_raw=False, meta=meta)
    return doc, problems


def _not_a_registry_reason(header: list[str], columns: dict[str, str]) -> str:
    """The skip reason of a table whose columns name no institution (see :data:`ENTITY_SLOTS`)."""
    shown = ", ".join(header[:6]) + (", …" if len(header) > 6 else "")
    mapped = ", ".join(f"{c} -> {s}" for c, s in columns.items()) or "none"
    return (f"not a registry: no column maps to a name or identifier slot (columns {shown}; mapped: {mapped}); "
            "add an entry to configs/csv_mappings.yaml to read it as one")


def record_text(slots: dict[str, str]) -> str:
    """A record's text: ``slot: value`` lines in :data:`~heritage_pipeline.sources.columns.SLOT_ORDER` (name,
    type, place, identifiers first); code slots (tax ids, statistical codes) stay out of the text (they are in
    ``meta.extra``)."""
    return "\n".join(f"{slot}: {slots[slot]}" for slot in sorted(slots, key=slot_sort_key) if slot not in CODE_SLOTS)


def registry_type_default(codes: list[str | None], configured: str | None, agreement: float = 0.9, *,
                          file_name: str = "") -> tuple[str | None, str]:
    """The custodian type for rows without one: the configured default, else the type that at least ``agreement``
    (0-1) of the typed rows share (at least 3 typed rows), else the type word of the file's name (``museums.csv``,
    ``Museen_Berlin.tsv``, ``bibliotheken.csv``: what a data team names a list of one kind) when it is also the
    most common type of the typed rows, or no row is typed; ``(None, "none")`` otherwise. A place name is never a type word (:func:`type_code`).

    Args:
        codes: each row's own custodian type code (None for untyped rows).
        configured: the configured default of the file's mapping entry, or None.
        agreement: share (0-1) of typed rows that must agree for an inferred default.
        file_name: the file's name (its stem's words are read; the extension is not).

    Returns:
        (type code or None, where it came from: ``configured`` | ``inferred (<share> of <n> typed rows)`` |
        ``file name (<name>)`` | ``none``).
    """
    if configured:
        return configured, "configured"
    typed = [c for c in codes if c]
    code, source = _agreed_code(typed, len(typed), agreement, "typed rows")
    if code:
        return code, source
    stem = PurePath(file_name).stem if file_name else ""
    words = re.sub(r"(?<=[a-z])(?=[A-Z])", " ", re.sub(r"[_\-.+]+", " ", stem))
    named = type_code(words) if words.strip() else None
    if named and (not typed or Counter(typed).most_common(1)[0][0] == named):
        return named, f"file name ({file_name})"
    return None, "none"


# USPS codes of the 50 states, DC and the inhabited territories (the ISO 3166-2:US subdivision codes). Written out
# here: pycountry, which has them, is not a dependency, and babel (CLDR) has territory names but no subdivisions.
US_STATE_CODES = frozenset(
    "AL AK AZ AR CA CO CT DE FL GA HI ID IL IN IA KS KY LA ME MD MA MI MN MS MO MT NE NV NH NJ NM NY NC ND OH OK OR PA "
    "RI SC SD TN TX UT VT VA WA WV WI WY DC AS GU MP PR VI".split())
_US_ZIP = re.compile(r"^\d{5}(?:-?\d{4})?$")
# postcode shapes that belong to one country only (a bare 4-5 digit code does not: DE, FR, BE, CH... share it)
_POSTCODE_COUNTRIES = ((re.compile(r"^[1-9]\d{3}\s?[A-Z]{2}$"), "NL"),
                       (re.compile(r"^[A-Z]\d[A-Z]\s?\d[A-Z]\d$"), "CA"),
                       (re.compile(r"^[A-Z]{1,2}\d[A-Z\d]?\s?\d[A-Z]{2}$"), "GB"))  # with or without the space


def postal_country(slots: dict[str, str]) -> str | None:
    """The country a row's address proves by its shape, never by a place name: a US ZIP code (``99556``,
    ``99577-7743``) *together with* a USPS state code in the region slot (``AK``) is US; a postcode whose format only
    one country uses is that country (``1012 AB`` NL, ``K1A 0B1`` CA, ``SW1A 1AA`` or ``IG117NB`` GB). None otherwise.

    Args:
        slots: the row's slot values (``postal_code``, ``region``).
    Returns:
        ISO 3166-1 alpha-2 code or None.
    """
    pc = re.sub(r"\s+", " ", slots.get("postal_code", "").strip().upper())  # "W6  7AT" is "W6 7AT"
    if not pc:
        return None
    if _US_ZIP.match(pc) and slots.get("region", "").strip().upper() in US_STATE_CODES:
        return "US"
    return next((cc for rx, cc in _POSTCODE_COUNTRIES if rx.match(pc)), None)


def registry_country_default(codes: list[str | None], agreement: float = 0.9) -> tuple[str | None, str]:
    """The country for rows without evidence of their own: the one that at least ``agreement`` (0-1) of *all* rows
    show by their own evidence (ISIL prefix, country column, postcode shape: :func:`postal_country`), at least 3
    rows; ``(None, "none")`` otherwise. A registry of mixed countries, or one whose rows say nothing, gets none.

    Returns:
        (alpha-2 code or None, ``inferred (<share> of <n> rows)`` | ``none``).
    """
    return _agreed_code([c for c in codes if c], len(codes), agreement, "rows")


def _agreed_code(known: list[str], total: int, agreement: float, unit: str) -> tuple[str | None, str]:
    """The most common of ``known`` codes (at least 3 of them) when its share of ``total`` reaches ``agreement``
    (0-1), with the reason ``inferred (<share> of <total> <unit>)``; ``(None, "none")`` otherwise."""
    if len(known) < 3:
        return None, "none"
    code, n = Counter(known).most_common(1)[0]
    if n / total >= agreement:
        return code, f"inferred ({n / total:.3f} of {total} {unit})"
    return None, "none"


def _identifier_list_slot(values: list[str]) -> str | None:
    """The identifier slot (ISIL, Wikidata, GND) that at least 90% of a one-column file's values match (its first
    line may be a header), else None."""
    body = values[1:] if len(values) > 1 else values
    for slot in ("isil_code", "wikidata_id", "gnd_id"):
        if body and sum(1 for v in body if VALUE_CHECKS[slot](v)) >= 0.9 * len(body):
            return slot
    return None


def _swallowed_rows(record: str, delimiter: str) -> bool:
    """A record that runs over several lines because of an unbalanced quote, not a legitimate multi-line value:
    read strictly, its "closing" quote is followed by text (it was the opening quote of a later field) or never
    comes (end of data). A legitimate quoted value closes right before a delimiter or the line end."""
    body = record.rstrip("\r\n")
    if "\n" not in body and "\r" not in body:
        return False
    try:
        list(csv.reader([body], delimiter=delimiter, strict=True))
    except csv.Error:
        return True
    return False


def _line_end(text: str, pos: int) -> int:
    """Offset just after the line ending of the physical line holding ``pos`` (or the end of the text)."""
    m = _LINE_END.search(text, pos)
    return m.end() if m else len(text)


def _trim_end(text: str, start: int, end: int) -> int:
    while end > start and text[end - 1] in "\r\n":
        end -= 1
    return end


def _pick_mapping(header: list[str], mappings: dict[str, RegistryMapping]) -> tuple[str, RegistryMapping | None]:
    present = set(header)
    for name, m in mappings.items():
        if all(col in present for col in m.match):
            return name, m
    return "unmapped", None


def _ragged(row: list[str], header: list[str], columns: dict[str, str]) -> bool:
    """A row whose cells do not line up with the header: surplus fields that hold a value, or fewer fields with a
    cell that fails the pattern of its column's slot (an ISIL column holding a place: the cells shifted).

    Trailing empty fields left out (``a,b`` under ``name,place,isil``; Wikidata's TSV export omits them) or added
    (``a,b,c,``) are export habits, not shifted rows: the cells present are where the header says.

    Args:
        row: the row's cells.
        header: the header's column names.
        columns: column name -> slot (the file's mapping).

    Returns:
        Whether the row is ragged (warned, and its patterned cells checked by :func:`_map_row`).
    """
    n_header = len(header)
    if any(c.strip() for c in row[n_header:]):
        return True
    if len(row) >= n_header:
        return False
    for i, cell in enumerate(row):
        slot = columns.get(header[i])
        value = cell.strip()
        if value and slot in _PATTERNED_SLOTS and not VALUE_CHECKS[slot](_LINE_END.sub(" ", value)):
            return True
    return False


def ragged_summary(lines: list[tuple[int, int]], n_header: int) -> dict[str, Any]:
    """The file-level warning of ragged rows: ``{"count", "header_fields", "lines", "fields", "message"}``, the line
    numbers (1-based) grouped into ranges (``3-5, 9``) in the message, at most 20 ranges shown.

    Args:
        lines: ``(line number, field count)`` of each ragged row, in file order.
        n_header: the header's field count.
    """
    nums = [ln for ln, _ in lines]
    ranges: list[str] = []
    for ln in nums:
        if ranges and ranges[-1].split("-")[-1] == str(ln - 1):
            ranges[-1] = f"{ranges[-1].split('-')[0]}-{ln}"
        else:
            ranges.append(str(ln))
    fields = Counter(n for _, n in lines)
    shown = ", ".join(ranges[:20]) + (f", … ({len(ranges) - 20} more ranges)" if len(ranges) > 20 else "")
    counts = ", ".join(f"{k} fields: {v}" for k, v in sorted(fields.items()))
    message = (f"{len(lines)} row{'s' if len(lines) != 1 else ''} with a field count other than the header's "
               f"{n_header} ({counts}) at line{'s' if len(lines) != 1 else ''} {shown}; kept, cells placed by "
               "position (missing cells empty; surplus cells, and identifier cells failing their pattern, shown under "
               "their column name)")
    return {"count": len(lines), "header_fields": n_header, "lines": nums[:1000],
            "fields": {str(k): v for k, v in sorted(fields.items())}, "message": message}


def _map_row(header: list[str], row: list[str], columns: dict[str, str], *,
             ragged: bool = False) -> tuple[dict[str, str], dict[str, str]]:
    """Cells -> (slot values, other values by column name). On a ragged row (cells shifted against the header) a
    cell of an identifier or strictly patterned slot (ISIL, Wikidata, e-mail, URL...) whose value fails that slot's
    check is not taken as the slot: it stays under its column name, so ``isil_code: C`` is never claimed."""
    slots: dict[str, str] = {}
    extra: dict[str, str] = {}
    for i, cell in enumerate(row):
        value = _LINE_END.sub(" ", cell.strip())  # a multi-line value stays one `slot: value` line
        col = header[i] if i < len(header) and header[i] else f"column_{i + 1}"
        if not value:
            continue
        slot = columns.get(col)
        if slot and ((ragged and slot in _PATTERNED_SLOTS and not VALUE_CHECKS[slot](value))
                     or (slot in _CELL_CHECKED_SLOTS and not VALUE_CHECKS[slot](value))):
            slot = None
        target, key = (slots, slot) if slot else (extra, col)
        if key in target and target[key] != value:  # two columns of one name or slot: keep both values
            target[key] = f"{target[key]}; {value}"
        else:
            target[key] = value
    return slots, extra

