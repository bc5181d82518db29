"""schema.org structured data in web pages (JSON-LD, microdata, RDFa) -> record chunks with spans into the raw HTML.

Extraction is extruct's (Scrapinghub/Zyte, BSD): ``JsonLdExtractor`` (lenient JSON: comments and trailing commas
tolerated), ``MicrodataExtractor`` and ``RDFaExtractor`` (pyRdfa), microdata in extruct's ``uniform`` JSON-LD-like
form. What extruct does not give is *where* an item is in the raw page, so :class:`_ElementSpans` (one pass of the
standard library's ``HTMLParser``) records the raw ``[start, end)`` of every ``<script type="application/ld+json">``
element and of every top-level ``itemscope`` / ``typeof`` element (one not inside another of its kind, which is
what extruct returns as top-level items, in document order):

* JSON-LD: each script is parsed on its own (a ``<![CDATA[ ... ]]>`` wrapper removed first), so one broken script is reported (``problems``) and the others are
  kept (``extruct.extract`` drops the whole syntax on the first error); its span is the whole ``<script>`` element.
* microdata: the n-th top-level item is the n-th top-level ``itemscope`` element.
* RDFa: pyRdfa returns a flat graph; the nodes no other node refers to are the records, nested nodes are inlined
  (an address in its organisation), each matched to the first unused top-level ``typeof`` element of its type.

A node becomes a record when its ``@type`` is in :data:`RECORD_TYPES` (schema.org Place, PostalAddress, Event,
Organization, OpeningHoursSpecification and their heritage-relevant subtypes: Museum, Library,
ArchiveOrganization, TouristAttraction, ExhibitionEvent, ...; and the holdings a custodian describes, Dataset,
DataCatalog, Collection, ArchiveComponent); JSON-LD ``@graph`` members are records of their own. Nested nodes are
written by name with their ``identifier``/``sameAs`` (``creator: Koninklijke Bibliotheek (https://ror.org/...)``),
or, with no name, by their values (``distribution: text/turtle https://.../x.ttl; ...``).
Its text is ``slot: value`` lines like a registry row (:func:`record_lines`): ``type``, ``name``, ``address``
(street, postal code and locality, region, country on one line), ``opening_hours`` (days and times, one
specification per ``;``), ``start_date``/``end_date``, ``location``, ``organizer``, ``telephone``, ``email``,
``url``, ``geo``, then the other scalar properties in snake case, in the order the page gives them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from html.parser import HTMLParser
from typing import Any

_CDATA = re.compile(r"^\s*(?://\s*)?<!\[CDATA\[|(?://\s*)?\]\]>\s*$")
_LD_JSON = re.compile(r"^\s*application/ld\+json\s*$", re.I)
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")

ORGANIZATION_TYPES = frozenset("""Organization Museum Library ArchiveOrganization EducationalOrganization
    CollegeOrUniversity School GovernmentOrganization NGO LocalBusiness PerformingGroup ResearchOrganization
    Corporation Consortium FundingScheme LibrarySystem""".split())
PLACE_TYPES = frozenset("""Place CivicStructure TouristAttraction LandmarksOrHistoricalBuildings Landform
    AdministrativeArea City Country PlaceOfWorship Church Park Zoo Aquarium ArtGallery MovieTheater
    MusicVenue PerformingArtsTheater EventVenue Accommodation""".split())
EVENT_TYPES = frozenset("""Event ExhibitionEvent EducationEvent Festival LiteraryEvent MusicEvent SocialEvent
    TheaterEvent ChildrensEvent ComedyEvent CourseInstance DanceEvent DeliveryEvent FoodEvent Hackathon
    PublicationEvent SaleEvent ScreeningEvent SportsEvent VisualArtsEvent BusinessEvent""".split())
# Described holdings a custodian publishes: collection-level descriptions and datasets (a dataset description page,
# a collection page, an archival fonds). Their licence, distributions and identifiers are what a user asks about.
COLLECTION_TYPES = frozenset("""Dataset DataCatalog Collection ArchiveComponent""".split())
RECORD_TYPES = (ORGANIZATION_TYPES | PLACE_TYPES | EVENT_TYPES | COLLECTION_TYPES
                | {"PostalAddress", "OpeningHoursSpecification"})
# properties whose values identify a node outside the page (an ISIL, ROR, Wikidata or dataset URI)
IDENTIFIER_PROPERTIES = ("identifier", "sameAs")
_FIRST = ("name", "address", "openingHours", "openingHoursSpecification", "startDate", "endDate", "location",
          "organizer", "telephone", "email", "url", "geo")
_SKIP = frozenset({"@context", "@type", "@id", "@vocab", "image", "logo", "potentialAction", "mainEntityOfPage",
                   "http://www.w3.org/ns/rdfa#usesVocabulary"})
_DAYS = {"Mo": "Monday", "Tu": "Tuesday", "We": "Wednesday", "Th": "Thursday", "Fr": "Friday", "Sa": "Saturday",
         "Su": "Sunday"}


@dataclass
class StructuredRecord:
    """One schema.org item as a record: ``lines`` are ``slot: value`` strings; ``raw_start``/``raw_end`` the
    code-point range of its element in the raw HTML; ``syntax`` json-ld | microdata | rdfa."""

    schema_type: str
    name: str
    lines: list[str]
    syntax: str
    raw_start: int
    raw_end: int
    element: str  # the element's tag: script, div, ...
    xpath: str  # absolute XPath of that element, every step indexed (/html[1]/head[1]/script[2])
    data: dict[str, Any] = field(default_factory=dict)

    @property
    def text(self) -> str:
        return "\n".join(self.lines)


class _ElementSpans(HTMLParser):
    """Raw ``[start, end)`` of JSON-LD scripts and of top-level ``itemscope`` / ``typeof`` elements, in order."""

    def __init__(self, raw: str) -> None:
        super().__init__(convert_charrefs=True)
        self.raw = raw
        self.line_starts = [0] + [m.end() for m in re.finditer("\n", raw)]
        self.scripts: list[list[Any]] = []  # [start, end, content_start, content_end, xpath]
        self.items: dict[str, list[list[Any]]] = {"microdata": [], "rdfa": []}  # [start, end, tag, types, xpath]
        self._open: list[tuple[str, str | None, list[Any] | None]] = []  # (tag, kind, span)
        self._script: list[int] | None = None
        self._path: list[tuple[str, dict[str, int]]] = [("", {})]  # open elements: (step, same-tag child counts)

    def _step(self, tag: str, push: bool) -> str:
        """The XPath of a new child ``tag`` of the innermost open element (every step indexed, ``[1]`` included)."""
        counts = self._path[-1][1]
        counts[tag] = counts.get(tag, 0) + 1
        xpath = f"{self._path[-1][0]}/{tag}[{counts[tag]}]"
        if push:
            self._path.append((xpath, {}))
        return xpath

    def _abs(self) -> int:
        line, col = self.getpos()
        return self.line_starts[line - 1] + col

    def _end_of_tag(self, start: int) -> int:
        text = self.get_starttag_text() or ""
        return start + len(text)

    def handle_starttag(self, tag: str, attrs: Any) -> None:
        a = {k.lower(): (v if v is not None else "") for k, v in attrs}
        start = self._abs()
        if tag == "script":
            xpath = self._step(tag, False)
            if _LD_JSON.match(a.get("type", "")):
                self._script = [start, -1, self._end_of_tag(start), -1, xpath]
            return
        if tag in ("br", "img", "meta", "link", "input", "hr", "source", "wbr", "area", "col", "embed", "param",
                   "track", "base"):
            self._step(tag, False)
            return
        xpath = self._step(tag, True)
        kind = None
        if "itemscope" in a and "itemprop" not in a and not self._inside("microdata"):
            kind = "microdata"
            span: list[Any] | None = [start, -1, tag, a.get("itemtype", ""), xpath]
        elif a.get("typeof") and "property" not in a and "rel" not in a and not self._inside("rdfa"):
            kind = "rdfa"
            span = [start, -1, tag, a.get("typeof", ""), xpath]
        else:
            span = None
        if kind is not None:
            self.items[kind].append(span)
        self._open.append((tag, kind, span))

    def _inside(self, kind: str) -> bool:
        return any(k == kind for _, k, _ in self._open)

    def handle_endtag(self, tag: str) -> None:
        if tag == "script":
            if self._script is not None:
                pos = self._abs()
                self._script[3] = pos
                close = self.raw.find(">", pos)
                self._script[1] = close + 1 if close >= 0 else len(self.raw)
                self.scripts.append(self._script)
                self._script = None
            return
        for k in range(len(self._open) - 1, -1, -1):
            if self._open[k][0] == tag:
                end_pos = self._abs()
                close = self.raw.find(">", end_pos)
                end = close + 1 if close >= 0 else len(self.raw)
                for _, kind, span in self._open[k:]:
                    if span is not None and span[1] < 0:
                        span[1] = end
                del self._path[k + 1:]
                del self._open[k:]
                return

    def close(self) -> None:
        super().close()
        for _, _, span in self._open:  # unclosed at the end of the page
            if span is not None and span[1] < 0:
                span[1] = len(self.raw)
        if self._script is not None:
            self._script[1] = self._script[3] = len(self.raw)
            self.scripts.append(self._script)


def _local(t: Any) -> str:
    """``https://schema.org/Museum`` -> ``Museum``."""
    s = str(t)
    return s.rstrip("/").rsplit("/", 1)[-1].rsplit("#", 1)[-1]


