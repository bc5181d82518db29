"""The chunker: :class:`Chunker` and the library entry point :func:`chunk_text`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from heritage_pipeline.core.config import ChunkingConfig, config_from
from heritage_pipeline.core.models import Chunk, extraction_day
from heritage_pipeline.core.structure import ParsedDocument
from heritage_pipeline.core.tokenizer import Tokenizer, get_tokenizer
from heritage_pipeline.sources.markdown import parse_markdown

from .boundaries import fence_of, html_row_starts, table_rows
from .counting import DocState, PieceCounter, gc_paused
from .excluded import excluded_count, has_content, ranges_in
from .ids import anchor_key, breadcrumb

ELLIPSIS = "…"  # stands for the elided anchors of a shortened breadcrumb (meta.anchors keeps the full path)
from .params import params_for
from .sections import SectionGrouper, block_index
from .units import UnitBuilder
from .windows import WindowPacker

if TYPE_CHECKING:
    from .params import ChunkParams
    from .units import Group, Window


class ChunkState(DocState):
    """:class:`~heritage_pipeline.chunking.counting.DocState` plus what the chunk records need besides counts: the
    document's excluded ranges (``doc.meta["excluded"]``, offsets into ``doc.text``) and table numbers."""

    __slots__ = ("doc_excluded", "excluded_starts", "_table_numbers", "_row_starts")

    def __init__(self, doc: ParsedDocument, counter: PieceCounter) -> None:
        super().__init__(doc, counter)
        ex = doc.meta.get("excluded") if doc.meta else None
        self.doc_excluded: list[tuple[int, int]] = [(int(a), int(b)) for a, b in ex] if ex else []
        self.excluded_starts = [a for a, _ in self.doc_excluded]
        self._table_numbers: dict[int, int] | None = None
        self._row_starts: dict[int, list[int]] = {}

    def table_number(self, bi: int) -> int:
        """1-based number of table block ``bi`` among the document's tables (Markdown and HTML), in order."""
        if self._table_numbers is None:
            self._table_numbers = {}
            for k, kind in enumerate(self.kinds):
                if kind in ("table", "html_table"):
                    self._table_numbers[k] = len(self._table_numbers) + 1
        return self._table_numbers[bi]

    def row_starts(self, bi: int) -> list[int]:
        """:func:`~heritage_pipeline.chunking.boundaries.html_row_starts` of HTML table block ``bi`` (cached)."""
        rows = self._row_starts.get(bi)
        if rows is None:
            rows = self._row_starts[bi] = html_row_starts(self.doc.text, self.doc.blocks[bi])
        return rows


