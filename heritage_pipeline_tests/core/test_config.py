"""Config validation: the shipped configs load; bad values are rejected naming the key and the allowed range."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from heritage_pipeline.cli import main
from heritage_pipeline.core.config import (DEFAULT_CHUNKING_CONFIG, DEFAULT_PIPELINE_CONFIG, ChunkingConfig,
    ConfigError, load_chunking_config, load_pipeline_config)


def _write(tmp_path: Path, data: dict, name: str = "chunking.yaml") -> Path:
    p = tmp_path / name
    p.write_text(yaml.safe_dump(data), encoding="utf-8")
    return p


def _shipped() -> dict:
    return yaml.safe_load(DEFAULT_CHUNKING_CONFIG.read_text(encoding="utf-8"))


def test_shipped_configs_load_and_match_builtin_defaults():
    cfg = load_chunking_config(DEFAULT_CHUNKING_CONFIG)
    assert cfg.mode in ("hierarchical", "sliding", "hybrid")
    assert 300 <= cfg.sliding_window.size_tokens <= 1200 and 0.10 <= cfg.sliding_window.overlap_ratio <= 0.30
    # the built-in defaults (used by library callers without the repository) equal the shipped file
    assert ChunkingConfig() == cfg
    pcfg = load_pipeline_config(DEFAULT_PIPELINE_CONFIG)
    assert pcfg.embedder.model in ("minilm", "use-multilingual")  # the two models shipped inside packages
    assert Path(pcfg.base_dir) == DEFAULT_PIPELINE_CONFIG.parent.parent


@pytest.mark.parametrize(
    "path, value, key, allowed",
    [
        (("sliding_window", "overlap_ratio"), 0.5, "sliding_window.overlap_ratio", "0.10 <= overlap_ratio <= 0.30"),
        (("sliding_window", "overlap_ratio"), 0.05, "sliding_window.overlap_ratio", "0.10 <= overlap_ratio <= 0.30"),
        (("sliding_window", "size_tokens"), 200, "sliding_window.size_tokens", "300 <= size_tokens <= 1200"),
        (("sliding_window", "size_tokens"), 5000, "sliding_window.size_tokens", "300 <= size_tokens <= 1200"),
        (("quality", "readability", "min_score"), 10, "quality.readability.min_score", ">= 30"),
        (("mode",), "windowed", "mode", "'hierarchical', 'sliding' or 'hybrid'"),
    ],
)
def test_bad_values_name_key_and_range(tmp_path, path, value, key, allowed):
    data = _shipped()
    node = data
    for part in path[:-1]:
        node = node[part]
    node[path[-1]] = value
    with pytest.raises(ConfigError) as exc:
        load_chunking_config(_write(tmp_path, data))
    msg = str(exc.value)
    assert key in msg and allowed in msg and "chunking.yaml" in msg


def test_unknown_key_and_broken_yaml_are_reported(tmp_path):
    data = _shipped()
    data["sliding_window"]["size_tokn"] = 600
    with pytest.raises(ConfigError, match=r"sliding_window\.size_tokn: unknown key"):
        load_chunking_config(_write(tmp_path, data))
    bad = tmp_path / "broken.yaml"
    bad.write_text("mode: [hybrid\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="broken.yaml: not valid YAML"):
        load_chunking_config(bad)
    with pytest.raises(ConfigError, match="cannot read"):
        load_chunking_config(tmp_path / "missing.yaml")


def test_preset_size_must_fit_the_hard_maximum(tmp_path):
    data = _shipped()
    data["quality"]["length"]["max_tokens"] = 500
    size = data["sliding_window"]["size_tokens"]
    assert size > 500
    with pytest.raises(ConfigError, match=rf"sliding_window.size_tokens \({size}\) must not exceed quality.length.max_tokens \(500\)"):
        load_chunking_config(_write(tmp_path, data))


def test_validate_config_command(tmp_path, capsys):
    assert main(["validate-config"]) == 0
    data = _shipped()
    data["sliding_window"]["overlap_ratio"] = 0.9
    bad = _write(tmp_path, data)
    assert main(["validate-config", "--config", str(bad)]) == 2
    assert "overlap_ratio" in capsys.readouterr().err
