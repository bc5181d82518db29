"""The chunker's output on the real corpus is unchanged: SHA-256 over every chunk record, per configuration, equals the
hashes stored in ``benchmarks/chunk_output_hashes.json`` (see ``benchmarks/chunk_output_hash.py``).

Guards speed work on the chunker (issue #3): an optimisation must not change a single record. A deliberate change of
the chunker's behaviour regenerates the file (``python benchmarks/chunk_output_hash.py --write
benchmarks/chunk_output_hashes.json``) in the same commit, and says why in the message."""

from __future__ import annotations

import importlib.util
import json

import pytest


@pytest.mark.slow
def test_chunk_records_match_stored_hashes(repo_root, shared_data):
    spec = importlib.util.spec_from_file_location("chunk_output_hash", repo_root / "benchmarks" / "chunk_output_hash.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    stored = json.loads((repo_root / "benchmarks" / "chunk_output_hashes.json").read_text())
    res = mod.run(None, derived=True)
    assert (res["files"], res["chars"]) == (stored["files"], stored["chars"]), \
        "the shared Markdown corpus changed: regenerate the stored hashes at unchanged code"
    assert set(res["hashes"]) == set(stored["hashes"])
    for name, digest in res["hashes"].items():
        assert res["chunks"][name] > 0
        assert digest == stored["hashes"][name], f"{name}: chunk records changed ({res['chunks'][name]} chunks, stored " \
                                                 f"{stored['chunks'][name]})"
