"""Shared fixtures.

* ``repo_root`` / ``bundled_data``: the repository and its bundled sample (``data/``), always present.
* ``shared_data``: the full real corpus in ``../shared/data`` next to the repository (or ``$HERITAGE_SHARED_DATA``);
  tests that need it are skipped with a clear reason where it is not mounted.
* ``tokenizer``: the offline cl100k tokenizer.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

REPO_ROOT = Path(__file__).resolve().parent.parent
SHARED_DATA = Path(os.environ.get("HERITAGE_SHARED_DATA", REPO_ROOT.parent / "shared" / "data"))


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO_ROOT


@pytest.fixture(scope="session")
def bundled_data() -> Path:
    return REPO_ROOT / "data"


@pytest.fixture(scope="session")
def shared_data() -> Path:
    if not (SHARED_DATA / "README.md").exists():
        pytest.skip(f"real corpus not mounted at {SHARED_DATA} (set HERITAGE_SHARED_DATA)")
    return SHARED_DATA


@pytest.fixture(scope="session")
def tokenizer():
    """The reference counter the tests check chunks against: tiktoken itself, independent of the fast backend
    (rs-bpe) the chunker counts with."""
    from heritage_pipeline.core.tokenizer import get_tokenizer

    return get_tokenizer("cl100k", "tiktoken")
