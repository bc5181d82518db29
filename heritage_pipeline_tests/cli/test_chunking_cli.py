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
