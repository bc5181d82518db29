"""The fast counting backend (rs-bpe, GitHub's bpe crate) must give exactly tiktoken's cl100k ids, or not be used."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from heritage_pipeline.core.tokenizer import Tokenizer, get_tokenizer

# Characters where pre-tokenizers differ if they differ at all: whitespace kinds and runs, contractions, digits,
# punctuation runs, letters of several scripts, combining marks, emoji with ZWJ and modifiers, BOM, RTL.
_NASTY = (
    [chr(c) for c in range(0x3001) if chr(c).isspace()]  # every Unicode whitespace character (all are <= U+3000)
    + list("\u200b\u200d\u2060\ufeff\u00ad")
    + list("abcXYZ0123456789'sltmvedrSLTMVED")
    + list(".,;:!?-_()[]{}<>|/\\\"`~#*+=@$%^&")
    + list("éüßçñÅ中文日本語한국어ΑΒΓабв\u0627\u0644\u05d0\u0301\u0308")
    + ["🙂", "👍🏽", "👩\u200d👩\u200d👧", "<|endoftext|>", "'ll", "'S", "123456", "    ", "\n\n\n"]
)


@pytest.fixture(scope="module")
def fast() -> Tokenizer:
    tok = get_tokenizer("cl100k")
    assert tok.backend == "rs-bpe", "rs-bpe is a dependency: the default backend must be the fast one"
    return tok


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_NASTY), max_size=60).map("".join))
def test_fast_backend_gives_tiktoken_ids(fast, tokenizer, s):
    assert fast.encode(s) == tokenizer.encode(s)
    assert fast.count(s) == tokenizer.count(s)
    assert np.array_equal(fast.token_ends(s), tokenizer.token_ends(s))


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=200))
def test_fast_backend_gives_tiktoken_counts_on_any_text(fast, tokenizer, s):
    assert fast.count(s) == tokenizer.count(s)  # (lone surrogates included: both fall back to tiktoken's rule)


def _markdown_files(root):
    return sorted(p for p in root.rglob("*.md") if p.is_file())


def test_fast_backend_identical_on_every_markdown_file(fast, tokenizer, shared_data):
    files = _markdown_files(shared_data)
    assert len(files) > 100
    for p in files:
        text = p.read_text(encoding="utf-8")
        assert fast.encode(text) == tokenizer.encode(text), p


def test_fast_backend_identical_on_bundled_data(fast, tokenizer, bundled_data):
    files = _markdown_files(bundled_data / "raw")
    assert files
    for p in files:
        text = p.read_text(encoding="utf-8")
        assert fast.count(text) == tokenizer.count(text), p


def test_backend_choice_and_errors():
    assert Tokenizer("cl100k", "tiktoken").backend == "tiktoken"
    assert repr(Tokenizer("cl100k", "tiktoken")) == "Tokenizer('cl100k', backend='tiktoken')"
    with pytest.raises(ValueError, match="backend 'nope'"):
        Tokenizer("cl100k", "nope")
    with pytest.raises(ValueError, match="unknown encoding 'no-such-encoding'"):
        Tokenizer("no-such-encoding")


def test_an_encoding_not_shipped_fails_at_once_without_network(monkeypatch, tmp_path):
    """o200k_base is known to tiktoken but its file is not bundled: no connection is attempted, and the error names
    the encoding and how to provide it."""
    import socket

    from heritage_pipeline.core import tokenizer as tk

    attempts = []

    def refuse(*args, **kwargs):
        attempts.append(args)
        raise OSError("network disabled by the test")

    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))  # an empty cache
    tk._load_encoding.cache_clear()
    with pytest.raises(tk.EncodingNotShippedError, match="'o200k_base' is not shipped.*TIKTOKEN_CACHE_DIR"):
        Tokenizer("o200k_base", "tiktoken")
    assert attempts == []
    assert Tokenizer("cl100k", "tiktoken").count("ok") == 1  # the bundled encoding still loads, and read_file is restored
    from tiktoken import load

    assert load.read_file is not tk._offline_read_file


def test_a_fast_backend_that_disagrees_is_not_used(monkeypatch):
    from rs_bpe.bpe import openai as rs_openai

    class Wrong:
        def encode(self, text):
            return [0]

        def count(self, text):
            return 1

    monkeypatch.setattr(rs_openai, "cl100k_base", lambda: Wrong())
    tok = Tokenizer("cl100k")
    assert tok.backend == "tiktoken"
    assert tok.count("hello world") == 2
    with pytest.raises(ValueError, match="rs-bpe"):
        Tokenizer("cl100k", "rs-bpe")
