"""``heritage-pipeline chunk`` exposes every mode and domain preset of configs/chunking.yaml (and any key)."""

from __future__ import annotations

import json

import pytest

from heritage_pipeline.cli import build_parser, chunk_overrides, main
from heritage_pipeline.core.config import ConfigError, load_chunking_config


def _args(*argv: str):
    return build_parser().parse_args(["chunk", "in.md", "--out", "out.jsonl", *argv])


def test_mode_domain_and_set_become_config_overrides():
    ov = chunk_overrides(_args("--mode", "sliding", "--domain", "legal", "--set", "sliding_window.split_factor=2",
                               "--set", "hierarchy.levels=[h1, h2]"))
    assert ov == {"mode": "sliding", "domains.default": "legal", "domains.rules": [],
                  "sliding_window.split_factor": 2, "hierarchy.levels": ["h1", "h2"]}
    cfg = load_chunking_config(None, **ov)
    assert cfg.mode == "sliding" and cfg.domains.domain_for("legal_fr/x.md") == "legal"
    assert cfg.domains.domain_for("docs/faq.md") == "legal" and cfg.hierarchy.max_level == 2


@pytest.mark.parametrize("mode", ["hierarchical", "sliding", "hybrid"])
def test_every_mode_is_accepted(mode):
    assert load_chunking_config(None, **chunk_overrides(_args("--mode", mode))).mode == mode


def test_bad_values_are_reported_with_the_key_and_range(tmp_path, capsys):
    md = tmp_path / "a.md"
    md.write_text("# T\n\ntext\n")
    rc = main(["chunk", str(md), "--out", str(tmp_path / "o.jsonl"), "--set", "sliding_window.overlap_ratio=0.9"])
    assert rc == 2
    assert "overlap_ratio" in capsys.readouterr().err
    with pytest.raises(ConfigError, match="KEY=VALUE"):
        chunk_overrides(_args("--set", "no-equals-sign"))


def test_chunk_command_applies_mode_and_domain(tmp_path):
    md = tmp_path / "law.md"
    md.write_text("# Code\n\n" + "\n\n".join(f"## Article {i}\n\n" + "Le texte de l'article. " * 30 for i in range(12)))
    out = tmp_path / "out.jsonl"
    assert main(["chunk", str(md), "--out", str(out), "--no-model", "--lang", "fr", "--mode", "sliding",
                 "--domain", "faq"]) == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert rows and all(r["meta"]["domain"] == "faq" for r in rows)
    assert any(r["text"].count("## Article") >= 2 for r in rows)  # sliding windows cross sections


def test_chunk_command_usage_errors_and_inputs_named_twice(tmp_path, capsys):
    md = tmp_path / "docs" / "page.md"
    md.parent.mkdir()
    md.write_text("# Page\n\nA page about the reading room of the city archive and its opening hours.\n")
    out = tmp_path / "out.jsonl"
    # the same file named twice (and through its folder) is read once: no duplicate ids, exit 0
    assert main(["chunk", str(md.parent), str(md), str(md), "--out", str(out), "--no-model"]) == 0
    assert len(out.read_text().splitlines()) == 1
    assert main(["chunk", str(tmp_path / "missing.md"), "--out", str(out), "--no-model"]) == 2
    assert "missing.md: no such file or directory" in capsys.readouterr().err
    assert main(["chunk", str(md), "--out", str(tmp_path), "--no-model"]) == 2
    assert "is a folder" in capsys.readouterr().err


def test_chunk_summary_reports_unclosed_fences_and_running_headers(tmp_path, capsys):
    """The terminal summary names the documents with an unclosed code fence and the running page headers/footers
    left out of the embedded text (both were only in asset metadata)."""
    md = tmp_path / "guide.md"
    md.write_text("# Install\n\nRun this:\n\n```bash\npip install atlas-tools\natlas init\n")
    pages = [f"Museum Bulletin · ISSN 1234-5678\n\nPage {i} is about the textile collection and its donors, "
             f"written with care by staff member {i} and checked twice.\n\nPage {i} of 4\n" for i in range(1, 5)]
    txt = tmp_path / "bulletin.txt"
    txt.write_text("\f".join(pages))
    assert main(["chunk", str(md), str(txt), "--out", str(tmp_path / "o.jsonl"), "--no-model", "--lang", "en"]) == 0
    out = capsys.readouterr().out
    fence = next(line for line in out.splitlines() if line.startswith("unclosed code fences:"))
    assert "1 document " in fence and "guide.md" in fence
    running = next(line for line in out.splitlines() if line.startswith("running headers/footers"))
    assert ": 8 lines in 1 document" in running and "bulletin.txt (8)" in running


def test_chunk_summary_is_silent_without_findings(tmp_path, capsys):
    md = tmp_path / "page.md"
    md.write_text("# Page\n\n```python\nprint('closed')\n```\n\nA page about the reading room.\n")
    assert main(["chunk", str(md), "--out", str(tmp_path / "o.jsonl"), "--no-model"]) == 0
    out = capsys.readouterr().out
    assert "unclosed code fences" not in out and "running headers" not in out


