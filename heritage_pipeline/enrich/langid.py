"""Language detection per document and per chunk (offline).

Two backends behind one interface (:class:`LanguageDetector`, ``detect(text) -> (iso_639_1, confidence)``):

* ``py3langid`` (default): langid.py's naive-Bayes byte n-gram model (97 languages, 2 MB, in the wheel).
* ``lingua``: lingua-language-detector (75 languages, about 100 MB of n-gram models, about 10 s to load and about
  1 GB of RAM), an optional extra (``pip install 'heritage_pipeline[lingua]'``).

Why py3langid is the default (measured with ``heritage_pipeline_eval/langid.py`` on the 144 golden documents en/de/fr
plus the English FAQ page filed under ``zh``): both get 145/145 documents right; on the 714 paragraphs py3langid is
right on 98.7 % (lingua 97.8 %), on 60-character snippets 97.9 % (lingua 94.8 %); it is about 8x faster per call and
loads instantly. Most remaining errors of both are headings that are proper names ("Henrietta Swan Leavitt").

Per-chunk language (:func:`detect_chunk_language`) keeps the document's language unless the chunk's own detection
is confident (>= :data:`CHUNK_MIN_CONFIDENCE`): on the same paragraphs and snippets no wrong detection of
py3langid reached 0.8 while 92 % of right ones did, so short headings and name lists inherit the document's
language and a genuinely other-language chunk (a quoted English passage in a French page) is still relabelled.

Codes are ISO 639-1 (``en``, ``fr``, ...; ISO 639-3 where a language has no 639-1 code), ``und`` when undetermined
(too little text after markup is removed) and ``mul`` for a document whose detected languages are mixed with no
language covering :data:`MIXED_SHARE` of its text.
"""

from __future__ import annotations

import re
from collections import Counter
from functools import lru_cache
from typing import Protocol

UNDETERMINED = "und"
MIXED = "mul"
MIXED_SHARE = 0.6
MIN_CHARS = 12
MAX_CHARS = 4000
BACKENDS = ("py3langid", "lingua")
DEFAULT_BACKEND = "py3langid"
CHUNK_MIN_CONFIDENCE = 0.8

_CODE_FENCE = re.compile(r"^(`{3,}|~{3,}).*?^\1", re.S | re.M)
_HTML_DROP = re.compile(r"<(script|style|noscript|svg|template)\b.*?</\1\s*>", re.S | re.I)
_TAG = re.compile(r"<[^>]*>")
_URL = re.compile(r"\(?https?://\S+|\]\([^)]*\)|\{\*.*?\*\}|\{\{.*?\}\}")
_NON_WORD = re.compile(r"[\W\d_]+", re.UNICODE)


class LanguageDetector(Protocol):
    name: str

    def detect(self, text: str) -> tuple[str, float]:
        """(ISO 639-1 code, confidence in [0, 1]) of plain text; (``und``, 0.0) when nothing can be said."""


class LinguaDetector:
    """lingua-language-detector over all its languages. Confidence: lingua's relative confidence of the top
    language (the values of all languages sum to 1)."""

    name = "lingua"

    def __init__(self) -> None:
        try:
            from lingua import LanguageDetectorBuilder
        except ImportError as exc:  # optional extra
            raise ImportError("the 'lingua' language-detection backend needs lingua-language-detector: "
                              "pip install 'heritage_pipeline[lingua]'") from exc

        self._det = LanguageDetectorBuilder.from_all_languages().build()

    def detect(self, text: str) -> tuple[str, float]:
        values = self._det.compute_language_confidence_values(text)
        if not values:
            return UNDETERMINED, 0.0
        top = values[0]
        iso1 = getattr(top.language, "iso_code_639_1", None)
        code = iso1.name.lower() if iso1 is not None else top.language.iso_code_639_3.name.lower()
        return code, float(top.value)


class Py3LangidDetector:
    """py3langid (langid.py model) with normalised probabilities as the confidence."""

    name = "py3langid"

    def __init__(self) -> None:
        from py3langid.langid import MODEL_FILE, LanguageIdentifier

        self._ident = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)

    def detect(self, text: str) -> tuple[str, float]:
        lang, prob = self._ident.classify(text)
        if not lang:
            return UNDETERMINED, 0.0
        return str(lang), float(prob)


@lru_cache(maxsize=len(BACKENDS))
def get_detector(backend: str = DEFAULT_BACKEND) -> LanguageDetector:
    """The (process-wide, lazily built) detector of a backend; raises ValueError for an unknown name."""
    if backend == "lingua":
        return LinguaDetector()
    if backend == "py3langid":
        return Py3LangidDetector()
    raise ValueError(f"unknown language-detection backend {backend!r}; allowed: {', '.join(BACKENDS)}")


def strip_markup(text: str) -> str:
    """Text for language detection: code blocks, HTML tags, scripts, URLs and link targets removed."""
    text = _CODE_FENCE.sub(" ", text)
    if "<" in text:
        text = _HTML_DROP.sub(" ", text)
        text = _TAG.sub(" ", text)
    return _URL.sub(" ", text)


def detect_language(text: str, *, markup: bool = True, backend: str = DEFAULT_BACKEND) -> tuple[str, float]:
    """Most likely language of ``text`` and its confidence in [0, 1]; (``und``, 0.0) when fewer than
    :data:`MIN_CHARS` letters remain after markup removal.

    Looks at most at the first :data:`MAX_CHARS` characters of cleaned text (confidence saturates well before).
    """
    clean = strip_markup(text) if markup else text
    letters = _NON_WORD.sub(" ", clean).strip()
    if len(letters) < MIN_CHARS:
        return UNDETERMINED, 0.0
    return get_detector(backend).detect(clean[:MAX_CHARS])


def detect_document_language(segments: list[str], *, markup: bool = True, max_segments: int = 24,
                             backend: str = DEFAULT_BACKEND) -> str:
    """Language of a document from its segments (paragraphs, rows, messages), weighted by length in characters.

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
        lang, conf = detect_language(s[:MAX_CHARS], markup=markup, backend=backend)
        if lang != UNDETERMINED and conf > 0:
            weights[lang] += min(len(s), MAX_CHARS)
    if not weights:
        return UNDETERMINED
    lang, w = weights.most_common(1)[0]
    return lang if w / sum(weights.values()) >= MIXED_SHARE else MIXED


def detect_chunk_language(text: str, document_lang: str, *, backend: str = DEFAULT_BACKEND,
                          min_confidence: float = CHUNK_MIN_CONFIDENCE) -> str:
    """Language of one chunk: its own detection when confident (>= ``min_confidence``), else ``document_lang``.

    ``document_lang`` is the document's (partition) language; ``und``/``mul`` documents fall back to the chunk's
    own best guess whenever it is determined at all.
    """
    lang, conf = detect_language(text, backend=backend)
    if lang == UNDETERMINED:
        return document_lang
    if conf >= min_confidence or document_lang in (UNDETERMINED, MIXED):
        return lang
    return document_lang
