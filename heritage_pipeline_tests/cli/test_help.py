"""Command-line help and the command examples in the config files' comments."""

from __future__ import annotations

import argparse
import re
import shlex
from pathlib import Path

import pytest

from heritage_pipeline.cli import build_parser, main

ROOT = Path(__file__).resolve().parents[2]


def _subparsers() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(sub.choices)


def test_every_option_and_argument_has_help_text():
    missing = [f"{name} {'/'.join(a.option_strings) or a.dest}" for name, sp in _subparsers().items()
               for a in sp._actions if not isinstance(a, argparse._HelpAction) and not (a.help or "").strip()]
    assert not missing, missing


def test_help_has_no_internal_vocabulary():
    texts = [sp.format_help() for sp in _subparsers().values()] + [build_parser().format_help()]
    bad = [m.group(0) for t in texts for m in re.finditer(r"issue[- ]?\d+|protocol|SPEC\b", t, re.I)]
    assert not bad, bad


def _config_examples() -> list[tuple[str, str]]:
    """(file, command) of every backticked ``heritage-pipeline <command> <args>`` in a comment of configs/*.yaml."""
    out = []
    for path in sorted((ROOT / "configs").glob("*.yaml")):
        for line in path.read_text(encoding="utf-8").splitlines():
            comment = line.partition("#")[2]
            for m in re.finditer(r"`heritage-pipeline ([a-z-]+ [^`]+)`", comment):
                out.append((path.name, m.group(1)))
    return out


def test_the_config_files_show_at_least_the_validate_example():
    assert ("chunking.yaml", "validate-config --config configs/chunking.yaml") in _config_examples()


@pytest.mark.parametrize("where,command", _config_examples())
def test_config_header_examples_parse_and_validate_config_runs(where, command, monkeypatch):
    argv = shlex.split(command)
    build_parser().parse_args(argv)  # exits (SystemExit) on an unknown option or a missing argument
    if argv[0] == "validate-config":
        monkeypatch.chdir(ROOT)
        assert main(argv) == 0
