"""Regressions of the fresh-user registry trial (trial defects 6, 8, 9, 12; 7 in dedup/test_identity.py, 10 in
test_discovery.py): small inputs of the shapes of the real files that failed (London museums, Berlin museums, England
libraries)."""

from __future__ import annotations

import pytest

from heritage_pipeline.sources.columns import code_columns, header_candidates, infer_mapping, is_code_value
from heritage_pipeline.sources.registry import MappingsFile, parse_registry, postal_country


def _parse(text: str, name: str = "r.csv"):
    doc, problems = parse_registry(text, doc_id=name, source_path=name, lang="und", mappings=MappingsFile())
    assert problems == []
    return doc


def _texts(doc) -> list[str]:
    return [doc.text[doc.blocks[s.first].start:doc.blocks[s.first].content_end] for s in doc.sections]


# ------------------------------------------------------------------ defect 6: unmapped columns in the record text
LONDON = ("Name,Wikipedia URL,Built,Opened,URL,Postcode,Council (?),Wikipedia_Type,Summary,Objects,Date Visited\n"
          "18 Stafford Terrace,http://en.wikipedia.org/wiki/18_Stafford_Terrace,1870,,"
          "http://www.rbkc.gov.uk/18staffordterrace,W8 7BH,Kensington and Chelsea,Historic house,"
          "Home of Punch cartoonist Linley Sambourne,250000,6/27/14\n"
          "Two Temple Place,http://en.wikipedia.org/wiki/Two_Temple_Place,1895,2011,http://www.twotempleplace.org/,"
          "WC2R 3BD,Westminster,Art,Late Victorian mansion,,\n"
          "Shakespeare's Globe,,1997,1997,http://www.shakespearesglobe.com/,SE1 9DT,Southwark,Theatre,,,\n")


def test_unmapped_descriptive_columns_follow_the_mapped_slots_in_the_text():
    doc = _parse(LONDON)
    text = _texts(doc)[0]
    lines = text.splitlines()
    assert lines[0] == "preferred_label: 18 Stafford Terrace"  # name first, then the other mapped slots
    assert "Summary: Home of Punch cartoonist Linley Sambourne" in lines
    assert "Council (?): Kensington and Chelsea" in lines and "Built: 1870" in lines and "Objects: 250000" in lines
    mapped = [i for i, ln in enumerate(lines) if ln.split(":", 1)[0] in ("preferred_label", "postal_code", "website")]
    unmapped = [i for i, ln in enumerate(lines) if ln.startswith(("Summary:", "Built:", "Council"))]
    assert max(mapped) < min(unmapped)
    assert doc.sections[0].meta["extra"]["Summary"] == "Home of Punch cartoonist Linley Sambourne"  # metadata too


def test_long_code_columns_stay_in_metadata_but_out_of_the_text():
    text = ("name,postcode,lsoa_name,lsoa_code,tax,imd_decile\n"
            "Barking,IG11 7NB,Barking and Dagenham 015C,E01000010,DE123456789,3\n"
            "Dodworth,S75 3RF,Barnsley 019A,E01007382,DE987654321,4\n")
    doc = _parse(text)
    assert doc.meta["columns_out_of_text"] == ["lsoa_code", "tax"]
    body = _texts(doc)[0]
    assert "E01000010" not in body and "DE123456789" not in body
    assert "lsoa_name: Barking and Dagenham 015C" in body and "imd_decile: 3" in body
    assert doc.sections[0].meta["extra"]["lsoa_code"] == "E01000010"
    from heritage_pipeline.sources.accounting import registry_mapping_line

    assert "4 unmapped (2 in the text after the slots, 2 code columns in meta.extra only: lsoa_code, tax)" in \
        registry_mapping_line("r.csv", doc.meta)


@pytest.mark.parametrize("value, code", [("E01000010", True), ("06037", True), ("12-3456789", True),
                                         ("DE123456789", True), ("250000", False), ("6/27/14", False),
                                         ("2014-06-27", False), ("51.5363203", False), ("Barnsley 019A", False),
                                         ("LAL", False), ("1234", False), ("R_19", True), ("08", True),
                                         ("AK0001", True), ("0", False), ("Y", False), ("2019", False)])
def test_is_code_value(value, code):
    assert is_code_value(value) is code


def test_code_columns_ignore_mapped_and_empty_columns():
    header = ["name", "fips", "empty", "lsoa"]
    rows = [["A", "06037", "", "E01000010"], ["B", "06038", "", "E01000011"]]
    assert code_columns(header, rows, {"name": "preferred_label", "fips": "statistical_code"}) == ["lsoa"]


