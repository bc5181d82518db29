"""CSV/TSV registries: encodings never mangled, delimiters sniffed, mappings applied, ragged and broken rows handled,
spans equal to the row's character range."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from heritage_pipeline.core.config import load_chunking_config
from heritage_pipeline.sources.discovery import load_source
from heritage_pipeline.sources.dispatch import parse_source
from heritage_pipeline.sources.registry import MappingsFile, RegistryMapping, parse_registry, sniff_delimiter

FIX = Path(__file__).parents[1] / "fixtures" / "csv"
REPO = Path(__file__).resolve().parents[2]


def _rows(doc):
    """(slots/extra dict, chunk text, raw span) per row section."""
    out = []
    for sec in doc.sections:
        b = doc.blocks[sec.first]
        out.append((sec.meta, doc.text[b.start : b.content_end], (b.raw_start, b.raw_end)))
    return out


def _parse_file(path: Path):
    src = load_source(path)
    assert src.status == "ok", src.reason
    doc, problems = parse_registry(src.text, doc_id=path.name, source_path=str(path), lang="und")
    return src, doc, problems


def test_cp1252_registry_is_decoded_exactly_and_mapped():
    src, doc, problems = _parse_file(FIX / "cp1252_semicolon.csv")
    assert src.encoding.startswith("cp1252")
    expected = (FIX / "cp1252_semicolon.csv").read_bytes().decode("cp1252")
    assert src.text == expected  # not one character differs from the real encoding
    assert problems == []
    rows = _rows(doc)
    assert [m["extra"]["slot:preferred_label"] for m, _, _ in rows] == [
        "Museum Belvédère", "Fryslân Museum", "'t Behouden Huys", "Zeeuws Archief"]
    meta, text, span = rows[0]
    assert "preferred_label: Museum Belvédère" in text and "settlement: Heerenveen" in text
    assert meta["extra"]["opmerking"] == "Oranjewoud – ‘kunst’ & natuur"  # unknown column kept, curly quotes intact
    assert meta["registry_type"] == "nl_organisations" and meta["data_tier"] == "TIER_1_AUTHORITATIVE"
    # an unmapped human-readable column: in the metadata under its own name and in the text after the mapped slots
    assert rows[1][0]["extra"]["opmerking"] == "prijs € 12,50" and rows[1][1].endswith("\nopmerking: prijs € 12,50")
    assert rows[2][0]["extra"]["slot:registration_number"] == "40002001"
    assert rows[3][0]["country_code"] == "NL" and rows[3][0]["has_identifiers"]


def test_latin1_registry_quotes_and_isil_mapping():
    src, doc, problems = _parse_file(FIX / "latin1_comma.csv")
    assert src.text == (FIX / "latin1_comma.csv").read_bytes().decode("latin-1")
    assert problems == []
    rows = _rows(doc)
    assert rows[0][0]["registry_type"] == "isil_registry_nl"
    assert "provenance_note: fonds ancien, manuscrits" in rows[0][1]
    assert "registration_date: 2001-05-03" in rows[0][1]
    assert 'provenance_note: Straße "Heumarkt" 14' in rows[2][1]
    assert rows[2][0]["country_code"] == "DE"
    assert rows[1][0]["extra"]["slot:preferred_label"] == "Musée de l'Hôtel-Dieu"


def test_bom_crlf_and_unknown_columns():
    src, doc, problems = _parse_file(FIX / "utf8_bom_semicolon_crlf.csv")
    assert src.encoding == "utf-8-sig" and not src.text.startswith("\ufeff")
    assert doc.meta["delimiter"] == ";" and doc.meta["columns"][0] == "naam_organisatie"
    rows = _rows(doc)
    assert rows[1][0]["extra"]["website"] == "https://www.tresoar.nl"
    for meta, text, (s, e) in rows:
        assert "\r" not in src.text[s:e] and "\n" not in src.text[s:e]


def test_tab_ragged_rows_and_backslash_quotes():
    src, doc, problems = _parse_file(FIX / "tab_ragged.tsv")
    assert doc.meta["delimiter"] == "\t" and doc.meta["registry_type"] == "wikidata_isil"
    rows = _rows(doc)
    assert len(rows) == 4 and problems == []
    assert rows[0][0]["data_tier"] == "TIER_2_VERIFIED"
    assert rows[1][0]["extra"]["slot:preferred_label"] == 'Historische vereniging \\"Jan van Arkel\\'
    assert rows[1][0]["extra"]["slot:isil_code"] == "NL-KpHVJvA"  # the quote did not swallow the next rows
    assert rows[3][0]["extra"]["column_6"] == "extra"  # surplus cell kept under a generated column name


def test_unbalanced_quote_is_reported_and_contained():
    src, doc, problems = _parse_file(FIX / "unbalanced_quote.csv")
    assert len(problems) == 1 and "unbalanced quote" in problems[0][1] and problems[0][0].startswith("row 2")
    labels = [m["extra"].get("slot:preferred_label") or m["extra"].get("name") for m, _, _ in _rows(doc)]
    assert labels == ["Rijksmuseum", '"Broken museum', "Next museum", "Last museum"]
    assert "settlement: Den Haag, NL" in _rows(doc)[3][1]  # "city" is mapped from the header (columns.py)


def test_pipe_delimited_unmapped_registry():
    src, doc, _ = _parse_file(FIX / "pipe_delimited.csv")
    assert doc.meta["delimiter"] == "|" and doc.meta["registry_type"] == "inferred"
    # isil has no value: mapped by its header alone (an empty column cannot be confirmed nor contradicted)
    assert doc.meta["column_mapping"] == {"name": "preferred_label", "city": "settlement", "isil": "isil_code"}
    assert _rows(doc)[0][1] == "preferred_label: Teylers Museum\nsettlement: Haarlem"
    assert _rows(doc)[0][0]["custodian_type"] == "M"


@pytest.mark.parametrize("name, status, needle", [
    ("binary_nul.csv", "quarantined", "binary"),
    ("empty.csv", "skipped", "empty"),
])
def test_unreadable_files_are_accounted_for(name, status, needle):
    src = load_source(FIX / name)
    assert src.status == status and needle in src.reason


def test_single_column_file_is_quarantined_with_reason():
    src = load_source(FIX / "one_column.csv")
    out = parse_source(src, load_chunking_config())
    assert out.doc is None and "not a delimited registry" in out.quarantined[0].reason


@pytest.mark.parametrize("text, expected", [
    ('a;b;c\n"x, y";2;3\n"p, q";5;6\n', ";"),
    ("a,b,c\n1,2,3\n", ","),
    ("a\tb\tc\n1\t2\n", "\t"),
    ("a|b\n1|2\n", "|"),
    ("name;city\nAmsterdam, NL;NL\n", ";"),
])
def test_sniff_delimiter(text, expected):
    assert sniff_delimiter(text) == expected


def test_bundled_dutch_organisations_csv(bundled_data):
    path = bundled_data / "raw" / "csv_registry" / "nl_erfgoedorganisaties_sample.csv"
    src, doc, problems = _parse_file(path)
    assert src.encoding == "utf-8-sig" and problems == []
    labels = [m["extra"]["slot:preferred_label"] for m, _, _ in _rows(doc)]
    assert "Museum Belvédère" in labels and "'s-Gravenhage" in src.text
    assert len(labels) == len([ln for ln in src.text.splitlines()[1:] if ln.strip()])
    for meta, text, (s, e) in _rows(doc):
        assert meta["extra"]["slot:preferred_label"] in src.text[s:e]


def test_shared_wikidata_isil_export_every_row(shared_data):
    path = shared_data / "heritage" / "isil_wikidata" / "wikidata_isil_lookup_sample.tsv"
    src, doc, problems = _parse_file(path)
    lines = [ln for ln in src.text.split("\n")[1:] if ln.strip()]
    assert problems == [] and len(doc.sections) == len(lines)
    for (meta, text, (s, e)), line in zip(_rows(doc), lines):
        assert src.text[s:e] == line.rstrip("\r")  # the span is exactly the row
        assert meta["extra"]["slot:isil_code"] in line


_cell = st.text(alphabet=st.characters(blacklist_categories=("Cs", "Cc"), blacklist_characters="\x00") | st.sampled_from(
    [",", ";", '"', "\n", " ", "é", "€"]), min_size=1, max_size=12).filter(lambda s: s.strip())


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(_cell, min_size=3, max_size=3), min_size=1, max_size=8))
def test_csv_writer_output_round_trips(rows):
    """Whatever csv.writer produces (quotes, delimiters and newlines inside cells), every value comes back in its
    row's chunk (newlines folded to spaces, outer whitespace trimmed) and every span is that row's text."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["name", "city", "note"])
    starts = []
    for r in rows:
        starts.append(buf.tell())
        w.writerow(r)
    text = buf.getvalue()
    keep_raw = MappingsFile(mappings={"raw": RegistryMapping(match=["name"], columns={})})  # every column unmapped
    doc, problems = parse_registry(text, doc_id="t", source_path="t.csv", lang="und", mappings=keep_raw)
    assert problems == []
    assert doc.meta["delimiter"] == ","
    secs = doc.sections
    assert len(secs) == len(rows)
    for sec, r, start in zip(secs, rows, starts):
        b = doc.blocks[sec.first]
        assert b.raw_start == start
        for col, value in zip(("name", "city", "note"), r):
            folded = " ".join(value.replace("\r", "\n").split("\n")).strip()
            assert sec.meta["extra"].get(col, "") == folded


