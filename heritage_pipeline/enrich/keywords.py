"""Keywords per chunk: embedding-ranked candidates (KeyBERT's method, made cheap), KeyBERT itself, or RAKE, with
per-language stop words.

:func:`embedding_keywords` (``context.keywords.method: embedding``, the default) keeps KeyBERT's method: candidate
1-2-word phrases are ranked by cosine similarity to the chunk's vector with the embedder's own model, and Maximal
Marginal Relevance (Carbonell & Goldstein 1998) picks a diverse top-k. What makes it cheap:

* candidates are pre-selected from the chunk alone (:func:`candidate_phrases`: n-gram rules over the chunk's words,
  scored by term frequency x rarity, rarity from the ``wordfreq`` Zipf frequency of the word in the chunk's
  language), so a chunk's keywords never depend on its neighbours and incremental runs stay exact; KeyBERT's
  corpus-level TF-IDF pre-selection made them depend on the partition;
* the chunk vector is the passage vector of the embedding stage (passed in, computed once, cached);
* candidate vectors go through the embedding cache (keyed by model and the ``keyword-candidate`` prefix), so a
  phrase is embedded once across chunks, partitions and runs, in length-sorted batches, with the embedder's
  short-text thread count (:meth:`~heritage_pipeline.embed.windows.WindowedEmbedder.short_texts`; USE v3: one BLAS
  thread, several times less CPU than two on these tiny matrices).
"""

from __future__ import annotations

import math
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


# ------------------------------------------------------------------------------------- embedding-ranked candidates
# context.keywords.method values that rank candidates against the chunk's passage vector (they need the embedder's
# model); "rake" needs none
VECTOR_METHODS = ("keybert", "embedding")
CANDIDATES_PER_CHUNK = 12  # phrases per chunk embedded and ranked (tuned on FastAPI en / Code du patrimoine fr)
CANDIDATE_PREFIX = "keyword-candidate"  # cache-key prefix of candidate phrase vectors (not prepended to the text)
CANDIDATE_BATCH = 256  # phrases per encoder batch: 1-3 word pieces each, so 256 pad to a tiny tensor (USE: 2x faster than 32)
_SEGMENT_SPLIT = re.compile(r"[.,;:!?()\[\]{}<>|\"“”«»„*#=/\\\n\t`~^+&@%$€£§]+|\s[-–—]\s")
# Deliberately not core.text.WORD_RE: a keyword word is letters (and marks) only, hyphen/apostrophe compounds kept
# whole; numbers and identifiers are never keywords.
_WORD = regex.compile(r"\b\p{L}[\p{L}\p{M}]*(?:[-'’]\p{L}[\p{L}\p{M}]*)*\b")  # letters (no numbers, no ids)
_MAX_ZIPF = 8.0
_FIELD_LABEL = regex.compile(r"(?m)(?:^|\s)([A-Z][A-Z0-9_]*[A-Z0-9]):\s")  # "LIBNAME: " in key: value records
_SALIENT = regex.compile(r"(?m)^#{1,6}[ \t]+(.+)$|\*\*([^*\n]+)\*\*")  # Markdown headings and **bold** spans
SALIENT_BOOST = 1.5  # score factor of a phrase whose words all occur in a heading or bold span of the chunk


@lru_cache(maxsize=64)
def _frequencies(lang: str) -> dict[str, float]:
    """wordfreq's ``small`` word list of ``lang`` (about 30k words per language, the words of Zipf >= ~3; loads in
    ~0.02 s, the ``best`` list in ~0.5-0.8 s per language), English for a language wordfreq does not have."""
    from wordfreq import available_languages, get_frequency_dict

    return get_frequency_dict(lang if lang in available_languages("small") else "en", "small")


def _zipf(word: str, lang: str) -> float:
    """Zipf frequency (log10 of occurrences per billion words) of a lower-cased word; 0 for a word outside the
    language's ``small`` list (rarer than Zipf ~3, or unseen)."""
    f = _frequencies(lang).get(word)
    return math.log10(f) + 9.0 if f else 0.0


