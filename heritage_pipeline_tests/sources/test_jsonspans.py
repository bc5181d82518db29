"""Differential tests of the span-keeping JSON parser against the standard library.

Property: for any JSON document (generated values, serialised with random indentation and separators),
``loads_with_spans(s) == json.loads(s)``; every object/array span and every member span re-parses to the member's
value; and every decoded string maps back to its raw characters through :func:`string_offsets`.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from heritage_pipeline.sources.jsonspans import JSONSpanError, SpannedDict, SpannedList, loads_with_spans, string_offsets

# surrogates excluded: json.loads keeps a lone surrogate, this parser replaces it with U+FFFD (module docstring)
TEXT = st.text(st.characters(exclude_categories=("Cs",)), max_size=20)
SCALARS = st.none() | st.booleans() | st.integers(-10**12, 10**12) | st.floats(allow_nan=False, allow_infinity=False) | TEXT
VALUES = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(TEXT, inner, max_size=4),
                      max_leaves=25)


@st.composite
def documents(draw):
    value = draw(VALUES)
    indent = draw(st.sampled_from([None, 0, 1, 2, "\t"]))
    seps = draw(st.sampled_from([(",", ":"), (", ", ": "), (" ,", " : ")]))
    ascii_only = draw(st.booleans())
    pad = draw(st.sampled_from(["", " ", "\n", "\r\n\t "]))
    return pad + json.dumps(value, indent=indent, separators=seps, ensure_ascii=ascii_only) + pad


def _check_spans(text: str, node) -> None:
    if isinstance(node, (SpannedDict, SpannedList)):
        s, e = node.span
        assert json.loads(text[s:e]) == node
        members = node.value_spans.items() if isinstance(node, SpannedDict) else enumerate(node.item_spans)
        for key, (ms, me) in members:
            assert json.loads(text[ms:me]) == node[key]
            _check_spans(text, node[key])
    elif isinstance(node, list):  # a plain list would mean a container without spans
        raise AssertionError(f"container without span: {node!r}")


@settings(max_examples=300, deadline=None)
@given(documents())
def test_loads_with_spans_equals_json_loads_and_spans_reparse(text):
    value = loads_with_spans(text)
    assert value == json.loads(text)
    _check_spans(text, value)


@settings(max_examples=200, deadline=None)
@given(TEXT, st.booleans())
def test_string_offsets_decode_and_point_at_the_raw_characters(s, ascii_only):
    raw = json.dumps(s, ensure_ascii=ascii_only)
    decoded, offsets = string_offsets(raw, 0)
    assert decoded == s and len(offsets) == len(s)
    assert offsets == sorted(offsets) and all(0 < o < len(raw) - 1 for o in offsets)
    for ch, o in zip(s, offsets):  # an unescaped character is itself; an escape starts with a backslash
        assert raw[o] == ch or raw[o] == "\\"


@pytest.mark.parametrize("bad", ["", "{", "[1,]", '{"a" 1}', "[1] 2", '"\\x"', "01"])
def test_invalid_json_is_rejected_like_the_standard_library(bad):
    with pytest.raises(json.JSONDecodeError):
        json.loads(bad)
    with pytest.raises(JSONSpanError):
        loads_with_spans(bad)
