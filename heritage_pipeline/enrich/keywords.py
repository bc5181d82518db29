"""Keywords per chunk: KeyBERT on the embedder's own model (MMR diversity) or RAKE, with per-language stop words.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from functools import lru_cache

import numpy as np
import regex

_STOP_LANG = {"en": "english", "fr": "french", "nl": "dutch", "de": "german", "es": "spanish", "it": "italian",
              "pt": "portuguese", "cs": "czech", "da": "danish", "fi": "finnish", "sv": "swedish", "pl": "polish",
              "ru": "russian", "no": "norwegian", "nb": "norwegian", "hu": "hungarian", "ro": "romanian",
              "tr": "turkish", "uk": "ukrainian"}


@lru_cache(maxsize=32)
def stop_words(lang: str) -> frozenset[str]:
    """Stop words for an ISO 639-1 code (``stop-words`` package, offline); English for unknown languages."""
    from stop_words import get_stop_words

    name = _STOP_LANG.get(lang, "english")
    try:
        return frozenset(w.lower() for w in get_stop_words(name))
    except Exception:
        return frozenset(w.lower() for w in get_stop_words("english"))


# ------------------------------------------------------------------------------------------------------------ RAKE
_RAKE_SPLIT = regex.compile(r"[^\p{L}\p{N}'’\-]+")


def rake_keywords(text: str, lang: str, top_k: int = 6) -> list[str]:
    """RAKE (Rose et al. 2010, "Automatic keyword extraction from individual documents"): candidate phrases are
    runs of words between stop words/punctuation; a word scores degree/frequency; a phrase the sum of its words.

    Written here because the RAKE packages on PyPI need an NLTK corpus download at run time.
    """
    stops = stop_words(lang)
    phrases: list[list[str]] = []
    for sentence in re.split(r"[.!?;:\n()\[\]{}<>|\"“”«»]+", keyword_text(text).lower()):
        current: list[str] = []
        for w in _RAKE_SPLIT.split(sentence):
            if not w or w in stops or w.isdigit() or len(w) < 2:
                if current:
                    phrases.append(current)
                current = []
            else:
                current.append(w)
        if current:
            phrases.append(current)
    # a run of more than 4 content words (no stop word or punctuation inside) is cut into pieces of at most 3 words;
    # classic RAKE keeps it whole and then usually discards it as too long, leaving short texts with no keyword
    phrases = [piece for p in phrases for piece in ([p] if len(p) <= 4 else [p[i : i + 3] for i in range(0, len(p), 3)])]
    freq: Counter[str] = Counter()
    degree: Counter[str] = Counter()
    for p in phrases:
        if len(p) > 4:
            continue
        for w in p:
            freq[w] += 1
            degree[w] += len(p)
    scored: dict[str, float] = {}
    for p in phrases:
        if len(p) > 4:
            continue
        phrase = " ".join(p)
        scored[phrase] = sum(degree[w] / freq[w] for w in p)
    return [p for p, _ in sorted(scored.items(), key=lambda kv: (-kv[1], kv[0]))[:top_k]]


# -------------------------------------------------------------------------------------------------------- KeyBERT
KEYBERT_CANDIDATES_PER_DOC = 40
_KW_TOKEN = r"(?u)\b[^\W\d_][^\W\d_'’-]*(?:[-'’][^\W\d_]+)*\b"  # words of letters (no numbers, no ids)


def keyword_text(text: str) -> str:
    """The text keywords are drawn from: code blocks, HTML tags, URLs, link targets and ``{#anchor}`` attribute
    lists removed (see :func:`heritage_pipeline.enrich.langid.strip_markup`)."""
    from .langid import strip_markup

    return re.sub(r"\{[^{}\n]*#[^{}\n]*\}", " ", strip_markup(text))


def keybert_keywords(texts: list[str], langs: list[str], embedder, *, top_k: int, diversity: float,
                     doc_vectors: np.ndarray | None = None, cache=None,
                     candidates_per_doc: int = KEYBERT_CANDIDATES_PER_DOC) -> list[list[str]]:
    """KeyBERT keywords (1-2-word phrases, MMR with ``diversity``) per text, batched per language with that
    language's stop words; ``[]`` for a text with no candidate.

    Uses the embedder's own model (sentence-transformers object, or a KeyBERT ``BaseEmbedder`` adapter for USE).
    ``doc_vectors`` ([n, dim], the window-mean passage vectors) are passed to KeyBERT so long texts are not
    truncated. Speed: KeyBERT embeds every candidate of the batch vocabulary, which dominates the cost (measured
    2.5 s per chunk with the full 1-2-gram vocabulary of 128 chunks), so the candidates are first cut to the
    ``candidates_per_doc`` highest-TF-IDF 1-2-grams of each text (scikit-learn), and their embeddings go through
    ``cache`` (:class:`heritage_pipeline.embed.cache.EmbeddingCache`) so a phrase is embedded once across partitions
    and runs. KeyBERT then ranks and diversifies exactly as usual.
    """
    from keybert import KeyBERT
    from sklearn.feature_extraction.text import CountVectorizer, TfidfVectorizer

    from heritage_pipeline.embed.cache import embed_with_cache

    kb = KeyBERT(model=_keybert_backend(embedder))
    result: list[list[str]] = [[] for _ in texts]
    by_lang: dict[str, list[int]] = defaultdict(list)
    clean = [keyword_text(t) for t in texts]
    for i, (t, lang) in enumerate(zip(clean, langs)):
        if t.strip():
            by_lang[lang].append(i)
    for lang, idx in sorted(by_lang.items()):
        docs = [clean[i] for i in idx]
        stops = sorted(stop_words(lang))
        try:
            tfidf = TfidfVectorizer(ngram_range=(1, 2), stop_words=stops, token_pattern=_KW_TOKEN)
            weights = tfidf.fit_transform(docs)
        except ValueError:  # empty vocabulary after stop words
            continue
        names = tfidf.get_feature_names_out()
        vocab: set[str] = set()
        for r in range(weights.shape[0]):
            row = weights.getrow(r)
            order = np.argsort(-row.data, kind="stable")[:candidates_per_doc]
            vocab.update(names[row.indices[order]])
        vectorizer = CountVectorizer(ngram_range=(1, 2), stop_words=stops, token_pattern=_KW_TOKEN,
                                     vocabulary=sorted(vocab))
        words = list(vectorizer.fit(docs).get_feature_names_out())
        # the embedder adds its passage prefix to every candidate: it is part of the key, or a prefix change would
        # serve the vectors embedded with the old one
        word_vecs, _, _ = embed_with_cache(embedder, words, cache,
                                           prefix=f"keybert-candidate\x00{getattr(embedder, 'passage_prefix', '')}")
        kwargs = dict(vectorizer=vectorizer, top_n=top_k, use_mmr=True, diversity=diversity, word_embeddings=word_vecs)
        if doc_vectors is not None:
            kwargs["doc_embeddings"] = doc_vectors[idx]
        kws = kb.extract_keywords(docs, **kwargs)
        if docs and kws and isinstance(kws[0], tuple):  # KeyBERT returns a flat list for a single document
            kws = [kws]
        for i, pairs in zip(idx, kws):
            result[i] = [k for k, _ in pairs]
    return result


def _keybert_backend(embedder):
    model = getattr(embedder, "model", None)
    if model is not None and model.__class__.__name__ == "SentenceTransformer":
        return model
    from keybert.backend import BaseEmbedder

    class _Adapter(BaseEmbedder):
        def embed(self, documents, verbose=False):
            vecs, _ = embedder.embed_passages_raw(list(documents))
            return vecs

    return _Adapter()


# ------------------------------------------------------------------------------------------------ record rows
# The slots whose values are a registry record's keywords, in record-text order (sources/columns.py SLOT_ORDER):
# what the record is called, what it is, where it is and which identifiers it carries.
RECORD_KEYWORD_SLOTS = ("preferred_label", "alternative_label", "custodian_type", "settlement", "subregion", "region",
                        "country", "isil_code", "wikidata_id", "gnd_id", "viaf_id", "dbs_id", "registration_number",
                        "local_id", "aggregator_membership")


def is_record(chunk) -> bool:
    """A registry row (``source_type`` ``csv_registry``): its text is ``slot: value`` lines, so its keywords are its
    slot values (:func:`record_keywords`) and KeyBERT / RAKE are not run on it."""
    return chunk.meta.source_type == "csv_registry"


def record_keywords(chunk) -> list[str]:
    """Keywords of a registry row: the values of :data:`RECORD_KEYWORD_SLOTS` present in ``meta.extra`` (mapped
    slots are stored as ``slot:<slot>``), in that order, each once; ``; ``-joined values give one keyword each.
    Every identifier is kept (no ``top_k`` cut: an identifier must stay findable)."""
    extra = chunk.meta.extra or {}
    out: list[str] = []
    for slot in RECORD_KEYWORD_SLOTS:
        for v in (extra.get(f"slot:{slot}") or "").split("; "):
            v = v.strip()
            if v and v not in out:
                out.append(v)
    return out

