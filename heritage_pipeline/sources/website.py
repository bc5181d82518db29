"""Saved institution web pages: main-content selection, section classification and the website parser.

Main content (:func:`main_content_filter`)
    docling (the structure parser) already leaves ``<nav>``, ``<header>`` and ``<footer>`` in its furniture layer,
    but keeps sidebars, cookie banners, share bars, related-article lists and comment forms that sit in ``<div>``\\ s.
    trafilatura (Barbaresi 2021, ACL demo) is an established main-content extractor: its text is used as the
    *selector* and docling's items as the *structure*. A docling item is kept when at least
    :data:`MIN_TRIGRAM_SHARE` of its word trigrams occur in trafilatura's text; an item of fewer than four words is
    kept when its words form a whole line of that text (or, for a heading, a contiguous run of it). The page title
    (docling ``title``) is kept when trafilatura's metadata title or text contains it. Short texts repeated three or
    more times on the page ("Read more", "Share") are dropped as repeated boilerplate. When trafilatura finds no
    main content at all, every docling body item is kept and the page says so (``meta.main_content``).
    trafilatura runs with ``favor_recall=True``: the same F1 on the boilerplate benchmark as its default, and it keeps
    the link lists that are the content of registry-style pages (measured; see ``evaluate_sources web``).

Section types (:func:`classify_section`)
    ``about, contact, collection, visit, news, history`` or ``other``, from multilingual (NL, EN, FR, DE) keywords
    matched as whole words (a trailing ``*`` marks a stem, e.g. ``collect*``): the first category whose heading
    keywords match the section's heading path wins (most specific heading first); otherwise the category whose
    specific text phrases (opening hours, founded in, e-mail, ...) occur most often in the text, if at least twice;
    else ``other``.
"""

from __future__ import annotations

import bisect
import re
from collections import Counter
from functools import lru_cache
from typing import Any

import regex

from .html import HtmlItem, HtmlPage, _Aligner, parse_html
from heritage_pipeline.core.structure import ParsedDocument

MIN_COVERED_SHARE = 0.5
REGION_WORDS = 4
MIN_TRIGRAM_SHARE = 0.9
REPEATED_MIN_COUNT = 3
REPEATED_MAX_WORDS = 6
_TOKEN = regex.compile(r"\w+")
_WS = re.compile(r"\s+")
_TABLE_BAR = re.compile(r"(?:^|\s)\|(?:\s|$)")

# Heading keywords: a section whose (most specific) heading matches one of these gets that type.
SECTION_KEYWORDS: dict[str, list[str]] = {
    "about": ["about", "about us", "who we are", "our mission", "mission", "organisation", "organization",
              "over ons", "over het", "wie zijn wij", "wie we zijn", "missie", "organisatie",
              "à propos", "a propos", "qui sommes-nous", "qui sommes nous", "notre mission", "présentation",
              "über uns", "uber uns", "wir über uns", "leitbild"],
    "contact": ["contact", "contact us", "address", "adres", "e-mail", "email", "phone", "telephone", "telefoon",
                "téléphone", "telefon", "kontakt", "anschrift", "adresse", "nous contacter", "contactez-nous",
                "route", "directions", "bereikbaarheid", "anfahrt", "accès", "plan d'accès"],
    "collection": ["collect*", "collectie*", "verzameling*", "holdings", "archives", "archief", "archieven",
                   "catalog*", "catalogue*", "fonds", "sammlung*", "bestände", "objects", "objecten", "exhibits",
                   "beeldbank", "inventaris*", "inventory", "archivbestand*", "fonds d'archives"],
    "visit": ["visit", "visiting", "visitors", "bezoek*", "opening hours", "openingstijden", "tickets", "toegang",
              "admission", "entrance fee", "horaires", "visiter", "visite*", "billetterie", "tarifs", "besuch*",
              "öffnungszeiten", "eintritt", "eintrittspreise", "plan your visit", "plan je bezoek"],
    "news": ["news", "nieuws", "actualités", "actualites", "aktuelles", "nachrichten", "press release*",
             "persbericht*", "pressemitteilung*", "communiqué*", "blog", "agenda", "events", "evenementen",
             "événements", "evenements", "veranstaltungen", "exhibition*", "tentoonstelling*", "expositions",
             "ausstellung*"],
    "history": ["history", "historie", "geschiedenis", "histoire", "geschichte", "founded", "opgericht", "fondé",
                "fondée", "gegründet", "since 1*", "sinds 1*", "depuis 1*", "seit 1*", "established in"],
}
# Text keywords: specific phrases that identify a section type from its body when the heading says nothing (generic
# words such as "about" or "news" are far too common in running text to count there). Two hits are needed.
TEXT_KEYWORDS: dict[str, list[str]] = {
    "about": ["our mission", "who we are", "onze missie", "wie wij zijn", "notre mission", "qui sommes-nous",
              "unsere mission", "wir sind", "our organisation", "our organization", "onze organisatie"],
    "contact": ["e-mail", "email", "tel.", "telephone", "telefoon", "téléphone", "telefon", "fax", "postbus",
                "postadres", "bezoekadres", "p.o. box", "postfach", "anschrift", "contact us", "neem contact",
                "contactez-nous", "kontaktieren sie"],
    "collection": ["collection", "collections", "collectie", "collecties", "verzameling", "holdings",
                   "archiefstukken", "archival records", "fonds", "sammlung", "sammlungen", "bestände",
                   "objects", "objecten", "objets", "objekte", "inventaris", "finding aid*", "manuscripts",
                   "manuscrits", "handschriften", "prints and drawings", "prenten", "estampes"],
    "visit": ["opening hours", "openingstijden", "geopend", "gesloten", "horaires", "öffnungszeiten", "geöffnet",
              "tickets", "admission", "entrée", "eintritt", "toegangsprijs", "museumkaart", "tarif*",
              "wheelchair", "rolstoel", "fauteuil roulant", "rollstuhl", "closed on", "open daily", "dagelijks"],
    "news": ["press release*", "persbericht*", "communiqué de presse", "pressemitteilung*", "published on",
             "gepubliceerd op", "publié le", "veröffentlicht am", "read more", "lees meer", "lire la suite",
             "weiterlesen"],
    "history": ["founded in", "opgericht in", "fondé en", "fondée en", "gegründet", "established in",
                "in the 19th century", "in de 19e eeuw", "au xixe siècle", "im 19. jahrhundert", "since 1*",
                "sinds 1*", "depuis 1*", "seit 1*", "was built in", "werd gebouwd", "merged with", "fuseerde"],
}


