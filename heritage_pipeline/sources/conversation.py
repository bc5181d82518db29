"""Conversation exports (chat-assistant JSON) -> one standalone section per message, split into Markdown blocks.

Accepted shapes: a list of conversations, a single conversation object, or ``{"conversations": [...]}``. A
conversation has ``uuid``, ``name``, ``chat_messages[{uuid, sender, text, content[], attachments[], created_at,
index}]`` (the claude.ai export; other keys are ignored).

Text of a message
    ``content`` blocks when they hold any text, else ``text`` (exports disagree on which one is complete: the real
    per-conversation export leaves ``text`` empty; some fixtures put a summary in ``text``). ``content`` may also be a
    plain string (as in the Messages API). Blocks: ``text``; ``thinking`` (dropped, or kept as ``[thinking] ...``
    by ``sources.conversation.thinking``); ``redacted_thinking`` (dropped); ``tool_use`` (``[tool_use NAME]`` and
    its input, long string fields as fenced blocks); ``tool_result`` (its text parts, ``text`` or ``content``);
    images, files and unknown block types carry no text and are ignored (unknown types are listed in
    ``ParsedDocument.skipped``). Attachments with ``extracted_content`` follow under ``[attachment FILE]``.
    Pseudo-markup inside text: ``<antThinking>``, ``<thinking>`` and namespaced ``<x:thinking>`` follow the same
    drop/keep rule; ``<antArtifact ... title="T" type="..." language="L">body</antArtifact>`` becomes
    ``[artifact: T]`` and a fenced code block (language from ``language`` or the MIME type), so the chunker keeps
    it whole like any code block.

Order
    By ``index`` when every message has an integer one, else by ``created_at`` when every message has a parsable
    ISO 8601 timestamp, else file order; ties keep file order. ``message_index`` is the position in that order. A
    message without ``uuid`` is ``msg-<file position>``.

Skipped and quarantined
    Messages shorter than ``min_message_chars`` (after the rules above) are skipped, listed in
    ``ParsedDocument.skipped``. Problems are returned as ``(location, reason)`` and quarantined by the caller as
    ``<file>#<location>``: a conversation that is not an object or has no ``chat_messages`` list; a message that is
    not an object or whose ``content``/``text`` have impossible types; a content block that is not an object or
    whose text field is not a string (the block is left out, the message proceeds). A file whose every
    conversation is unusable raises :class:`ParseError` (the whole file is quarantined).

Spans
    Each message is split into Markdown blocks (:func:`heritage_pipeline.sources.markdown.scan_blocks`: paragraphs, lists,
    tables, fenced code), the chunker's units; long messages are windowed at those boundaries with the
    ``sources.conversation`` sizes. Every character of the message text keeps the raw offset it came from inside
    the JSON string literals (escapes included, :func:`heritage_pipeline.sources.jsonspans.string_offsets`), so a block's
    span is exactly the part of the raw file it was decoded from; text added by the rules above (labels, fences)
    points at its block's or attachment's object. Where the pieces of a message are not in file order (attachments
    stored before ``content``), every block of that message gets the span of the whole message object.
"""

from __future__ import annotations

import json
import re
from array import array
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from heritage_pipeline.core.config import ConversationSourceConfig
from .jsonspans import JSONSpanError, SpannedDict, loads_with_spans, string_offsets
from .markdown import scan_blocks
from heritage_pipeline.core.structure import DerivedTextBuilder, ParsedDocument, ParseError, Section, value_kind
from heritage_pipeline.core.text import normalize_inner

_THINKING = re.compile(r"<((?:[\w-]+:)?(?:ant)?thinking)\b[^>]*>(.*?)</\1\s*>", re.S | re.I)
_ARTIFACT = re.compile(r"<antArtifact\b([^>]*)>(.*?)</antArtifact\s*>", re.S | re.I)
_ATTR = re.compile(r"""(\w+)\s*=\s*(?:"([^"]*)"|'([^']*)')""")
_MIME_LANG = {"text/html": "html", "application/vnd.ant.react": "jsx", "image/svg+xml": "svg",
              "application/vnd.ant.mermaid": "mermaid", "text/css": "css", "application/javascript": "javascript",
              "text/javascript": "javascript", "application/json": "json"}
_NO_TEXT_BLOCKS = frozenset({"image", "file", "document", "redacted_thinking", "token_budget"})