# ------------------------------------------------------------------ defect 8: a column of subjects is not the type
def test_a_column_of_subjects_is_not_the_type_column_and_the_default_fills_the_rows():
    """Berlin museums: ``Category`` (Archaeology, Street Art, Photography) was the type column, so rows whose subject
    names no type got no type although the registry default is M."""
    rows = [("Pergamon Museum", "Archaeology"), ("Neues Museum", "Egyptology"), ("Urban Nation", "Street Art"),
            ("C/O Berlin", "Photography"), ("Museum für Fotografie", "Photography"), ("Bode-Museum", "Sculpture")]
    doc = _parse("Museum,Category\n" + "".join(f"{n},{c}\n" for n, c in rows))
    assert "Category" not in doc.meta["column_mapping"]
    assert doc.meta["custodian_type_default"] == "M"
    assert [s.meta["custodian_type"] for s in doc.sections] == ["M"] * 6  # 2 from the default
    assert _texts(doc)[2] == "preferred_label: Urban Nation\nCategory: Street Art"


def test_a_governance_code_column_is_not_the_type_but_a_real_type_column_still_is():
    england = _parse("name,type,postcode\nBarking Library,LAL,IG117NB\nDodworth,LAL,S75 3RF\nQuinton Library,ICL,"
                     "B32 2TW\nBattle Library,CL,TN330XB\nNorton Library,LAL,TS201AE\n")
    assert "type" not in england.meta["column_mapping"]
    assert [s.meta["custodian_type"] for s in england.sections] == ["L"] * 5  # Dodworth: the registry default
    real = infer_mapping(["name", "type"], [["A", "Openbare bibliotheek"], ["B", "Gemeentearchief"], ["C", "museum"]])
    assert real.columns == {"name": "preferred_label", "type": "custodian_type"}
    ev = next(e for e in infer_mapping(["name", "Wikipedia_Type"], [["A", "Theatre"], ["B", "Historic house"],
                                                                     ["C", "Art"]]).evidence if e.index == 1)
    assert ev.slot is None and ev.rule == "rejected:custodian_type"


# ------------------------------------------------------------------ defect 9: UK postcodes without a space
@pytest.mark.parametrize("pc", ["IG117NB", "TN330XB", "BS251AB", "W6  7AT", "ig11 7nb", "SW1A1AA"])
def test_uk_postcodes_with_or_without_space(pc):
    assert postal_country({"postal_code": pc}) == "GB"


def test_unspaced_uk_postcodes_give_the_rows_their_country():
    doc = _parse("name,postcode\nBarking,IG117NB\nBattle Library,TN330XB\nWinscombe,BS251AB\nDodworth,S75 3RF\n")
    assert [s.meta["country_code"] for s in doc.sections] == ["GB"] * 4


# ------------------------------------------------------------------ defect 12: header guesses the values must confirm
def test_date_visited_is_not_the_registration_date_and_lsoa_code_is_not_a_local_id():
    assert not any(slot == "registration_date" for slot, _, _ in header_candidates("Date Visited"))
    assert header_candidates("date")[0][0] == "registration_date"  # the whole header still is, and a date of
    assert "registration_date" in [c[0] for c in header_candidates("date_arrete_attribution_appellation")]  # grant
    assert not any(slot == "local_id" for slot, _, _ in header_candidates("lsoa_code"))
    assert header_candidates("code")[0][0] == "local_id" and header_candidates("LIBNAME")[0][0] == "preferred_label"
    m = infer_mapping(["name", "Date Visited", "lsoa_code"], [["A", "6/27/14", "E01000010"], ["B", "", "E01000011"]])
    assert m.columns == {"name": "preferred_label"}


def test_a_website_cell_that_is_no_url_stays_under_its_column():
    doc = _parse("name,url\nBarking,www.lbbd.gov.uk/libraries\nDodworth,See footnote below\n"
                 "Globe,\"http://a.example.org/, http://b.example.org/\"\n")
    metas = [s.meta["extra"] for s in doc.sections]
    assert metas[0]["slot:website"] == "www.lbbd.gov.uk/libraries"
    assert "slot:website" not in metas[1] and metas[1]["url"] == "See footnote below"
    assert _texts(doc)[1] == "preferred_label: Dodworth\nurl: See footnote below"
    assert metas[2]["slot:website"] == "http://a.example.org/, http://b.example.org/"  # two URLs are still the website
