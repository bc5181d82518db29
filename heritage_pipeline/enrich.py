"""Enrichment stage: keywords, light NER, per-chunk language, section embeddings.

* ``meta.keywords``: KeyBERT (MMR diversity, ``top_k``) on the embedder resource's own model (no second model), with
  per-language stop words from the ``stop-words`` package, batched per language; or RAKE (:func:`rake_keywords`).
* ``meta.entities``: ``{label: [names]}`` for ORG, PRODUCT, LAW, API, CLASS, FUNC by rules (:func:`simple_ner`).
* ``meta.lang``: per-chunk language (lingua); ``meta.language`` keeps the document's partition language.
* ``section_emb``: embedding of ``" › ".join(anchors)``, computed once per distinct breadcrumb per call.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from functools import lru_cache

import numpy as np
import regex

from .chunking import breadcrumb
from .config import ChunkingConfig
from .langid import UNDETERMINED, detect_language
from .models import Chunk

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
    for sentence in re.split(r"[.!?;:\n()\[\]{}<>|\"“”«»]+", text.lower()):
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


# ------------------------------------------------------------------------------------------------------------- NER
_LAW = regex.compile(
    r"\b(?:articles?|art\.)\s+(?:[LRDA]\.?\s?)?\d+(?:[-–.]\d+)*(?:\s*(?:,|et|and|à|to)\s*(?:[LRDA]\.?\s?)?\d+(?:[-–.]\d+)*)*"
    r"|\b(?:loi|ordonnance|décret|decree|act)\s+n°\s*\d+[-–]\d+(?:\s+du\s+\d{1,2}\s+\w+\s+\d{4})?"
    r"|\bcode\s+(?:du|de\s+la|de\s+l['’]|des|civil|pénal|penal)\s*[\p{L}'’ ]{0,40}?(?=[,.;:)\n]|$)",
    regex.IGNORECASE,
)
_FENCE_BLOCK = re.compile(r"```[^\n]*\n(.*?)(?:```|\Z)", re.S)
_DEF = re.compile(r"\b(?:async\s+)?def\s+([A-Za-z_]\w*)")
_CLASS = re.compile(r"\bclass\s+([A-Za-z_]\w*)")
_CALL = re.compile(r"\b([a-z_][a-z0-9_]*)\((?!\))")
_API_PATH = re.compile(r"@\w+\.(?:get|post|put|delete|patch|options|head)\(\s*[\"']([^\"']+)[\"']"
                       r"|\b(?:GET|POST|PUT|DELETE|PATCH)\s+(/[\w/{}.\-]*)")
_INLINE_CODE = re.compile(r"`([A-Za-z_][\w.]*)\(?\)?`")
_CAPS_SEQ = regex.compile(r"\b(\p{Lu}[\p{L}\-&'’]+(?:\s+(?:of|de|du|des|van|der|den|het|für|la|le|and|&|voor)?\s*\p{Lu}[\p{L}\-&'’]+)+)")
_CAMEL = regex.compile(r"\b(\p{Lu}[\p{Ll}]+(?:\p{Lu}[\p{Ll}\d]+)+|[\p{Lu}][\p{L}]*[\p{Lu}][\p{L}]*API)\b")
_ORG_WORDS = regex.compile(
    r"\b(museum|musée|musea|archief|archives?|archiv|bibliotheek|bibliothèque|bibliothek|library|university|"
    r"universiteit|université|universität|foundation|stichting|fondation|stiftung|institute|instituut|institut|"
    r"society|association|vereniging|verein|council|ministry|ministère|ministerie|inc|ltd|gmbh|corp|gbif|unesco)\b",
    regex.IGNORECASE,
)
_PY_BUILTINS = frozenset("print len range str int float list dict set tuple open isinstance super type getattr".split())


def simple_ner(text: str, keep: list[str] | tuple[str, ...] = ("ORG", "PRODUCT", "LAW", "API", "CLASS", "FUNC")) -> dict[str, list[str]]:
    """Rule-based entities ``{label: [names]}`` (labels in ``keep`` only; names deduplicated, in text order).

    LAW: article references (``article L211-1``, ``articles 1112-1 et 1143``), ``loi n° ...``, ``Code du ...``.
    FUNC / CLASS / API: ``def`` / ``class`` names and calls inside fenced code, inline code ``name()``, HTTP routes
    (``@app.get("/items")``, ``GET /path``). ORG: capitalised multi-word names containing an organisation word
    (museum, archief, bibliothèque, university, foundation, ...). PRODUCT: CamelCase names and other capitalised
    multi-word names outside sentence starts.
    """
    out: dict[str, list[str]] = defaultdict(list)

    def add(label: str, name: str) -> None:
        name = " ".join(name.split()).strip(" ,.;:")
        if label in keep and name and name not in out[label]:
            out[label].append(name)

    for m in _LAW.finditer(text):
        add("LAW", m.group())
    code = "\n".join(_FENCE_BLOCK.findall(text))
    for m in _DEF.finditer(code):
        add("FUNC", m.group(1))
    for m in _CLASS.finditer(code):
        add("CLASS", m.group(1))
    for m in _CALL.finditer(code):
        if m.group(1) not in _PY_BUILTINS:
            add("FUNC", m.group(1))
    for m in _API_PATH.finditer(text):
        add("API", m.group(1) or m.group(2))
    for m in _INLINE_CODE.finditer(text):
        name = m.group(1)
        if m.group(0).endswith("()`") or m.group(0).endswith("(`"):
            add("FUNC", name)
        elif name[:1].isupper() and not name.isupper():
            add("CLASS", name)
    prose = _FENCE_BLOCK.sub(" ", text)
    for m in _CAPS_SEQ.finditer(prose):
        name = m.group(1)
        start = m.start(1)
        sentence_start = start == 0 or prose[max(0, start - 2) : start].strip() in ("", ".", "!", "?", "#", "##")
        if _ORG_WORDS.search(name):
            add("ORG", name)
        elif not sentence_start and len(name.split()) <= 4:
            add("PRODUCT", name)
    for m in _CAMEL.finditer(prose):
        add("PRODUCT", m.group(1))
    return {k: v for k, v in out.items() if v}


# -------------------------------------------------------------------------------------------------------- KeyBERT
def keybert_keywords(texts: list[str], langs: list[str], embedder, *, top_k: int, diversity: float,
                     doc_vectors: np.ndarray | None = None) -> list[list[str]]:
    """KeyBERT keywords per text, batched per language with that language's stop words.

    Uses the embedder's own model (sentence-transformers object, or a KeyBERT ``BaseEmbedder`` adapter for USE);
    ``doc_vectors`` (window-mean passage vectors) are passed to KeyBERT so long texts are not truncated.
    """
    from keybert import KeyBERT

    kb = KeyBERT(model=_keybert_backend(embedder))
    result: list[list[str]] = [[] for _ in texts]
    by_lang: dict[str, list[int]] = defaultdict(list)
    for i, (t, lang) in enumerate(zip(texts, langs)):
        if t.strip():
            by_lang[lang].append(i)
    for lang, idx in sorted(by_lang.items()):
        docs = [texts[i] for i in idx]
        kwargs = dict(keyphrase_ngram_range=(1, 2), stop_words=sorted(stop_words(lang)), top_n=top_k, use_mmr=True,
                      diversity=diversity)
        if doc_vectors is not None:
            kwargs["doc_embeddings"] = doc_vectors[idx]
        try:
            kws = kb.extract_keywords(docs, **kwargs)
        except ValueError:  # a batch whose vocabulary is empty after stop words (e.g. only numbers)
            kws = [[] for _ in docs]
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


# ---------------------------------------------------------------------------------------------------- the stage
def enrich_chunks(chunks: list[Chunk], config: ChunkingConfig, embedder=None, doc_vectors: np.ndarray | None = None) -> list[Chunk]:
    """Fill ``meta.keywords``, ``meta.entities``, ``meta.lang`` and ``section_emb`` in place; returns ``chunks``.

    ``embedder`` is required for KeyBERT keywords and section embeddings (skipped, and said so in the config, when
    ``method`` is ``rake``/``none`` or ``section_embedding`` is false).
    """
    ctx = config.context
    for c in chunks:
        lang, conf = detect_language(c.text)
        c.meta.lang = lang if lang != UNDETERMINED and conf >= 0.5 else c.meta.language
        if ctx.entities.ner == "simple":
            c.meta.entities = simple_ner(c.text, ctx.entities.keep)
    method = ctx.keywords.method
    if method == "rake":
        for c in chunks:
            c.meta.keywords = rake_keywords(c.text, c.meta.lang, ctx.keywords.top_k)
    elif method == "keybert" and chunks:
        if embedder is None:
            raise ValueError("context.keywords.method is keybert but no embedder was given")
        kws = keybert_keywords([c.text for c in chunks], [c.meta.lang for c in chunks], embedder,
                               top_k=ctx.keywords.top_k, diversity=ctx.keywords.diversity, doc_vectors=doc_vectors)
        for c, k in zip(chunks, kws):
            c.meta.keywords = k
    if ctx.section_embedding and embedder is not None and chunks:
        crumbs = sorted({breadcrumb(c.meta.anchors) for c in chunks if c.meta.anchors})
        if crumbs:
            vecs, _ = embedder.embed_passages_raw(crumbs)
            table = {b: vecs[i].astype(float).round(6).tolist() for i, b in enumerate(crumbs)}
            for c in chunks:
                c.section_emb = table.get(breadcrumb(c.meta.anchors)) if c.meta.anchors else None
    return chunks