class _Text:
    """A string built piece by piece with the raw offset of every character (see module docstring, Spans)."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.offs = array("q")

    def add(self, text: str, offs: list[int] | int) -> None:
        if not text:
            return
        self.parts.append(text)
        if isinstance(offs, int):
            self.offs.extend([offs] * len(text))
        else:
            self.offs.extend(offs)

    def sep(self, at: int) -> None:
        if self.parts:
            self.add("\n\n", at)

    @property
    def text(self) -> str:
        return "".join(self.parts)


@dataclass
class Message:
    conversation_id: str
    conversation_name: str
    message_id: str
    index: int
    sender: str
    created_at: str | None
    text: str
    offs: array  # raw offset per character of ``text``
    span: tuple[int, int]  # the message object in the raw file


def _literal(raw: str, obj: Any, key: str) -> tuple[str, list[int] | int]:
    """A string member with per-character raw offsets (or the object's start when spans are unavailable)."""
    value = obj.get(key)
    spans = getattr(obj, "value_spans", None)
    if spans and key in spans and raw[spans[key][0] : spans[key][0] + 1] == '"':
        return string_offsets(raw, spans[key][0])
    return value, getattr(obj, "span", (0, 0))[0]


class _MessageReader:
    """Builds the text of one message (see module docstring); collects problems and ignored block types."""

    def __init__(self, raw: str, keep_thinking: bool) -> None:
        self.raw = raw
        self.keep_thinking = keep_thinking
        self.problems: list[tuple[str, str]] = []
        self.ignored_types: dict[str, int] = {}

    def read(self, msg: SpannedDict, where: str) -> _Text | None:
        """The message text, or None when the message is malformed (a problem is recorded)."""
        content = msg.get("content")
        text = msg.get("text")
        if text is not None and not isinstance(text, str):
            if not isinstance(content, (list, str)):
                self.problems.append((where, f"'text' is {value_kind(text)} and 'content' has no text"))
                return None
            text = None
        if "text" not in msg and "content" not in msg:
            self.problems.append((where, "has neither 'text' nor 'content'"))
            return None
        out = _Text()
        if isinstance(content, list):
            items = getattr(content, "item_spans", None)
            for bi, block in enumerate(content):
                at = items[bi][0] if items else msg.span[0]
                self._block(block, out, f"{where} content[{bi}]", at)
        elif isinstance(content, str) and content.strip():
            out.add(*_literal(self.raw, msg, "content"))
        elif content is not None and not isinstance(content, (list, str)):
            if not (isinstance(text, str) and text.strip()):
                self.problems.append((where, f"'content' is {value_kind(content)}, expected an array of blocks"))
                return None
            self.problems.append((f"{where} content", f"is {value_kind(content)}, expected an array of blocks "
                                                      "(ignored; the message's 'text' is used)"))
        if not out.text.strip() and isinstance(text, str):
            out = _Text()
            out.add(*_literal(self.raw, msg, "text"))
        out = self._markup(out)
        for ai, att in enumerate(msg.get("attachments") or []):
            if isinstance(att, dict) and isinstance(att.get("extracted_content"), str) and att["extracted_content"].strip():
                at = getattr(att, "span", msg.span)[0]
                out.sep(at)
                out.add(f"[attachment {att.get('file_name') or ai}]\n", at)
                out.add(*_literal(self.raw, att, "extracted_content"))
        return out

    def _block(self, block: Any, out: _Text, where: str, at: int) -> None:
        if not isinstance(block, dict):
            if isinstance(block, str) and block.strip():
                out.sep(at)
                out.add(block, at)
            else:
                self.problems.append((where, f"is {value_kind(block)}, not a content block object"))
            return
        kind = block.get("type")
        plain_text = (kind in ("text", None) and "text" in block) or (kind == "tool_result" and "text" in block)
        if plain_text:
            value = block.get("text")
            if value is None or value == "":
                return
            if not isinstance(value, str):
                self.problems.append((where, f"'text' is {value_kind(value)}, not a string (block ignored)"))
                return
            out.sep(at)
            out.add(*_literal(self.raw, block, "text"))
        elif kind == "thinking":
            value = block.get("thinking")
            if self.keep_thinking and isinstance(value, str) and value.strip():
                out.sep(at)
                out.add("[thinking] ", at)
                out.add(*_literal(self.raw, block, "thinking"))
        elif kind == "tool_use":
            out.sep(at)
            out.add(f"[tool_use {block.get('name') or '?'}]", at)
            inp = block.get("input")
            if isinstance(inp, dict):
                for key, value in inp.items():
                    if isinstance(value, str) and "\n" in value:
                        out.add(f"\n{key}:\n```\n", at)
                        out.add(*_literal(self.raw, inp, key))
                        out.add("\n```", at)
                    else:
                        out.add(f"\n{key}: {json.dumps(value, ensure_ascii=False) if not isinstance(value, str) else value}", at)
        elif kind == "tool_result":
            inner = block.get("content")
            if isinstance(inner, str) and inner.strip():
                out.sep(at)
                out.add(*_literal(self.raw, block, "content"))
            elif isinstance(inner, list):
                spans = getattr(inner, "item_spans", None)
                for ii, sub in enumerate(inner):
                    self._block(sub, out, f"{where} content[{ii}]", spans[ii][0] if spans else at)
        elif kind in _NO_TEXT_BLOCKS:
            return
        else:
            self.ignored_types[str(kind)] = self.ignored_types.get(str(kind), 0) + 1

    def _markup(self, t: _Text) -> _Text:
        """Apply the thinking-tag and artifact rules to a built text, keeping the offsets aligned."""
        text = t.text
        if "<" not in text:
            return t
        edits: list[tuple[int, int, str]] = []  # replace text[a:b] with s (offset of s: text offset a)
        for m in _THINKING.finditer(text):
            if self.keep_thinking:
                edits.append((m.start(), m.start(2), "[thinking] "))
                edits.append((m.end(2), m.end(), ""))
            else:
                edits.append((m.start(), m.end(), ""))
        for m in _ARTIFACT.finditer(text):
            if any(a <= m.start() < b for a, b, _ in edits):
                continue
            attrs = {k.lower(): v1 or v2 for k, v1, v2 in _ATTR.findall(m.group(1))}
            lang = attrs.get("language") or _MIME_LANG.get(attrs.get("type", ""), "")
            title = attrs.get("title") or attrs.get("identifier") or "artifact"
            if attrs.get("type") == "text/markdown":
                edits.append((m.start(), m.start(2), f"[artifact: {title}]\n"))
                edits.append((m.end(2), m.end(), ""))
            else:
                edits.append((m.start(), m.start(2), f"[artifact: {title}]\n```{lang}\n"))
                edits.append((m.end(2), m.end(), "\n```"))
        if not edits:
            return t
        edits.sort()
        out = _Text()
        pos = 0
        for a, b, s in edits:
            if a < pos:
                continue
            out.add(text[pos:a], list(t.offs[pos:a]))
            out.add(s, t.offs[a] if a < len(t.offs) else (t.offs[-1] if len(t.offs) else 0))
            pos = b
        out.add(text[pos:], list(t.offs[pos:]))
        return out


def iter_conversations(data: Any) -> list[Any]:
    """The conversation objects of any accepted top-level shape. Raises ParseError for other shapes."""
    if isinstance(data, list):
        return data
    if isinstance(data, dict):
        if isinstance(data.get("conversations"), list):
            return data["conversations"]
        if "chat_messages" in data or "uuid" in data:
            return [data]
    raise ParseError("not a conversation export: expected a list of conversations, a conversation object or "
                     "{\"conversations\": [...]}")


def _timestamp(value: Any) -> datetime | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        ts = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return ts if ts.tzinfo is not None else ts.replace(tzinfo=None)


def _order(msgs: list[tuple[int, SpannedDict]]) -> list[tuple[int, SpannedDict]]:
    """Messages in conversation order (see module docstring, Order)."""
    if msgs and all(isinstance(m.get("index"), int) and not isinstance(m.get("index"), bool) for _, m in msgs):
        return sorted(msgs, key=lambda pm: (pm[1]["index"], pm[0]))
    stamps = [_timestamp(m.get("created_at")) for _, m in msgs]
    if msgs and all(s is not None for s in stamps) and len({s.tzinfo is None for s in stamps}) == 1:  # type: ignore[union-attr]
        order = sorted(range(len(msgs)), key=lambda k: (stamps[k], msgs[k][0]))
        return [msgs[k] for k in order]
    return list(msgs)


def parse_conversations(text: str, *, doc_id: str, source_path: str, lang: str,
                        cfg: ConversationSourceConfig) -> tuple[ParsedDocument, list[tuple[str, str]]]:
    """Parse a conversation export. Returns the document and ``problems`` as (location, reason) pairs.

    Raises :class:`ParseError` when the file is not JSON, not a conversation export, or has no usable
    conversation at all.
    """
    try:
        data = loads_with_spans(text)
    except JSONSpanError as exc:
        raise ParseError(str(exc)) from None
    convs = iter_conversations(data)
    reader = _MessageReader(text, cfg.thinking == "keep")
    problems = reader.problems
    messages: list[Message] = []
    skipped: list[str] = []
    usable = 0
    for ci, conv in enumerate(convs):
        if not isinstance(conv, dict):
            problems.append((f"conversation[{ci}]", f"is {value_kind(conv)}, not an object"))
            continue
        cid = str(conv.get("uuid") or conv.get("conversation_id") or f"conversation-{ci}")
        name = str(conv.get("name") or "").strip() or cid
        msgs = conv.get("chat_messages")
        if msgs is None:
            problems.append((f"conversation {cid}", "has no 'chat_messages'"))
            continue
        if not isinstance(msgs, list):
            problems.append((f"conversation {cid}", f"'chat_messages' is {value_kind(msgs)}, not an array"))
            continue
        usable += 1
        if not msgs:
            skipped.append(f"conversation {cid}: no messages")
            continue
        valid: list[tuple[int, SpannedDict]] = []
        for pos, msg in enumerate(msgs):
            if not isinstance(msg, dict):
                problems.append((f"conversation {cid} message[{pos}]", f"is {value_kind(msg)}, not an object"))
            else:
                valid.append((pos, msg))
        seen_ids: set[str] = set()
        for rank, (pos, msg) in enumerate(_order(valid)):
            mid = str(msg.get("uuid") or f"msg-{pos}")
            if mid in seen_ids:
                mid = f"{mid}-{pos}"
            seen_ids.add(mid)
            built = reader.read(msg, f"conversation {cid} message {mid}")
            if built is None:
                continue
            body_len = len(built.text.strip())
            if body_len < cfg.min_message_chars:
                skipped.append(f"conversation {cid} message {mid}: {body_len} characters < {cfg.min_message_chars}")
                continue
            span = msg.span if isinstance(msg, SpannedDict) else (0, len(text))
            sender = msg.get("sender")
            created = msg.get("created_at")
            messages.append(Message(cid, name, mid, rank, sender if isinstance(sender, str) and sender else "unknown",
                                    created if isinstance(created, str) and created else None, built.text, built.offs,
                                    span))
    if not usable:
        raise ParseError("; ".join(f"{loc} {why}" for loc, why in problems) or "no conversation in the file")
    if reader.ignored_types:
        skipped.append("content blocks of unknown type ignored: " +
                       ", ".join(f"{k} ({v})" for k, v in sorted(reader.ignored_types.items())))
    builder = DerivedTextBuilder()
    sections: list[Section] = []
    for m in messages:
        first = len(builder.blocks)
        _add_message_blocks(builder, m)
        if len(builder.blocks) == first:
            continue
        sections.append(
            Section(
                anchors=[m.conversation_name, f"message {m.index} ({m.sender})"],
                level=1,
                first=first,
                last=len(builder.blocks),
                meta={
                    "source_id": m.conversation_id,
                    "conversation_id": m.conversation_id,
                    "message_index": m.index,
                    "sender": m.sender,
                    "created_at": m.created_at,
                    "primary_class": "observation",
                    "extra": {"message_id": m.message_id},
                },
                standalone=True,
                key=f"{m.conversation_id}/{m.message_id}",
            )
        )
    doc = ParsedDocument(doc_id=doc_id, source_path=source_path, source_type="conversation", lang=lang,
                         text=builder.text, blocks=builder.blocks, sections=sections, text_is_raw=False,
                         skipped=skipped, meta={"conversations": len(convs), "messages": len(messages)})
    return doc, problems


def _add_message_blocks(builder: DerivedTextBuilder, m: Message) -> None:
    """Split a message into Markdown blocks and add them with their raw spans (see module docstring, Spans)."""
    body = normalize_inner(m.text)
    if len(body) != len(m.text):  # CRLF folded or NFC changed the length: offsets no longer line up per character
        offs = None
    else:
        offs = m.offs
    blocks = scan_blocks(body)
    spans = []
    for b in blocks:
        e = b.end
        while e > b.start and body[e - 1].isspace():
            e -= 1
        if e <= b.start:
            continue
        if offs is not None:
            spans.append((b, e, offs[b.start], offs[e - 1] + 1))
        else:
            spans.append((b, e, m.span[0], m.span[1]))
    # block spans must follow file order (a chunk's span runs from its first block's start to its last block's end);
    # spans of added labels may touch or overlap their neighbours
    monotonic = all(spans[k][2] >= spans[k - 1][2] and spans[k][3] >= spans[k - 1][3] for k in range(1, len(spans)))
    for b, e, rs, re_ in spans:
        if not monotonic:
            rs, re_ = m.span
        idx = builder.add(b.kind, body[b.start : e], rs, re_, level=b.level, title=b.title, info=b.info)
        if idx is not None and b.header_end > b.start:
            added = builder.blocks[idx]
            added.header_end = min(added.content_end, added.start + (b.header_end - b.start))