def test_a_bad_set_value_names_the_set_argument_not_the_valid_config_file(tmp_path, capsys):
    md = tmp_path / "a.md"
    md.write_text("# T\n\ntext\n")
    rc = main(["chunk", str(md), "--out", str(tmp_path / "o.jsonl"), "--set", "sliding_window.size_tokens=600",
               "--set", "sliding_window.overlap_ratio=0.9"])
    assert rc == 2
    err = capsys.readouterr().err
    first = err.strip().splitlines()[0]
    assert first.startswith("--set sliding_window.overlap_ratio=0.9: invalid override")
    assert "size_tokens=600" not in first  # the valid --set is not blamed
    assert "overlap_ratio" in err and "allowed range" in err
    # an invalid file is still reported with the file's name
    bad = tmp_path / "bad.yaml"
    bad.write_text("sliding_window:\n  overlap_ratio: 0.95\n")
    rc = main(["chunk", str(md), "--out", str(tmp_path / "o.jsonl"), "--config", str(bad),
               "--set", "sliding_window.size_tokens=600"])
    assert rc == 2
    assert capsys.readouterr().err.strip().splitlines()[0].startswith(f"{bad}: invalid configuration")


def test_no_model_says_that_prose_got_rake_keywords(tmp_path, capsys):
    from heritage_pipeline.core.config import load_chunking_config as load

    assert load().context.keywords.method in ("keybert", "embedding")  # the default needs the model
    md = tmp_path / "a.md"
    md.write_text("# Reading room\n\nThe reading room of the city archive opens on weekdays; "
                  "visitors consult notarial deeds and church registers there.\n")
    out = tmp_path / "o.jsonl"
    assert main(["chunk", str(md), "--out", str(out), "--no-model", "--lang", "en"]) == 0
    said = capsys.readouterr().out
    assert "1 prose chunks got RAKE keywords" in said and "--no-model" in said
    assert json.loads(out.read_text().splitlines()[0])["meta"]["keywords"]  # RAKE did give keywords
    # a registry-only input: its rows take their slot values, no RAKE notice
    from heritage_pipeline_tests.ops_fixtures import BUNDLED

    reg = next((BUNDLED / "raw" / "csv_registry").glob("*.csv"))
    assert main(["chunk", str(reg), "--out", str(tmp_path / "r.jsonl"), "--no-model", "--lang", "en"]) == 0
    assert "RAKE" not in capsys.readouterr().out


def test_the_vector_keyword_methods_are_one_constant():
    """The methods that need the passage vector are named once (enrich.keywords.VECTOR_METHODS), not as literal
    tuples in the stage and the chunk command."""
    import inspect

    from heritage_pipeline import stages
    from heritage_pipeline.cli import chunk
    from heritage_pipeline.enrich.keywords import VECTOR_METHODS

    assert set(VECTOR_METHODS) == {"keybert", "embedding"}
    for mod in (stages, chunk):
        src = inspect.getsource(mod)
        assert '("keybert", "embedding")' not in src and "VECTOR_METHODS" in src


def test_chunk_summary_names_the_gazetteer_it_used(tmp_path, capsys):
    """Trial defect 13: ``chunk`` on a user's ISIL list named and typed DE-755 from the repository's bundled
    ``wikidata_isil_lookup_sample.tsv`` without saying so. The configured gazetteer (context.entities.gazetteer) is
    named with its size in the summary; with heritage annotation off there is no such line and no gazetteer name."""
    isil = tmp_path / "isil.csv"
    isil.write_text("DE-755\nDE-1\nDE-2\n", encoding="utf-8")
    assert main(["chunk", str(isil), "--out", str(tmp_path / "o.jsonl"), "--no-model"]) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("heritage gazetteer:"))
    assert "context.entities.gazetteer" in line and "raw/csv_registry" in line
    assert int(line.split()[2]) > 0  # "heritage gazetteer: N institutions from ..."
    rows = [json.loads(x) for x in (tmp_path / "o.jsonl").read_text().splitlines()]
    assert any("DE-755" in r["text"] and r["meta"]["mentioned_entities"] for r in rows)
    assert main(["chunk", str(isil), "--out", str(tmp_path / "p.jsonl"), "--no-model",
                 "--set", "context.entities.heritage=false"]) == 0
    assert "heritage gazetteer:" not in capsys.readouterr().out
    rows = [json.loads(x) for x in (tmp_path / "p.jsonl").read_text().splitlines()]
    assert not any(r["meta"]["mentioned_entities"] for r in rows)


def test_parser_skip_reasons_give_run_the_reason_chunk_prints():
    """Trial defect 13: ``run`` said "skipped by its parser (...)" where ``chunk`` said "LinkML schema, not instance
    data"; parsed_sections stores the parser's reason per wholly skipped file, worded as parse_sources words it."""
    from heritage_pipeline.stages import parser_skip_reasons

    skipped = ["a/schema.yaml: LinkML schema, not instance data", "a/chat.json: conversation c1: no messages"]
    assert parser_skip_reasons(["a/schema.yaml", "a/chat.json", "a/x.yaml"], skipped, {"a/chat.json"}) == \
        {"a/schema.yaml": "LinkML schema, not instance data"}