def _types(node: dict[str, Any]) -> list[str]:
    t = node.get("@type", [])
    return [_local(x) for x in (t if isinstance(t, list) else [t])]


def _slot(prop: str) -> str:
    """schema.org property -> slot name: ``startDate`` -> ``start_date``, ``openingHoursSpecification`` ->
    ``opening_hours``."""
    p = _local(prop)
    if p in ("openingHoursSpecification", "openingHours"):
        return "opening_hours"
    return _CAMEL.sub("_", p).lower()


def _scalar(v: Any) -> str:
    """A plain value as one line; ``mailto:``/``tel:`` and schema.org enumeration IRIs
    (``https://schema.org/EventScheduled``) shortened to their value."""
    if isinstance(v, dict):
        if "@value" in v:
            v = v["@value"]
        elif "@id" in v and len(v) == 1:
            v = v["@id"]
    s = " ".join(str(v).split()).removeprefix("mailto:").removeprefix("tel:")
    return _local(s) if re.match(r"https?://schema\.org/\w+$", s) else s


def _day(d: Any) -> str:
    s = _local(d)
    return _DAYS.get(s, s)


def _opening_hours(value: Any) -> str:
    """``openingHoursSpecification`` objects or ``openingHours`` strings as ``days opens-closes``; ``; ``-joined."""
    out = []
    for v in value if isinstance(value, list) else [value]:
        if isinstance(v, dict) and ("opens" in v or "dayOfWeek" in v or "closes" in v):
            days = v.get("dayOfWeek", [])
            days = ", ".join(_day(d) for d in (days if isinstance(days, list) else [days]))
            opens, closes = _scalar(v.get("opens", "")), _scalar(v.get("closes", ""))
            hours = f"{opens}-{closes}" if opens or closes else "closed"
            extra = []
            if v.get("validFrom") or v.get("validThrough"):
                extra.append(f"valid {_scalar(v.get('validFrom', ''))}..{_scalar(v.get('validThrough', ''))}")
            out.append(" ".join(x for x in (days, hours, *extra) if x))
        else:
            out.append(_scalar(v))
    return "; ".join(x for x in out if x)


