"""LinkML instance YAML: one chunk per entity, seed text fields and metadata, validation errors naming file, entity
and field."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from heritage_pipeline.core.config import load_chunking_config
from heritage_pipeline.sources.discovery import load_source
from heritage_pipeline.sources.linkml import custodian_type_codes, parse_instances
from heritage_pipeline.sources.dispatch import parse_source
from heritage_pipeline.stages import chunk_documents
from heritage_pipeline.core.structure import ParseError

FIX = Path(__file__).parents[1] / "fixtures" / "yaml"


def test_type_codes_come_from_the_schema_enum(bundled_data):
    enum = yaml.safe_load((bundled_data / "schema/meta/enums/InstitutionTypeCodeEnum.yaml").read_text())
    assert list(custodian_type_codes()) == list(enum["enums"]["InstitutionTypeCodeEnum"]["permissible_values"])
    assert "".join(custodian_type_codes()) == "GLAMORCUBESFIXPHDNT"


def test_bundled_instances_become_one_chunk_per_entity(bundled_data):
    cfg = load_chunking_config()
    docs = []
    for f in sorted((bundled_data / "raw" / "yaml_instance").glob("*.yaml")):
        out = parse_source(load_source(f, source_type="yaml_instance"), cfg)
        assert out.quarantined == []
        docs.append(out.doc)
    chunks = chunk_documents(docs, cfg)
    raw_entities = sum(len(d) if isinstance(d, list) else 1
                       for f in sorted((bundled_data / "raw" / "yaml_instance").glob("*.yaml"))
                       for d in [yaml.safe_load(f.read_text(encoding="utf-8"))])
    assert len(chunks) == raw_entities == 5
    bnf = next(c for c in chunks if c.meta.ghcid == "FR-IDF-PAR-L-BNF")
    assert bnf.meta.custodian_type == "L" and bnf.meta.country_code == "FR" and bnf.meta.settlement == "Paris"
    assert bnf.meta.hc_id == "https://nde.nl/ontology/hc/FR-IDF-PAR-L-BNF"
    assert bnf.meta.primary_class == "custodian" and bnf.meta.has_collections and bnf.meta.has_identifiers
    assert bnf.meta.data_tier == "TIER_2_VERIFIED"
    for line in ("Name: Bibliothèque nationale de France", "Location: Paris, FR", "Collection: Gallica",
                 "ISIL: FR-751131015", "ISIL: FR-759999999", "Wikidata: Q193563"):
        assert line in bnf.text
    kb = next(c for c in chunks if c.meta.ghcid == "NL-ZH-HAG-L-KB")
    assert kb.meta.data_tier == "TIER_2_VERIFIED" and not kb.meta.has_collections  # defaults when the file is silent
    nha = next(c for c in chunks if c.meta.ghcid == "NL-NH-HAA-A-NHA")
    assert nha.meta.data_tier == "TIER_4_INFERRED"  # the file says so
    raw = (bundled_data / "raw/yaml_instance/custodians_nl_fr_de.yaml").read_text(encoding="utf-8")
    s, e = bnf.spans.char_start, bnf.spans.char_end
    assert raw[s:e].startswith("hc_id: https://nde.nl/ontology/hc/FR-IDF-PAR-L-BNF") and "Q193563" in raw[s:e]


def test_invalid_entities_are_chunked_with_their_errors_in_meta():
    """An entity failing validation is still chunked with what it has; its errors (slot path and problem) are in
    meta and counted in the document meta; nothing is quarantined (each has text)."""
    src = load_source(FIX / "invalid_entities.yaml")
    out = parse_source(src, load_chunking_config())
    assert out.quarantined == [] and out.doc is not None and len(out.doc.sections) == 3
    good, bad_type, no_label = (s.meta for s in out.doc.sections)
    assert good["country_code"] == "NO"  # YAML 1.2 booleans: Norway is not False
    assert "linkml_errors" not in good["extra"] and good["extra"]["linkml_class"] == "HeritageCustodian"
    assert "custodian_type: 'Z' not in InstitutionTypeCodeEnum" in bad_type["extra"]["linkml_errors"]
    assert bad_type["custodian_type"] is None  # an invalid code is not used as the type
    assert "preferred_label: required slot of HeritageCustodian missing" in no_label["extra"]["linkml_errors"]
    assert "identifiers.identifier_value: required slot of Identifier missing" in no_label["extra"]["linkml_errors"]
    assert out.doc.meta["entities"] == 3 and out.doc.meta["entities_invalid"] == 2


def test_invalid_syntax_is_quarantined_with_position():
    out = parse_source(load_source(FIX / "invalid_syntax.yaml"), load_chunking_config())
    assert out.doc is None and len(out.quarantined) == 1
    assert out.quarantined[0].reason.startswith("invalid YAML at line 3")


def test_top_level_scalar_is_rejected():
    with pytest.raises(ParseError, match="top level is a string"):
        parse_instances((FIX / "scalar_top.yaml").read_text(), doc_id="x", source_path="x", lang="en")


def test_multi_document_files():
    doc, problems = parse_instances((FIX / "multi_document.yaml").read_text(), doc_id="m", source_path="m", lang="en")
    assert problems == [] and [s.anchors[0] for s in doc.sections] == ["First Library", "Second Archive", "Third Gallery"]
    assert [s.meta["custodian_type"] for s in doc.sections] == ["L", "A", "G"]


# ----------------------------------------------------------------------------------------- real files (data/eval)
REAL = Path(__file__).parents[2] / "data" / "eval" / "sources" / "yaml_instance"
# file -> (entities read, chunks, quarantined parts, schema file name or None); SPLIT.md of the staging data:
# tune = PersonSchema data, tutorial01, tutorial07; held-out = tutorial03, tutorial06, issue_1213; the realworld
# files (museums.yml, av-efi, europeana datasets) were never tuned on.
REAL_EXPECTED = {
    "linkml__linkml/examples/PersonSchema/data/example_personinfo_data.yaml": (3, 3, 0, "personinfo.yaml"),
    "linkml__linkml/examples/tutorial/tutorial01/data.yaml": (1, 1, 0, "personinfo.yaml"),
    "linkml__linkml/examples/tutorial/tutorial07/data.yaml": (2, 2, 0, None),
    "linkml__linkml/examples/tutorial/tutorial03/better-data.yaml": (2, 2, 0, None),
    "linkml__linkml/examples/tutorial/tutorial06/data.yaml": (2, 2, 0, None),
    "linkml__linkml/tests/test_data/input/issue_1213_data_valid.yaml": (2, 2, 0, None),
    "UnifiedOpenAccessArt/data/museums.yml": (27, 27, 0, None),
    "av-efi-schema/examples/yaml/monographic_with_one_item.yaml": (3, 3, 0, None),
    "av-efi-schema/examples/yaml/serial_workvariant.yaml": (4, 4, 0, None),
    "europeana-labs/_data/datasets.yml": (16, 16, 0, None),
    "uhlibraries-digital__bcdams-map/_data/collections.yml": (2, 2, 0, None),
}


@pytest.mark.parametrize("rel", sorted(REAL_EXPECTED))
def test_real_instance_files_give_one_chunk_per_entity(rel):
    n_entities, n_chunks, n_quarantined, schema = REAL_EXPECTED[rel]
    cfg = load_chunking_config()
    f = REAL / rel
    out = parse_source(load_source(f, source_type="yaml_instance"), cfg)
    assert out.doc is not None, out.quarantined
    raw_items = _raw_entity_count(yaml.safe_load(f.read_text(encoding="utf-8")))
    assert out.doc.meta["entities"] == raw_items == n_entities
    chunks = chunk_documents([out.doc], cfg)
    assert len(chunks) == n_chunks and len(out.quarantined) == n_quarantined
    assert (Path(out.doc.meta["linkml_schema"]).name if out.doc.meta["linkml_schema"] else None) == schema
    raw = f.read_text(encoding="utf-8")
    for c in chunks:
        assert c.text.startswith("Name: ") and c.meta.anchors[0] == c.text.split("\n")[0].removeprefix("Name: ")
        region = raw[c.spans.char_start:c.spans.char_end]
        assert c.meta.anchors[0].split()[0] in region  # the span is the entity's own YAML
    assert len({c.id for c in chunks}) == len(chunks)


def _raw_entity_count(data) -> int:
    """Entities of a file counted independently of the parser: a list's items, or the items of every list of a
    top-level mapping of lists, or 1."""
    if isinstance(data, list):
        return len(data)
    lists = [v for v in data.values() if isinstance(v, list)]
    return sum(len(v) for v in lists) if lists else 1


def test_container_layout_uses_the_sibling_schema_and_validates():
    f = REAL / "linkml__linkml/examples/PersonSchema/data/example_personinfo_data.yaml"
    out = parse_source(load_source(f, source_type="yaml_instance"), load_chunking_config())
    classes = [s.meta["extra"]["linkml_class"] for s in out.doc.sections]
    assert classes == ["Person", "Person", "Organization"]  # the container slots' ranges (persons:, organizations:)
    assert out.doc.meta["layout"] == "container" and out.doc.meta["entities_invalid"] == 0
    joe = out.doc.sections[1].meta
    assert joe["source_id"] == "P:002" and joe["extra"]["identifier:id"] == "P:002"


def test_schema_files_are_skipped_not_quarantined():
    cfg = load_chunking_config()
    for rel in ("linkml__linkml/examples/PersonSchema/personinfo.yaml", "linkml__linkml/examples/tutorial/tutorial01/personinfo.yaml"):
        out = parse_source(load_source(REAL / rel, source_type="yaml_instance"), cfg)
        assert out.doc is None and out.quarantined == []
        assert out.skipped == [f"{REAL / rel}: LinkML schema, not instance data"]


def test_jekyll_list_of_museums_is_entities_with_type_from_the_container_key():
    out = parse_source(load_source(REAL / "UnifiedOpenAccessArt/data/museums.yml"), load_chunking_config())
    first = out.doc.sections[0].meta
    assert first["custodian_type"] == "M" and first["extra"]["slot:preferred_label"] == "Art Institute of Chicago"
    assert first["settlement"] == "Chicago, IL" and first["extra"]["linkml_validation"] == "no schema"


def test_layouts_keyed_by_id_and_validation_errors(tmp_path):
    (tmp_path / "personinfo.yaml").write_bytes((REAL / "linkml__linkml/examples/PersonSchema/personinfo.yaml").read_bytes())
    f = tmp_path / "data.yaml"
    f.write_text("persons:\n  P:1: {name: Ada, age_in_years: old, favourite: blue}\n  P:2: {name: Bob}\n"
                 "organizations:\n  - id: ROR:9\n    name: Org\n  - just a string\n", encoding="utf-8")
    doc, problems = parse_instances(f.read_text(), doc_id="d", source_path="d.yaml", lang="en", abs_path=f)
    assert [s.meta["source_id"] for s in doc.sections] == ["P:1", "P:2", "ROR:9"]
    errs = doc.sections[0].meta["extra"]["linkml_errors"]
    assert "age_in_years: 'old' is not a valid integer" in errs and "favourite: not a slot of Person" in errs
    assert problems == [("organizations[1]", "is a string, expected a mapping")]
    assert doc.meta["entities"] == 4 and doc.meta["entities_chunked"] == 3 and doc.meta["entities_invalid"] == 1


def test_front_matter_fenced_yaml_and_entity_without_text(tmp_path):
    text = "---\nname: Stadsarchief Breda\ncity: Breda\n---\n\nSome Markdown body that is not YAML: [link](x)\n"
    doc, problems = parse_instances(text, doc_id="fm", source_path="fm.yml", lang="nl")
    assert [s.meta["settlement"] for s in doc.sections] == ["Breda"]
    doc, problems = parse_instances("- {}\n- name: Kept\n", doc_id="e", source_path="e.yml", lang="en")
    assert problems == [("entity 0", "entity has no text (no name, description or other slot value)")]
    assert [s.anchors for s in doc.sections] == [["Kept"]]


import unicodedata  # noqa: E402

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_names = st.text(alphabet=st.characters(whitelist_categories=("L", "N"), whitelist_characters=" -'"), min_size=1,
                 max_size=30).map(str.strip).filter(bool)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.fixed_dictionaries({"name": _names}, optional={"city": _names, "isil": st.from_regex(r"NL-[0-9]{4}", fullmatch=True)}),
                min_size=1, max_size=12),
       st.sampled_from(["list", "container", "keyed"]))
def test_property_one_chunk_per_entity_in_every_layout(entities, layout):
    """Any list of institutions in any layout: one section per entity, in order, each span inside the raw YAML and
    containing the entity's name, the identifier in meta.extra, chunk ids unique."""
    if layout == "list":
        data = entities
    elif layout == "container":
        data = {"institutions": entities}
    else:
        data = {f"id{i}": e for i, e in enumerate(entities)}
    raw = yaml.safe_dump(data, allow_unicode=True, sort_keys=False)
    doc, problems = parse_instances(raw, doc_id="h", source_path="h.yml", lang="und")
    assert problems == [] and len(doc.sections) == len(entities) == doc.meta["entities"]
    for sec, e in zip(doc.sections, entities):
        b = doc.blocks[sec.first]
        name = unicodedata.normalize("NFC", " ".join(e["name"].split()))  # chunk text is NFC (core.text.normalize)
        assert doc.text[b.start:b.content_end].startswith(f"Name: {name}")
        assert b.raw_start < b.raw_end <= len(raw)
        if "isil" in e:
            assert sec.meta["extra"]["identifier:ISIL"] == e["isil"]
    chunks = chunk_documents([doc], load_chunking_config())
    assert len(chunks) == len(entities) and len({c.id for c in chunks}) == len(chunks)


