"""Enrichment stage: keywords, light NER, per-chunk language, section embeddings.

* ``meta.keywords``: KeyBERT (MMR diversity, ``top_k``) on the embedder resource's own model (no second model), with
  per-language stop words from the ``stop-words`` package, batched per language; or RAKE (:func:`rake_keywords`).
* ``meta.entities``: ``{label: [names]}`` for ORG, PRODUCT, LAW, API, CLASS, FUNC by rules (:func:`simple_ner`).
* ``meta.lang``: per-chunk language (:mod:`heritage_pipeline.langid`); ``meta.language`` keeps the document's.
* tables and code blocks -> ``meta.table_*`` / ``meta.code_*`` (:func:`enrich_structure`).
* ``section_emb``: embedding of ``" › ".join(anchors)``, once per distinct breadcrumb (and never again with the
  embedding cache).
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from functools import lru_cache

import numpy as np
import regex

from .chunking import breadcrumb
from .config import ChunkingConfig
from .langid import detect_chunk_language
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


# ------------------------------------------------------------------------------------------------------------- NER
LABELS = ["ORG", "PRODUCT", "LAW", "API", "CLASS", "FUNC"]
_REF = r"(?:[LRDA]\.?\s?)?\d+(?:[-–.]\d+)*(?:\s+(?:bis|ter|quater))?"
_LAW = regex.compile(
    rf"\b(?:articles?|art\.)\s+{_REF}(?:\s*(?:,|et|and|à|to|ou)\s*{_REF})*(?:\s+et\s+suivants)?"
    r"|\b(?:loi|ordonnance|décret|arrêté|decree|act|directive|règlement|regulation)\s+(?:organique\s+)?n°\s*[\dA-Z][\w./-]*"
    r"(?:\s+du\s+\d{1,2}(?:er)?\s+\p{L}+\s+\d{4})?"
    r"|\b[Cc]ode\s+(?:civil|pénal|penal|du\s+patrimoine|du\s+travail|de\s+commerce|de\s+l['’]\p{L}+(?:\s+\p{Ll}+){0,8}?"
    r"|de\s+la\s+\p{L}+|des\s+\p{L}+|général\s+des\s+\p{L}+(?:\s+\p{Ll}+){0,3}?)(?=[\s,.;:)]|$)",
)
_INLINE_CODE = re.compile(r"`([^`\n]+)`")
_IDENT = re.compile(r"^@?[A-Za-z_][\w.]*(?:\(\))?$")
_DECORATOR_ROUTE = re.compile(r"@\w+\.(get|post|put|delete|patch|options|head|trace)\(\s*[\"']([^\"']*)[\"']", re.I)
_API_NAMED = regex.compile(r"\b((?:\p{Lu}[\p{L}\d.\-]*\s+){0,1}(?=\p{L}*\p{Lu}\p{L}*\p{Lu})\p{Lu}[\p{L}\d.\-]*)\s+(API|lookup service)\b")
_API_URL = re.compile(r"https?://(?:api\.[^\s)\]'\"<>`]+|[^\s)\]'\"<>`]+/(?:api|v\d)/[^\s)\]'\"<>`]+)")
_PATH_LINE = re.compile(r"^\s*(/[\w\-{}/.]*)\s*$", re.M)
_CAMEL = regex.compile(r"(?<![\w/.@-])((?=\p{L}*\p{Lu}\p{L}*\p{Lu})(?=\p{L}*\p{Ll})[\p{L}][\p{L}\d]{2,})(?![\w/@-]|\.\w)")
_BOLD = regex.compile(r"\*\*\[?([^*\n\]]{2,40})\]?(?:\([^)]*\))?\*\*")
_LINK_TEXT = regex.compile(r"\[([^\]\n]{2,60})\]\([^)]*\)")
_CAPS_SEQ = regex.compile(
    r"\b(\p{Lu}[\p{L}\-&'’]+(?:\s+(?:of|for|de|du|des|van|der|den|het|für|la|le|and|&|voor)?\s*\p{Lu}[\p{L}\-&'’]+)+)")
# an organisation head noun, then its name: capitalised words, or (French) lower-case words after de/du/des/d'
_ORG_HEAD = (r"museum|musée|musea|archief|archives?|archiv|bibliotheek|bibliothèque|bibliothek|library|university|"
             r"universiteit|université|universität|foundation|stichting|fondation|stiftung|institute|instituut|institut|"
             r"society|association|vereniging|verein|council|conseil|cour|court|tribunal|centre|center|agency|agence|"
             r"office|commission|committee|comité|ministry|ministère|ministerie|club|team|inc|ltd|gmbh|corp")
_ORG_WORDS = regex.compile(rf"\b(?:{_ORG_HEAD})\b", regex.IGNORECASE)
_ORG_FR = regex.compile(rf"\b((?:{_ORG_HEAD.replace('|', '|').title()})\s+(?:d['’]\p{{Lu}}\p{{L}}+|(?:des|du|de\s+la|de)\s+\p{{L}}+(?:\s+\p{{Ll}}+)?))",
                        regex.IGNORECASE)
_ACRONYM_DEF = regex.compile(r"((?:\p{Lu}[\p{L}\-]+\s+){1,6}\p{Lu}[\p{L}\-]+)\s+\((\p{Lu}{2,8})\)")
_TAGS = re.compile(r"<[^>]*>")
_SCRIPT = re.compile(r"<(script|style)\b.*?</\1\s*>", re.S | re.I)
_PLURAL_ACRONYM = regex.compile(r"^\p{Lu}{2,}s$")
_CAP_WORD = regex.compile(r"(?<![\w/.@#-])(\p{Lu}\p{Ll}{2,})(?![\w/@-])")
_PY_BUILTINS = frozenset("print len range str int float list dict set tuple open isinstance super type getattr bool bytes".split())
_COMMON_CAPS = frozenset("The A An This That These Those It In On For With And But Or If When While See Note Click Each Some "
                         "All Any Many Most Read Use Add Make Let Here There You We They Le La Les Un Une Des Du De "
                         "Il Elle Ils Pour Par Dans Sur Lorsque Si Der Die Das Ein Eine De Het Een".split())


def ner_prose(text: str) -> str:
    """The text the prose rules read: fenced code, ``<script>``/``<style>`` blocks and HTML tags removed (tag
    attributes never count), character entities decoded."""
    import html

    out = _SCRIPT.sub(" ", strip_markup_code(text))
    out = _TAGS.sub("", out)
    return html.unescape(out) if "&" in out else out


def strip_markup_code(text: str) -> str:
    return re.sub(r"^(`{3,}|~{3,}).*?^\1[ \t]*$", " ", text, flags=re.S | re.M)


def simple_ner(text: str, keep: list[str] | tuple[str, ...] = tuple(LABELS), context_prefix: str = "",
               lang: str = "und") -> dict[str, list[str]]:
    """Rule-based entities ``{label: [names]}`` (labels in ``keep`` only; names deduplicated, in text order).

    Rules (measured on data/eval/ner, see ``benchmarks/eval_ner.py``; no gazetteer of names):

    * LAW: article references with lists and ranges (``article L. 211-1``, ``articles 1112-1 et 1143``,
      ``articles L. 123-1 à L. 123-3``), numbered acts (``loi n° 2016-925 du 7 juillet 2016``, ``ordonnance n° ...``,
      ``décret n° ...``) and codes (``code civil``, ``Code du patrimoine``), read on the text without HTML tags.
    * FUNC / CLASS / API from code: ``def``/``class`` and other definitions in fenced blocks (also pieces of split
      blocks) through :mod:`heritage_pipeline.codeblocks`; route decorators and ``GET /path`` lines -> API
      ``"GET /path"``; a code block that is only a URL path -> API; inline code ``name()`` -> FUNC, inline
      CamelCase -> CLASS.
    * API in prose: ``<Name> API`` / ``<Name> lookup service`` and web-API URLs (``https://api.…``, ``…/v1/…``).
    * ORG: capitalised multi-word names containing an organisation head noun (museum, archief, bibliothèque,
      university, foundation, council, conseil, cour, centre, agency, club, ...), and the French pattern
      ``<Head> de/du/des <words>`` (``Cour des comptes``, ``Conseil d'Etat``).
    * PRODUCT: CamelCase names (``FastAPI``, ``PyCharm``, ``GRSciColl``), bold or link names made only of
      capitalised words (``**Pydantic**``, ``[Swagger UI](…)``), other capitalised multi-word names not at a
      sentence start. An acronym defined in parentheses (``Research Organization Registry (ROR)``) gets the
      label of its long form. In English text (``lang`` ``en`` or ``und``) a single capitalised word used at
      least twice away from a sentence start is a PRODUCT (``Python``).
    """
    out: dict[str, list[str]] = defaultdict(list)
    taken: set[str] = set()

    def add(label: str, name: str) -> None:
        name = " ".join(name.split()).strip(" ,.;:")
        if label in keep and name and name not in out[label]:
            out[label].append(name)
            taken.add(name.lower())

    from .codeblocks import code_meta

    cm = code_meta(text, context_prefix)
    for label in ("FUNC", "CLASS", "API"):
        for n in cm.names.get(label, []):
            add(label, n)
    for block in re.findall(r"^(?:`{3,}|~{3,})[^\n]*\n(.*?)^(?:`{3,}|~{3,})", text, flags=re.S | re.M):
        m = _PATH_LINE.fullmatch(block.strip()) if block.strip().count("\n") == 0 else None
        if m and len(m.group(1)) > 1:
            add("API", m.group(1))
    prose = ner_prose(text)
    for m in _LAW.finditer(prose):
        add("LAW", m.group())
    for m in _INLINE_CODE.finditer(prose):
        code = m.group(1).strip()
        r = _DECORATOR_ROUTE.search(code)
        if r:
            add("API", f"{r.group(1).upper()} {r.group(2)}")
            continue
        if not _IDENT.match(code) or code.startswith("@"):
            continue
        name = code[:-2] if code.endswith("()") else code
        base = name.rsplit(".", 1)[-1]
        if code.endswith("()"):
            if base not in _PY_BUILTINS:
                add("FUNC", base)
        elif base[:1].isupper() and not base.isupper() and "_" not in base:
            add("CLASS", base)
    for m in _API_NAMED.finditer(prose):
        add("API", f"{m.group(1)} {m.group(2)}")
    for m in _API_URL.finditer(prose):
        add("API", m.group().rstrip(".,;"))
    acronyms: dict[str, str] = {}
    for m in _ACRONYM_DEF.finditer(prose):
        long_form, acr = m.group(1), m.group(2)
        label = "ORG" if _ORG_WORDS.search(long_form) else "PRODUCT"
        add(label, long_form)
        add(label, acr)
        acronyms[acr] = label
    for m in _ORG_FR.finditer(prose):
        name = m.group(1)
        if name[:1].isupper():
            add("ORG", name)
    names_prose = _INLINE_CODE.sub(" ", prose)  # identifiers in inline code are handled above, not as names
    for m in _CAPS_SEQ.finditer(names_prose):
        name = m.group(1)
        if name.lower() in taken or any(name.lower() in t for t in taken):
            continue
        sentence_start = _sentence_start(names_prose, m.start(1))
        words_ = name.split()
        if words_[0] in _COMMON_CAPS:
            continue
        if _ORG_WORDS.search(name):
            add("ORG", name)
        elif not sentence_start and len(words_) <= 4:
            add("PRODUCT", name)
    for rx in (_BOLD, _LINK_TEXT):
        for m in rx.finditer(names_prose):
            name = m.group(1).strip()
            ws = name.split()
            if not ws or len(ws) > 4 or not all(w[:1].isupper() or _CAMEL.fullmatch(w) for w in ws):
                continue
            if len(ws) == 1 and not (_CAMEL.fullmatch(name) or rx is _BOLD):
                continue
            if ws[0] in _COMMON_CAPS:
                continue
            add("ORG" if _ORG_WORDS.search(name) else "PRODUCT", name)
    for m in _CAMEL.finditer(names_prose):
        name = m.group(1)
        if name.lower() not in taken and not _PLURAL_ACRONYM.match(name):
            add("PRODUCT", name)
    if lang in ("en", "und"):
        # English only (other languages capitalise common nouns or sentence-internal words): a single capitalised
        # word used at least twice away from a sentence start is a name (Python, Pydantic, Starlette)
        counts: Counter[str] = Counter(m.group(1) for m in _CAP_WORD.finditer(names_prose)
                                       if not _sentence_start(names_prose, m.start(1)))
        for name, n in counts.items():
            inside_name = any(name.lower() in t.split() for t in taken)  # a word of a longer name found above
            if n >= 2 and name not in _COMMON_CAPS and name.lower() not in taken and not inside_name:
                add("ORG" if _ORG_WORDS.fullmatch(name) else "PRODUCT", name)
    return {k: v for k, v in out.items() if v}


def _sentence_start(text: str, start: int) -> bool:
    """Whether position ``start`` begins a sentence, line, list item, heading, quote or label."""
    before = text[max(0, start - 3) : start]
    if start == 0 or "\n" in before:
        return True
    return before.rstrip()[-1:] in (".", "!", "?", "#", ":", "*", "-", ">", '"', "(", "[", "|", "/")


# -------------------------------------------------------------------------------------------------------- KeyBERT
KEYBERT_CANDIDATES_PER_DOC = 40
_KW_TOKEN = r"(?u)\b[^\W\d_][^\W\d_'’-]*(?:[-'’][^\W\d_]+)*\b"  # words of letters (no numbers, no ids)


def keyword_text(text: str) -> str:
    """The text keywords are drawn from: code blocks, HTML tags, URLs, link targets and ``{#anchor}`` attribute
    lists removed (see :func:`heritage_pipeline.langid.strip_markup`)."""
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
    ``cache`` (:class:`heritage_pipeline.embedding.EmbeddingCache`) so a phrase is embedded once across partitions
    and runs. KeyBERT then ranks and diversifies exactly as usual.
    """
    from keybert import KeyBERT
    from sklearn.feature_extraction.text import CountVectorizer, TfidfVectorizer

    from .embedding import embed_with_cache

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
        word_vecs, _, _ = embed_with_cache(embedder, words, cache, prefix="keybert-candidate")
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


# ---------------------------------------------------------------------------------------------------- the stage
@lru_cache(maxsize=4)
def _tokenizer(name: str):
    from .tokenizer import get_tokenizer

    return get_tokenizer(name)


def enrich_structure(c: Chunk, config: ChunkingConfig) -> None:
    """Tables and code blocks of one chunk -> ``meta.table_text/table_digest/table_summary`` and
    ``meta.code_languages/code_paths/code_summary`` (:mod:`heritage_pipeline.tables`,
    :mod:`heritage_pipeline.codeblocks`). The chunk text is not touched."""
    from .codeblocks import code_meta
    from .tables import table_meta

    t = config.context.tables
    tm = table_meta(c.text, c.meta.context_prefix, fmt=t.render, max_rows=t.max_rows, summarize=t.summarize,
                    summarize_over_rows=t.summarize_over_rows, summarize_over_cols=t.summarize_over_cols)
    c.meta.table_text, c.meta.table_digest, c.meta.table_summary = tm.table_text, tm.table_digest, tm.table_summary
    cm = code_meta(c.text, c.meta.context_prefix, count_tokens=_tokenizer(config.tokenizer).count)
    c.meta.code_languages, c.meta.code_paths, c.meta.code_summary = cm.languages, cm.paths, cm.summary


def section_embeddings(chunks: list[Chunk], embedder, cache=None) -> int:
    """``section_emb`` = embedding of ``" › ".join(anchors)`` for every chunk with anchors (None without).

    Each distinct breadcrumb is embedded once per call, and at most once ever when ``cache``
    (:class:`heritage_pipeline.embedding.EmbeddingCache`) is given. Returns how many were embedded now."""
    from .embedding import embed_with_cache

    crumbs = sorted({breadcrumb(c.meta.anchors) for c in chunks if c.meta.anchors})
    if not crumbs:
        for c in chunks:
            c.section_emb = None
        return 0
    vecs, _, n_new = embed_with_cache(embedder, crumbs, cache, prefix=getattr(embedder, "passage_prefix", ""))
    table = {b: vecs[i].astype(float).round(6).tolist() for i, b in enumerate(crumbs)}
    for c in chunks:
        c.section_emb = table.get(breadcrumb(c.meta.anchors)) if c.meta.anchors else None
    return n_new


def enrich_chunks(chunks: list[Chunk], config: ChunkingConfig, embedder=None, doc_vectors: np.ndarray | None = None,
                  cache=None) -> list[Chunk]:
    """Fill, in place, on every chunk: ``meta.lang`` (:func:`heritage_pipeline.langid.detect_chunk_language`, the
    document language unless the chunk's own detection is confident), table and code metadata
    (:func:`enrich_structure`), ``meta.entities`` (:func:`simple_ner`, merged with entities already present),
    ``meta.keywords`` (KeyBERT batched per language, or RAKE) and ``section_emb``. Returns ``chunks``.

    ``embedder`` is required for KeyBERT keywords and section embeddings; ``doc_vectors`` ([n_chunks, dim], the
    window-mean passage vectors) are handed to KeyBERT so long chunks are not truncated; ``cache`` is the
    embedding cache used for the breadcrumbs. Raises ValueError when KeyBERT is configured without an embedder.
    """
    ctx = config.context
    for c in chunks:
        c.meta.lang = detect_chunk_language(c.text, c.meta.language)
        enrich_structure(c, config)
        if ctx.entities.ner == "simple":
            found = simple_ner(c.text, ctx.entities.keep, c.meta.context_prefix, c.meta.lang)
            merged = {k: list(v) for k, v in c.meta.entities.items()}
            for label, names in found.items():
                bucket = merged.setdefault(label, [])
                bucket.extend(n for n in names if n not in bucket)
            c.meta.entities = merged
    method = ctx.keywords.method
    if method == "rake":
        for c in chunks:
            c.meta.keywords = rake_keywords(c.text, c.meta.lang, ctx.keywords.top_k)
    elif method == "keybert" and chunks:
        if embedder is None:
            raise ValueError("context.keywords.method is keybert but no embedder was given")
        kws = keybert_keywords([c.text for c in chunks], [c.meta.lang for c in chunks], embedder,
                               top_k=ctx.keywords.top_k, diversity=ctx.keywords.diversity, doc_vectors=doc_vectors,
                               cache=cache)
        for c, k in zip(chunks, kws):
            c.meta.keywords = k
    if ctx.section_embedding and embedder is not None and chunks:
        section_embeddings(chunks, embedder, cache)
    return chunks


def extract_entities(text: str, keep=tuple(LABELS), context_prefix: str = "", lang: str = "und") -> dict[str, list[str]]:
    """:func:`simple_ner` (the configured rule set); the entry point measured by ``benchmarks/eval_ner.py``."""
    return simple_ner(text, keep, context_prefix, lang)


def _norm_name(s: str) -> str:
    return " ".join(s.split()).strip(" ,.;:()[]'\"`*").lower()


def evaluate_ner(preds: list[dict[str, list[str]]], golds: list[dict[str, list[str]]]) -> dict[str, dict]:
    """Micro-averaged precision/recall/F1 per label (and ``ALL``) of predicted vs gold entity sets, per passage.

    Strict: names equal after :func:`_norm_name` (case-insensitive, whitespace collapsed, outer punctuation
    stripped). Partial: a gold name and a predicted name of the same label where one contains the other (each
    gold or predicted name matched at most once)."""
    out = {}
    for label in LABELS + ["ALL"]:
        tp = fp = fn = 0
        tp_p_gold = tp_p_pred = 0
        n_gold = n_pred = 0
        for p, g in zip(preds, golds):
            labels = LABELS if label == "ALL" else [label]
            for lab in labels:
                ps = {_norm_name(x) for x in p.get(lab, [])} - {""}
                gs = {_norm_name(x) for x in g.get(lab, [])} - {""}
                n_gold += len(gs)
                n_pred += len(ps)
                tp += len(ps & gs)
                fp += len(ps - gs)
                fn += len(gs - ps)
                tp_p_gold += sum(1 for x in gs if any(x in y or y in x for y in ps))
                tp_p_pred += sum(1 for y in ps if any(x in y or y in x for x in gs))
        prec = tp / n_pred if n_pred else 0.0
        rec = tp / n_gold if n_gold else 0.0
        out[label] = {"gold": n_gold, "pred": n_pred, "tp": tp, "precision": prec, "recall": rec,
                      "f1": 2 * prec * rec / (prec + rec) if prec + rec else 0.0,
                      "precision_partial": tp_p_pred / n_pred if n_pred else 0.0,
                      "recall_partial": tp_p_gold / n_gold if n_gold else 0.0}
    return out
