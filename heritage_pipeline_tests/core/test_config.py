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


def _leaf_keys(model: type, prefix: str = ""):
    """Every (dotted key, field name) of a config model, nested models included."""
    import typing

    from pydantic import BaseModel

    def models(tp):
        if isinstance(tp, type) and issubclass(tp, BaseModel):
            return [tp]
        return [m for a in typing.get_args(tp) for m in models(a)]

    for name, field in model.model_fields.items():
        if name == "base_dir":  # set by the loader, not a YAML key
            continue
        yield prefix + name, name
        for sub in models(field.annotation):
            yield from _leaf_keys(sub, f"{prefix}{name}.")


def _deep_diff(yaml_node, model_node, prefix=""):
    if isinstance(yaml_node, dict) and isinstance(model_node, dict):
        out = [f"{prefix}{k}: only in the models" for k in model_node if k not in yaml_node]
        out += [f"{prefix}{k}: only in the YAML" for k in yaml_node if k not in model_node]
        for k in yaml_node.keys() & model_node.keys():
            out += _deep_diff(yaml_node[k], model_node[k], f"{prefix}{k}.")
        return out
    return [] if yaml_node == model_node else [f"{prefix[:-1]}: YAML {yaml_node!r} != model {model_node!r}"]


def test_yaml_files_mirror_the_model_defaults():
    """Defaults live in the pydantic models; the shipped YAML files state every key with the same value."""
    from heritage_pipeline.core.config import PipelineConfig

    chunking = yaml.safe_load(DEFAULT_CHUNKING_CONFIG.read_text(encoding="utf-8"))
    pipeline = yaml.safe_load(DEFAULT_PIPELINE_CONFIG.read_text(encoding="utf-8"))
    assert _deep_diff(chunking, ChunkingConfig().model_dump(mode="json")) == []
    assert _deep_diff(pipeline, PipelineConfig().model_dump(mode="json")) == []
    assert PipelineConfig().lancedb.rrf_k == 5  # the measured value (configs/pipeline.yaml) won over the old 60


def test_every_config_key_is_read_by_code():
    """A key of chunking.yaml / pipeline.yaml that no module reads (``.key`` or ``"key"``) is a defect: setting it
    would change nothing. The search covers the product and evaluation packages."""
    import re

    from heritage_pipeline.core.config import PipelineConfig

    root = Path(__file__).resolve().parents[2]
    src = "\n".join(p.read_text(encoding="utf-8") for d in ("heritage_pipeline", "heritage_pipeline_eval")
                    for p in (root / d).rglob("*.py"))
    unread = [dotted for model in (ChunkingConfig, PipelineConfig) for dotted, name in _leaf_keys(model)
              if not re.search(rf"\.{name}\b|[\"']{name}[\"']", src)]
    assert unread == []


def test_removed_keys_are_rejected(tmp_path):
    """``hierarchy.keep_titles`` changed nothing (a heading always stays with its body), so it is no longer a key."""
    data = _shipped()
    data["hierarchy"]["keep_titles"] = False
    with pytest.raises(ConfigError, match="hierarchy.keep_titles: unknown key"):
        load_chunking_config(_write(tmp_path, data))


def test_pipeline_config_is_parsed_once_per_file_version(tmp_path, monkeypatch):
    import heritage_pipeline.core.config as config

    p = tmp_path / "configs" / "pipeline.yaml"
    p.parent.mkdir()
    p.write_text(DEFAULT_PIPELINE_CONFIG.read_text(encoding="utf-8"), encoding="utf-8")
    calls = []
    real = config._read_yaml
    monkeypatch.setattr(config, "_read_yaml", lambda path: calls.append(path) or real(path))
    first = load_pipeline_config(p)
    assert load_pipeline_config(p) is first and len(calls) == 1
    import os

    os.utime(p, ns=(p.stat().st_atime_ns, p.stat().st_mtime_ns + 10**9))  # an edit: parsed again
    assert load_pipeline_config(p) == first and len(calls) == 2
