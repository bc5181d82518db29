"""Text analysis for the full-text index, applied identically on the document side (at write time) and the query
side (at search time): accent folding before stemming, identifiers kept whole, CJK detection, and the gazetteer
of places and custodian types used for query understanding.

Why not only Tantivy's own ``ascii_folding``: in LanceDB's analyser chain folding runs *after* the Snowball stemmer,
so ``musée`` and ``musee`` are stemmed differently before they are folded and never meet (French: ``musé`` → ``muse``
vs ``muse``; measured in ``heritage_pipeline_tests/index/test_analysis.py``). Folding the text before it reaches the
analyser makes both sides stem the same ASCII form. Only Latin letters are folded: combining marks of other scripts
(Japanese dakuten, Tamil vowel signs, Devanagari) carry meaning and are kept.
"""

from __future__ import annotations

import re
import unicodedata

# Latin letters that Unicode does not decompose into base + combining mark (the rest fold through NFKD).
_LATIN_EXTRA = {"ß": "ss", "ẞ": "SS", "æ": "ae", "Æ": "AE", "œ": "oe", "Œ": "OE", "ø": "o", "Ø": "O", "ł": "l",
                "Ł": "L", "đ": "d", "Đ": "D", "ð": "d", "Ð": "D", "þ": "th", "Þ": "TH", "ı": "i", "ħ": "h", "Ħ": "H",
                "ŋ": "ng", "Ŋ": "NG", "ŧ": "t", "Ŧ": "T", "ĸ": "k", "ŉ": "n", "ŀ": "l", "Ŀ": "L"}


def _is_latin_base(ch: str) -> bool:
    return ch.isascii() and ch.isalpha()


def ascii_fold(text: str) -> str:
    """Fold accented Latin letters to ASCII (``é`` → ``e``, ``Ö`` → ``O``, ``ß`` → ``ss``, ``œ`` → ``oe``).

    Letters of other scripts and their combining marks are returned unchanged, so CJK, Cyrillic, Greek, Arabic and
    Indic text is not altered. Length in characters may change (``ß`` → ``ss``); the result is only used for
    full-text analysis, never for spans.

    Args:
        text: any string.
    Returns:
        The folded string.
    """
    if text.isascii():
        return text
    out: list[str] = []
    for ch in text:
        if ch.isascii():
            out.append(ch)
        elif ch in _LATIN_EXTRA:
            out.append(_LATIN_EXTRA[ch])
        else:
            base = "".join(c for c in unicodedata.normalize("NFKD", ch) if not unicodedata.combining(c))
            out.append(base if base and all(_is_latin_base(c) for c in base) else ch)
    return "".join(out)


# --------------------------------------------------------------------------------------------------- identifiers
# A whitespace-delimited token (trailing/leading punctuation stripped) is an identifier when it is
#  - an ISIL (ISO 15511): a 1-4 letter prefix (ISO 3166 country code or a non-country prefix such as "OCLC"),
#    a hyphen, then up to 11 characters of letters, digits and - : / (e.g. DE-3, NL-AmRM, JP-1000031, DE-MUS-407010);
#  - a Wikidata QID or PID (Q1600777, P791);
#  - any code of letters/digits joined by - : / that contains a digit (GND 1047109-1, ark:/12148/cb1, 060-8511).
# URLs and e-mail addresses are not identifiers (their parts are indexed as text).
_ISIL = re.compile(r"^[A-Z]{1,4}-[A-Za-z0-9:/\-]{1,11}$")
_WIKIDATA = re.compile(r"^[QP][1-9][0-9]*$")
_CODE = re.compile(r"^[A-Za-z0-9]+(?:[-:/][A-Za-z0-9]+)+$")
_STRIP = "\"'“”‘’«»()[]{}<>.,;!?¿¡"


def _is_identifier(tok: str) -> bool:
    if "://" in tok or "@" in tok or tok.lower().startswith(("www.", "http")):
        return False
    if _WIKIDATA.match(tok):
        return True
    if _ISIL.match(tok):
        suffix = tok[tok.index("-") + 1:]
        if not (suffix.isalpha() and suffix.islower()):  # "DE-3", "NL-AmRM"; not "EN-route"-like lower-case words
            return True
    return bool(_CODE.match(tok)) and any(c.isdigit() for c in tok)


