"""Heritage-institution mentions in text and their resolution (names, identifiers, patterns, abbreviations,
coreference; see ``docs/heritage-mentions.md``).
"""

from __future__ import annotations

import re
import weakref
from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import chain
from typing import TYPE_CHECKING, Any

from .gazetteer import Mention
from .names import (
    ARTICLES,
    CONJUNCTIONS,
    CONNECTORS,
    DESCRIPTION_DETERMINERS,
    DESCRIPTION_HEADS,
    FRENCH_ADJECTIVES,
    GHCID_RE,
    HEAD_SEPARATORS,
    ISIL_CUE_RE,
    ISIL_RE,
    PREPOSITIONS,
    TYPE_KEYWORDS,
    WORD_RE,
    compound_type,
    fold,
    initials,
    keyword_type,
    name_tokens,
    stem_token,
)

if TYPE_CHECKING:
    from .gazetteer import Gazetteer


# ------------------------------------------------------------------------------------------------------ mentions
@dataclass
class MentionContext:
    """What was mentioned so far in one conversation or document (for abbreviations and coreference).

    Besides ``history`` it keeps :class:`_Recency` indexes over it (updated lazily from ``history``, so code that
    appends to ``history`` directly stays correct): looking a short form up is then a dict access instead of a scan of
    every earlier mention of the document, which made mention search quadratic in the size of long documents.
    """

    history: list[Mention] = field(default_factory=list)
    aliases: dict[str, Mention] = field(default_factory=dict)  # short form (as written) -> mention it stands for
    _index: "_Recency" = field(default=None, repr=False, compare=False)  # type: ignore[assignment]
    _indexed: int = field(default=0, repr=False, compare=False)  # how many history items _index has seen

    def last_of(self, type_code: str) -> Mention | None:
        """The latest mention of type ``type_code`` (``"*"``: of any type), or None."""
        return self.recency().last_of(type_code)

    def recency(self) -> "_Recency":
        """The recency indexes of ``history`` (brought up to date with it)."""
        if self._index is None or self._indexed > len(self.history):
            self._index, self._indexed = _Recency(), 0
        for m in self.history[self._indexed :]:
            self._index.add(m)
        self._indexed = len(self.history)
        return self._index


@lru_cache(maxsize=1 << 14)
def _short_stem(entity: str) -> str | None:
    """Stem of the word a short form of ``entity`` would use (:func:`_distinctive`), or None."""
    d = _distinctive(entity)
    return stem_token(d) if d else None


class _Recency:
    """Indexes over a sequence of mentions, in the order they were added, answering what the scans of the history
    answered: the latest mention with given initials, the latest of a type, and per short-form stem the earliest
    mention of each entity owning it."""

    __slots__ = ("by_initials", "by_type", "any", "by_stem")

    def __init__(self) -> None:
        self.by_initials: dict[str, Mention] = {}
        self.by_type: dict[str, Mention] = {}
        self.any: Mention | None = None
        self.by_stem: dict[str, dict[str, Mention]] = {}

    def add(self, m: Mention) -> None:
        ini = initials(m.entity)
        if ini:
            self.by_initials[ini] = m
        self.by_type[m.type_code] = m
        self.any = m
        stem = _short_stem(m.entity)
        if stem is not None:
            self.by_stem.setdefault(stem, {}).setdefault(m.entity, m)

    def last_of(self, type_code: str) -> Mention | None:
        return self.any if type_code == "*" else self.by_type.get(type_code)