def test_duplicate_column_names_keep_every_value():
    from heritage_pipeline.sources.registry import _map_row

    slots, extra = _map_row(["name", "name", "city", "city"], ["Rijksmuseum", "RM", "Amsterdam", "NL"], {})
    assert extra == {"name": "Rijksmuseum; RM", "city": "Amsterdam; NL"} and slots == {}


def test_a_header_only_registry_is_reported_as_holding_no_content(tmp_path):
    from heritage_pipeline.core.config import load_chunking_config
    from heritage_pipeline.sources.discovery import load_source
    from heritage_pipeline.sources.dispatch import parse_source

    f = tmp_path / "empty.csv"
    f.write_text("naam_organisatie;postadres_plaats\n", encoding="utf-8")
    out = parse_source(load_source(f, source_type="csv_registry"), load_chunking_config())
    assert out.doc is not None and not out.quarantined
    assert out.skipped == [f"{out.doc.source_path}: no text to chunk (the file parsed but holds no content)"]


# ------------------------------------------------------------------------------------- tables that are no registry
def _summary_of(paths):
    from heritage_pipeline.sources.accounting import parsed_file, summarize_inputs
    from heritage_pipeline.stages import parse_sources

    sources = [load_source(p, source_type="csv_registry") for p in paths]
    parsed = parse_sources(sources, load_chunking_config())
    statuses = {s.path: (s.status, parsed.accounted[s.path].partition(": ")[2] or s.reason) for s in sources}
    return summarize_inputs(statuses, [parsed_file(d) for d in parsed.docs], parsed.quarantined)


