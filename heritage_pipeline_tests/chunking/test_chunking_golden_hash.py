"""The chunker's output on the real corpus is unchanged: SHA-256 over every chunk record, per configuration, equals the
hashes stored in ``heritage_pipeline_eval/bench/output_hashes.json`` (see ``heritage_pipeline_eval/bench/output_hash.py``).

Guards speed work on the chunker (issue #3): an optimisation must not change a single record. A deliberate change of
the chunker's behaviour regenerates the file (``python -m heritage_pipeline_eval.bench.output_hash --write
heritage_pipeline_eval/bench/output_hashes.json``) in the same commit, and says why in the message."""

from __future__ import annotations

import json

import pytest


@pytest.mark.slow
def test_chunk_records_match_stored_hashes(repo_root, shared_data):
    from heritage_pipeline_eval.bench import output_hash as mod

    stored = json.loads((repo_root / "heritage_pipeline_eval" / "bench" / "output_hashes.json").read_text())
    res = mod.run(None, derived=True)
    assert (res["files"], res["chars"]) == (stored["files"], stored["chars"]), \
        "the shared Markdown corpus changed: regenerate the stored hashes at unchanged code"
    assert set(res["hashes"]) == set(stored["hashes"])
    for name, digest in res["hashes"].items():
        assert res["chunks"][name] > 0
        assert digest == stored["hashes"][name], f"{name}: chunk records changed ({res['chunks'][name]} chunks, stored " \
                                                 f"{stored['chunks'][name]})"
