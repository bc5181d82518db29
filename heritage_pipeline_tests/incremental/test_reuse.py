"""Row reuse and the ablation memo as plain functions (no Dagster): incremental/parsing, enrichment, ablation; and
the code versions that hash them (a change of the moved logic must never reuse outputs stored by the old logic)."""

from __future__ import annotations

from pathlib import Path

import pytest

from heritage_pipeline import stages as P
from heritage_pipeline.core.config import ChunkingConfig, load_chunking_config, load_pipeline_config
from heritage_pipeline.core.models import table_to_chunks
from heritage_pipeline.enrich.gazetteer import default_gazetteer, fingerprint
from heritage_pipeline.incremental import ablation as memo
from heritage_pipeline.incremental.enrichment import GAZETTEER_KEY, enrich_with_reuse, gazetteer_version_of
from heritage_pipeline.incremental.parsing import QUARANTINE_COLUMN, parse_with_reuse
from heritage_pipeline.incremental.versions import ROW_KEY
from heritage_pipeline.sources.discovery import load_source
from heritage_pipeline.sources.dispatch import table_to_docs
from heritage_pipeline.core.models import chunks_to_table

from heritage_pipeline_tests.ops_fixtures import BUNDLED, HANDWRITTEN_MD

CFG = ChunkingConfig()
RAKE = load_chunking_config(None, **{"context.keywords.method": "rake", "context.section_embedding": False})


def _sources(tmp_path: Path, texts: dict[str, str]):
    out = []
    for name, text in texts.items():
        f = tmp_path / name
        f.write_text(text, encoding="utf-8")
        out.append(load_source(f, source_type="document", rel_path=name, lang="en"))
    return out


def test_parse_with_reuse_parses_only_changed_files_and_equals_a_full_parse(tmp_path):
    texts = {"a.md": HANDWRITTEN_MD, "b.md": "# Reading room\n\nOpen on weekdays.\n", "c.md": "# Maps\n\nHarbour maps.\n"}
    calls: list[list[str]] = []

    def parse(todo):
        calls.append([s.path for s in todo])
        return P.parse_sources(todo, CFG)

    first = parse_with_reuse(_sources(tmp_path, texts), None, parse)
    assert calls == [["a.md", "b.md", "c.md"]] and first.files_parsed_now == 3 and first.files_reused == 0
    assert ROW_KEY in first.table.column_names and QUARANTINE_COLUMN in first.table.column_names

    texts["b.md"] = "# Reading room\n\nOpen on weekdays and on Saturday mornings.\n"
    again = parse_with_reuse(_sources(tmp_path, texts), first.table, parse)
    assert calls[-1] == ["b.md"] and again.files_parsed_now == 1 and again.files_reused == 2
    cold = parse_with_reuse(_sources(tmp_path, texts), None, lambda todo: P.parse_sources(todo, CFG))
    assert again.table.to_pylist() == cold.table.to_pylist()  # the same rows, in the same order, as a cold parse
    assert [d.source_path for d in table_to_docs(again.table)] == ["a.md", "b.md", "c.md"]


def test_enrich_with_reuse_enriches_only_new_chunks_and_refreshes_mentions_on_a_gazetteer_change(tmp_path):
    docs = P.parse_sources(_sources(tmp_path, {"kb.md": "# The library\n\nThe Koninklijke Bibliotheek in Den Haag "
                                                         "keeps the national collection.\n",
                                               "city.md": HANDWRITTEN_MD}), CFG).docs
    chunks = chunks_to_table(P.chunk_documents(docs, CFG))
    gaz = default_gazetteer()
    seen: list[int] = []

    def enrich(todo):
        seen.append(len(todo))
        P.enrich_stage(todo, RAKE, None, None, None, gazetteer=gaz)
        return 0, {}

    first = enrich_with_reuse(chunks, None, gaz, fingerprint(gaz), enrich)
    n = chunks.num_rows
    assert seen == [n] and first.enriched_now == n and first.reused_rows == 0
    assert gazetteer_version_of(first.table) == fingerprint(gaz)
    assert any("Koninklijke Bibliotheek" in c.meta.mentioned_entities for c in first.items)

    again = enrich_with_reuse(chunks, first.table, gaz, fingerprint(gaz), enrich)
    assert seen[-1] == 0 and again.reused_rows == n and again.mentions_refreshed == 0
    assert again.table.to_pylist() == first.table.to_pylist()

    # a gazetteer without the KB: no row is re-enriched, every reused row's mentions are redone
    from heritage_pipeline.enrich.gazetteer import Gazetteer

    smaller = Gazetteer([e for e in gaz.entities if e.name != "Koninklijke Bibliotheek"])
    third = enrich_with_reuse(chunks, first.table, smaller, fingerprint(smaller), enrich)
    assert seen[-1] == 0 and third.mentions_refreshed == n
    assert (third.table.schema.metadata or {})[GAZETTEER_KEY].decode() == fingerprint(smaller)
    kb = next(c for c in third.items if "Koninklijke" in c.text)
    assert kb.meta.keywords == next(c for c in first.items if c.id == kb.id).meta.keywords  # enrichment kept
    assert table_to_chunks(third.table)[0].id == first.items[0].id