class Chunker(SectionGrouper, UnitBuilder, WindowPacker):
    """Chunks parsed documents. Construct once per config; :meth:`chunk_document` is re-entrant.

    ``tokenizer`` defaults to the config's (cl100k offline). All sizes are tokens of that encoding.
    """

    def __init__(self, config: ChunkingConfig | None = None, tokenizer: Tokenizer | None = None) -> None:
        self.config = config or config_from(None, {})
        self.tokenizer = tokenizer or get_tokenizer(self.config.tokenizer, self.config.tokenizer_backend)
        self._counter = PieceCounter(self.tokenizer)
        self._prefix_cache: dict[str, int] = {}  # prefix -> tokens of prefix + blank line
        self._blank_line = self.tokenizer.count("\n\n")
        self._crumb_cache: dict[tuple[tuple[str, ...], int], str] = {}
        self._params: dict[tuple[str, str | None], ChunkParams] = {}
        self._max_level = self.config.hierarchy.max_level  # (a computed property of the config)

    # ------------------------------------------------------------------ public API
    def chunk_document(self, doc: ParsedDocument, params: ChunkParams | None = None) -> list[Chunk]:
        """Chunk one parsed document. Returns [] for a document with no non-blank text. Never raises on content.

        ``params`` defaults to :func:`params_for` of the chunker's config, the document's source type and domain.
        """
        if params is None:
            key = (doc.source_type, doc.domain)
            params = self._params.get(key)
            if params is None:
                params = self._params[key] = params_for(self.config, source_type=doc.source_type, domain=doc.domain)
        if not doc.blocks or not doc.sections:
            return []
        with gc_paused():
            state = ChunkState(doc, self._counter)
            # metadata shared by every chunk of the document (extraction_date: once per document)
            base = {"source_type": doc.source_type, "source_path": doc.source_path, "doc_id": doc.doc_id,
                    "lang": doc.lang, "language": doc.lang, "domain": params.domain, "extraction_date": extraction_day()}
            chunks: list[Chunk] = []
            ids: dict[str, int] = {}
            for g in self._groups(state, params):
                for w in self._chunk_group(state, params, g):
                    c = self._make_chunk(state, w, g, ids, base)
                    if c is not None:
                        chunks.append(c)
            return chunks

    def _prefix(self, anchors: list[str], params: ChunkParams, extra: str = "") -> str:
        crumb = self._crumb(anchors, params.prefix_budget) if params.parent_titles and anchors else ""
        if extra:
            return f"{crumb}\n{extra}" if crumb else extra
        return crumb

    def _crumb(self, anchors: list[str], budget: int) -> str:
        """The breadcrumb of ``anchors`` within ``budget`` tokens (cached): the full path when it fits, else the
        first anchor, an ellipsis and as many of the last anchors as fit (``H1 › … › H4``), else the last anchor
        alone, else its first words and an ellipsis; "" when not even one word fits."""
        key = (tuple(anchors), budget)
        crumb = self._crumb_cache.get(key)
        if crumb is not None:
            return crumb
        count = self.tokenizer.count
        crumb = breadcrumb(anchors)
        n = count(crumb)
        if n <= budget and crumb[-1:].isalnum() and len(self._prefix_cache) <= 4096:
            # a letter or digit run ends a pre-token, so the blank line after it is a pre-token of its own: the
            # prefix count is known without encoding the crumb again (see _prefix_tokens)
            self._prefix_cache.setdefault(crumb, n + self._blank_line)
        if n > budget:
            cands = [[anchors[0], ELLIPSIS] + anchors[-k:] for k in range(len(anchors) - 2, 0, -1)]
            cands.append([anchors[-1]])
            crumb = next((c for c in map(breadcrumb, cands) if count(c) <= budget), "")
            if not crumb:
                words = anchors[-1].split()
                while words and count(" ".join(words) + " " + ELLIPSIS) > budget:
                    words = words[: len(words) // 2] if len(words) > 8 else words[:-1]
                crumb = " ".join(words) + " " + ELLIPSIS if words else ""
        if len(self._crumb_cache) > 4096:
            self._crumb_cache.clear()
        self._crumb_cache[key] = crumb
        return crumb

    def _prefix_tokens(self, prefix: str) -> int:
        """Tokens that ``prefix`` adds to the embedded string (prefix + blank line; 0 without a prefix)."""
        if not prefix:
            return 0
        n = self._prefix_cache.get(prefix)
        if n is None:
            n = self.tokenizer.count(prefix + "\n\n")
            if len(self._prefix_cache) > 4096:
                self._prefix_cache.clear()
            self._prefix_cache[prefix] = n
        return n

    # ------------------------------------------------------------------ output
    def _make_chunk(self, st: "ChunkState", w: Window, g: Group, ids: dict[str, int],
                    base: dict[str, Any]) -> Chunk | None:
        """The chunk record of window ``w``; None when its text is blank (P-nonempty: a piece of only characters that
        str.strip() removes but the pre-tokenizer does not cut at, such as U+001C after a space)."""
        doc = st.doc
        # (the normalised document is sliced when it has the same offsets: normalisation is piecewise at every cut
        # the chunker makes)
        text = st.normalized(w.start, w.end).rstrip()
        if not text:
            return None
        if doc.text_is_raw:
            raw_start, raw_end = w.start, w.end
        else:
            fb = block_index(doc.blocks, w.start)
            lb = block_index(doc.blocks, max(w.start, w.end - 1))
            raw_start, raw_end = doc.raw_span(w.start, w.end, fb, lb)
        anchors = w.anchors
        section = g.section
        if g.merged_headings and section is not None:  # tiny siblings merged: the id names the first section
            key = section.key or anchor_key(tuple(section.anchors))
        else:
            key = section.key if section is not None and section.key and len(g.secs) == 1 else ""
            key = key or anchor_key(tuple(anchors))
        n = ids.get(key, 0)
        ids[key] = n + 1
        sec_meta = section.meta if section is not None else {}
        extra = doc.meta.get("chunk_meta")
        # (lists and tuples are copied into fresh lists by the validation)
        fields: dict[str, Any] = {**base, "source_id": sec_meta.get("source_id", doc.doc_id), "anchors": anchors,
                                  "context_prefix": w.prefix, "len_tokens": w.n_tokens, "block_kinds": w.kinds}
        if w.suffix:
            fields["context_suffix"] = w.suffix
        if sec_meta or extra:
            fields.update((k, v) for k, v in {**(extra or {}), **sec_meta}.items() if k != "source_id")
        quality = {"atomic_oversize": True, "oversize_reason": w.oversize} if w.oversize else {}
        if st.doc_excluded:
            excluded = ranges_in(st.doc_excluded, st.excluded_starts, w.start, w.end,
                                 (lambda p: p - w.start) if st.norm is not None
                                 else (lambda p: len(st.normalized(w.start, p))), len(text))
            if excluded:
                if not has_content(text, excluded) and not w.suffix.strip():
                    return None  # nothing but excluded markup / running lines (content outside every chunk)
                n_tok = excluded_count(self.tokenizer.count, w.prefix, text, excluded, w.suffix, w.n_tokens,
                                       lambda a, b: st.slice_count(w.start + a, w.start + b))
                if n_tok <= self.config.quality.length.max_tokens or n_tok <= w.n_tokens:
                    fields["excluded"], fields["len_tokens"] = excluded, n_tok
        if "code" in w.kinds or "table" in w.kinds or "html_table" in w.kinds:
            self._atomic_meta(st, w, fields, quality)
        if g.secs and len(g.secs) > 1 and g.merged_headings:
            fields["sections"] = list(g.merged_headings)
        # one validation of the whole record (``model_validate`` without its Python wrapper): pydantic-core does it
        # faster than model_construct (measured 16 us vs 23 us for the metadata alone) and it keeps parser-provided
        # fields checked
        return Chunk.__pydantic_validator__.validate_python(
            {"id": f"{doc.doc_id}#{key}#{n:03d}", "text": text, "meta": fields,
             "spans": {"char_start": raw_start, "char_end": raw_end}, "quality": quality})


    def _atomic_meta(self, st: "ChunkState", w: Window, fields: dict[str, Any], quality: dict[str, Any]) -> None:
        """Table and code facts of a chunk: ``meta.table_id`` / ``meta.table_rows`` when it holds (a piece of)
        exactly one table, ``quality.unclosed_fence`` when it holds a fenced code block without a closing fence."""
        doc = st.doc
        first = block_index(doc.blocks, w.start)
        last = block_index(doc.blocks, max(w.start, w.end - 1))
        tables = [bi for bi in range(first, last + 1) if st.kinds[bi] in ("table", "html_table")]
        if len(tables) == 1:
            bi = tables[0]
            fields["table_id"] = f"{doc.doc_id}#table-{st.table_number(bi)}"
            rows = st.row_starts(bi) if st.kinds[bi] == "html_table" else None
            fields["table_rows"] = table_rows(doc.text, doc.blocks[bi], w.start, w.end, rows)
        for bi in range(first, last + 1):
            if st.kinds[bi] == "code":
                fence = fence_of(doc.text, doc.blocks[bi])
                if fence is not None and fence[1] < 0:
                    quality["unclosed_fence"] = True
                    break


def resolve_config(config: ChunkingConfig | str | None = None, **overrides: Any) -> ChunkingConfig:
    """The chunking config for ``chunk_text``-style overrides: :func:`~heritage_pipeline.core.config.config_from` of
    ``config`` (a config, a ``chunking.yaml`` path or None for the default file) with ``overrides`` applied, where a
    lower ``max_tokens`` also clamps the ``sliding_window`` and domain-preset sizes above it (``chunking.yaml``
    itself rejects sizes over the cap; a caller who only lowers the cap means "no chunk over this").
    Raises :class:`~heritage_pipeline.core.config.ConfigError` naming the bad key and its allowed range."""
    cap = overrides.get("max_tokens", overrides.get("quality.length.max_tokens"))
    if isinstance(cap, int) and not any(k.startswith("domains") for k in overrides):
        base = config if isinstance(config, ChunkingConfig) else config_from(config, {})
        overrides = dict(overrides)
        for name, preset in base.domains.presets.items():
            if preset.size_tokens > cap:
                overrides[f"domains.presets.{name}.size_tokens"] = cap
        if "size_tokens" not in overrides and base.sliding_window.size_tokens > cap:
            overrides["size_tokens"] = cap
    return config_from(config, overrides)


def chunk_text(text: str, *, config: ChunkingConfig | str | None = None, doc_id: str = "text", source_path: str = "<text>",
               lang: str = "und", domain: str | None = None, tokenizer: Tokenizer | None = None, **overrides: Any) -> list[Chunk]:
    """Chunk Markdown or plain text, like a LangChain or Chonkie splitter.

    ``config``: a :class:`ChunkingConfig`, a path to a ``chunking.yaml`` or None for ``configs/chunking.yaml``.
    ``overrides``: config keys, e.g. ``mode="sliding"``, ``size_tokens=400``, ``overlap_ratio=0.15``,
    ``max_tokens=800``, ``min_tokens=100``, ``adaptive_overlap=True`` (the short names of
    :data:`heritage_pipeline.core.config.OVERRIDE_ALIASES`, or any dotted key such as ``"hierarchy.levels"``).
    ``domain`` picks a preset of ``domains.presets`` (``tech``, ``legal``, ``faq``); None keeps the
    ``sliding_window`` sizes.

    Returns chunks in document order with ``id`` (``<doc_id>#<heading path>#<nnn>``), ``text``,
    ``char_start``/``char_end`` (code points into ``text``, half-open; ``text`` is the normalised slice),
    ``anchors``, ``context_prefix`` and ``len_tokens`` (exact count of prefix + blank line + text). An empty or
    blank text gives ``[]``. Raises :class:`~heritage_pipeline.core.config.ConfigError` for invalid overrides (naming
    the key and its allowed range) and ValueError for an unknown domain.
    """
    cfg = resolve_config(config, **overrides)
    if domain is not None and domain not in cfg.domains.presets:
        raise ValueError(f"unknown domain {domain!r}: choose one of {sorted(cfg.domains.presets)} or None")
    chunker = _chunker_for(cfg, tokenizer)
    with gc_paused():
        doc = parse_markdown(text, doc_id=doc_id, source_path=source_path, lang=lang, max_level=chunker._max_level)
        doc.domain = domain
        return chunker.chunk_document(doc)


_CHUNKERS: dict[tuple[int, int], Chunker] = {}


def _chunker_for(cfg: ChunkingConfig, tokenizer: Tokenizer | None) -> Chunker:
    key = (id(cfg), id(tokenizer))
    ch = _CHUNKERS.get(key)
    if ch is None or ch.config is not cfg:
        ch = Chunker(cfg, tokenizer)
        if len(_CHUNKERS) > 32:
            _CHUNKERS.clear()
        _CHUNKERS[key] = ch
    return ch
