"""Text helpers and the token counter: the one normalisation, grapheme boundaries, decoding, exact token offsets."""

from __future__ import annotations

import codecs

import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from heritage_pipeline.core.text import (words, DecodeError, decode_bytes, invalid_utf8_offsets, grapheme_boundaries, is_blank, line_starts,
    normalize, normalize_inner)


def test_normalize_documented_rules():
    assert normalize("a\r\nb\rc\n") == "a\nb\nc"
    assert normalize("x\u00a0y\u2009z\u3000w") == "x y z w"  # odd spaces -> one ASCII space each, not collapsed
    assert normalize("\u00a0\u00a0x") == "  x"
    assert normalize("in\ufeffside\ufeff") == "inside"
    assert normalize("e\u0301te\u0301") == "\u00e9t\u00e9"  # NFC
    assert normalize("    indented code   \n\n") == "    indented code"  # leading indentation kept, trailing cut
    assert normalize_inner("a \n\n") == "a \n\n"


@given(st.text())
def test_normalize_is_idempotent_and_piecewise_at_line_starts(s):
    n = normalize(s)
    assert normalize(n) == n
    for k in [i + 1 for i, ch in enumerate(s) if ch == "\n"]:  # a cut after LF never changes the normalisation
        assert normalize_inner(s[:k]) + normalize_inner(s[k:]) == normalize_inner(s)


def test_is_blank():
    assert is_blank("") and is_blank(" \t\u00a0\ufeff\u3000")
    assert not is_blank(" x ")


@pytest.mark.parametrize("s", ["👨\u200d👩\u200d👧\u200d👦x", "🇫🇷🇩🇪", "e\u0301\u0302a", "👍🏽!", "한국어", "\r\nx", "Z\u0351\u0327\u0301a"])
def test_grapheme_boundaries_never_split_a_cluster(s):
    bounds = grapheme_boundaries(s, 0, len(s))
    assert bounds == [0] + [m.end() for m in regex.finditer(r"\X", s)]


def test_line_starts_handles_all_line_endings():
    assert line_starts("a\nb\r\nc\rd") == [0, 2, 5, 7]


def test_decode_bytes_real_encodings():
    assert decode_bytes(codecs.BOM_UTF8 + "été".encode()).text == "été"
    d = decode_bytes(codecs.BOM_UTF16_LE + "数据".encode("utf-16-le"))
    assert d.text == "数据" and d.encoding == "utf-16"
    cp = decode_bytes("Collection numérique de l’État – 1€".encode("cp1252"))
    assert cp.text == "Collection numérique de l’État – 1€"
    with pytest.raises(DecodeError, match="file.bin: binary"):
        decode_bytes(b"\x00\x01\x02binary", name="file.bin")


def test_special_tokens_are_plain_text(tokenizer):
    assert tokenizer.count("<|endoftext|>") > 1
    assert tokenizer.count("a <|endoftext|> b <|fim_prefix|>") == len(tokenizer.encode("a <|endoftext|> b <|fim_prefix|>"))


def test_lone_surrogates_are_counted_not_raised(tokenizer):
    assert tokenizer.count("abc\ud800def") > 0


@settings(max_examples=200, deadline=None)
@given(st.text(min_size=1))
def test_token_ends_are_the_utf8_ends_of_the_tokens(tokenizer, s):
    try:
        raw = s.encode("utf-8")
    except UnicodeEncodeError:
        return
    ends = tokenizer.token_ends(s)
    assert len(ends) == tokenizer.count(s)
    assert int(ends[-1]) == len(raw)
    pieces = [tokenizer._enc.decode_single_token_bytes(t) for t in tokenizer.encode(s)]
    assert list(ends) == [sum(len(p) for p in pieces[: i + 1]) for i in range(len(pieces))]


def test_utf8_with_a_stray_windows_byte_is_read_as_utf8_with_a_warning(caplog):
    """One stray CP1252 byte in a UTF-8 CSV must not turn every accented letter into mojibake (Musée -> MusÃ©e)."""
    head = "name;city\nMusée Réattu;Arles\n".encode("utf-8")
    data = head + b"Caf\xe9 de la Gare;Li\xe8ge\n" + "Château;Blois\n".encode("utf-8")
    with caplog.at_level("WARNING"):
        d = decode_bytes(data, name="reg.csv")
    assert d.text.startswith("name;city\nMusée Réattu;Arles\nCaf\ufffd de la Gare;Li\ufffd")
    assert "Château" in d.text and "Ã" not in d.text
    assert d.encoding == "utf-8 (2 invalid byte sequence(s) replaced)"
    first = len(head) + 3
    assert d.warning == (f"reg.csv: UTF-8 with 2 invalid byte sequence(s) read as U+FFFD replacement characters, "
                         f"at byte offset(s) {first}, {first + 15}")
    assert d.warning in caplog.text
    assert data[first] == 0xE9


def test_one_valid_pair_and_one_stray_byte_is_utf8():
    # the smallest shape: a single valid multi-byte sequence outweighs a single stray byte
    d = decode_bytes("Musée".encode("utf-8") + b" \x92s", name="a.txt")
    assert d.text == "Musée \ufffds" and d.warning.startswith("a.txt: UTF-8 with 1 invalid")


def test_mostly_invalid_utf8_is_refused_not_mangled():
    data = "Le Musée d'Orsay.\n".encode("utf-8") * 5 + b"\xff\xfe\xfd \xc3 \xe2\x82 \xf0 \xff \xfe\n"
    with pytest.raises(DecodeError, match=r"x\.md: UTF-8 text where most multi-byte sequences are invalid \(8 invalid, 5 valid"):
        decode_bytes(data, name="x.md")