def test_a_table_with_no_name_or_identifier_column_is_skipped_as_not_a_registry(tmp_path):
    """A stock-price table (no column maps to a name or identifier slot) was chunked row by row as institutions;
    it is skipped with the reason, and the summary's file counts add up (issue 12 trial)."""
    prices = tmp_path / "prices.csv"
    prices.write_text("Date,Open,High,Low,Close,Volume\n2003-09-19,29.76,29.97,29.52,29.96,92433800\n"
                      "2003-09-18,28.49,29.51,28.42,29.50,67268096\n", encoding="utf-8")
    isils = tmp_path / "holdings.csv"  # counterpart: only an identifier column and numbers is still a registry
    isils.write_text("isil,volumes,visitors\nNL-AsdRM,120000,2500000\nNL-HlmTM,40000,300000\n", encoding="utf-8")
    out = parse_source(load_source(prices, source_type="csv_registry"), load_chunking_config())
    assert out.doc is None and out.quarantined == []
    assert "not a registry: no column maps to a name or identifier slot" in out.skipped[0]
    assert "Date, Open, High" in out.skipped[0] and "registration_date" in out.skipped[0]  # the one mapped column
    kept = parse_source(load_source(isils, source_type="csv_registry"), load_chunking_config())
    assert kept.doc is not None and len(kept.doc.sections) == 2
    summary = _summary_of([prices, isils])
    assert (summary.files, summary.chunked, summary.n_skipped, summary.n_quarantined) == (2, 1, 1, 0)
    assert any("not a registry" in ln for ln in summary.lines())
    assert summary.parts["rows"].read == summary.parts["rows"].chunked == 2  # rows of the skipped file not counted


