"""Heritage-institution mentions in text and their resolution (names, identifiers, patterns, abbreviations,
coreference; see ``docs/heritage-mentions.md``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
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
    stem_key,
)

if TYPE_CHECKING:
    from .gazetteer import Gazetteer


# ------------------------------------------------------------------------------------------------------ mentions
@dataclass
class MentionContext:
    """What was mentioned so far in one conversation or document (for abbreviations and coreference)."""

    history: list[Mention] = field(default_factory=list)
    aliases: dict[str, Mention] = field(default_factory=dict)  # short form (as written) -> mention it stands for

    def last_of(self, type_code: str) -> Mention | None:
        for m in reversed(self.history):
            if type_code == "*" or m.type_code == type_code:
                return m
        return None


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


def _gazetteer_names(sc: _Scan, gazetteer: Gazetteer) -> list[Mention]:
    out: list[Mention] = []
    toks = sc.toks
    i = 0
    while i < len(toks):
        hit = None
        for n in range(min(gazetteer.max_tokens, len(toks) - i), 0, -1):
            key = tuple(t for t, _, _ in toks[i : i + n])
            idx = gazetteer.by_tokens.get(key)
            if idx is None and n >= 2:
                idx = gazetteer.by_stems.get(stem_key(key))
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

    def token_range(a: int, b: int) -> tuple[int, int]:
        ti = [k for k, (_, s, e) in enumerate(sc.toks) if s >= a and e <= b]
        return (ti[0], ti[-1] + 1) if ti else (0, 0)

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
            before = [f for f in found if f.end <= m.start()] + list(reversed(ctx.history))
            recent = {x.entity for x in sorted(before, key=lambda f: -f.end)}
            ent = next((c for name in recent for c in candidates if c.name == name), candidates[0])
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
    history = list(ctx.history)
    out: list[Mention] = []

    def add(k0: int, k1: int, target: Mention, kind: str) -> None:
        if sc.claim(k0, k1):
            surface, s, e = sc.span(k0, k1)
            m = Mention(surface, s, e, target.entity, target.type_code, kind, target.ids)
            out.append(m)
            history.append(m)

    for _, kind, payload in events:
        if kind == "mention":
            history.append(payload)
            continue
        k = payload
        if kind == "abbr":
            word = sc.word(k)
            target = ctx.aliases.get(word)
            if target is None:
                target = next((m for m in reversed(history) if initials(m.entity) == word.upper()), None)
            if target is not None:
                add(k, k + 1, target, "abbreviation")
        elif kind == "short":
            stem = stem_key((toks[k][0],))[0]
            owners = {m.entity: m for m in reversed(history)
                      if (d := _distinctive(m.entity)) and stem_key((d,))[0] == stem}
            if len(owners) == 1:
                add(k, k + 1, next(iter(owners.values())), "abbreviation")
        else:
            want = _description_type(toks[k + 1][0], sc.word(k + 1))
            target = next((m for m in reversed(history) if want == "*" or m.type_code == want), None)
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
