"""The indexed mention search (first-token bounds for gazetteer names, recency indexes for abbreviations, short
forms and descriptions) finds exactly what the straightforward scans found: a differential test against a
reference copy of those scans on real texts and on generated contexts."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings, strategies as st

from heritage_pipeline.core.config import REPO_ROOT
from heritage_pipeline.enrich import mentions as M
from heritage_pipeline.enrich.gazetteer import Gazetteer, Mention, default_gazetteer
from heritage_pipeline.enrich.names import initials, stem_key


# ------------------------------------------------------------------ reference: the scans before the indexes
def _ref_gazetteer_names(sc, gazetteer):
    out = []
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


def _ref_identifiers(sc, gazetteer, found, history):
    out = []
    text = sc.text

    def token_range(a, b):
        ti = [k for k, (_, s, e) in enumerate(sc.toks) if s >= a and e <= b]
        return (ti[0], ti[-1] + 1) if ti else (0, 0)

    for m in M.GHCID_RE.finditer(text):
        ent = gazetteer.lookup_id(f"ghcid:{m.group()}")
        if ent is not None and sc.claim(*token_range(m.start(), m.end())):
            out.append(Mention(m.group(), m.start(), m.end(), ent.name, ent.type_code, "identifier", tuple(sorted(ent.ids))))
    for m in M.ISIL_RE.finditer(text):
        code = m.group(1)
        if M.GHCID_RE.match(text, m.start()):
            continue
        candidates = gazetteer.lookup_all(f"isil:{code}")
        if not candidates and not M.ISIL_CUE_RE.search(text[max(0, m.start() - 20) : m.start()]):
            continue
        if not sc.claim(*token_range(m.start(), m.end())):
            continue
        if candidates:
            before = [f for f in found if f.end <= m.start()] + list(reversed(history))
            recent = list(dict.fromkeys(x.entity for x in sorted(before, key=lambda f: -f.end)))
            ent = next((c for name in recent for c in candidates if c.name == name), candidates[0])
            out.append(Mention(code, m.start(), m.end(), ent.name, ent.type_code, "identifier", tuple(sorted(ent.ids))))
        else:
            out.append(Mention(code, m.start(), m.end(), code, "U", "identifier", (f"isil:{code}",)))
    return out


def _ref_resolve_context(sc, found, history0, aliases):
    text, toks, n = sc.text, sc.toks, len(sc.toks)
    events = [(m.start, "mention", m) for m in found]
    for k, (t, s, e) in enumerate(toks):
        if sc.taken[k]:
            continue
        word = sc.word(k)
        if 2 <= len(word) <= 6 and sum(ch.isupper() for ch in word) >= 2 and word[:1].isupper():
            events.append((s, "abbr", k))
        elif t in M.DESCRIPTION_DETERMINERS and k + 1 < n and not sc.taken[k + 1] and M._description_type(toks[k + 1][0], sc.word(k + 1)):
            if text[e : toks[k + 1][1]].strip(" '’") != "":
                continue
            if k + 2 < n and sc.joined(k + 1, k + 3) and (sc.cap(k + 2) or toks[k + 2][0] in M.FRENCH_ADJECTIVES):
                continue
            events.append((s, "desc", k))
        elif word[:1].isupper() and len(t) >= 4:
            events.append((s, "short", k))
    events.sort(key=lambda ev: (ev[0], ev[1] != "mention"))
    history = list(history0)
    out = []

    def add(k0, k1, target, kind):
        if sc.claim(k0, k1):
            surface, s, e = sc.span(k0, k1)
            m = Mention(surface, s, e, target.entity, target.type_code, kind, target.ids)
            out.append(m)
            history.append(m)

    for _, kind, k in events:
        if kind == "mention":
            history.append(k)
            continue
        if kind == "abbr":
            word = sc.word(k)
            target = aliases.get(word)
            if target is None:
                target = next((m for m in reversed(history) if initials(m.entity) == word.upper()), None)
            if target is not None:
                add(k, k + 1, target, "abbreviation")
        elif kind == "short":
            stem = stem_key((toks[k][0],))[0]
            owners = {m.entity: m for m in reversed(history)
                      if (d := M._distinctive(m.entity)) and stem_key((d,))[0] == stem}
            if len(owners) == 1:
                add(k, k + 1, next(iter(owners.values())), "abbreviation")
        else:
            want = M._description_type(toks[k + 1][0], sc.word(k + 1))
            target = next((m for m in reversed(history) if want == "*" or m.type_code == want), None)
            if target is not None:
                add(k, k + 2, target, "coreference")
    return out


def _ref_annotate(texts, gazetteer):
    """The mentions of each text in one context, by the reference scans (history and aliases kept here)."""
    history, aliases, result = [], {}, []
    for text in texts:
        sc = M._Scan(text)
        found = _ref_gazetteer_names(sc, gazetteer)
        found += _ref_identifiers(sc, gazetteer, found, history)
        found += M._pattern_names(sc)
        found.sort(key=lambda m: m.start)
        for m in found:
            pm = re.match(r"\s*\(([A-Za-z][A-Za-z&\-]{1,9})\)", text[m.end :])
            if pm:
                aliases.setdefault(pm.group(1), m)
        found += _ref_resolve_context(sc, found, history, aliases)
        found.sort(key=lambda m: m.start)
        history.extend(found)
        result.append(found)
    return result


# ------------------------------------------------------------------------------------------------- real texts
@pytest.fixture(scope="module")
def real_contexts() -> list[tuple[tuple, list[str]]]:
    """The texts the pipeline searches (:func:`mention_text`) of every chunk of the bundled data, grouped into the
    pipeline's mention contexts in its order (:func:`annotate_chunks`), plus the conversations of the entity gold
    set."""
    from heritage_pipeline.core.config import load_chunking_config
    from heritage_pipeline.enrich.heritage import mention_context_key, mention_text
    from heritage_pipeline.enrich.langid import policy_from
    from heritage_pipeline.sources.discovery import discover
    from heritage_pipeline.stages import chunk_documents, parse_sources
    from heritage_pipeline_eval.sources import DEFAULT_ENTITY_GOLD, load_entity_gold

    cfg = load_chunking_config()
    chunks = chunk_documents(parse_sources(discover(REPO_ROOT / "data", policy=policy_from(cfg)), cfg).docs, cfg)
    groups: dict[tuple, list] = {}
    for c in chunks:
        groups.setdefault(mention_context_key(c), []).append(c)
    out = []
    for key, members in groups.items():
        members.sort(key=lambda c: (c.meta.message_index if c.meta.message_index is not None else -1,
                                    c.spans.char_start, c.id))
        out.append((key, [mention_text(c) for c in members]))
    out += [(("gold", g["id"]), [m["text"] for m in g["messages"]]) for g in load_entity_gold(DEFAULT_ENTITY_GOLD)]
    return out


def test_indexed_search_equals_reference_scans_on_real_texts(real_contexts):
    gaz = default_gazetteer()
    assert len(real_contexts) >= 100
    total = 0
    for key, texts in real_contexts:
        new = M.annotate_texts(texts, gaz)
        assert new == _ref_annotate(texts, gaz), key
        total += sum(map(len, new))
    assert total > 100  # the real texts do mention institutions: the comparison is not between empty lists


def test_real_texts_exercise_every_mention_kind(real_contexts):
    gaz = default_gazetteer()
    kinds = {m.kind for _, texts in real_contexts for ms in M.annotate_texts(texts, gaz) for m in ms}
    assert {"name", "identifier", "pattern", "abbreviation", "coreference"} <= kinds


# ------------------------------------------------------------------------------------------- generated contexts
_GAZ = default_gazetteer()
_NAMES = sorted({n for e in _GAZ.entities for n in [e.name, *e.names] if n})
_PIECES = _NAMES + [
    "the museum", "The museum", "this library", "het archief", "la bibliothèque", "die Einrichtung", "the institution",
    "KB", "RKD", "BnF", "NA", "Rijksmuseum", "Louvre", "Carnavalet", "the Museum Boijmans", "le musée Carnavalet",
    "ISIL NL-0100030000", "DE-MUS-814517", "NL-ZH-HAG-L-KB", "Stadsarchief Amsterdam", "Deutschen Museums",
    "visited", "and", "of", "(KB)", "(RM)", ",", ".", "in Amsterdam", "Koninklijke", "Bibliotheek", "museum",
]


@settings(max_examples=150, deadline=None)
@given(st.lists(st.lists(st.sampled_from(_PIECES), min_size=1, max_size=14).map(" ".join), min_size=1, max_size=6))
def test_indexed_search_equals_reference_scans_on_generated_contexts(texts):
    assert M.annotate_texts(texts, _GAZ) == _ref_annotate(texts, _GAZ)


def test_context_index_follows_history_appended_directly():
    gaz = default_gazetteer()
    ctx = M.MentionContext()
    first = M.find_mentions("Het Rijksmuseum in Amsterdam.", gaz, ctx)
    assert first and ctx.last_of("M").entity == first[0].entity
    ctx.history.append(Mention("X", 0, 1, "Nationaal Archief", "A", "name"))  # not through find_mentions
    assert ctx.last_of("*").entity == "Nationaal Archief"
    assert [m.entity for m in M.find_mentions("The archive holds maps.", gaz, ctx)] == ["Nationaal Archief"]


@pytest.mark.parametrize("order", [0, 1])
def test_shared_isil_resolves_to_the_candidate_mentioned_last(order):
    """Two entities share an ISIL: the code resolves to the one mentioned closest before it, whatever the hash
    seed (the names were a set before, iterated in hash order)."""
    gaz = Gazetteer.from_records([
        {"name": "Pergamonmuseum", "rank": 2, "ids": {"isil:DE-MUS-814517", "wd:Q157020"}},
        {"name": "Museum für Islamische Kunst", "rank": 2, "ids": {"isil:DE-MUS-814517", "wd:Q565932"}},
    ])
    names = ["Pergamonmuseum", "Museum für Islamische Kunst"]
    a, b = names[order], names[1 - order]
    found = M.find_mentions(f"{a} und {b} (DE-MUS-814517).", gaz)
    assert [(m.kind, m.entity) for m in found if m.kind == "identifier"] == [("identifier", b)]
    assert M.find_mentions(f"{a} (DE-MUS-814517) und {b}.", gaz)[1].entity == a