def test_schema_named_by_the_file_wins(tmp_path):
    """A top-level ``schema:`` path (or a ``# schema:`` comment) names the schema; the named schema validates."""
    (tmp_path / "schemas").mkdir()
    (tmp_path / "schemas" / "personinfo.yaml").write_bytes(
        (REAL / "linkml__linkml/examples/PersonSchema/personinfo.yaml").read_bytes())
    (tmp_path / "data").mkdir()
    for name, text in (("key.yaml", "schema: ../schemas/personinfo.yaml\npersons:\n  - {id: P:1, name: Ada, age_in_years: x}\n"),
                       ("comment.yaml", "# schema: ../schemas/personinfo.yaml\npersons:\n  - {id: P:1, name: Ada, age_in_years: x}\n")):
        f = tmp_path / "data" / name
        f.write_text(text, encoding="utf-8")
        doc, problems = parse_instances(text, doc_id=name, source_path=name, lang="en", abs_path=f)
        assert Path(doc.meta["linkml_schema"]).name == "personinfo.yaml" and problems == []
        assert [s.meta["extra"]["linkml_class"] for s in doc.sections] == ["Person"]
        assert "age_in_years: 'x' is not a valid integer" in doc.sections[0].meta["extra"]["linkml_errors"]


def test_mapping_file_rules_and_errors(tmp_path):
    from heritage_pipeline.sources.linkml import load_linkml_mappings

    f = tmp_path / "m.yaml"
    f.write_text("version: 1\ndefaults:\n  data_tier: TIER_2_VERIFIED\n  roles:\n    preferred_label: [name]\n"
                 "files:\n  - pattern: 'raw/yaml_instance/registry/*'\n    data_tier: TIER_1_AUTHORITATIVE\n"
                 "    roles:\n      preferred_label: [naam_instelling]\n", encoding="utf-8")
    m = load_linkml_mappings(f)
    schema, tier, roles = m.for_file("raw/yaml_instance/registry/a.yaml")
    assert tier == "TIER_1_AUTHORITATIVE" and roles["preferred_label"] == ["naam_instelling", "name"]
    doc, _ = parse_instances("- {naam_instelling: Regionaal Archief Tilburg, name: RAT}\n", doc_id="a",
                             source_path="raw/yaml_instance/registry/a.yaml", lang="nl", mappings=m)
    assert doc.sections[0].anchors == ["Regionaal Archief Tilburg"] and doc.sections[0].meta["data_tier"] == "TIER_1_AUTHORITATIVE"
    assert m.for_file("elsewhere.yaml")[1] == "TIER_2_VERIFIED"
    f.write_text("defaults:\n  data_tier: TIER_9\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"m.yaml: data_tier 'TIER_9' is not one of TIER_1_AUTHORITATIVE"):
        load_linkml_mappings(f)
    f.write_text("defaults:\n  rolez: {}\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"m.yaml: invalid LinkML mapping file: .*rolez"):
        load_linkml_mappings(f)


def test_an_unrelated_schema_in_the_folder_does_not_validate_the_file(tmp_path):
    """A sibling schema sharing only generic keys (id, type) with a file is not its schema: validating against it
    reported every other key as "not a slot of ConstraintCheck" (a fresh-user trial, av-efi data beside
    linkml-runtime's validation datamodel). A sibling that fits (the PersonSchema example) still validates."""
    import linkml_runtime

    datamodel = Path(linkml_runtime.__file__).parent / "processing" / "validation_datamodel.yaml"
    (tmp_path / "validation_datamodel.yaml").write_bytes(datamodel.read_bytes())
    f = tmp_path / "work.yaml"
    text = ("has_record:\n- category: avefi:WorkVariant\n  type: Serial\n  id: PID-ID1\n  has_primary_title:\n"
            "    type: PreferredTitle\n    has_name: Im Angesicht des Verbrechens\n  has_genre:\n  - has_name: Krimi\n")
    f.write_text(text, encoding="utf-8")
    doc, _ = parse_instances(text, doc_id="work.yaml", source_path="work.yaml", lang="de", abs_path=f)
    assert doc.meta.get("linkml_schema") is None
    assert not any(s.meta["extra"].get("linkml_errors") for s in doc.sections)
    assert len(doc.sections) == 1 and "Im Angesicht des Verbrechens" in doc.text


def test_a_town_and_country_in_one_location_slot_are_split_in_meta(tmp_path):
    """Fresh-user trial: `location: London, UK` became settlement "London, UK" (no country), so "museums in London"
    found no record with that place. The text keeps the slot as written; meta gets the town and the country code."""
    f = tmp_path / "museums.yml"
    text = ("- name: Victoria and Albert Museum\n  location: London, UK\n- name: MoMA\n  location: New York, NY, USA\n"
            "- name: Rijksmuseum\n  location: Amsterdam\n- name: Musée Carnavalet\n  location: Paris, Marais\n"
            "- name: Art Institute of Chicago\n  location: Chicago, IL\n")
    f.write_text(text, encoding="utf-8")
    doc, _ = parse_instances(text, doc_id="museums.yml", source_path="museums.yml", lang="en", abs_path=f)
    got = [(s.meta["settlement"], s.meta["country_code"]) for s in doc.sections]
    assert got == [("London", "GB"), ("New York", "US"), ("Amsterdam", None), ("Paris, Marais", None),
                   ("Chicago, IL", None)]  # IL: Illinois here, not Israel
    assert "London, UK" in doc.text and doc.sections[0].meta["extra"]["slot:settlement"] == "London, UK"


# ----------------------------------------------------------------------------------------- schema metadata files
@pytest.mark.parametrize("name, text, detail", [
    ("header.yaml", "id: https://example.org/heritage\nname: heritage\nprefixes:\n  linkml: https://w3id.org/linkml/\n"
                    "  hc: https://example.org/hc/\ndefault_prefix: hc\nimports:\n  - linkml:types\n", "schema header: id / prefixes"),
    ("prefixes.yaml", '{"schema": "http://schema.org/", "skos": "http://www.w3.org/2004/02/skos/core#",\n'
                      ' "IAO": "http://purl.obolibrary.org/obo/IAO_", "Alias": {"@id": "skosxl:Label"}}\n', "4 prefixes"),
])
def test_schema_metadata_files_are_skipped_as_schemas(tmp_path, name, text, detail):
    """A schema header (id / prefixes / default_prefix, no classes) or a prefix map holds no instance data: skipped
    with the schema reason, not chunked as one entity (issue 12 item 3)."""
    f = tmp_path / name
    f.write_text(text, encoding="utf-8")
    out = parse_source(load_source(f, source_type="yaml_instance"), load_chunking_config())
    assert out.doc is None and out.quarantined == []
    assert len(out.skipped) == 1 and "LinkML schema, not instance data" in out.skipped[0] and detail in out.skipped[0]


def test_linkml_runtime_prefix_map_is_skipped():
    """linkml-runtime's own ``prefixmap/meta.yaml`` (package data nobody on the team wrote) was one entity."""
    import linkml_runtime

    f = Path(linkml_runtime.__file__).parent / "linkml_model" / "prefixmap" / "meta.yaml"
    assert f.exists() and "http://schema.org/" in f.read_text(encoding="utf-8")  # the fixture still has that shape
    out = parse_source(load_source(f, source_type="yaml_instance"), load_chunking_config())
    assert out.doc is None and "LinkML schema, not instance data (prefix map" in out.skipped[0]


@pytest.mark.parametrize("text", [
    "name: Rijksmuseum\nwebsite: https://www.rijksmuseum.nl/\nprefixes_note: none\n",  # an entity with a URL
    "rijksmuseum: https://www.rijksmuseum.nl/en\nteylers: https://www.teylersmuseum.nl/nl\n",  # names -> pages
    "id: hc:1\nname: Teylers Museum\nprefixes:\n  hc: https://example.org/hc/\ncity: Haarlem\n",  # data beside prefixes
])
def test_instance_data_with_urls_or_prefixes_is_not_a_schema(tmp_path, text):
    f = tmp_path / "inst.yaml"
    f.write_text(text, encoding="utf-8")
    out = parse_source(load_source(f, source_type="yaml_instance"), load_chunking_config())
    assert out.doc is not None and out.skipped == [] and len(out.doc.sections) == 1


def test_shared_schema_modules_without_classes_are_skipped_not_quarantined(shared_data):
    """The heritage schema's parsimony modules (shared data: id / prefixes / imports and mappings, no classes) were
    quarantined as "LinkML schema ... cannot be loaded"; they are schema files, skipped with the schema reason."""
    folder = shared_data / "heritage" / "linkml_schema_EUPL" / "parsimony"
    files = sorted((folder / "mappings").glob("*.yaml")) + [folder / "parsimony_core.yaml"]
    assert len(files) >= 10
    for f in files:
        out = parse_source(load_source(f, source_type="yaml_instance"), load_chunking_config())
        assert out.doc is None and out.quarantined == [], f
        assert out.skipped == [f"{f}: LinkML schema, not instance data (schema header: id / prefixes / imports, no "
                               "classes or slots)"]


def test_a_sibling_schema_of_another_project_is_not_used_and_no_schema_is_said_once(tmp_path):
    """Trial defect 11: Person and Animal examples saved beside a toy ``organization`` schema were validated against
    it (they share id, name and age_in_years over two classes) and got "primary_email/pets: not a slot of
    organization". A sibling schema is used only when one of its classes holds most of each entity's keys; else
    the file is not validated and the summary says so once per file; a fitting sibling schema is still used."""
    from heritage_pipeline.core.config import load_chunking_config
    from heritage_pipeline.sources.accounting import parsed_file, summarize_inputs
    from heritage_pipeline.sources.discovery import load_source
    from heritage_pipeline.sources.dispatch import parse_source

    (tmp_path / "organization.yaml").write_text(
        "id: http://example.org/org\nname: organization\nimports: [linkml:types]\ndefault_range: string\n"
        "classes:\n  organization:\n    slots: [id, name, has_boss]\n"
        "  employee:\n    slots: [id, first_name, age_in_years]\n"
        "slots:\n  id: {identifier: true}\n  name: {}\n  has_boss: {}\n  first_name: {}\n"
        "  age_in_years: {range: integer}\n", encoding="utf-8")
    (tmp_path / "person.yaml").write_text("id: P:001\nname: fred bloggs\nprimary_email: fred@example.com\n"
                                          "age_in_years: 33\npets: [animal:001]\n", encoding="utf-8")
    (tmp_path / "staff.yaml").write_text("- id: E:1\n  first_name: Anna\n  age_in_years: 40\n", encoding="utf-8")
    cfg = load_chunking_config()
    person = parse_source(load_source(tmp_path / "person.yaml"), cfg).doc
    assert person.meta["linkml_schema"] is None and person.meta["entities_invalid"] == 0
    assert person.sections[0].meta["extra"]["linkml_validation"] == "no schema"
    staff = parse_source(load_source(tmp_path / "staff.yaml"), cfg).doc
    assert staff.meta["linkml_schema"].endswith("organization.yaml")
    assert staff.sections[0].meta["extra"]["linkml_class"] == "employee"
    s = summarize_inputs({str(tmp_path / "person.yaml"): ("ok", ""), str(tmp_path / "staff.yaml"): ("ok", "")},
                         [parsed_file(person), parsed_file(staff)], [])
    assert [line for line in s.lines() if line.startswith("LinkML files not validated")] == [
        f"LinkML files not validated: 1 × no schema names or fits the file (meta.extra.linkml_validation) "
        f"(e.g. {tmp_path / 'person.yaml'})"]