def test_matplotlib_msft_stock_prices_are_not_a_registry():
    """matplotlib's sample ``msft.csv`` (Date, Open, High, Low, Close, Volume, Adj. Close*: package data nobody on
    the team wrote) is skipped; a configured mapping still reads such a file (configured mappings win)."""
    import matplotlib

    f = Path(matplotlib.get_data_path()) / "sample_data" / "msft.csv"
    src = load_source(f, source_type="csv_registry")
    assert src.text.startswith("Date,Open,High,Low,Close")
    out = parse_source(src, load_chunking_config())
    assert out.doc is None and "not a registry" in out.skipped[0]
    configured = MappingsFile(mappings={"prices": RegistryMapping(match=["Date", "Close"], columns={})})
    doc, problems = parse_registry(src.text, doc_id="msft", source_path=str(f), lang="en", mappings=configured)
    assert problems == [] and doc.meta["registry_type"] == "prices"
    assert len(doc.sections) == len([ln for ln in src.text.splitlines()[1:] if ln.strip()])


# ------------------------------------------------------------------------------------------------- ragged rows
def _text_pairs(text: str) -> dict[str, str]:
    return dict(line.split(": ", 1) for line in text.split("\n"))


def _meta_pairs(extra: dict[str, str]) -> dict[str, str]:
    from heritage_pipeline.sources.columns import CODE_SLOTS

    return {k.removeprefix("slot:"): v for k, v in extra.items()
            if k.startswith("slot:") and k[5:] not in CODE_SLOTS or not k.startswith("slot:")}


def test_ragged_rows_are_warned_with_line_numbers_and_text_agrees_with_meta(tmp_path):
    """Rows with fewer or more fields than the header: one grouped warning naming the file and lines, every row kept,
    a shifted cell that is no ISIL is not claimed as ``isil_code``, surplus cells shown in the text (trial defect)."""
    f = tmp_path / "ragged.csv"
    f.write_text("name,place,isil\nRijksmuseum,Amsterdam,NL-AsdRM\nMuseum Prinsenhof,Delft\n"
                 "Teylers Museum,Haarlem,Spaarne,NL-HlmTM\nFrans Hals Museum,Haarlem,NL-HlmFHM\n"
                 "Museum A,B,C,D,E\n", encoding="utf-8")
    src, doc, problems = _parse_file(f)
    assert problems == [] and len(doc.sections) == 5
    warn = doc.meta["ragged_rows"]  # line 3 (Museum Prinsenhof,Delft) only leaves out its empty trailing ISIL
    assert warn["count"] == 2 and warn["lines"] == [4, 6] and warn["header_fields"] == 3
    assert "at lines 4, 6" in warn["message"] and warn["fields"] == {"4": 1, "5": 1}
    rows = _rows(doc)
    for meta, text, _ in rows:  # every line of the text is a value of the metadata, and the other way round
        assert _text_pairs(text) == _meta_pairs(meta["extra"])
    teylers, shifted = rows[2], rows[4]
    assert teylers[0]["extra"]["isil"] == "Spaarne" and "slot:isil_code" not in teylers[0]["extra"]
    assert "column_4: NL-HlmTM" in teylers[1] and "isil: Spaarne" in teylers[1]  # the real ISIL stays visible
    assert "isil_code" not in shifted[1] and "isil: C" in shifted[1] and not shifted[0]["has_identifiers"]
    assert rows[3][0]["extra"]["slot:isil_code"] == "NL-HlmFHM" and rows[3][0]["country_code"] == "NL"  # not ragged
    summary = _summary_of([f])
    lines = summary.lines()
    assert summary.n_ragged == 2 and any(str(f) in ln and "lines 4, 6" in ln for ln in lines)
    assert summary.parts["rows"].read == summary.parts["rows"].chunked == 5