def _compile(table: dict[str, list[str]]) -> dict[str, re.Pattern[str]]:
    out = {}
    for cat, kws in table.items():
        alts = []
        for k in kws:
            stem = k.endswith("*")
            body = re.escape(k.rstrip("*")).replace(r"\ ", r"\s+")
            alts.append(body + (r"\w*" if stem else r"(?!\w)"))
        out[cat] = re.compile(r"(?<!\w)(?:" + "|".join(alts) + r")", re.IGNORECASE)
    return out


@lru_cache(maxsize=1)
def _patterns() -> tuple[dict[str, re.Pattern[str]], dict[str, re.Pattern[str]]]:
    return _compile(SECTION_KEYWORDS), _compile(TEXT_KEYWORDS)


def classify_section(anchors: list[str], text: str) -> str:
    """Section type of a web page section from its heading path and text (see module docstring).

    ``anchors``: breadcrumb, outermost first (only the last two are read, most specific first); ``text``: the section
    text (only the first 4 000 characters are read). Returns one of ``about, contact, collection, visit, news,
    history, other``. Headings are matched against :data:`SECTION_KEYWORDS`, text against :data:`TEXT_KEYWORDS`.
    """
    heading_pats, text_pats = _patterns()
    for heading in reversed(anchors[-2:]):
        for cat, pat in heading_pats.items():
            if heading and pat.search(heading):
                return cat
    best, best_hits = "other", 1
    sample = text[:4000]
    for cat, pat in text_pats.items():
        hits = len(pat.findall(sample))
        if hits > best_hits:
            best, best_hits = cat, hits
    return best


# Seed chunk hierarchy (custodian, observation, collection, relationship, context) for website sections: about,
# contact and visit describe the custodian (Custodian.description, CustodianPlace); collection sections describe
# holdings; history sections carry change events (relationship chunks); news items are dated observations.
SECTION_PRIMARY_CLASS = {"about": "custodian", "contact": "custodian", "visit": "custodian",
                         "collection": "collection", "history": "relationship", "news": "observation",
                         "other": "context"}


def _tokens(s: str) -> list[str]:
    return [t.lower() for t in _TOKEN.findall(s)]


def main_content_filter(raw: str, page: HtmlPage) -> tuple[list[bool], dict[str, Any]]:
    """Which docling items of a page are main content (see module docstring). Returns (flags, info for meta)."""
    import trafilatura

    items = page.items
    result = trafilatura.bare_extraction(raw, favor_recall=True, include_tables=True, include_comments=False,
                                         with_metadata=True)
    main_text = (getattr(result, "text", None) or "") if result is not None else ""
    meta_title = (getattr(result, "title", None) or "") if result is not None else ""
    main_tokens = _tokens(main_text)
    if not main_tokens:
        flags = _drop_repeated(items, [True] * len(items))
        return flags, {"main_content": "docling (trafilatura found no main content)", "dropped_items": flags.count(False)}
    covered = _main_regions(page.aligner.stream, main_text)
    trigrams = {tuple(main_tokens[i : i + 3]) for i in range(len(main_tokens) - 2)}
    lines = {" ".join(_tokens(line)) for line in main_text.splitlines()}
    joined = " " + " ".join(main_tokens) + " "
    title_joined = " " + " ".join(_tokens(meta_title)) + " "
    flags = []
    for it in items:
        toks = _tokens(it.plain)
        if not toks:
            flags.append(False)
        elif it.is_title:
            seq = " " + " ".join(toks) + " "
            flags.append(seq in title_joined or seq in joined)
        elif it.stream is not None:
            a, b = it.stream
            flags.append(_covered_share(covered, a, b) >= MIN_COVERED_SHARE)
        elif len(toks) < 4:  # not aligned to the page: fall back to the words of trafilatura's text
            flags.append(" ".join(toks) in lines or (it.kind == "heading" and f" {' '.join(toks)} " in joined))
        else:
            grams = [tuple(toks[i : i + 3]) for i in range(len(toks) - 2)]
            flags.append(sum(g in trigrams for g in grams) >= MIN_TRIGRAM_SHARE * len(grams))
    flags = _drop_repeated(items, flags)
    return flags, {"main_content": "trafilatura", "dropped_items": flags.count(False)}