def test_invalid_utf8_offsets_are_the_replacement_characters():
    data = b"a\xffb\xc3\xa9\xe2\x82c\xf0"
    assert invalid_utf8_offsets(data) == [(1, 2), (5, 7), (8, 9)]
    assert data.decode("utf-8", errors="replace").count("\ufffd") == 3
    assert invalid_utf8_offsets("é".encode()) == []


@settings(max_examples=100, deadline=None)
@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00\ufeff\ufffd"), min_size=1),
       st.lists(st.integers(min_value=0, max_value=10_000), max_size=3), st.sampled_from([b"\x92", b"\xe9", b"\xff"]))
def test_valid_utf8_with_a_few_stray_bytes_keeps_every_valid_character(text, where, stray):
    """Property: stray bytes inserted at line-independent positions into UTF-8 text with at least as many non-ASCII
    characters never change the other characters: the result is the text with one U+FFFD per stray byte."""
    raw = text.encode("utf-8")
    n_multi = sum(1 for ch in text if ord(ch) > 0x7F)
    # insert only between characters (not inside a multi-byte sequence)
    bounds = sorted({len(text[:k].encode()) for k in range(len(text) + 1)})
    cuts = sorted({bounds[w % len(bounds)] for w in where})
    if not cuts or n_multi < len(cuts):
        return
    data, expect, prev = b"", "", 0
    for c in cuts:
        data += raw[prev:c] + stray
        prev = c
    data += raw[prev:]
    if b"\x00" in data[:8192]:
        return
    d = decode_bytes(data, name="p")
    assert d.text.replace("\ufffd", "") == text
    assert len(invalid_utf8_offsets(data)) == d.text.count("\ufffd") <= len(cuts)


def test_random_high_bytes_and_cyrillic_code_pages_are_refused():
    import random

    rnd = random.Random(3)
    with pytest.raises(DecodeError, match="binary data or an unsupported encoding|most multi-byte sequences are invalid"):
        decode_bytes(bytes(rnd.randrange(0x80, 0x100) for _ in range(4096)), name="noise.md")
    with pytest.raises(DecodeError, match="unsupported encoding"):
        decode_bytes("Государственный исторический музей в Москве".encode("cp1251"), name="ru.md")
    # genuine CP1252 text still decodes as written
    assert decode_bytes("Museum Belvédère, Oranjewoud; café".encode("cp1252")).text == "Museum Belvédère, Oranjewoud; café"


# --------------------------------------------------------------------------- the one word tokenizer and stripper
def test_every_word_tokenizer_of_the_stages_is_the_one_of_core_text():
    """Chunk ids / adaptive overlap, web boilerplate shingles, table header matching, BM25 analysis and the source
    evaluations all split words with core.text.WORD_RE; the language detector and keyword extraction strip markup
    with core.text.strip_markup (the deliberate exceptions say why where they are defined)."""
    from heritage_pipeline.chunking import ids, params
    from heritage_pipeline.core import text
    from heritage_pipeline.enrich import keywords, langid, tables
    from heritage_pipeline.index import analysis
    from heritage_pipeline.sources import discovery, main_content
    from heritage_pipeline_eval import sources as eval_sources

    for tok in (params.WORD_RE, ids.WORD_RE, main_content._TOKEN, tables._WORD, analysis._WORD, eval_sources._TOKEN):
        assert tok is text.WORD_RE
    assert langid.strip_markup is text.strip_markup and discovery.strip_markup is text.strip_markup
    assert keywords.keyword_text("Intro {#intro} see <b>https://x.org/a</b>\n```\ncode\n```\n").split() == ["Intro", "see"]


def test_words_keep_words_written_with_combining_marks_whole():
    """Python's re \\w leaves out combining marks: the BM25 analysis and table matching cut Hindi or Tamil words at
    their vowel signs (हिन्दी -> हिन, द); the one tokenizer keeps them whole."""
    from heritage_pipeline.index.analysis import words as index_words

    assert words("हिन्दी भाषा") == ["हिन्दी", "भाषा"]
    assert index_words("हिन्दी भाषा") == ["हिन्दी", "भाषा"]
    assert words("Rijksmuseum's collectie_2024 (Amsterdam)") == ["Rijksmuseum", "s", "collectie_2024", "Amsterdam"]


@given(st.text(max_size=200))
def test_words_are_the_maximal_runs_of_word_characters(s):
    import regex

    toks = words(s)
    assert "".join(toks) == "".join(ch for ch in s if regex.match(r"\w", ch))
    assert len(toks) == len(regex.findall(r"(?<!\w)\w", s))  # one token per run start: the runs are maximal


def test_a_utf8_row_in_a_single_byte_file_is_read_single_byte_with_a_warning(caplog):
    """A line that mixes a UTF-8 name and CP1252 bytes (more invalid sequences than valid ones) is single-byte text by
    the rule above, so the UTF-8 name reads as mojibake: the warning names the file and the UTF-8 sequences."""
    data = b"naam,plaats\nCaf\xc3\xa9 Museum,Zw\xe9\xe9 Stad\n"
    with caplog.at_level("WARNING"):
        d = decode_bytes(data, name="mixed.csv")
    assert d.text == data.decode("cp1252")  # the reading itself is unchanged: single-byte text
    assert d.warning == ("mixed.csv: read as cp1252, but 1 byte sequence(s) are also valid UTF-8, at byte offset(s) "
                         "15 ('é'): if the file mixes encodings, these characters are wrong (re-save the file as UTF-8)")
    assert d.warning in caplog.text
    # plain CP1252 text without any valid UTF-8 pair gets no warning
    assert decode_bytes("Zwéé Stad".encode("cp1252"), name="b.csv").warning == ""