def extract_identifiers(text: str) -> list[str]:
    """Identifiers in ``text`` (ISIL codes, Wikidata ids, other codes with ``-``, ``:`` or ``/`` holding a digit),
    lower-cased, in order of first occurrence, without repeats.

    A hyphenated word such as ``Sachsen-Anhalt`` or ``Saint-Denis`` is not an identifier (its first part is not an
    upper-case prefix of 1-4 letters and it holds no digit). A false positive (``EU-Projekt``) only makes the rows
    holding that exact token candidates of the identifier tier; it removes no hit.

    Args:
        text: a chunk's text or a query.
    Returns:
        Lower-cased identifier strings; a scheme-prefixed one (``ISIL:DE-14``) also without its scheme (``de-14``).
    """
    seen: dict[str, None] = {}
    for raw in text.split():
        tok = raw.strip(_STRIP)
        if tok.endswith(":"):
            tok = tok[:-1]
        if len(tok) >= 3 and _is_identifier(tok):
            seen.setdefault(tok.lower(), None)
            scheme = _SCHEME_PREFIX.match(tok)
            if scheme and len(scheme.group(1)) >= 3 and _is_identifier(scheme.group(1)):
                seen.setdefault(scheme.group(1).lower(), None)  # "ISIL:DE-14" also as "de-14"
    return list(seen)


# A scheme name written before an identifier ("ISIL:DE-14", "GND:118540238", "viaf:12345"): the identifier alone is
# what records hold, so it is extracted too.
_SCHEME_PREFIX = re.compile(r"^[A-Za-z]{2,8}:([A-Za-z0-9].*)$")


# ----------------------------------------------------------------------------------------------------------- CJK
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af\uff66-\uff9f]")


def has_cjk(text: str) -> bool:
    """True when ``text`` holds a Han, Kana or Hangul character (scripts written without spaces between words)."""
    return bool(_CJK.search(text))


# ------------------------------------------------------------------------------------------------------ gazetteer
# Words that name a custodian type in a query, per GLAMORCUBESFIXPHDNT code of the heritage custodian schema
# (data/schema), in nl/en/fr/de (folded, lower case; a query word matches when it starts with one of them).
TYPE_WORDS: dict[str, tuple[str, ...]] = {
    "M": ("museum", "musea", "musee", "museo", "museen"),
    "L": ("library", "libraries", "bibliothe", "bibliotheque", "bibliothek", "bibliotheek", "bücherei", "bucherei"),
    "A": ("archive", "archief", "archiv", "archives", "archieven"),
    "G": ("gallery", "galleries", "galerie", "galerij"),
    "U": ("universit",),
    "B": ("botanical", "zoo", "dierentuin", "botanisch"),
}

from heritage_pipeline.core.text import WORD_RE as _WORD  # noqa: E402  (the one word tokenizer)


def words(text: str) -> list[str]:
    """Folded, lower-cased word tokens of ``text`` (``\\w+`` runs)."""
    return _WORD.findall(ascii_fold(text).lower())


def query_types(query: str) -> set[str]:
    """Custodian type codes (:data:`TYPE_WORDS`) named by the words of ``query``."""
    out = set()
    for w in words(query):
        for code, stems in TYPE_WORDS.items():
            if any(w.startswith(s) for s in stems):
                out.add(code)
    return out


def query_places(query: str, places: dict[str, list[str]]) -> list[str]:
    """Places of a gazetteer named in ``query``, longest first.

    Args:
        query: the query text.
        places: ``{folded lower-case name: [names as stored]}`` (see :func:`gazetteer_key`).
    Returns:
        Stored names whose folded word sequence occurs as consecutive words of the query (names of 1-4 words),
        every stored spelling of each.
    """
    ws = words(query)
    found: list[str] = []
    for n in (4, 3, 2, 1):
        for i in range(len(ws) - n + 1):
            for stored in places.get(" ".join(ws[i:i + n]), ()):
                if stored not in found:
                    found.append(stored)
    return found


def gazetteer_key(name: str) -> str:
    """The lookup key of a place name: its folded, lower-cased words joined by one space."""
    return " ".join(words(name))
