"""CSV/TSV registries -> one section (one chunk) per row, columns mapped to LinkML slots.

The file is decoded with its real encoding by discovery (UTF-8 with or without BOM, CP1252/Latin-1 detected, see
:func:`heritage_pipeline.core.text.decode_bytes`). The delimiter is sniffed among ``, ; TAB |``
(:func:`sniff_delimiter`). Tab-separated files are read without quote processing (Wikidata exports contain labels
such as ``\\"Jan van Arkel\\`` that a quoting reader would merge with the following rows); in other files a record
whose unbalanced quote runs over several lines (:func:`_swallowed_rows`) is reported and that one line is re-read
without quote processing, so it cannot swallow the rest of the file.

The mapping is chosen by header from ``configs/csv_mappings.yaml`` (the first mapping whose ``match`` columns are
all present); unmapped columns go to ``meta.extra`` under their own name, mapped ones as ``slot:<slot>``. Chunk
text is ``slot: value`` lines. ``data_tier`` comes from the mapping: ``TIER_1_AUTHORITATIVE`` for official
registries, ``TIER_2_VERIFIED`` for the Wikidata export (as the schema's ``DataTierEnum`` classes Wikidata).
Ragged rows keep the cells they have (missing cells are empty, surplus cells become ``column_<n>``). A row the reader
cannot parse is reported as a problem (quarantined by the caller as ``<file>#row N (line L)``); the other rows
proceed. Each row's span is its character range in the decoded file, line ending excluded.
"""

from __future__ import annotations

import csv
import re
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field

from heritage_pipeline.core.config import CONFIG_DIR
from heritage_pipeline.core.structure import DerivedTextBuilder, ParsedDocument, ParseError, Section

DEFAULT_MAPPINGS = CONFIG_DIR / "csv_mappings.yaml"
_LINE_END = re.compile(r"\r\n|\r|\n")
_ISIL_COUNTRY = re.compile(r"^([A-Z]{2})-")


class RegistryMapping(BaseModel):
    model_config = ConfigDict(extra="forbid")
    description: str = ""
    match: list[str] = Field(min_length=1)
    data_tier: str = "TIER_1_AUTHORITATIVE"
    columns: dict[str, str]


class MappingsFile(BaseModel):
    model_config = ConfigDict(extra="forbid")
    version: int = 1
    mappings: dict[str, RegistryMapping]


def load_mappings(path: str | Path | None = None) -> dict[str, RegistryMapping]:
    """Load the column -> slot mappings (default ``configs/csv_mappings.yaml``); ValueError names the file."""
    path = Path(path) if path else DEFAULT_MAPPINGS
    if not path.exists():
        return {}
    try:
        return MappingsFile.model_validate(yaml.safe_load(path.read_text(encoding="utf-8")) or {}).mappings
    except Exception as exc:
        raise ValueError(f"{path}: invalid registry mapping file: {exc}") from None


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
                   mappings: dict[str, RegistryMapping] | None = None) -> tuple[ParsedDocument, list[tuple[str, str]]]:
    """Parse a registry file into one standalone section per row. Returns (document, problems)."""
    if mappings is None:
        mappings = load_mappings()
    delimiter = sniff_delimiter(text)
    lines = _LineReader(text)
    quoting = csv.QUOTE_NONE if delimiter == "\t" else csv.QUOTE_MINIMAL
    reader = csv.reader(lines, delimiter=delimiter, quoting=quoting, strict=False)
    try:
        header = next(reader)
    except StopIteration:
        raise ParseError("empty registry: no header row") from None
    except csv.Error as exc:
        raise ParseError(f"header row cannot be parsed: {exc}") from None
    header = [h.strip() for h in header]
    if len(header) < 2 or not any(header):
        raise ParseError(f"header has {len(header)} column(s) with delimiter {delimiter!r}: not a delimited registry")
    name, mapping = _pick_mapping(header, mappings)
    builder = DerivedTextBuilder()
    sections: list[Section] = []
    problems: list[tuple[str, str]] = []
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
        slots, extra = _map_row(header, row, mapping)
        body = "\n".join(f"{slot}: {value}" for slot, value in slots.items())
        if not body:
            body = "\n".join(f"{k}: {v}" for k, v in extra.items())
        raw_end = _trim_end(text, start, end)
        bi = builder.add("registry_row", body, start, raw_end)
        if bi is None:
            continue
        label = slots.get("preferred_label") or f"row {row_no}"
        isil = slots.get("isil_code", "")
        m = _ISIL_COUNTRY.match(isil)
        sections.append(
            Section(
                anchors=[label],
                level=1,
                first=bi,
                last=bi + 1,
                meta={
                    "source_id": f"{doc_id}#row-{row_no}",
                    "registry_type": name,
                    "row_index": row_no,
                    "data_tier": mapping.data_tier if mapping else "TIER_1_AUTHORITATIVE",
                    "primary_class": "custodian",
                    "settlement": slots.get("settlement") or None,
                    "country_code": m.group(1) if m else None,
                    "has_identifiers": bool(isil or slots.get("wikidata_id") or slots.get("registration_number")),
                    "extra": {**{f"slot:{k}": v for k, v in slots.items()}, **extra},
                },
                standalone=True,
                key=f"row-{row_no:06d}",
            )
        )
    doc = ParsedDocument(doc_id=doc_id, source_path=source_path, source_type="csv_registry", lang=lang,
                         text=builder.text, blocks=builder.blocks, sections=sections, text_is_raw=False,
                         meta={"registry_type": name, "delimiter": delimiter, "columns": header})
    return doc, problems


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


def _map_row(header: list[str], row: list[str], mapping: RegistryMapping | None) -> tuple[dict[str, str], dict[str, str]]:
    slots: dict[str, str] = {}
    extra: dict[str, str] = {}
    for i, cell in enumerate(row):
        value = _LINE_END.sub(" ", cell.strip())  # a multi-line value stays one `slot: value` line
        col = header[i] if i < len(header) and header[i] else f"column_{i + 1}"
        if not value:
            continue
        slot = mapping.columns.get(col) if mapping else None
        target, key = (slots, slot) if slot else (extra, col)
        if key in target and target[key] != value:  # two columns of one name or slot: keep both values
            target[key] = f"{target[key]}; {value}"
        else:
            target[key] = value
    return slots, extra


def registry_columns(doc: ParsedDocument) -> dict[str, Any]:
    """Registry-level facts for run metadata (mapping used, delimiter, header)."""
    return {k: doc.meta.get(k) for k in ("registry_type", "delimiter", "columns")}
