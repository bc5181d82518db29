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

Language policy (:class:`LanguagePolicy`, ``language:`` in ``configs/chunking.yaml``): the detector only chooses among
``candidates`` (py3langid's ``set_languages``; lingua's ``from_languages``), because on short Latin-script strings
the full model picks rare languages ("Hello world" -> ``fuv``, an English museum list -> ``pcm``/``ha``/``cy``: the
naive-Bayes model has no prior for how often a language is met). A detection below its confidence threshold is no
answer: a chunk then inherits its document's language (:func:`chunk_language`), a document its source folder's
(the language most of its confidently detected siblings have, or a folder named with a language code) or the
configured ``default`` (:func:`resolve_folder_languages`).

Codes are ISO 639-1 (``en``, ``fr``, ...; ISO 639-3 where a language has no 639-1 code), ``und`` when undetermined
(too little text after markup is removed) and ``mul`` for a document whose detected languages are mixed with no
language covering :data:`MIXED_SHARE` of its text.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from typing import Protocol

from heritage_pipeline.core.text import strip_markup  # the one markup stripper (also imported from here)

UNDETERMINED = "und"
MIXED = "mul"
MIXED_SHARE = 0.6
MIN_CHARS = 12
MAX_CHARS = 4000
BACKENDS = ("py3langid", "lingua")
DEFAULT_BACKEND = "py3langid"
CHUNK_MIN_CONFIDENCE = 0.8
# A segment (paragraph, message, registry text) counts towards the document's language only from this confidence
# (a German page's English menu items score 0.2-0.6 as "en" and made the page ``mul``).
SEGMENT_MIN_CONFIDENCE = 0.5
# Languages the detector chooses among by default: the official and regional languages of Europe and the world's
# most written languages (about 60 of the 142 of py3langid's model); the low-resource languages left out were the
# false positives on short Latin-script text (fuv, pcm, ha, bcl, gcf, ...). ``language.candidates: []`` allows all.
DEFAULT_CANDIDATES = (
    "af", "ar", "be", "bg", "bn", "br", "bs", "ca", "cs", "cy", "da", "de", "el", "en", "eo", "es", "et", "eu", "fa",
    "fi", "fo", "fr", "fy", "ga", "gd", "gl", "he", "hi", "hr", "hu", "hy", "id", "is", "it", "ja", "ka", "kk", "ko",
    "la", "lb", "lt", "lv", "mk", "ms", "mt", "nl", "nn", "no", "oc", "pl", "pt", "ro", "ru", "sk", "sl", "sq", "sr",
    "sv", "sw", "ta", "th", "tr", "uk", "ur", "vi", "zh",
)
REGISTRY_TYPES = ("csv_registry", "yaml_instance")

_NON_WORD = re.compile(r"[\W\d_]+", re.UNICODE)


class LanguageDetector(Protocol):
    name: str

    def detect(self, text: str) -> tuple[str, float]:
        """(ISO 639-1 code, confidence in [0, 1]) of plain text; (``und``, 0.0) when nothing can be said."""


class LinguaDetector:
    """lingua-language-detector over all its languages. Confidence: lingua's relative confidence of the top
    language (the values of all languages sum to 1)."""

    name = "lingua"

    def __init__(self, candidates: tuple[str, ...] = ()) -> None:
        try:
            from lingua import IsoCode639_1, Language, LanguageDetectorBuilder
        except ImportError as exc:  # optional extra
            raise ImportError("the 'lingua' language-detection backend needs lingua-language-detector: "
                              "pip install 'heritage_pipeline[lingua]'") from exc

        known = {getattr(IsoCode639_1, c.upper(), None) for c in candidates} - {None}
        langs = [Language.from_iso_code_639_1(c) for c in known]
        self._det = (LanguageDetectorBuilder.from_languages(*langs) if len(langs) >= 2
                     else LanguageDetectorBuilder.from_all_languages()).build()

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

    def __init__(self, candidates: tuple[str, ...] = ()) -> None:
        from py3langid.langid import MODEL_FILE, LanguageIdentifier

        self._ident = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)
        known = [c for c in candidates if c in self._ident.nb_classes]
        if known:
            self._ident.set_languages(known)

    def detect(self, text: str) -> tuple[str, float]:
        lang, prob = self._ident.classify(text)
        if not lang:
            return UNDETERMINED, 0.0
        return str(lang), float(prob)


