"""Saved institution web pages: section classification (about, contact, collection, visit, news, history, other).

The classifier matches multilingual keywords (NL, EN, FR, DE) in the section's heading path first, then in its
text; the first category with a heading hit wins, else the category with most text hits (at least two), else
``other``. Keywords are word prefixes matched case-insensitively.
"""

from __future__ import annotations

import re
from functools import lru_cache

SECTION_KEYWORDS: dict[str, list[str]] = {
    "about": ["about", "who we are", "mission", "over ons", "over het", "wie zijn", "missie", "à propos", "a propos",
              "qui sommes", "notre mission", "über uns", "uber uns", "wir über", "leitbild", "profil"],
    "contact": ["contact", "address", "adres", "e-mail", "email", "phone", "telefoon", "téléphone", "telefon",
                "kontakt", "anschrift", "adresse", "nous contacter", "route", "directions"],
    "collection": ["collection", "collectie", "verzameling", "holdings", "archive", "archief", "catalog", "catalogue",
                   "fonds", "sammlung", "bestand", "bestände", "objects", "objecten", "exhibits", "beeldbank"],
    "visit": ["visit", "bezoek", "opening hours", "openingstijden", "tickets", "toegang", "admission", "horaires",
              "visiter", "billetterie", "besuch", "öffnungszeiten", "eintritt", "plan your", "plan je"],
    "news": ["news", "nieuws", "actualités", "actualites", "aktuelles", "nachrichten", "press", "pers", "blog",
             "agenda", "events", "evenementen", "événements", "veranstaltungen"],
    "history": ["history", "geschiedenis", "historie", "histoire", "geschichte", "founded", "opgericht", "fondé",
                "gegründet", "since 1", "sinds 1", "depuis 1", "seit 1"],
}


@lru_cache(maxsize=1)
def _patterns() -> dict[str, re.Pattern[str]]:
    return {
        cat: re.compile(r"(?<!\w)(?:" + "|".join(re.escape(k) for k in kws) + r")", re.IGNORECASE)
        for cat, kws in SECTION_KEYWORDS.items()
    }


def classify_section(anchors: list[str], text: str) -> str:
    """Section type of a web page section from its heading path and text (see module docstring)."""
    heading = " ".join(anchors[-2:])
    pats = _patterns()
    for cat, pat in pats.items():
        if heading and pat.search(heading):
            return cat
    best, best_hits = "other", 1
    sample = text[:4000]
    for cat, pat in pats.items():
        hits = len(pat.findall(sample))
        if hits > best_hits:
            best, best_hits = cat, hits
    return best
