"""Institution names: case and accent folding, type keywords (museum, Archiv, bibliothèque, ...), inflection-
stripped keys and initials, shared by the gazetteer and the mention finder.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

import regex

# Deliberately not core.text.WORD_RE: name tokens are letters and digits only, so "_" separates words
# (``koninklijke_bibliotheek`` in a path or identifier still shows the name) and marks are folded away before.
WORD_RE = regex.compile(r"[\p{L}\p{N}]+")
QID_RE = re.compile(r"^Q\d+$")
ISIL_RE = re.compile(r"(?<![\w-])([A-Z]{2}-[A-Za-z0-9][A-Za-z0-9:/\-]{0,13})(?![\w-])")
GHCID_RE = re.compile(r"(?<![\w-])[A-Z]{2}-[A-Z0-9]{1,3}-[A-Z]{3}-[A-Z]-[A-Z0-9-]+(?![\w-])")
ISIL_CUE_RE = re.compile(r"\bISIL\b[\s:=()\-–codeCODE]{0,12}$")
MAX_NAME_TOKENS = 10

# Type keywords (accent-folded, lower case) -> GLAMORCUBESFIXPHDNT code. Multilingual (NL, EN, FR, DE + a few
# neighbours seen in the registries). Multi-word keys are matched as token sequences.
TYPE_KEYWORDS: dict[str, str] = {
    **dict.fromkeys("museum musea museums musee musees museo musei museu muzeum museet museen".split(), "M"),
    **dict.fromkeys("archief archieven archive archives archiv archivo archivio archiwum arkiv archivum "
                    "erfgoedcentrum".split(), "A"),
    **dict.fromkeys("bibliotheek bibliotheken bibliotheque bibliotheques bibliothek bibliotheken library libraries "
                    "biblioteca biblioteka mediatheque mediatheek erfgoedbibliotheken".split(), "L"),
    **dict.fromkeys("gallery galerie galleria kunsthal kunsthalle pinakothek pinacotheque".split(), "G"),
    **dict.fromkeys("zoo dierentuin tierpark tiergarten hortus arboretum aquarium".split(), "B"),
    **dict.fromkeys(["botanical garden", "botanic garden", "jardin botanique", "botanischer garten"], "B"),
    **dict.fromkeys("instituut institute institut kenniscentrum".split(), "R"),
    **dict.fromkeys("university universiteit universite universitat universitaet hogeschool".split(), "E"),
    **dict.fromkeys("kerk church eglise kirche cathedral kathedraal cathedrale abdij abbey abbaye abtei "
                    "klooster monastery synagoge synagogue moskee mosque basiliek basilica basilique".split(), "H"),
    **dict.fromkeys("kasteel castle chateau schloss".split(), "F"),
    **dict.fromkeys(["historische vereniging", "historical society", "heemkundekring", "oudheidkundige kring",
                     "geschichtsverein", "societe historique", "genootschap"], "S"),
    **dict.fromkeys("ministerie ministry ministere ministerium rijksdienst".split(), "O"),
}
# Dutch/German compounds ending in a keyword (Rijksmuseum, Stadsarchief, Stadtbibliothek, Universiteitsbibliotheek).
COMPOUND_SUFFIXES: dict[str, str] = {"museum": "M", "musea": "M", "archief": "A", "archieven": "A", "archiv": "A",
                                     "bibliotheek": "L", "bibliothek": "L", "galerie": "G", "kunsthalle": "G",
                                     "tierpark": "B", "universitat": "E", "universiteit": "E", "kerk": "H", "kirche": "H"}
ARTICLES = frozenset("the de het een le la les l der die das den dem des ein eine".split())
CONNECTORS = frozenset("of for and the van voor en de der den het du des d la le l les et fur zu am im von und "
                       "s t".split())
CONJUNCTIONS = frozenset("and en et und".split())
HEAD_SEPARATORS = frozenset("of from van uit by door".split())
PREPOSITIONS = frozenset("of for voor fur zu am im and en et und in at bij op aan dans chez".split())
FRENCH_ADJECTIVES = frozenset("national nationale nationaux nationales municipal municipale municipales municipaux "
                              "departemental departementale departementales departementaux regional regionale "
                              "regionales communal communale communales royal royale royales diocesain diocesaine "
                              "diocesaines universitaire interuniversitaire historique historiques "
                              "intercommunal intercommunale patrimoniale".split())
# Definite descriptions for coreference: (determiners, heads) per language; head -> type code ("*" = any type).
DESCRIPTION_HEADS: dict[str, str] = {
    "museum": "M", "musee": "M", "museo": "M", "archive": "A", "archives": "A", "archief": "A", "archiv": "A",
    "library": "L", "bibliotheek": "L", "bibliotheque": "L", "bibliothek": "L", "mediatheque": "L",
    "gallery": "G", "galerie": "G", "zoo": "B", "dierentuin": "B", "institute": "R", "instituut": "R",
    "institut": "R", "university": "E", "universiteit": "E", "universite": "E", "universitat": "E",
    "institution": "*", "instelling": "*", "einrichtung": "*", "organisation": "*", "organization": "*",
    "organisatie": "*", "garden": "B", "tuin": "B", "jardin": "B", "garten": "B", "hortus": "B",
}
DESCRIPTION_DETERMINERS = frozenset("the this that het dit dat de deze die le la l les ce cet cette ces das dieses "
                                     "diese dieser dem des der".split())


def fold(s: str) -> str:
    """Case- and accent-folded form used for matching (NFKD, combining marks removed, casefold).

    Args:
        s: any string.

    Returns:
        The folded string (ASCII input: its ``casefold()``, which is what NFKD + mark removal + casefold give).
    """
    if s.isascii():  # NFKD leaves ASCII unchanged and no ASCII character is a combining mark
        return s.casefold()
    d = unicodedata.normalize("NFKD", s)
    return "".join(ch for ch in d if not unicodedata.combining(ch)).casefold()


# word tokens repeat (a language has few distinct words): fold each distinct one once
_fold_token = lru_cache(maxsize=1 << 16)(fold)


def name_tokens(text: str) -> list[tuple[str, int, int]]:
    """Word tokens of ``text`` as (folded token, start, end) in code points."""
    return [(_fold_token(m.group()), m.start(), m.end()) for m in WORD_RE.finditer(text)]


# Types that name a collecting institution's parent body when they stand beside one (a university, research
# institute, church, government or company library/archive/museum/gallery): "Amsterdam University Library" is a
# library, "Universitätsarchiv" an archive, "Church Museum" a museum.
HOST_TYPES = frozenset("EROCH")
COLLECTING_TYPES = frozenset("GLAM")


def _type_codes(toks: list[str]):
    """Type codes of the type keywords of folded tokens ``toks``, in order (a two-word keyword counts once)."""
    i = 0
    while i < len(toks):
        t = toks[i]
        if i + 1 < len(toks) and f"{t} {toks[i + 1]}" in TYPE_KEYWORDS:
            yield TYPE_KEYWORDS[f"{t} {toks[i + 1]}"]
            i += 2
            continue
        code = TYPE_KEYWORDS.get(t) or compound_type(t)
        if code:
            yield code
        i += 1


def keyword_type(name: str) -> str | None:
    """GLAMORCUBESFIXPHDNT code of the type keywords in ``name`` (``Stadsarchief Amsterdam`` -> ``A``).

    Args:
        name: an institution name or a type-column cell.

    Returns:
        The code of the first type keyword, except that a parent-body type (:data:`HOST_TYPES`: university,
        institute, church, government, company) gives way to a gallery/library/archive/museum keyword later in the
        name (``University Library`` -> ``L``, not ``E``); None when there is no type keyword.
    """
    codes = _type_codes([t for t, _, _ in name_tokens(name)])
    first = next(codes, None)
    if first in HOST_TYPES:
        return next((c for c in codes if c in COLLECTING_TYPES), first)
    return first


def compound_type(tok: str) -> str | None:
    for suffix, code in COMPOUND_SUFFIXES.items():
        if tok.endswith(suffix) and len(tok) > len(suffix) + 2:
            return code
    return None


_INFLECTIONS = ("en", "em", "er", "es", "e", "s")


def stem_key(tokens: tuple[str, ...]) -> tuple[str, ...]:
    """Tokens without one Dutch/German inflectional ending each (``des Deutschen Museums`` and ``Deutsches Museum``
    share ``deutsch museum``; ``Zeeuwse``/``Zeeuws``): used only for names of two or more words."""
    return tuple(stem_token(t) for t in tokens)


@lru_cache(maxsize=1 << 16)
def stem_token(t: str) -> str:
    """One folded token without one Dutch/German inflectional ending (the per-token step of :func:`stem_key`).

    Args:
        t: a folded token (:func:`fold`).

    Returns:
        ``t`` without its first matching ending of ``en em er es e s`` when at least 4 characters remain, else ``t``.
    """
    for suf in _INFLECTIONS:
        if t.endswith(suf) and len(t) - len(suf) >= 4:
            return t[: -len(suf)]
    return t


@lru_cache(maxsize=1 << 14)
def initials(name: str) -> str:
    """Initials of the non-connector words of a name (``Bibliothèque nationale de France`` -> ``BNF``)."""
    words = [w for w in WORD_RE.findall(name) if fold(w) not in CONNECTORS]
    return "".join(fold(w)[0] for w in words).upper() if len(words) >= 2 else ""
