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

from .html import parse_html
from .main_content import removal_summary, select_main_content
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


def parse_website(raw: str, *, doc_id: str, source_path: str, lang: str, max_level: int = 3,
                  main_content: str = "trafilatura") -> ParsedDocument:
    """Parse a saved web page: docling structure, main content only, every section classified.

    ``main_content``: ``trafilatura`` (default, :func:`main_content_filter`) or ``docling`` (every body item docling
    keeps, i.e. only its furniture layer removed). Each section's ``meta`` gets ``section_type`` and
    ``primary_class`` on top of what :func:`heritage_pipeline.sources.html.parse_html` sets (``xpath``, ``html_tag``,
    ``has_images``; ``source_url`` on every chunk). Raises what docling raises (the caller quarantines the file).
    """
    doc = parse_html(raw, doc_id=doc_id, source_path=source_path, lang=lang, source_type="website",
                     max_level=max_level, keep=lambda r, page: select_main_content(r, page, main_content))
    doc.meta["removed_summary"] = removal_summary(doc.meta)
    if not doc.blocks:
        doc.skipped.append(f"no main content ({doc.meta['removed_summary']})")
    for sec in doc.sections:
        body = doc.text[doc.blocks[sec.first].start : doc.blocks[sec.last - 1].content_end]
        sec.meta["section_type"] = classify_section(sec.anchors, body)
        sec.meta["primary_class"] = SECTION_PRIMARY_CLASS[sec.meta["section_type"]]
        sec.meta["has_collections"] = sec.meta["section_type"] == "collection"
    return doc