def test_trailing_empty_fields_left_out_are_not_ragged_but_a_shifted_short_row_is(tmp_path):
    """Exports omit trailing empty fields (Wikidata's TSV: 110 of the bundled lookup's rows have 4 of 5 fields, the
    empty dbsId left out): no warning. A short row whose cells fail their column's pattern (a place under ``isil``)
    is shifted: warned, and the place is not claimed as the ISIL."""
    src, doc, problems = _parse_file(REPO / "data" / "raw" / "csv_registry" / "wikidata_isil_lookup_sample.tsv")
    short = [ln for ln in src.text.splitlines()[1:] if ln.count("\t") < 4]
    assert len(short) >= 100 and problems == []  # the real export does leave trailing fields out
    assert "ragged_rows" not in doc.meta and len(doc.sections) == len(src.text.splitlines()) - 1
    f = tmp_path / "short.csv"
    f.write_text("name,isil,place\nRijksmuseum,NL-AsdRM,Amsterdam\nTeylers Museum,NL-HlmTM\nMuseum Prinsenhof,Delft\n",
                 encoding="utf-8")
    src, doc, problems = _parse_file(f)
    assert problems == [] and doc.meta["ragged_rows"]["lines"] == [4]
    rows = _rows(doc)
    assert rows[1][0]["extra"]["slot:isil_code"] == "NL-HlmTM"  # trailing place left out: cells where the header says
    assert "slot:isil_code" not in rows[2][0]["extra"] and rows[2][0]["extra"]["isil"] == "Delft"


_word = st.text(alphabet="abcdefgh", min_size=1, max_size=6)
_isil = st.from_regex(r"NL-[A-Z][a-z]{2,5}", fullmatch=True)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.one_of(_word, _isil), min_size=1, max_size=6), min_size=1, max_size=6))
def test_record_text_and_meta_hold_the_same_values_on_any_row_shape(rows):
    """Property: whatever the field count of each row, every ``key: value`` line of the record text is a value of
    ``meta.extra`` (slots as ``slot:<name>``); on a ragged row the text holds every non-code value of the metadata
    (on a regular row unmapped columns stay in metadata only, SPEC §2), and its ``isil_code`` passes the ISIL
    check."""
    from heritage_pipeline.sources.columns import VALUE_CHECKS

    text = "name,place,isil\n" + "".join(",".join(r) + "\n" for r in rows)
    doc, problems = parse_registry(text, doc_id="t", source_path="t.csv", lang="und", mappings=MappingsFile())
    assert problems == []
    # surplus cells make a row ragged; a short row here only leaves trailing fields out (its cells are the name and
    # the place, no patterned column among them): not ragged
    ragged = {i + 1 for i, r in enumerate(rows) if len(r) > 3}
    assert doc.meta.get("ragged_rows", {}).get("count", 0) == len(ragged)
    for meta, body, _ in _rows(doc):
        in_text, in_meta = _text_pairs(body), _meta_pairs(meta["extra"])
        assert in_text.items() <= in_meta.items()
        if meta["row_index"] in ragged:
            assert in_text == in_meta
            assert "isil_code" not in in_text or VALUE_CHECKS["isil_code"](in_text["isil_code"])