def _main_regions(stream: str, main_text: str) -> list[tuple[int, int]]:
    """``[start, end)`` ranges of the page's whitespace-free visible text that trafilatura's text comes from.

    trafilatura's text is cut into runs of :data:`REGION_WORDS` words (its lines can join several elements of the
    page, and its tables are drawn with ``|``), each searched from a moving cursor (trafilatura keeps document
    order); a run not found after the cursor is searched from the start of the page; a run of fewer than 12
    characters only just ahead of the cursor.
    """
    regions = []
    cursor = 0
    for line in main_text.splitlines():
        for piece in _TABLE_BAR.split(line):
            words = piece.split()
            for i in range(0, len(words), REGION_WORDS):
                needle = _Aligner.key(" ".join(words[i : i + REGION_WORDS]))
                if not needle:
                    continue
                short = len(needle) < 12
                pos = stream.find(needle, cursor, cursor + 2000 + len(needle) if short else len(stream))
                if pos < 0 and not short:
                    pos = stream.find(needle)
                    if pos >= 0:
                        regions.append((pos, pos + len(needle)))
                    continue
                if pos >= 0:
                    regions.append((pos, pos + len(needle)))
                    cursor = pos + len(needle)
    regions.sort()
    merged: list[tuple[int, int]] = []
    for a, b in regions:
        if merged and a <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], b))
        else:
            merged.append((a, b))
    return merged


def _covered_share(regions: list[tuple[int, int]], a: int, b: int) -> float:
    """Share of ``[a, b)`` covered by the sorted, disjoint ``regions``."""
    if b <= a:
        return 0.0
    i = bisect.bisect_right(regions, (a, float("inf"))) - 1
    i = max(i, 0)
    covered = 0
    while i < len(regions) and regions[i][0] < b:
        lo, hi = max(a, regions[i][0]), min(b, regions[i][1])
        covered += max(0, hi - lo)
        i += 1
    return covered / (b - a)


def _drop_repeated(items: list[HtmlItem], flags: list[bool]) -> list[bool]:
    """Drop short texts that occur :data:`REPEATED_MIN_COUNT` or more times on the page (repeated boilerplate)."""
    keys = [" ".join(_tokens(it.plain)) for it in items]
    counts = Counter(k for k in keys if k and len(k.split()) <= REPEATED_MAX_WORDS)
    return [f and not (counts.get(k, 0) >= REPEATED_MIN_COUNT and it.kind != "heading")
            for f, k, it in zip(flags, keys, items)]


def parse_website(raw: str, *, doc_id: str, source_path: str, lang: str, max_level: int = 3,
                  main_content: str = "trafilatura") -> ParsedDocument:
    """Parse a saved web page: docling structure, main content only, every section classified.

    ``main_content``: ``trafilatura`` (default, :func:`main_content_filter`) or ``docling`` (every body item docling
    keeps, i.e. only its furniture layer removed). Each section's ``meta`` gets ``section_type`` and
    ``primary_class`` on top of what :func:`heritage_pipeline.sources.html.parse_html` sets (``xpath``, ``html_tag``,
    ``has_images``; ``source_url`` on every chunk). Raises what docling raises (the caller quarantines the file).
    """
    keep = main_content_filter if main_content == "trafilatura" else None
    doc = parse_html(raw, doc_id=doc_id, source_path=source_path, lang=lang, source_type="website",
                     max_level=max_level, keep=keep)
    if keep is None:
        doc.meta["main_content"] = "docling"
    for sec in doc.sections:
        body = doc.text[doc.blocks[sec.first].start : doc.blocks[sec.last - 1].content_end]
        sec.meta["section_type"] = classify_section(sec.anchors, body)
        sec.meta["primary_class"] = SECTION_PRIMARY_CLASS[sec.meta["section_type"]]
        sec.meta["has_collections"] = sec.meta["section_type"] == "collection"
    return doc