def _address(v: dict[str, Any]) -> str:
    street = _scalar(v.get("streetAddress", ""))
    locality = " ".join(x for x in (_scalar(v.get("postalCode", "")), _scalar(v.get("addressLocality", ""))) if x)
    parts = [street, locality, _scalar(v.get("addressRegion", "")), _scalar(_name_or(v.get("addressCountry", "")))]
    return ", ".join(p for p in parts if p)


def _name_or(v: Any) -> Any:
    return v.get("name", v) if isinstance(v, dict) else v


def _value(prop: str, v: Any) -> str:
    """One property value as text: addresses flattened, opening hours in days and times, nested things by name
    (and address), geo as ``lat, lon``, lists ``; ``-joined."""
    p = _local(prop)
    if p in ("openingHoursSpecification", "openingHours"):
        return _opening_hours(v)
    if isinstance(v, list):
        return "; ".join(x for x in (_value(prop, x) for x in v) if x)
    if isinstance(v, dict):
        t = _types(v)
        if "PostalAddress" in t or p == "address" and any(k in v for k in ("streetAddress", "addressLocality")):
            return _address(v)
        if "GeoCoordinates" in t or p == "geo":
            return ", ".join(_scalar(v.get(k, "")) for k in ("latitude", "longitude") if v.get(k) not in (None, ""))
        if "name" in v:
            name = _scalar(v["name"])
            ids = _identifiers(v)
            if ids:
                name = f"{name} ({'; '.join(ids)})"
            addr = v.get("address")
            if isinstance(addr, dict):
                a = _address(addr)
                return f"{name} ({a})" if a else name
            if isinstance(addr, str) and addr.strip():
                return f"{name} ({' '.join(addr.split())})"
            return name
        if "@value" in v or ("@id" in v and len(v) == 1):
            return _scalar(v)
        # a nested node with no name (a DataDownload: encodingFormat + contentUrl): its plain values, in page order
        parts = [_value(k, x) for k, x in v.items() if not k.startswith("@") and k not in _SKIP]
        return " ".join(x for x in parts if x)
    return _scalar(v)