def test_the_ablation_memo_reuses_only_a_whole_report_of_the_same_inputs(tmp_path):
    golden = tmp_path / "golden.jsonl"
    golden.write_text('{"q": 1}\n')
    key = memo.ablation_memo("cv1", [golden])
    assert memo.ablation_memo("cv2", [golden]) != key
    out = tmp_path / "ablation"
    out.mkdir()
    assert memo.stored_report(out, key) is None
    (out / "ablation.json").write_text('[{"size_tokens": 400}]')
    (out / "ablation.md").write_text("# report\n")
    memo.remember_report(out, key, {"en": {"size_tokens": 400}})
    got = memo.stored_report(out, key)
    assert got is not None and got.rows == [{"size_tokens": 400}] and got.recommendations == {"en": {"size_tokens": 400}}
    golden.write_text('{"q": 2}\n')  # an edited golden set: another memo, the report is not reused
    assert memo.stored_report(out, memo.ablation_memo("cv1", [golden])) is None
    memo.forget_report(out)  # the report is about to be rewritten: no memo until it is whole
    assert memo.stored_report(out, key) is None


@pytest.mark.parametrize("stage, module", [("parsed_sections", "incremental/parsing.py"),
                                           ("enriched_chunks", "incremental/enrichment.py"),
                                           ("ablation_report", "incremental/ablation.py"),
                                           ("gazetteer", "enrich/gazetteer.py"),
                                           ("raw_sources", "incremental/discovery.py")])
def test_changing_the_moved_logic_changes_the_assets_code_version(stage, module, monkeypatch):
    """The reuse logic moved out of defs/assets.py is hashed into the code version of the asset that uses it: a
    changed byte of that module gives a new code version (and so no reuse of outputs stored by the old logic)."""
    from heritage_pipeline.defs import versions
    from heritage_pipeline.incremental import versions as iv

    cfg, pcfg = load_chunking_config(), load_pipeline_config()
    before = versions.code_version(stage, cfg, pcfg)
    target = (Path(versions.PACKAGE) / module).resolve()
    real = Path.read_bytes

    def edited(self):
        data = real(self)
        return data + b"\n# edited\n" if self.resolve() == target else data

    monkeypatch.setattr(Path, "read_bytes", edited)
    iv._module_sources.cache_clear()
    try:
        assert versions.code_version(stage, cfg, pcfg) != before
    finally:
        monkeypatch.undo()
        iv._module_sources.cache_clear()
    assert versions.code_version(stage, cfg, pcfg) == before


def test_enrichment_without_a_gazetteer_asset_uses_the_registries_parsed_now(tmp_path):
    """A partition launched from the UI (or the nightly schedule) before the gazetteer asset was ever materialised
    failed in enriched_chunks (slow test_webserver on a fresh clone); it now resolves mentions against the registry
    files parsed now, the same gazetteer the chunk command builds, and says it did."""
    from heritage_pipeline.core.config import load_chunking_config
    from heritage_pipeline.enrich.gazetteer import default_gazetteer, fingerprint
    from heritage_pipeline.stages import gazetteer_for_enrichment, write_gazetteer

    cfg = load_chunking_config()
    path = tmp_path / "storage" / "gazetteer.json"
    gaz, version, from_raw = gazetteer_for_enrichment(path, cfg)
    assert from_raw and version == fingerprint(default_gazetteer()) and len(gaz.entities) > 0
    stored = write_gazetteer(gaz, path)
    gaz2, version2, from_raw2 = gazetteer_for_enrichment(path, cfg)
    assert not from_raw2 and version2 == stored == version


def test_a_stored_gazetteer_is_fingerprinted_and_reused_without_loading_it(tmp_path, monkeypatch):
    """An unchanged night neither rebuilds the gazetteer (same input versions, code and config) nor parses its JSON
    to learn its fingerprint; the in-process memo hands the written gazetteer to the enrichment that loads it."""
    from heritage_pipeline import stages
    from heritage_pipeline.enrich import gazetteer as G

    gaz = G.default_gazetteer()
    path = tmp_path / "storage" / "gazetteer.json"
    version = stages.write_gazetteer(gaz, path, inputs="k1", metadata={"entities": len(gaz)})
    assert version == G.fingerprint(gaz)
    assert stages.load_gazetteer(path) == (gaz, version)  # the written object itself (same bytes)
    stages._GAZETTEER_MEMO.clear()  # another process: nothing in memory

    def no_parse(text):
        raise AssertionError("the stored gazetteer was parsed")

    monkeypatch.setattr(stages, "gazetteer_from_json", no_parse)
    assert stages.stored_gazetteer_version(path) == version
    assert stages.reusable_gazetteer(path, "k1") == (version, {"entities": len(gaz)})
    assert stages.reusable_gazetteer(path, "k2") is None and stages.reusable_gazetteer(path, None) is None
    assert stages.stored_gazetteer_version(tmp_path / "nothing.json") is None
    monkeypatch.undo()
    # a file whose bytes the record does not describe (replaced by hand, a crash between the two writes) is loaded
    other = G.Gazetteer(gaz.entities[:3])
    path.write_text(G.gazetteer_to_json(other), encoding="utf-8")
    assert stages.reusable_gazetteer(path, "k1") is None
    assert stages.stored_gazetteer_version(path) == G.fingerprint(other) != version
    loaded, v = stages.load_gazetteer(path)
    assert v == G.fingerprint(other) and G.gazetteer_to_json(loaded) == G.gazetteer_to_json(other)
