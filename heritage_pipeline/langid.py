"""Language detection per document and per chunk (offline), with lingua.

lingua is used because it is accurate on short and mixed texts (n-gram models of 75 languages, offline, bundled in
the wheel). Codes are ISO 639-1 (``en``, ``fr``, ...), ``und`` when undetermined (too little text) and ``mul`` for
a document whose detected languages are mixed with no language covering :data:`MIXED_SHARE` of its text.
"""

from __future__ import annotations

import re
from collections import Counter
from functools import lru_cache

UNDETERMINED = "und"
MIXED = "mul"
MIXED_SHARE = 0.6
MIN_CHARS = 12

_CODE_FENCE = re.compile(r"^(`{3,}|~{3,}).*?^\1", re.S | re.M)
_HTML_DROP = re.compile(r"<(script|style|noscript|svg|template)\b.*?</\1\s*>", re.S | re.I)
_TAG = re.compile(r"<[^>]*>")
_URL = re.compile(r"\(?https?://\S+|\]\([^)]*\)|\{\*.*?\*\}|\{\{.*?\}\}")
_NON_WORD = re.compile(r"[\W\d_]+", re.UNICODE)


@lru_cache(maxsize=1)
def _detector():
    from lingua import LanguageDetectorBuilder

    return LanguageDetectorBuilder.from_all_languages().build()


def _code(language) -> str:
    iso1 = getattr(language, "iso_code_639_1", None)
    if iso1 is not None:
        return iso1.name.lower()
    return language.iso_code_639_3.name.lower()


def strip_markup(text: str) -> str:
    """Text for language detection: code blocks, HTML tags, scripts, URLs and link targets removed."""
    text = _CODE_FENCE.sub(" ", text)
    if "<" in text:
        text = _HTML_DROP.sub(" ", text)
        text = _TAG.sub(" ", text)
    return _URL.sub(" ", text)


def detect_language(text: str, *, markup: bool = True) -> tuple[str, float]:
    """Most likely language of ``text`` and its confidence in [0, 1]; (``und``, 0.0) for too little text.

    Looks at most at the first 4 000 characters of cleaned text (confidence saturates well before that).
    """
    clean = strip_markup(text) if markup else text
    letters = _NON_WORD.sub(" ", clean).strip()
    if len(letters) < MIN_CHARS:
        return UNDETERMINED, 0.0
    values = _detector().compute_language_confidence_values(clean[:4000])
    if not values:
        return UNDETERMINED, 0.0
    top = values[0]
    return _code(top.language), float(top.value)


def detect_document_language(segments: list[str], *, markup: bool = True, max_segments: int = 24) -> str:
    """Language of a document from its segments (paragraphs, rows, messages), weighted by length.

    Returns ``mul`` when no language reaches :data:`MIXED_SHARE` of the detected characters, ``und`` when nothing
    could be detected. At most ``max_segments`` evenly spaced segments are examined.
    """
    segs = [s for s in segments if s and s.strip()]
    if not segs:
        return UNDETERMINED
    if len(segs) > max_segments:
        step = len(segs) / max_segments
        segs = [segs[int(i * step)] for i in range(max_segments)]
    weights: Counter[str] = Counter()
    for s in segs:
        lang, conf = detect_language(s[:4000], markup=markup)
        if lang != UNDETERMINED and conf > 0:
            weights[lang] += min(len(s), 4000)
    if not weights:
        return UNDETERMINED
    lang, w = weights.most_common(1)[0]
    return lang if w / sum(weights.values()) >= MIXED_SHARE else MIXED