def test_shared_wikidata_export_short_rows_are_not_warned_and_read_unchanged(shared_data):
    """The real Wikidata ISIL export omits the trailing empty dbsId field on most rows (an export habit, issue 12
    left-over 3): no ragged-row warning, the rows read as before (nothing demoted, nothing added)."""
    path = shared_data / "heritage" / "isil_wikidata" / "wikidata_isil_lookup_sample.tsv"
    src, doc, problems = _parse_file(path)
    lines = src.text.split("\n")
    short = [i + 1 for i, ln in enumerate(lines) if i > 0 and ln.strip() and len(ln.rstrip("\r").split("\t")) < 5]
    assert short and problems == [] and "ragged_rows" not in doc.meta
    for meta, text, _ in _rows(doc):
        assert all(k.startswith("slot:") for k in meta["extra"])  # no cell left unplaced on these rows
    isils = [m["extra"]["slot:isil_code"] for m, _, _ in _rows(doc) if "slot:isil_code" in m["extra"]]
    from heritage_pipeline.sources.columns import VALUE_CHECKS

    assert len(isils) == len(_rows(doc)) and all(VALUE_CHECKS["isil_code"](v) for v in isils)


# ---------------------------------------------------------------------------------------------------- country
def test_us_rows_get_their_country_from_zip_and_state_codes_never_from_a_place_name(tmp_path):
    """A US registry (state column -> region, ZIP codes) has no ISIL and no country column: each row with a ZIP code
    and a USPS state code is US, the rest take US only because nearly all rows agree; "Paris" (Texas) is no evidence
    for France, and a German PLZ beside "BY" (Bavaria) proves nothing (trial defect: PLS rows had no country)."""
    f = tmp_path / "pls.csv"
    rows = [("TX", "PARIS PUBLIC LIBRARY", "PARIS", "75460")] + [("CA", f"LIBRARY {i}", "FRESNO", f"9{i:04d}")
                                                                  for i in range(18)] + [("CA", "BOOKMOBILE", "", "")]
    f.write_text("STABR,LIBNAME,CITY,ZIP\n" + "".join(",".join(r) + "\n" for r in rows), encoding="utf-8")
    src, doc, _ = _parse_file(f)
    assert doc.meta["column_mapping"]["STABR"] == "region" and doc.meta["column_mapping"]["ZIP"] == "postal_code"
    codes = [m["country_code"] for m, _, _ in _rows(doc)]
    assert codes == ["US"] * 20 and doc.meta["country_code_default"] == "US"
    assert doc.meta["country_code_default_source"] == "inferred (0.950 of 20 rows)"  # 19 rows with their own evidence
    strict = MappingsFile.model_validate({"defaults": {"country_agreement": 1.0}})  # the config key is read
    doc2, _ = parse_registry(src.text, doc_id="p", source_path="pls.csv", lang="en", mappings=strict)
    assert [s.meta["country_code"] for s in doc2.sections][-1] is None and doc2.meta["country_code_default"] is None
    de = tmp_path / "bayern.csv"
    de.write_text("name,bundesland,plz,ort\nStadtbibliothek München,BY,80331,München\nStadtbibliothek Nürnberg,BY,90402,"
                  "Nürnberg\nStaatsbibliothek Bamberg,BY,96049,Bamberg\n", encoding="utf-8")
    _, doc3, _ = _parse_file(de)
    assert [m["country_code"] for m, _, _ in _rows(doc3)] == [None, None, None]