def _identifiers(node: dict[str, Any]) -> list[str]:
    """The values of a node's :data:`IDENTIFIER_PROPERTIES` (``sameAs``: a ROR or Wikidata URI), as text."""
    out: list[str] = []
    for k in IDENTIFIER_PROPERTIES:
        if k in node:
            val = _value(k, node[k])
            out += [x for x in val.split("; ") if x and x not in out]
    return out


def has_identifier(node: Any) -> bool:
    """Whether a schema.org node or one of its nested nodes carries an identifier: a non-empty ``identifier`` or
    ``sameAs`` (:data:`IDENTIFIER_PROPERTIES`) or an ``@id`` that is an absolute IRI of its own (not a ``#fragment``
    of the page, which names the node only within the page).

    Args:
        node: a JSON-LD / microdata / RDFa node (dict), a list of them or a plain value.

    Returns:
        True when such an identifier is found.
    """
    if isinstance(node, list):
        return any(has_identifier(x) for x in node)
    if not isinstance(node, dict):
        return False
    if any(node.get(k) not in (None, "", []) for k in IDENTIFIER_PROPERTIES):
        return True
    nid = node.get("@id")
    if isinstance(nid, str) and re.match(r"https?://", nid) and "#" not in nid:
        return True
    return any(has_identifier(v) for k, v in node.items() if not k.startswith("@"))


def record_lines(node: dict[str, Any]) -> list[str]:
    """``slot: value`` lines of a schema.org node (see module docstring); empty values are left out."""
    lines = [f"type: {', '.join(_types(node)) or 'Thing'}"]
    keys = [k for k in _FIRST if k in node] + [k for k in node if k not in _FIRST and _local(k) not in _FIRST]
    seen = set()
    for k in keys:
        if k in _SKIP or k.startswith("@") or _local(k) in _SKIP:
            continue
        slot = _slot(k)
        if slot in seen:
            continue
        value = _value(k, node[k])
        if value:
            seen.add(slot)
            lines.append(f"{slot}: {value}")
    return lines


def _plain(node: Any) -> Any:
    """RDFa/expanded JSON-LD node values ``[{"@value": x}]`` -> plain values, full IRIs -> local names."""
    if isinstance(node, list):
        vals = [_plain(v) for v in node]
        return vals[0] if len(vals) == 1 else vals
    if isinstance(node, dict):
        if "@value" in node and len(node) <= 3:
            return node["@value"]
        out: dict[str, Any] = {}
        for k, v in node.items():
            if k == "@type":
                out[k] = [_local(t) for t in (v if isinstance(v, list) else [v])]
            elif k.startswith("@"):
                out[k] = v
            else:
                out[_local(k)] = _plain(v)
        return out
    return node