class _Scan:
    """Tokens of one text, which of them are already part of a mention, and the run test."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.toks = name_tokens(text)
        self.taken = [False] * len(self.toks)

    def word(self, k: int) -> str:
        return self.text[self.toks[k][1] : self.toks[k][2]]

    def cap(self, k: int) -> bool:
        return self.word(k)[:1].isupper()

    def claim(self, i: int, j: int) -> bool:
        if i >= j or any(self.taken[i:j]):
            return False
        for k in range(i, j):
            self.taken[k] = True
        return True

    def joined(self, i: int, j: int) -> bool:
        """Tokens i..j-1 form one run: only spaces, hyphens or apostrophes between them."""
        t = self.text
        return all(_RUN_GAP.fullmatch(t[self.toks[k][2] : self.toks[k + 1][1]]) for k in range(i, j - 1))

    def span(self, i: int, j: int) -> tuple[str, int, int]:
        s, e = self.toks[i][1], self.toks[j - 1][2]
        return self.text[s:e], s, e


_RUN_GAP = re.compile(r"[ \t\-'’]{0,3}")


def _is_keyword(t: str) -> bool:
    return t in TYPE_KEYWORDS or bool(compound_type(t))


def find_mentions(text: str, gazetteer: Gazetteer, context: MentionContext | None = None) -> list[Mention]:
    """Heritage-institution mentions in ``text`` in text order (see module docstring); updates ``context``."""
    ctx = context if context is not None else MentionContext()
    sc = _Scan(text)
    found = _gazetteer_names(sc, gazetteer)
    found += _identifiers(sc, gazetteer, found, ctx)
    found += _pattern_names(sc)
    found.sort(key=lambda m: m.start)
    for m in found:  # a parenthesised short form right after a mention defines an alias: "Koninklijke Bibliotheek (KB)"
        pm = re.match(r"\s*\(([A-Za-z][A-Za-z&\-]{1,9})\)", text[m.end :])
        if pm:
            ctx.aliases.setdefault(pm.group(1), m)
    found += _resolve_context(sc, found, ctx)
    found.sort(key=lambda m: m.start)
    ctx.history.extend(found)
    return found


_FIRST_TOKENS: "weakref.WeakKeyDictionary[Gazetteer, tuple]" = weakref.WeakKeyDictionary()


def _first_tokens(gazetteer: Gazetteer) -> tuple[dict[str, int], dict[str, int]]:
    """Longest gazetteer key (tokens) per first token of ``by_tokens`` and per first stem of ``by_stems``, cached per
    gazetteer (rebuilt if its indexes grew). A text position whose token starts no name costs two dict lookups, so
    name search is linear in the text (the previous search built and looked up ``max_tokens`` keys and stem keys
    at every position)."""
    sizes = (len(gazetteer.by_tokens), len(gazetteer.by_stems))
    cached = _FIRST_TOKENS.get(gazetteer)
    if cached is not None and cached[0] == sizes:
        return cached[1], cached[2]
    tok_max: dict[str, int] = {}
    for key in gazetteer.by_tokens:
        tok_max[key[0]] = max(tok_max.get(key[0], 0), len(key))
    stem_max: dict[str, int] = {}
    for key in gazetteer.by_stems:
        stem_max[key[0]] = max(stem_max.get(key[0], 0), len(key))
    _FIRST_TOKENS[gazetteer] = (sizes, tok_max, stem_max)
    return tok_max, stem_max


def _gazetteer_names(sc: _Scan, gazetteer: Gazetteer) -> list[Mention]:
    """Longest gazetteer names (folded tokens, else inflection-stripped stems for two or more words) from left to
    right; candidate lengths at a position are bounded by the longest name starting with its token or stem."""
    out: list[Mention] = []
    toks = sc.toks
    folded = [t for t, _, _ in toks]
    stems = [stem_token(t) for t in folded]
    tok_max, stem_max = _first_tokens(gazetteer)
    by_tokens, by_stems = gazetteer.by_tokens, gazetteer.by_stems
    i = 0
    while i < len(toks):
        hit = None
        mt, ms = tok_max.get(folded[i], 0), stem_max.get(stems[i], 0)
        for n in range(min(gazetteer.max_tokens, len(toks) - i, max(mt, ms)), 0, -1):
            idx = by_tokens.get(tuple(folded[i : i + n])) if n <= mt else None
            if idx is None and 2 <= n <= ms:
                idx = by_stems.get(tuple(stems[i : i + n]))
            if idx is None or not sc.joined(i, i + n):
                continue
            surface = sc.span(i, i + n)[0]
            if n <= 2 and not (surface[:1].isupper() or surface[:1].isdigit()):
                continue
            ent = gazetteer.entities[idx]
            if n == 1 and surface not in ent.names and surface != ent.name:
                continue
            hit = (n, ent)
            break
        if hit is None:
            i += 1
            continue
        n, ent = hit
        sc.claim(i, i + n)
        surface, s, e = sc.span(i, i + n)
        out.append(Mention(surface, s, e, ent.name, ent.type_code, "name", tuple(sorted(ent.ids))))
        i += n
    return out


def _identifiers(sc: _Scan, gazetteer: Gazetteer, found: list[Mention], ctx: MentionContext) -> list[Mention]:
    """GHCIDs known to the gazetteer, then ISIL codes (an ISIL shared by several entities resolves to the one
    mentioned most recently before it, e.g. ``Pergamonmuseum (DE-MUS-814517)``)."""
    out: list[Mention] = []
    text = sc.text

    starts = [s for _, s, _ in sc.toks]
    ends = [e for _, _, e in sc.toks]

    def token_range(a: int, b: int) -> tuple[int, int]:
        # tokens are sorted and disjoint: those inside [a, b) are one run (bisect instead of a scan per identifier)
        lo, hi = bisect_left(starts, a), bisect_right(ends, b)
        return (lo, hi) if lo < hi else (0, 0)

    for m in GHCID_RE.finditer(text):
        ent = gazetteer.lookup_id(f"ghcid:{m.group()}")
        if ent is not None and sc.claim(*token_range(m.start(), m.end())):
            out.append(Mention(m.group(), m.start(), m.end(), ent.name, ent.type_code, "identifier", tuple(sorted(ent.ids))))
    for m in ISIL_RE.finditer(text):
        code = m.group(1)
        if GHCID_RE.match(text, m.start()):
            continue
        candidates = gazetteer.lookup_all(f"isil:{code}")
        if not candidates and not ISIL_CUE_RE.search(text[max(0, m.start() - 20) : m.start()]):
            continue
        if not sc.claim(*token_range(m.start(), m.end())):
            continue
        if candidates:
            # the candidate mentioned most recently: of the earlier mentions naming a candidate, the one of greatest
            # end offset, ties to this text's before the history's latest first. (This was a set of the names,
            # iterated in hash order: with two candidates mentioned the choice changed with PYTHONHASHSEED.)
            names = {c.name for c in candidates}
            best: Mention | None = None
            for x in chain((f for f in found if f.end <= m.start()), reversed(ctx.history)):
                if x.entity in names and (best is None or x.end > best.end):
                    best = x
            ent = next((c for c in candidates if best is not None and c.name == best.entity), candidates[0])
            out.append(Mention(code, m.start(), m.end(), ent.name, ent.type_code, "identifier", tuple(sorted(ent.ids))))
        else:
            out.append(Mention(code, m.start(), m.end(), code, "U", "identifier", (f"isil:{code}",)))
    return out


def _pattern_names(sc: _Scan) -> list[Mention]:
    """Capitalised names around a type keyword (see module docstring)."""
    out: list[Mention] = []
    toks, n = sc.toks, len(sc.toks)
    i = 0
    while i < n:
        if sc.taken[i]:
            i += 1
            continue
        j = _grow_run(sc, i)
        if j == i:
            i += 1
            continue
        start, end = _trim_run(sc, i, j)
        run = toks[start:end]
        kw = [k for k, (t, _, _) in enumerate(run) if _is_keyword(t)
              or (k + 1 < len(run) and f"{t} {run[k + 1][0]}" in TYPE_KEYWORDS)]
        content = [k for k, (t, _, _) in enumerate(run)
                   if sc.cap(start + k) and t not in ARTICLES and t not in TYPE_KEYWORDS]
        if kw and len(run) >= 2 and content and sc.claim(start, end):
            surface, s, e = sc.span(start, end)
            canonical = " ".join(surface.split())
            out.append(Mention(surface, s, e, canonical[:1].upper() + canonical[1:], keyword_type(surface) or "U",
                               "pattern"))
        i = max(end if end > i else j, i + 1)
    return out


def _grow_run(sc: _Scan, i: int) -> int:
    """End of the run of name words starting at token ``i`` (``i`` when none starts there)."""
    toks, n = sc.toks, len(sc.toks)
    j = i
    if not sc.cap(i):
        # French style "le musée Carnavalet", "les archives municipales de Bordeaux": a lower-case keyword opens a name
        # when a capitalised word follows, directly or after adjectives and connectors
        if not (toks[i][0] in TYPE_KEYWORDS and _lower_keyword_name(sc, i)):
            return i
        j = i + 1
    while j < n and not sc.taken[j] and (j == i or sc.joined(j - 1, j + 1)):
        t = toks[j][0]
        if sc.cap(j) or (sc.word(j)[:1].isdigit() and j > i):
            j += 1
        elif j > i and (t in CONNECTORS or t in FRENCH_ADJECTIVES):
            j += 1
        else:
            break
    return j


def _lower_keyword_name(sc: _Scan, i: int) -> bool:
    toks, n = sc.toks, len(sc.toks)
    k = i + 1
    while k < n and not sc.taken[k] and sc.joined(k - 1, k + 1) and not sc.cap(k):
        if toks[k][0] not in FRENCH_ADJECTIVES and toks[k][0] not in CONNECTORS:
            return False
        k += 1
    return k < n and not sc.taken[k] and sc.joined(k - 1, k + 1) and sc.cap(k) and (k == i + 1 or toks[k - 1][0] in CONNECTORS)


def _trim_run(sc: _Scan, i: int, j: int) -> tuple[int, int]:
    """Cut a run to the name in it: leading lower-case connectors and articles, everything up to a lower-case
    article or of/van/from that precedes the first keyword ("Visit the ...", "Collections of ..."), everything after a conjunction that follows a keyword ("A Museum and the B
    Library"), a capitalised common noun after a compound keyword ("das Bundesarchiv Personalakten von ..."), and
    trailing connectors."""
    toks = sc.toks
    end = j
    seen_kw = False
    for k in range(i, j):
        t = toks[k][0]
        if seen_kw and t in CONJUNCTIONS:
            end = k
            break
        if compound_type(t) and k + 2 < j and sc.cap(k + 1) and toks[k + 2][0] in CONNECTORS and not sc.cap(k + 2):
            end = k + 1  # compound head + capitalised word + lower-case connector: the word is a noun, not a place
            break
        seen_kw = seen_kw or _is_keyword(t)
    while end > i and toks[end - 1][0] in CONNECTORS and not sc.cap(end - 1):
        end -= 1
    start = i
    while start < end and (toks[start][0] in ARTICLES or toks[start][0] in PREPOSITIONS
                           or (toks[start][0] in CONNECTORS and not sc.cap(start))):
        start += 1  # a capitalised name particle stays ("Van Gogh Museum"); "Im Stadtarchiv Köln" loses "Im"
    first_kw = next((k for k in range(start, end) if _is_keyword(toks[k][0])), None)
    if first_kw is not None:
        # "Visit the Louvre Museum", "Collections of Limburgs Museum", "Friends of the Rijksmuseum": a lower-case
        # article or "of/van/from" before the first keyword opens the name after it
        cuts = [k for k in range(start + 1, first_kw)
                if not sc.cap(k) and (toks[k][0] in ARTICLES or toks[k][0] in HEAD_SEPARATORS)]
        if cuts:
            start = cuts[-1] + 1
            while start < end and toks[start][0] in ARTICLES and not sc.cap(start):
                start += 1
    return start, end


def _distinctive(name: str) -> str | None:
    """The word a short form of a name would use: its first capitalised word that is not an article or a plain
    type word (``Musée du Louvre`` -> ``louvre``, ``Staatsbibliothek zu Berlin`` -> ``staatsbibliothek``)."""
    for w in WORD_RE.findall(name):
        f = fold(w)
        if w[:1].isupper() and f not in ARTICLES and f not in TYPE_KEYWORDS and f not in CONNECTORS and len(f) >= 4:
            return f
    return None


def _resolve_context(sc: _Scan, found: list[Mention], ctx: MentionContext) -> list[Mention]:
    """Abbreviations, short forms and definite descriptions, resolved in text order against earlier mentions."""
    text, toks, n = sc.text, sc.toks, len(sc.toks)
    events: list[tuple[int, str, Any]] = [(m.start, "mention", m) for m in found]
    for k, (t, s, e) in enumerate(toks):
        if sc.taken[k]:
            continue
        word = sc.word(k)
        if 2 <= len(word) <= 6 and sum(ch.isupper() for ch in word) >= 2 and word[:1].isupper():
            events.append((s, "abbr", k))
        elif t in DESCRIPTION_DETERMINERS and k + 1 < n and not sc.taken[k + 1] and _description_type(toks[k + 1][0], sc.word(k + 1)):
            if text[e : toks[k + 1][1]].strip(" '’") != "":
                continue
            if k + 2 < n and sc.joined(k + 1, k + 3) and (sc.cap(k + 2) or toks[k + 2][0] in FRENCH_ADJECTIVES):
                continue  # "the Museum Boijmans", "les archives municipales ...": a name, not a description
            events.append((s, "desc", k))
        elif word[:1].isupper() and len(t) >= 4:
            events.append((s, "short", k))
    events.sort(key=lambda ev: (ev[0], ev[1] != "mention"))
    # the history is the context's (indexed once for the whole document, ``ctx.recency()``) followed by this text's
    # mentions in event order (``local``): lookups ask the local index first where the latest mention wins, the
    # context's first where the earliest does
    past = ctx.recency()
    local = _Recency()
    out: list[Mention] = []

    def add(k0: int, k1: int, target: Mention, kind: str) -> None:
        if sc.claim(k0, k1):
            surface, s, e = sc.span(k0, k1)
            m = Mention(surface, s, e, target.entity, target.type_code, kind, target.ids)
            out.append(m)
            local.add(m)

    for _, kind, payload in events:
        if kind == "mention":
            local.add(payload)
            continue
        k = payload
        if kind == "abbr":
            word = sc.word(k)
            target = ctx.aliases.get(word)
            if target is None:
                target = local.by_initials.get(word.upper()) or past.by_initials.get(word.upper())
            if target is not None:
                add(k, k + 1, target, "abbreviation")
        elif kind == "short":
            stem = stem_token(toks[k][0])
            owners = {**local.by_stem.get(stem, {}), **past.by_stem.get(stem, {})}  # earliest mention per entity
            if len(owners) == 1:
                add(k, k + 1, next(iter(owners.values())), "abbreviation")
        else:
            want = _description_type(toks[k + 1][0], sc.word(k + 1))
            target = local.last_of(want) or past.last_of(want)
            if target is not None:
                add(k, k + 2, target, "coreference")
    return out


def _description_type(head: str, word: str) -> str | None:
    """Type code a description head refers to (``museum`` -> ``M``, ``institution`` -> any; a compound such as
    ``stadsarchief`` -> ``A`` only when written in lower case: a capitalised one may be a short name), or None.
    ``head`` is the folded token, ``word`` as written."""
    return DESCRIPTION_HEADS.get(head) or (compound_type(head) if word[:1].islower() else None)


def annotate_texts(texts: list[str], gazetteer: Gazetteer, *, context: MentionContext | None = None) -> list[list[Mention]]:
    """Mentions of each text, resolved in order within one shared context (e.g. the messages of a conversation).
    The rules are the same for every language (keywords and descriptions of NL, EN, FR and DE are all active)."""
    ctx = context if context is not None else MentionContext()
    return [find_mentions(t, gazetteer, ctx) for t in texts]
