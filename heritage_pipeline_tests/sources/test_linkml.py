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
    for line in ("Name: Bibliothèque nationale de France", "Location: Paris FR", "Collection: Gallica",
                 "ISIL: FR-751131015", "ISIL: FR-759999999", "Wikidata: Q193563"):
        assert line in bnf.text
    kb = next(c for c in chunks if c.meta.ghcid == "NL-ZH-HAG-L-KB")
    assert kb.meta.data_tier == "TIER_2_VERIFIED" and not kb.meta.has_collections  # defaults when the file is silent
    nha = next(c for c in chunks if c.meta.ghcid == "NL-NH-HAA-A-NHA")
    assert nha.meta.data_tier == "TIER_4_INFERRED"  # the file says so
    raw = (bundled_data / "raw/yaml_instance/custodians_nl_fr_de.yaml").read_text(encoding="utf-8")
    s, e = bnf.spans.char_start, bnf.spans.char_end
    assert raw[s:e].startswith("hc_id: https://nde.nl/ontology/hc/FR-IDF-PAR-L-BNF") and "Q193563" in raw[s:e]


def test_invalid_entities_name_file_entity_and_field():
    src = load_source(FIX / "invalid_entities.yaml")
    out = parse_source(src, load_chunking_config())
    assert out.doc is not None and len(out.doc.sections) == 1  # the valid entity proceeds
    good = out.doc.sections[0].meta
    assert good["country_code"] == "NO"  # YAML 1.2 booleans: Norway is not False
    reasons = {q.path.split("#", 1)[1]: q.reason for q in out.quarantined}
    assert all(q.path.startswith(str(FIX / "invalid_entities.yaml")) for q in out.quarantined)
    assert "field custodian_type" in reasons["entity 1 (Bad Type Archive)"] and "'Z'" in reasons["entity 1 (Bad Type Archive)"]
    assert "field preferred_label: Field required" in reasons["entity 2"]
    assert "field identifiers.0.identifier_value: Field required" in reasons["entity 2"]


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