@pytest.mark.parametrize("slots, expected", [
    ({"postal_code": "99577-7743", "region": "AK"}, "US"), ({"postal_code": "99556", "region": "ak"}, "US"),
    ({"postal_code": "99556"}, None), ({"postal_code": "80331", "region": "BY"}, None),
    ({"postal_code": "1012 AB"}, "NL"), ({"postal_code": "K1A 0B1"}, "CA"), ({"postal_code": "SW1A 1AA"}, "GB"),
    ({"postal_code": "75001", "settlement": "Paris"}, None), ({"region": "CA"}, None),
])
def test_postal_country(slots, expected):
    from heritage_pipeline.sources.registry import postal_country

    assert postal_country(slots) == expected


def test_real_pls_outlets_are_all_us(shared_data):
    """The IMLS PLS FY19 outlet file (realworld, 2,400 rows, no ISIL, no country column): every row US."""
    path = shared_data / "realworld/raw/csv_registry/library-eda/data/PLS_FY19_Outlet_pud19i.head2400.csv"
    src, doc, _ = _parse_file(path)
    rows = _rows(doc)
    assert len(rows) == 2400 and {m["country_code"] for m, _, _ in rows} == {"US"}
    assert doc.meta["country_code_default"] == "US"
    # the other realworld registries keep the countries their own rows show (mixed: no default)
    src2, doc2, _ = _parse_file(shared_data / "realworld/raw/csv_registry/OpenSourceInLibraries/libraries.csv")
    assert doc2.meta["country_code_default"] is None and len({s.meta["country_code"] for s in doc2.sections}) > 3


# ------------------------------------------------------------------------------------------- custodian type column
def test_free_text_type_column_text_shows_the_source_value_and_meta_its_code(tmp_path):
    """A Japanese category column: the text keeps the source value, meta.custodian_type is its code; a type value
    that names no code never takes the registry default its own text contradicts (trial: アーカイブズ rows were L)."""
    f = tmp_path / "jp.tsv"
    rows = [("公共図書館(市立) (23)", f"市立図書館{i}", f"JP-10000{i:02d}") for i in range(12)]
    rows += [("アーカイブズ (90)", "県立歴史館", "JP-1000090"), ("その他 (99)", "情報センター", "JP-1000099")]
    f.write_text("".join("\t".join(("1", t, "2004", n, i)) + "\n" for t, n, i in rows), encoding="utf-8")
    _, doc, _ = _parse_file(f)
    by_name = {m["extra"]["slot:preferred_label"]: (m, text) for m, text, _ in _rows(doc)}
    lib_meta, lib_text = by_name["市立図書館0"]
    assert "custodian_type: 公共図書館(市立) (23)" in lib_text and lib_meta["custodian_type"] == "L"
    assert lib_meta["extra"]["slot:custodian_type"] == "公共図書館(市立) (23)"
    assert doc.meta["custodian_type_default"] == "L"
    assert by_name["県立歴史館"][0]["custodian_type"] == "A"  # katakana "archives"
    other = by_name["情報センター"][0]
    assert other["custodian_type"] is None and "custodian_type: その他 (99)" in by_name["情報センター"][1]
    assert doc.meta["custodian_type_unrecognised"] == {"その他 (99)": 1}


def test_real_ndl_libraries_type_codes_agree_with_their_type_column(shared_data):
    """ndl-lab crd-api-sample libraries.tsv (818 rows): no row's code contradicts its own category value."""
    from heritage_pipeline.sources.columns import type_code

    _, doc, _ = _parse_file(shared_data / "realworld/raw/csv_registry/crd-api-sample/libraries.tsv")
    archives = 0
    for meta, text, _ in _rows(doc):
        value = meta["extra"].get("slot:custodian_type", "")
        assert value and f"custodian_type: {value}" in text
        if type_code(value):
            assert meta["custodian_type"] == type_code(value)
        archives += value.startswith("アーカイブズ")
        if value.startswith("アーカイブズ"):
            assert meta["custodian_type"] == "A"  # from its own category (katakana "archives"), never the default L
    assert archives == 10


