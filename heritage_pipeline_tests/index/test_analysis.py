"""Full-text analysis: accent folding before stemming, CJK bigrams, identifiers matched whole, the field tier and
the flagged-chunk policy, on small indexes written here."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from heritage_pipeline.chunking.chunker import chunk_text
from heritage_pipeline.index.analysis import ascii_fold, extract_identifiers, query_places, query_types
from heritage_pipeline.index.schema import chunk_rows
from heritage_pipeline.index.search import search_table
from heritage_pipeline.index.writer import open_table, write_partitions

DIM = 8


def _chunk(name: str, lang: str, text: str, **meta):
    doc_id = name
    out = chunk_text(text, doc_id=name, source_path=f"{doc_id}.md", lang=lang, mode="hierarchical")
    for c in out:
        c.meta.lang = c.meta.language = lang
        for k, v in meta.items():
            setattr(c.meta, k, v)
    return out


def _index(tmp_path, chunks, part="p"):
    v = np.random.default_rng(0).normal(size=(len(chunks), DIM)).astype(np.float32)
    write_partitions(str(tmp_path), "chunks", {part: chunk_rows(chunks, v / np.linalg.norm(v, axis=1, keepdims=True), part)})
    return open_table(str(tmp_path), "chunks")


def _docs(hits):
    return [h["doc_id"] for h in hits]


def test_accent_folding_before_stemming_in_language_columns(tmp_path):
    tbl = _index(tmp_path, _chunk("fr1", "fr", "Le musée municipal ouvre ses salles.")
                 + _chunk("fr2", "fr", "La gare accueille des trains.")
                 + _chunk("de1", "de", "Öffnungszeiten des Stadtarchivs: Montag bis Freitag.")
                 + _chunk("de2", "de", "Der Bahnhof liegt im Zentrum."))
    for q in ("musee", "musée", "MUSÉES"):
        assert _docs(search_table(tbl, q, mode="fts", fts_lang="fr", k=3)) == ["fr1"], q
    for q in ("Offnungszeiten", "Öffnungszeiten", "offnungszeit"):
        assert _docs(search_table(tbl, q, mode="fts", fts_lang="de", k=3)) == ["de1"], q


def test_cjk_words_found_through_the_bigram_column(tmp_path):
    tbl = _index(tmp_path, _chunk("zh", "zh", "图书馆二楼设有阅读区和自习室。")
                 + _chunk("ja", "ja", "当館は古文書と絵図を所蔵しています。")
                 + _chunk("en", "en", "The reading room is on the second floor."))
    assert "search_text_cjk" in tbl.schema.names
    assert _docs(search_table(tbl, "阅读区", mode="fts", k=3)) == ["zh"]
    assert _docs(search_table(tbl, "古文書", mode="fts", k=3)) == ["ja"]
    assert _docs(search_table(tbl, "reading room", mode="fts", k=3)) == ["en"]  # other scripts unaffected


def _registry(doc_id, row, name, city, isil, ctype):
    text = f"Name: {name}\nStadt: {city}\nISIL: {isil}"
    return _chunk(f"{doc_id}-{row}", "de", text, doc_id=doc_id, source_type="csv_registry", row_index=row, settlement=city, custodian_type=ctype,
                  extra={"Name": name, "Stadt": city, "ISIL": isil})


def test_identifier_is_matched_whole_and_ranked_first(tmp_path):
    rows = [_registry("r", i, f"Bibliothek {i}", "Halle", isil, "L")
            for i, isil in enumerate(["DE-3", "DE-30", "DE-31", "DE-300", "DE-3a"])]
    prose = _chunk("prose", "de", "Die Bibliothek mit der ISIL DE-30 und DE-300 hat viele Bibliothek Bibliothek Bücher.")
    tbl = _index(tmp_path, [c for r in rows for c in r] + prose)
    for q in ("DE-3", "Welche Bibliothek hat die ISIL DE-3?", "de-3"):
        hits = search_table(tbl, q, mode="fts", fts_lang="de", k=5)
        assert hits[0]["row_index"] == 0 and hits[0]["tier"] == "identifier", q
    hits = search_table(tbl, "ISIL DE-300", mode="fts", k=5)
    assert {h["doc_id"] for h in hits if h["tier"] == "identifier"} == {"r", "prose"}
    assert search_table(tbl, "DE-3", mode="fts", k=5, tiers=False)[0]["tier"] is None


def test_place_and_type_of_the_query_rank_records_above_prose(tmp_path):
    recs = (_registry("r", 0, "Stadtmuseum", "Halle", "DE-M1", "M") + _registry("r", 1, "Stadtbibliothek", "Halle", "DE-L1", "L")
            + _registry("r", 2, "Kunstmuseum", "Bonn", "DE-M2", "M"))
    prose = _chunk("prose", "en", "Which museums are located in Halle? Museums in Halle, museums everywhere, Halle museums.")
    tbl = _index(tmp_path, recs + prose)
    hits = search_table(tbl, "Which museums are located in Halle?", mode="fts", k=4)
    assert (hits[0]["doc_id"], hits[0]["row_index"], hits[0]["tier"]) == ("r", 0, "field")  # the museum of Halle
    assert all(h["tier"] is None for h in hits[1:])  # the Halle library and the Bonn museum: no field match
    # a place without a type is no request for that place's records: prose first
    assert search_table(tbl, "Halle museums everywhere", mode="fts", k=1, filters={"doc_id": "prose"})[0]["tier"] is None
    assert search_table(tbl, "Where is Halle?", mode="fts", k=4)[0]["tier"] is None


def test_every_stored_spelling_of_a_place_gets_the_field_match(tmp_path):
    """Fresh-user trial: a US registry's "BERLIN" (Connecticut) and a German list's "Berlin" share one gazetteer key;
    only the first spelling was kept, so only the Connecticut libraries got the field match and ranked first."""
    recs = (_registry("us", 0, "East Berlin Library Association", "BERLIN", "US-CT1", "L")
            + _registry("de", 0, "Staatsbibliothek zu Berlin", "Berlin", "DE-1", "L")
            + _registry("de", 1, "Berlinische Galerie", "Berlin", "DE-MUS-1", "G"))
    tbl = _index(tmp_path, recs)
    hits = search_table(tbl, "libraries in Berlin", mode="fts", k=3)
    assert {(h["doc_id"], h["tier"]) for h in hits[:2]} == {("us", "field"), ("de", "field")}
    assert hits[2]["tier"] is None  # the gallery: a place match without the type


def test_flagged_chunks_are_kept_and_filtered_by_policy(tmp_path):
    good = _chunk("good", "en", "Opening hours of the reading room: 9 to 17.")
    bad = _chunk("bad", "en", "Opening hours opening hours opening hours home contact login")
    for c in bad:
        c.quality.boilerplate = True
    tbl = _index(tmp_path, good + bad)
    assert tbl.count_rows() == 2  # nothing lost
    assert _docs(search_table(tbl, "opening hours", mode="fts", k=5)) == ["good"]
    assert _docs(search_table(tbl, "opening hours", mode="fts", k=5, flagged="include")) == ["bad", "good"]
    assert _docs(search_table(tbl, "opening hours", mode="fts", k=5, flagged="demote")) == ["good", "bad"]
    with pytest.raises(ValueError, match="flagged-chunk policy"):
        search_table(tbl, "x", mode="fts", flagged="hide")


def test_explain_gives_the_ranks_behind_a_hybrid_score(tmp_path):
    tbl = _index(tmp_path, _chunk("a", "en", "apples and pears") + _chunk("b", "en", "ships and harbours"))
    qv = np.ones(DIM, np.float32) / np.sqrt(DIM)
    hits = search_table(tbl, "apples", mode="hybrid", k=2, query_vector=qv, rrf_k=60, explain=True)
    for h in hits:
        e = h["explain"]
        assert h["score"] == pytest.approx(e["rrf"]["fts"] + e["rrf"]["vector"])
        assert e["vector_rank"] in (1, 2)
    assert next(h for h in hits if h["doc_id"] == "a")["explain"]["bm25_rank"] == 1


def test_identifier_extraction_cases():
    got = extract_identifiers("ISIL DE-3? NL-AmRM, Q1600777 JP-1000031 DE-MUS-407010 Sachsen-Anhalt "
                              "Saint-Denis well-known https://paia.gbv.de/DE-3/daia")
    assert got == ["de-3", "nl-amrm", "q1600777", "jp-1000031", "de-mus-407010"]
    assert query_types("Welche Museen gibt es?") == {"M"} and query_types("bibliothèques de Lyon") == {"L"}
    assert query_places("musées à Saint-Étienne", {"saint etienne": ["Saint-Étienne"]}) == ["Saint-Étienne"]
    assert query_places("libraries in Berlin", {"berlin": ["BERLIN", "Berlin"]}) == ["BERLIN", "Berlin"]


@given(st.text())
def test_ascii_fold_is_idempotent_and_keeps_ascii(s):
    f = ascii_fold(s)
    assert ascii_fold(f) == f
    if s.isascii():
        assert f == s


LATIN_LETTERS = st.characters(min_codepoint=0xC0, max_codepoint=0x17F, whitelist_categories=("Lu", "Ll"))
# Kana, CJK ideographs, Tamil (compatibility squares such as U+33C8 are folded by NFKD to Latin letters: not here)
OTHER_SCRIPTS = (st.characters(min_codepoint=0x3040, max_codepoint=0x30FF) | st.characters(min_codepoint=0x4E00, max_codepoint=0x9FFF)
                 | st.characters(min_codepoint=0x0B80, max_codepoint=0x0BFF))


@given(st.text(LATIN_LETTERS, min_size=1))
def test_ascii_fold_maps_every_accented_latin_letter_to_ascii(s):
    assert ascii_fold(s).isascii() and ascii_fold(s).isalpha()


@given(st.text(OTHER_SCRIPTS, min_size=1))
def test_ascii_fold_leaves_cjk_and_tamil_unchanged(s):
    assert ascii_fold(s) == s


@pytest.mark.parametrize("src,want", [("musée", "musee"), ("Öffnungszeiten", "Offnungszeiten"), ("Straße", "Strasse"),
                                      ("古文書", "古文書"), ("が", "が"), ("Ελλάδα", "Ελλάδα"), ("œuvre", "oeuvre")])
def test_ascii_fold_cases(src, want):
    assert ascii_fold(src) == want