def _rarity(word: str, lang: str) -> float:
    """8 - Zipf frequency (Zipf = log10 occurrences per billion words): 'the' ~ 0.6, 'archive' ~ 4, rare or unseen
    8; at least 0.5."""
    return max(0.5, _MAX_ZIPF - _zipf(word, lang))


def candidate_phrases(text: str, lang: str, limit: int = CANDIDATES_PER_CHUNK) -> list[str]:
    """Candidate keyphrases of one chunk, from the chunk alone: lower-cased 1- and 2-word phrases of letter words.

    Rules: the text is :func:`keyword_text` (no code, tags, URLs); it is cut into segments at punctuation and line
    breaks; inside a segment, stop words (``lang``) and one-letter words are skipped, and a 2-word phrase is two
    consecutive remaining words (as KeyBERT's CountVectorizer forms them, but never across punctuation); the field
    names of ``KEY: value`` records (upper-case labels) are skipped like stop words. Score of a phrase =
    occurrences in the chunk x mean rarity of its words (rarity = 8 - wordfreq Zipf frequency in ``lang``), x 1.15
    for 2-word phrases, x :data:`SALIENT_BOOST` when all its words occur in a Markdown heading or bold span of the
    chunk; ties by first occurrence.

    Args:
        text: the chunk text.
        lang: ISO 639-1 code of the chunk (stop words and word frequencies of that language; English otherwise).
        limit: how many candidates to keep (the highest scores).

    Returns:
        Up to ``limit`` phrases, best first; ``[]`` when the chunk has no letter word outside the stop words.
    """
    clean = keyword_text(text)
    # record field names ("LIBNAME: ...", "ZIP4: ...") are labels, not content
    stops = stop_words(lang) | {m.lower() for m in _FIELD_LABEL.findall(clean)}
    salient = {w for m in _SALIENT.finditer(clean) for w in _WORD.findall((m.group(1) or m.group(2) or "").lower())}
    tf: Counter[str] = Counter()
    first: dict[str, int] = {}
    words: dict[str, tuple[str, ...]] = {}
    pos = 0
    for segment in _SEGMENT_SPLIT.split(clean.lower()):
        kept = [w for w in _WORD.findall(segment) if len(w) > 1 and w not in stops]
        for i, w in enumerate(kept):
            grams = [(w,)] + ([(kept[i - 1], w)] if i else [])
            for g in grams:
                phrase = " ".join(g)
                tf[phrase] += 1
                first.setdefault(phrase, pos)
                words[phrase] = g
                pos += 1
    scored = []
    for phrase, n in tf.items():
        g = words[phrase]
        if len(g) == 2 and g[0] == g[1]:
            continue
        score = n * sum(_rarity(w, lang) for w in g) / len(g) * (1.15 if len(g) == 2 else 1.0)
        if all(w in salient for w in g):
            score *= SALIENT_BOOST
        scored.append((-score, first[phrase], phrase))
    scored.sort()
    return [p for _, _, p in scored[:limit]]


def mmr(doc_vec: np.ndarray, cand_vecs: np.ndarray, top_k: int, diversity: float) -> list[int]:
    """Maximal Marginal Relevance: indices of ``top_k`` candidates, each maximising
    ``(1 - diversity) * cos(doc, c) - diversity * max cos(c, already chosen)`` (KeyBERT's ``_mmr``).

    Args:
        doc_vec: the chunk vector [dim] (L2-normalised).
        cand_vecs: candidate vectors [n, dim] (L2-normalised).
        top_k: how many to choose.
        diversity: 0 = pure relevance, 1 = pure novelty.

    Returns:
        Candidate indices in the order chosen (the most similar to the chunk first).
    """
    n = cand_vecs.shape[0]
    if n == 0:
        return []
    sim_doc = cand_vecs @ doc_vec
    sim_cc = cand_vecs @ cand_vecs.T
    chosen = [int(np.argmax(sim_doc))]
    rest = [i for i in range(n) if i != chosen[0]]
    while rest and len(chosen) < top_k:
        score = (1 - diversity) * sim_doc[rest] - diversity * sim_cc[np.ix_(rest, chosen)].max(axis=1)
        best = rest[int(np.argmax(score))]
        chosen.append(best)
        rest.remove(best)
    return chosen