def _rdfa_roots(nodes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """pyRdfa's flat node list -> root nodes with referenced blank nodes inlined (cycles cut)."""
    by_id = {n.get("@id"): n for n in nodes if n.get("@id")}
    referenced = set()
    for n in nodes:
        for k, vals in n.items():
            if k.startswith("@"):
                continue
            for v in vals if isinstance(vals, list) else [vals]:
                if isinstance(v, dict) and set(v) == {"@id"} and v["@id"] in by_id:
                    referenced.add(v["@id"])

    def inline(n: dict[str, Any], depth: int) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for k, vals in n.items():
            if k.startswith("@"):
                out[k] = vals
                continue
            new = []
            for v in vals if isinstance(vals, list) else [vals]:
                if isinstance(v, dict) and set(v) == {"@id"} and v["@id"] in by_id and depth < 4:
                    new.append(inline(by_id[v["@id"]], depth + 1))
                else:
                    new.append(v)
            out[k] = new
        return out

    return [_plain(inline(n, 0)) for n in nodes if n.get("@type") and n.get("@id") not in referenced]


def _record_nodes(node: Any) -> list[dict[str, Any]]:
    """The record-type nodes of one JSON-LD document: the node itself, ``@graph`` members, list members."""
    if isinstance(node, list):
        return [n for x in node for n in _record_nodes(x)]
    if not isinstance(node, dict):
        return []
    if "@graph" in node:
        return _record_nodes(node["@graph"])
    return [node] if set(_types(node)) & RECORD_TYPES else []


def extract_structured(raw: str) -> tuple[list[StructuredRecord], list[tuple[str, str]], dict[str, int]]:
    """schema.org records of a page (see module docstring).

    Args:
        raw: the page's raw HTML, decoded.

    Returns:
        ``(records, problems, counts)``: the records in page order (JSON-LD first, then microdata, then RDFa, each in
        document order); ``problems`` as ``(location, reason)`` pairs for the quarantine (a JSON-LD script that is
        not valid JSON, a syntax extruct cannot read), e.g. ``("json-ld script 3 (offset 1042)", "not valid JSON:
        ...")``; ``counts``: items seen per syntax, records among them, and items of other types (``WebPage``,
        ``BreadcrumbList``, ...) that are not records.

    Raises:
        Nothing for bad markup: problems are returned.
    """
    from extruct.jsonld import JsonLdExtractor

    spans = _ElementSpans(raw)
    try:
        spans.feed(raw)
        spans.close()
    except Exception:  # HTMLParser is lenient; what it still rejects leaves the spans found so far
        pass
    records: list[StructuredRecord] = []
    problems: list[tuple[str, str]] = []
    counts = {"json-ld": 0, "microdata": 0, "rdfa": 0, "records": 0, "other_types": 0}
    jsonld = JsonLdExtractor()
    for n, (start, end, c_start, c_end, xpath) in enumerate(spans.scripts, 1):
        body = _CDATA.sub("", raw[c_start:c_end])  # <![CDATA[ ... ]]> wrappers (Guardian, Folha pages)
        if not body.strip():
            continue
        try:
            docs = jsonld.extract(f"<html><body><script type=\"application/ld+json\">{body}</script></body></html>")
        except Exception as exc:
            problems.append((f"json-ld script {n} (offset {start})", f"not valid JSON: {str(exc).splitlines()[0][:200]}"))
            continue
        for doc in docs:
            counts["json-ld"] += 1
            nodes = _record_nodes(doc)
            counts["other_types"] += 0 if nodes else 1
            for node in nodes:
                records.append(_record(node, "json-ld", start, end, "script", xpath))
    for syntax, extract in (("microdata", _microdata), ("rdfa", _rdfa)):
        try:
            items = extract(raw)
        except Exception as exc:
            problems.append((syntax, f"cannot be read: {type(exc).__name__}: {str(exc).splitlines()[0][:200]}"))
            continue
        elems = spans.items[syntax]
        used: set[int] = set()
        for i, node in enumerate(items):
            counts[syntax] += 1
            types = set(_types(node))
            if syntax == "microdata":
                j = i if i < len(elems) else -1
            else:
                j = next((k for k, e in enumerate(elems) if k not in used and types & {_local(t) for t in e[3].split()}), -1)
            if j >= 0:
                used.add(j)
            if not types & RECORD_TYPES:
                counts["other_types"] += 1
                continue
            start, end, tag, xpath = (elems[j][0], elems[j][1], elems[j][2], elems[j][4]) if j >= 0 else (0, len(raw), "html", "/html[1]")
            records.append(_record(node, syntax, start, end, tag, xpath))
    counts["records"] = len(records)
    return records, problems, counts


def _record(node: dict[str, Any], syntax: str, start: int, end: int, tag: str, xpath: str) -> StructuredRecord:
    types = _types(node)
    main = next((t for t in types if t in RECORD_TYPES), types[0] if types else "Thing")
    name = _scalar(_name_or(node.get("name", ""))) if node.get("name") else ""
    return StructuredRecord(main, name, record_lines(node), syntax, start, end, tag, xpath, node)


def _microdata(raw: str) -> list[dict[str, Any]]:
    import extruct

    if "itemscope" not in raw.lower():
        return []
    return extruct.extract(raw, syntaxes=["microdata"], uniform=True, errors="strict")["microdata"]


def _rdfa(raw: str) -> list[dict[str, Any]]:
    from extruct.rdfa import RDFaExtractor

    if "typeof" not in raw:  # pyRdfa parses the whole page; nothing to find without a typeof attribute
        return []
    return _rdfa_roots(RDFaExtractor().extract(raw))


def record_section_type(record: StructuredRecord) -> str:
    """The section type of a record chunk: events are ``news`` (dated announcements, like an agenda), datasets and
    collections (:data:`COLLECTION_TYPES`) ``collection``, a place or organisation with opening hours is ``visit``,
    any other organisation, place or address ``contact``."""
    if record.schema_type in EVENT_TYPES:
        return "news"
    if record.schema_type in COLLECTION_TYPES:
        return "collection"
    if record.schema_type == "OpeningHoursSpecification" or any(l.startswith("opening_hours:") for l in record.lines):
        return "visit"
    return "contact"
