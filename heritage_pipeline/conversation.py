"""Conversation exports (chat-assistant JSON) -> one section per message.

Accepted shapes: a list of conversations, a single conversation object, or ``{"conversations": [...]}``. A
conversation has ``uuid``, ``name``, ``chat_messages[{uuid, sender, text, content[], attachments[], created_at,
index}]``. A message's text is ``text``, or, when that is empty, its ``content[]`` blocks: ``text``; ``thinking``
(dropped or kept by config); ``tool_use`` (rendered as ``[tool_use NAME] {input}``); ``tool_result`` (its text
parts). Attachments with ``extracted_content`` are appended under ``[attachment FILE]``. Pseudo-markup such as
``<antThinking>...</antThinking>`` inside the text follows the same drop/keep rule. Messages are ordered by
``index``, then ``created_at``, then file order; a message without uuid gets ``msg-<position>``.

Messages shorter than ``min_message_chars`` are skipped (recorded in ``ParsedDocument.skipped``). A malformed
conversation or message is reported as a problem (quarantined with a reason) while the rest proceed.
Every block's raw span is the span of its message object in the JSON file.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from .config import ConversationSourceConfig
from .jsonspans import JSONSpanError, SpannedDict, loads_with_spans
from .structure import DerivedTextBuilder, ParsedDocument, ParseError, Section

_THINKING_TAGS = re.compile(r"<(antThinking|thinking)>(.*?)</\1>", re.S | re.I)
_PARAGRAPH_BREAK = re.compile(r"\n[ \t]*\n")


@dataclass
class Message:
    conversation_id: str
    conversation_name: str
    message_id: str
    index: int
    sender: str
    created_at: str | None
    text: str
    span: tuple[int, int]


def _block_text(block: Any, keep_thinking: bool) -> str:
    if not isinstance(block, dict):
        return block if isinstance(block, str) else ""
    kind = block.get("type")
    if kind == "text":
        return str(block.get("text") or "")
    if kind == "thinking":
        return f"[thinking] {block.get('thinking') or ''}" if keep_thinking else ""
    if kind == "tool_use":
        payload = json.dumps(block.get("input", {}), ensure_ascii=False, sort_keys=True)
        return f"[tool_use {block.get('name', '?')}] {payload}"
    if kind == "tool_result":
        inner = block.get("content")
        if isinstance(inner, str):
            return inner
        if isinstance(inner, list):
            return "\n".join(t for t in (_block_text(b, keep_thinking) for b in inner) if t)
    return ""


def message_text(msg: dict[str, Any], keep_thinking: bool) -> str:
    """The text of one message (see module docstring). Raises ParseError when ``content`` has the wrong type and
    there is no ``text`` to fall back on."""
    text = msg.get("text")
    text = text if isinstance(text, str) else ""
    content = msg.get("content")
    if not text.strip():
        if content is None:
            text = ""
        elif isinstance(content, str):
            text = content
        elif isinstance(content, list):
            text = "\n\n".join(t for t in (_block_text(b, keep_thinking) for b in content) if t.strip())
        else:
            raise ParseError(f"'content' is a {type(content).__name__}, expected a list of blocks")
    if not keep_thinking:
        text = _THINKING_TAGS.sub("", text)
    else:
        text = _THINKING_TAGS.sub(lambda m: f"[thinking] {m.group(2)}", text)
    for att in msg.get("attachments") or []:
        if isinstance(att, dict) and isinstance(att.get("extracted_content"), str) and att["extracted_content"].strip():
            text += f"\n\n[attachment {att.get('file_name', '?')}]\n{att['extracted_content']}"
    return text.strip()


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


def parse_conversations(text: str, *, doc_id: str, source_path: str, lang: str,
                        cfg: ConversationSourceConfig) -> tuple[ParsedDocument, list[tuple[str, str]]]:
    """Parse a conversation export. Returns the document and ``problems`` as (location, reason) pairs.

    Raises :class:`ParseError` when the file is not JSON or has no usable conversation at all.
    """
    try:
        data = loads_with_spans(text)
    except JSONSpanError as exc:
        raise ParseError(str(exc)) from None
    convs = iter_conversations(data)
    keep_thinking = cfg.thinking == "keep"
    problems: list[tuple[str, str]] = []
    messages: list[Message] = []
    skipped: list[str] = []
    for ci, conv in enumerate(convs):
        if not isinstance(conv, dict):
            problems.append((f"conversation[{ci}]", f"is a {type(conv).__name__}, not an object"))
            continue
        cid = str(conv.get("uuid") or f"conversation-{ci}")
        name = str(conv.get("name") or cid)
        msgs = conv.get("chat_messages")
        if msgs is None:
            problems.append((f"conversation {cid}", "has no 'chat_messages'"))
            continue
        if not isinstance(msgs, list):
            problems.append((f"conversation {cid}", f"'chat_messages' is a {type(msgs).__name__}, not a list"))
            continue
        if not msgs:
            skipped.append(f"conversation {cid}: no messages")
            continue
        ordered = []
        for pos, msg in enumerate(msgs):
            if not isinstance(msg, dict):
                problems.append((f"conversation {cid} message[{pos}]", f"is a {type(msg).__name__}, not an object"))
                continue
            try:
                body = message_text(msg, keep_thinking)
            except ParseError as exc:
                problems.append((f"conversation {cid} message {msg.get('uuid', pos)}", str(exc)))
                continue
            idx = msg.get("index")
            ordered.append((idx if isinstance(idx, int) else pos, str(msg.get("created_at") or ""), pos, msg, body))
        ordered.sort(key=lambda t: (t[0], t[1], t[2]))
        for rank, (_, created, pos, msg, body) in enumerate(ordered):
            mid = str(msg.get("uuid") or f"msg-{pos}")
            if len(body) < cfg.min_message_chars:
                skipped.append(f"conversation {cid} message {mid}: {len(body)} characters < {cfg.min_message_chars}")
                continue
            span = msg.span if isinstance(msg, SpannedDict) else (0, len(text))
            messages.append(Message(cid, name, mid, rank, str(msg.get("sender") or "unknown"), created or None, body, span))
    if not messages and problems and not skipped:
        raise ParseError("; ".join(f"{loc} {why}" for loc, why in problems))
    builder = DerivedTextBuilder()
    sections: list[Section] = []
    for m in messages:
        first = len(builder.blocks)
        for para in _PARAGRAPH_BREAK.split(m.text):
            builder.add("paragraph", para, m.span[0], m.span[1])
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
                },
                standalone=True,
                key=f"{m.conversation_id}/{m.message_id}",
            )
        )
    doc = ParsedDocument(doc_id=doc_id, source_path=source_path, source_type="conversation", lang=lang,
                         text=builder.text, blocks=builder.blocks, sections=sections, text_is_raw=False,
                         skipped=skipped)
    return doc, problems