def embedding_keywords(texts: list[str], langs: list[str], embedder, doc_vectors: np.ndarray, *, top_k: int,
                       diversity: float, cache=None, candidates: int = CANDIDATES_PER_CHUNK) -> list[list[str]]:
    """Keywords per text: :func:`candidate_phrases` ranked against the text's own vector with :func:`mmr`.

    Args:
        texts: chunk texts.
        langs: ISO 639-1 code per text.
        embedder: the pipeline's embedder (candidates are embedded with its own model, without passage prefix).
        doc_vectors: [len(texts), dim] L2-normalised chunk vectors, the embedding stage's passage vectors (reused,
            not recomputed).
        top_k: keywords per text.
        diversity: MMR diversity in [0, 1].
        cache: :class:`heritage_pipeline.embed.cache.EmbeddingCache` for the candidate vectors (key: model cache id,
            :data:`CANDIDATE_PREFIX`, phrase), or None.
        candidates: candidates per text (pre-selection size).

    Returns:
        One list of at most ``top_k`` lower-cased phrases per text, most similar to the chunk first (``[]`` when a
        text has no candidate).

    Raises:
        ValueError: when ``doc_vectors`` does not have one row per text.
    """
    from heritage_pipeline.embed.cache import embed_with_cache

    if doc_vectors is None or len(doc_vectors) != len(texts):
        raise ValueError(f"embedding_keywords: {0 if doc_vectors is None else len(doc_vectors)} chunk vectors "
                         f"for {len(texts)} texts")
    cands = [candidate_phrases(t, lang, candidates) for t, lang in zip(texts, langs)]
    vocab = sorted({p for c in cands for p in c})
    if not vocab:
        return [[] for _ in texts]
    vecs, _, _ = embed_with_cache(_RawPassages(embedder), vocab, cache, prefix=CANDIDATE_PREFIX)
    row = {p: i for i, p in enumerate(vocab)}
    out: list[list[str]] = []
    for c, dv in zip(cands, np.asarray(doc_vectors, dtype=np.float32)):
        if not c:
            out.append([])
            continue
        cv = vecs[[row[p] for p in c]]
        sim = cv @ dv
        chosen = sorted(mmr(dv, cv, top_k, diversity), key=lambda i: (-float(sim[i]), i))  # as KeyBERT: by similarity
        out.append([c[i] for i in chosen])
    return out


class _RawPassages:
    """The embedder seen by :func:`~heritage_pipeline.embed.cache.embed_with_cache` for candidate phrases: same
    model and cache id, no passage prefix (phrases are not passages)."""

    def __init__(self, embedder) -> None:
        self._e = embedder
        self.model_id = embedder.model_id
        self.cache_id = getattr(embedder, "cache_id", embedder.model_id)
        self.dim = embedder.dim

    def embed_passages(self, texts: list[str]):
        from heritage_pipeline.embed.windows import short_texts

        saved = getattr(self._e, "batch_size", None)
        if saved is not None:
            self._e.batch_size = max(saved, CANDIDATE_BATCH)
        try:
            with short_texts(self._e):  # 1-3-word phrases: the backend's short-text threads (USE: 1)
                return self._e.embed_passages_raw(texts)
        finally:
            if saved is not None:
                self._e.batch_size = saved


# -------------------------------------------------------------------------------------------------------- KeyBERT
KEYBERT_CANDIDATES_PER_DOC = 40
# KeyBERT's CountVectorizer takes a `re` pattern string: the keyword word rule above (letters only), in `re` syntax
_KW_TOKEN = r"(?u)\b[^\W\d_][^\W\d_'’-]*(?:[-'’][^\W\d_]+)*\b"  # words of letters (no numbers, no ids)


def keyword_text(text: str) -> str:
    """The text keywords are drawn from: :func:`heritage_pipeline.core.text.strip_markup` (code blocks, HTML tags,
    URLs, link targets), then ``{#anchor}`` attribute lists removed too. The extra step is deliberate and kept out
    of the shared stripper: an anchor id is never a keyword, while the file-level language detection that shares
    the stripper would change its input (and so partitions) for no gain."""
    from heritage_pipeline.core.text import strip_markup

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


def is_registry_row(chunk) -> bool:
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