def test_a_german_land_column_of_federal_states_is_the_region_not_the_country(tmp_path):
    """"Land" is the country in most files, but in a German registry it often holds the federal state: BY (Bavaria)
    must not become Belarus, nor TH Thailand (issue 12 left-over 2). The values decide; a Land column of country
    codes stays the country."""
    f = tmp_path / "bibliotheken.csv"
    f.write_text("Name;Ort;Land;ISIL\nStadtbibliothek München;München;BY;DE-M147\nAnna Amalia Bibliothek;Weimar;TH;DE-32\n"
                 "Universitätsbibliothek Leipzig;Leipzig;SN;DE-15\nStaatsbibliothek Bamberg;Bamberg;BY;DE-22\n"
                 "Landesbibliothek Coburg;Coburg;BY;\n", encoding="utf-8")
    src, doc, _ = _parse_file(f)
    assert doc.meta["column_mapping"]["Land"] == "region"
    rows = _rows(doc)
    assert [m["extra"]["slot:region"] for m, _, _ in rows] == ["BY", "TH", "SN", "BY", "BY"]
    # the ISIL rows are DE; the row without an ISIL has no evidence (4 of 5 rows agree: under the 90% default rule)
    assert [m["country_code"] for m, _, _ in rows] == ["DE", "DE", "DE", "DE", None]
    g = tmp_path / "musea.csv"
    g.write_text("Naam;Plaats;Land\nRijksmuseum;Amsterdam;NL\nMuseum Plantin-Moretus;Antwerpen;BE\n"
                 "Musée du Louvre;Paris;FR\nGermanisches Nationalmuseum;Nürnberg;DE\n", encoding="utf-8")
    src, doc, _ = _parse_file(g)
    assert doc.meta["column_mapping"]["Land"] == "country"
    assert [m["country_code"] for m, _, _ in _rows(doc)] == ["NL", "BE", "FR", "DE"]


def test_a_file_named_for_one_kind_of_institution_gives_its_untyped_rows_that_type(tmp_path):
    """London museums (issue 12 left-over 1): most rows' names say no type (the trial file: 6 of 7), so no default
    can be inferred from the rows (here 3 museums and a gallery: 75% < 90%) and `search --custodian-type M` missed
    them. A data team names such a list for its
    kind: ``museums.csv`` / ``Museen_Berlin.csv`` give the default; a place in the name (London) never does, and a
    file whose typed rows name another type gets no default from its name."""
    from heritage_pipeline.sources.registry import registry_type_default

    rows = ["Name,Borough,Website", "British Museum,Camden,https://www.britishmuseum.org",
            "Tate Modern,Southwark,https://www.tate.org.uk", "National Gallery,Westminster,https://www.nationalgallery.org.uk",
            "Victoria and Albert Museum,Kensington,https://www.vam.ac.uk", "Science Museum,Kensington,https://www.sciencemuseum.org.uk",
            "Wallace Collection,Westminster,https://www.wallacecollection.org", "Horniman,Lewisham,https://www.horniman.ac.uk"]
    named = {}
    for name in ("london_museums.csv", "london.csv"):
        f = tmp_path / name
        f.write_text("\n".join(rows) + "\n", encoding="utf-8")
        _, doc, _ = _parse_file(f)
        named[name] = [m["custodian_type"] for m, _, _ in _rows(doc)]
        if name == "london_museums.csv":
            assert doc.meta["custodian_type_default"] == "M"
            assert doc.meta["custodian_type_default_source"] == "file name (london_museums.csv)"
    assert named["london_museums.csv"] == ["M", "M", "G", "M", "M", "M", "M"]  # the gallery keeps its own type
    # without the file's word: only the rows whose names say museum are M (no default from "London", a place)
    assert named["london.csv"] == ["M", None, "G", "M", "M", None, None]
    assert registry_type_default(["M", None], None, file_name="Museen_Berlin.csv") == ("M", "file name (Museen_Berlin.csv)")
    assert registry_type_default(["L", None], None, file_name="museums.csv") == (None, "none")  # the typed rows disagree
    assert registry_type_default([None] * 5, "A", file_name="museums.csv") == ("A", "configured")
