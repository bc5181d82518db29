"""Registries without per-file configuration: header synonyms + value checks (sources/columns.py), on real files
and on small inputs written here."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from heritage_pipeline.core.config import load_chunking_config
from heritage_pipeline.sources.columns import (CODE_SLOTS, SYNONYMS, header_candidates, infer_mapping,
                                               looks_headerless, normalise_header, type_code)
from heritage_pipeline.sources.discovery import load_source
from heritage_pipeline.sources.dispatch import parse_source
from heritage_pipeline.sources.registry import MappingsFile, RegistryFileRule, parse_registry

REPO = Path(__file__).resolve().parents[2]
LABELS = yaml.safe_load((REPO / "data" / "eval" / "registries" / "labels.yaml").read_text(encoding="utf-8"))
REAL = sorted(LABELS["registries"])
PLACE_SLOTS = ("settlement", "street_address", "country")
ID_SLOTS = ("isil_code", "wikidata_id", "local_id", "registration_number")


def _parse(text: str, path: str = "t.csv", settings_: MappingsFile | None = None):
    return parse_registry(text, doc_id=path, source_path=path, lang="und", mappings=settings_ or MappingsFile())


def _rows(doc):
    return [(s.meta, doc.text[doc.blocks[s.first].start:doc.blocks[s.first].content_end]) for s in doc.sections]


@pytest.mark.parametrize("rel", REAL)
def test_every_real_registry_is_mapped_with_name_place_and_identifier(rel):
    """Through the real discovery + dispatch path (configured mappings on): never "unmapped"; the name, a place
    and an identifier are mapped wherever the labels say the file has them, and rows carry them."""
    src = load_source(REPO / "data" / rel, source_type="csv_registry")
    out = parse_source(src, load_chunking_config())
    doc = out.doc
    assert doc is not None and doc.meta["registry_type"] != "unmapped"
    truth = {s for s in LABELS["registries"][rel]["columns"].values() if s}
    mapped = set(doc.meta["column_mapping"].values())
    for group in (("preferred_label",), PLACE_SLOTS, ID_SLOTS):
        if truth & set(group):
            assert mapped & set(group), (rel, group, doc.meta["column_mapping"])
    rows = _rows(doc)
    assert rows and all(m["row_index"] is not None for m, _ in rows)
    if "preferred_label" in truth:
        named = sum(1 for m, _ in rows if m["extra"].get("slot:preferred_label"))
        assert named >= 0.95 * len(rows)
        assert all((m["extra"].get("slot:preferred_label") and t.startswith("preferred_label: ")) or
                   not m["extra"].get("slot:preferred_label") for m, t in rows)


def test_cp1252_us_registry_decodes_and_keeps_codes_out_of_the_text():
    path = REPO / "data" / "eval" / "registries" / "library-eda" / "PLS_FY19_Outlet_pud19i.cut212.csv"
    src = load_source(path, source_type="csv_registry")
    assert src.encoding.startswith("cp1252")
    doc = parse_source(src, load_chunking_config()).doc
    rows = _rows(doc)
    delta = [t for _, t in rows if "DELTA CO PLD \u2013 DELTA PUBLIC LIBRARY" in t]
    assert len(delta) == 1
    for meta, text in rows:
        assert "slot:statistical_code" in meta["extra"]  # FIPS / GNIS / census codes kept in metadata
        assert not any(line.startswith(tuple(f"{s}:" for s in CODE_SLOTS)) for line in text.splitlines())
        assert text.splitlines()[0].startswith("preferred_label: ") and meta["settlement"]
        assert meta["data_tier"] == "TIER_1_AUTHORITATIVE" and meta["has_identifiers"]  # LIBID


def test_headerless_japanese_registry_gets_isil_type_and_country():
    path = REPO / "data" / "eval" / "registries" / "crd-api-sample" / "libraries.head200.tsv"
    doc = parse_source(load_source(path, source_type="csv_registry"), load_chunking_config()).doc
    assert doc.meta["headerless"] and doc.meta["registry_type"] == "inferred_headerless"
    rows = _rows(doc)
    assert len(rows) == 200  # the first line is a row, not a header
    assert all(m["country_code"] == "JP" for m, _ in rows if m["extra"].get("slot:isil_code"))
    assert sum(1 for m, _ in rows if m["custodian_type"] == "L") >= 0.9 * len(rows)  # 図書館 in the type column


def test_french_museums_get_type_from_lower_case_names():
    path = REPO / "data" / "eval" / "registries" / "museofile_fr" / "liste-et-localisation-des-musees-de-france.head36.csv"
    doc = parse_source(load_source(path, source_type="csv_registry"), load_chunking_config()).doc
    types = [m["custodian_type"] for m, _ in _rows(doc)]
    assert types and all(t == "M" for t in types)  # "musée municipal", "écomusée ...", "muséum ..."


def test_headerless_identifier_list_is_one_chunk_per_code():
    codes = ["DE-1", "DE-Wim2", "FR-28", "NL-HaNA", "DE-3", "DE-4", "DE-5", "DE-6", "DE-7", "DE-8"]
    doc, problems = _parse("\n".join(codes[:3] + ["not a code"] + codes[3:]) + "\n")
    assert doc.meta["registry_type"] == "identifier_list" and doc.meta["headerless"]
    assert [t for _, t in _rows(doc)] == [f"isil_code: {c}" for c in codes]
    assert len(problems) == 1 and "not a isil_code" in problems[0][1] and problems[0][0].startswith("row 4")
    assert [m["country_code"] for m, _ in _rows(doc)][:4] == ["DE", "DE", "FR", "NL"]
    assert all(m["has_identifiers"] and m["row_index"] for m, _ in _rows(doc))
    with_header, _ = _parse("ISIL\nDE-1\nDE-2\n")
    assert with_header.meta["columns"] == ["ISIL"] and len(with_header.sections) == 2


@pytest.mark.parametrize("value, code", [
    ("musée municipal", "M"), ("MUSÉE DES BEAUX-ARTS", "M"), ("Stadtbücherei Reutlingen", "L"),
    ("Mediathek", "L"), ("Gemeindebücherei", "L"), ("archief", "A"), ("bibliothèque départementale", "L"),
    ("Stadtarchiv Worms", "A"), ("公共図書館(都道府県立) (21)", "L"), ("Wetterstation", None),
])
def test_type_words_in_any_case_and_language(value, code):
    assert type_code(value) == code


def test_type_never_from_a_place_and_registry_default_at_ninety_percent():
    rows = "".join(f"Foo {i};Museum;musée\n" for i in range(9)) + "Bar;Museumplein;\n"
    doc, _ = _parse("nom;ville;type\n" + rows)
    metas = [m for m, _ in _rows(doc)]
    assert [m["custodian_type"] for m in metas] == ["M"] * 10  # 9 of 9 typed rows agree: default M for "Bar"
    assert doc.meta["custodian_type_default"] == "M" and doc.meta["custodian_type_default_source"].startswith("inferred")
    mixed = "".join(f"Foo {i};Paris;musée\n" for i in range(8)) + "Baz;Lyon;archives\nBar;Museum;\n"
    doc2, _ = _parse("nom;ville;type\n" + mixed)
    assert [m for m, _ in _rows(doc2)][-1]["custodian_type"] is None  # 8/9 agree < 90%; "Museum" is a place
    configured = MappingsFile(files=[RegistryFileRule(pattern="*.csv", custodian_type="L",
                                                      data_tier="TIER_2_VERIFIED")])
    doc3, _ = _parse("nom;ville\nFoo;Paris\n", settings_=configured)
    meta = _rows(doc3)[0][0]
    assert meta["custodian_type"] == "L" and meta["data_tier"] == "TIER_2_VERIFIED"


def test_a_row_without_a_name_has_no_entity():
    doc, _ = _parse("name;city;isil\n;Haarlem;NL-HlmNHA\nTeylers Museum;Haarlem;\n")
    (m1, t1), (m2, _) = _rows(doc)
    assert doc.sections[0].anchors == [] and "row" not in t1
    assert doc.sections[1].anchors == ["Teylers Museum"]
    assert t1.splitlines() == ["settlement: Haarlem", "isil_code: NL-HlmNHA"]


def test_configured_mapping_wins(bundled_data):
    src = load_source(bundled_data / "raw" / "csv_registry" / "nl_erfgoedorganisaties_sample.csv")
    doc = parse_source(src, load_chunking_config()).doc
    assert doc.meta["registry_type"] == "nl_organisations" and "mapping_evidence" not in doc.meta


def test_value_check_rejects_a_header_the_values_contradict():
    # a "name" column of numbers is not a name; an ISIL column named "code" is found by its values
    m = infer_mapping(["name", "code", "stadt"], [["12", "DE-1", "Halle"], ["13", "DE-2", "Jena"]])
    assert m.columns == {"code": "isil_code", "stadt": "settlement"}
    ev = {e.column: e for e in m.evidence}
    assert ev["name"].rule == "rejected:preferred_label" and ev["code"].value_share == 1.0


def test_headerless_detection():
    assert looks_headerless(["Australia", "Canberra", "National Library", "https://github.com/nla"], [])
    assert not looks_headerless(["naam_organisatie", "ISIL-code", "website"], [["Rijksmuseum", "NL-RIJ", "x.nl"]])


_SEP = st.sampled_from(["_", "-", " ", ".", "  "])


@settings(max_examples=80, deadline=None)
@given(st.sampled_from(sorted((s, syn) for s, syns in SYNONYMS.items() for syn in syns if " " in syn)), _SEP,
       st.sampled_from([str.upper, str.lower, str.title]))
def test_header_spelling_does_not_change_the_slot(slot_syn, sep, case):
    """Case and the separator between words never change which slot a multi-word synonym names."""
    slot, syn = slot_syn
    header = case(syn.replace(" ", sep))
    assert normalise_header(header) == syn
    assert slot in [s for s, _, _ in header_candidates(header)]


def test_a_library_of_a_university_is_a_library():
    """A parent body named beside a collecting institution gives way to it (fresh-user trial: 154 university libraries
    of a headerless list were typed E, so "libraries in Berlin" gave their field match to Berlin, Connecticut)."""
    from heritage_pipeline.sources.columns import type_code

    assert type_code("Amsterdam University Library") == "L"
    assert type_code("University Library of Humboldt-Universität zu Berlin") == "L"
    assert type_code("Universitätsarchiv Leipzig") == "A"
    assert type_code("Museum of the University of St Andrews") == "M"
    assert type_code("Universiteit Leiden") == "E"  # the university itself
    assert type_code("Institut für Museumsforschung") == "R"  # a research institute about museums is not a museum