@lru_cache(maxsize=8)
def get_detector(backend: str = DEFAULT_BACKEND, candidates: tuple[str, ...] = DEFAULT_CANDIDATES) -> LanguageDetector:
    """The (process-wide, lazily built) detector of a backend choosing among ``candidates`` (ISO 639-1 codes; codes
    the backend does not know are ignored; empty: every language of the model). Raises ValueError for an unknown
    backend name."""
    if backend == "lingua":
        return LinguaDetector(candidates)
    if backend == "py3langid":
        return Py3LangidDetector(candidates)
    raise ValueError(f"unknown language-detection backend {backend!r}; allowed: {', '.join(BACKENDS)}")


def detect_language(text: str, *, markup: bool = True, backend: str = DEFAULT_BACKEND,
                    candidates: tuple[str, ...] = DEFAULT_CANDIDATES) -> tuple[str, float]:
    """Most likely language of ``text`` among ``candidates`` and its confidence in [0, 1]; (``und``, 0.0) when fewer
    than :data:`MIN_CHARS` letters remain after markup removal.

    Looks at most at the first :data:`MAX_CHARS` characters of cleaned text (confidence saturates well before).
    """
    clean = strip_markup(text) if markup else text
    letters = _NON_WORD.sub(" ", clean).strip()
    if len(letters) < MIN_CHARS:
        return UNDETERMINED, 0.0
    return get_detector(backend, tuple(candidates)).detect(clean[:MAX_CHARS])


@dataclass(frozen=True)
class LanguagePolicy:
    """How languages are chosen (``language:`` in ``configs/chunking.yaml``; :func:`policy_from`).

    ``default``: the language of a document nothing could be detected for and whose folder says nothing (``und``
    by default); ``candidates``: ISO 639-1 codes the detector chooses among (empty: all); ``chunk_min_confidence``:
    a chunk's own detection below this inherits the document's language; ``segment_min_confidence``: a segment
    below this does not count towards its document's language; ``backend``: ``py3langid`` or ``lingua``."""

    default: str = UNDETERMINED
    candidates: tuple[str, ...] = DEFAULT_CANDIDATES
    chunk_min_confidence: float = CHUNK_MIN_CONFIDENCE
    segment_min_confidence: float = SEGMENT_MIN_CONFIDENCE
    backend: str = DEFAULT_BACKEND


def policy_from(config) -> LanguagePolicy:
    """The :class:`LanguagePolicy` of a :class:`~heritage_pipeline.core.config.ChunkingConfig` (its ``language``
    section); the module defaults for None."""
    if config is None:
        return LanguagePolicy()
    lc = config.language
    return LanguagePolicy(lc.default, tuple(lc.candidates), lc.chunk_min_confidence, lc.segment_min_confidence,
                          lc.backend)


def document_language(segments: list[str], *, markup: bool = True, max_segments: int = 24,
                      policy: LanguagePolicy | None = None) -> tuple[str, float]:
    """(language, confidence) of a document from its segments (paragraphs, rows, messages).

    Each segment detected with at least ``policy.segment_min_confidence`` votes for its language with its length in
    characters (at most :data:`MAX_CHARS`); the result is the top language when it has :data:`MIXED_SHARE` of the
    votes (``mul`` otherwise) and the confidence is its share of the votes times the votes' mean confidence, in
    [0, 1]. (``und``, 0.0) when no segment is confident. At most ``max_segments`` evenly spaced segments are
    examined."""
    pol = policy or LanguagePolicy()
    segs = [s for s in segments if s and s.strip()]
    if not segs:
        return UNDETERMINED, 0.0
    if len(segs) > max_segments:
        step = len(segs) / max_segments
        segs = [segs[int(i * step)] for i in range(max_segments)]
    weights: Counter[str] = Counter()
    conf_sum: Counter[str] = Counter()
    for s in segs:
        lang, conf = detect_language(s[:MAX_CHARS], markup=markup, backend=pol.backend, candidates=pol.candidates)
        if lang != UNDETERMINED and conf >= pol.segment_min_confidence:
            w = min(len(s), MAX_CHARS)
            weights[lang] += w
            conf_sum[lang] += w * conf
    if not weights:
        return UNDETERMINED, 0.0
    lang, w = weights.most_common(1)[0]
    share = w / sum(weights.values())
    if share < MIXED_SHARE:
        return MIXED, share
    return lang, share * conf_sum[lang] / w


def detect_document_language(segments: list[str], *, markup: bool = True, max_segments: int = 24,
                             backend: str = DEFAULT_BACKEND, policy: LanguagePolicy | None = None) -> str:
    """The language of :func:`document_language` (``mul`` for mixed, ``und`` when nothing confident was found)."""
    pol = policy or LanguagePolicy(backend=backend)
    return document_language(segments, markup=markup, max_segments=max_segments, policy=pol)[0]


def chunk_language(text: str, document_lang: str, *, policy: LanguagePolicy | None = None,
                   source_type: str = "document") -> tuple[str, float | None]:
    """(language, confidence of the chunk's own detection) of one chunk.

    The chunk's own detection wins when its confidence reaches ``policy.chunk_min_confidence``; below it the chunk
    inherits ``document_lang`` (the partition language), or ``policy.default`` when the document is ``und``.
    Registries (``csv_registry``, ``yaml_instance``) with a single-language document keep the document's language
    for every row: their language is decided once per file from all rows, and a row is not detected at all
    (confidence None; the detection changed nothing and cost about a tenth of embedding the row). A CSV registry
    whose language is undetermined gives its rows ``policy.default`` (the partition's language) undetected too;
    only the rows of a mixed-language (``mul``) registry are detected one by one.

    Args:
        text: the chunk text.
        document_lang: the document's (partition's) language, ISO 639-1, ``und`` or ``mul``.
        policy: thresholds, backend and candidate languages (default :class:`LanguagePolicy`).
        source_type: the chunk's source type.

    Returns:
        (language, confidence in [0, 1] of the chunk's own top detection, 0.0 when undetermined; None for a row of
        a single-language registry, which is not detected), so a reader sees why a language was inherited.
    """
    pol = policy or LanguagePolicy()
    if source_type in REGISTRY_TYPES and document_lang not in (UNDETERMINED, MIXED):
        return document_lang, None
    if source_type == "csv_registry" and document_lang == UNDETERMINED:
        # one language per registry file (decided from the header and all rows at discovery): a row of a file whose
        # language could not be told is not guessed from its few words, so it stays in its partition's language
        return pol.default, None
    lang, conf = detect_language(text, backend=pol.backend, candidates=pol.candidates)
    fallback = document_lang if document_lang != UNDETERMINED else pol.default
    if lang != UNDETERMINED and conf >= pol.chunk_min_confidence:
        return lang, conf
    return fallback, conf


def detect_chunk_language(text: str, document_lang: str, *, backend: str = DEFAULT_BACKEND,
                          min_confidence: float = CHUNK_MIN_CONFIDENCE) -> str:
    """The language of :func:`chunk_language` for a document (not registry) chunk with the default candidates."""
    return chunk_language(text, document_lang, policy=LanguagePolicy(chunk_min_confidence=min_confidence,
                                                                      backend=backend))[0]


def folder_language(path: str, candidates: tuple[str, ...] = DEFAULT_CANDIDATES) -> str | None:
    """The language a folder name states: the deepest folder of ``path`` (POSIX) whose name is a candidate
    ISO 639-1 code (``golden/fr/docs/a.md`` -> ``fr``); None when no folder is named so."""
    for part in reversed(path.split("/")[:-1]):
        if part.lower() in candidates:
            return part.lower()
    return None


def resolve_folder_languages(items: list[tuple[str, str]], policy: LanguagePolicy | None = None) -> list[str]:
    """Languages for documents given as (POSIX path, detected language), in order: a detected language is kept; an
    ``und`` document takes its folder's language: a folder named with a language code (:func:`folder_language`),
    else the language most of the confidently detected documents in the same folder have (ties: alphabetical;
    ``mul`` documents do not vote), else ``policy.default``."""
    pol = policy or LanguagePolicy()
    votes: dict[str, Counter[str]] = {}
    for path, lang in items:
        if lang not in (UNDETERMINED, MIXED):
            votes.setdefault(path.rsplit("/", 1)[0] if "/" in path else "", Counter())[lang] += 1
    out = []
    for path, lang in items:
        if lang == UNDETERMINED:
            named = folder_language(path, pol.candidates)
            folder = votes.get(path.rsplit("/", 1)[0] if "/" in path else "")
            if named is not None:
                lang = named
            elif folder:
                lang = sorted(folder.items(), key=lambda kv: (-kv[1], kv[0]))[0][0]
            else:
                lang = pol.default
        out.append(lang)
    return out
