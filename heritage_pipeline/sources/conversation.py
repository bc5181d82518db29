"""Conversation exports (chat-assistant JSON) -> one standalone section per message (or short question + answer),
split into Markdown blocks.

Formats (:data:`SUPPORTED_FORMATS`): the Claude export (``uuid``, ``name``, ``chat_messages[{uuid, sender, text,
content[], attachments[], created_at, index}]``; also the ``text_message.content`` variant); the ChatGPT export
(``mapping`` of nodes ``{message: {author.role, content{content_type, parts[] | text}}, parent, children}``, read
along the current branch: from ``current_node`` up the parent links; without it from the root down the last child;
without links by ``create_time``); ``{"messages": [{role, content}]}`` (OpenAI/Anthropic API style, Gemini CLI's
``type``), one per JSON Lines line or as a bare list of messages; ShareGPT (``conversations: [{from, value}]``). The
top level may be a list of conversations, one conversation, or ``{"conversations": [...]}``; any other shape is
refused naming these formats, a conversation with none of them is a quarantined part.

Roles: human (``human``, ``user``...) and assistant (``assistant``, ``gpt``, ``model``, ``gemini``...) messages are
chunked; system, tool, function, info and error messages (and ChatGPT nodes hidden from the conversation) are left
out, listed in ``ParsedDocument.skipped``, unless ``sources.conversation.keep_roles`` names them.

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
    Claude: by ``index`` when every message has an integer one, else by ``created_at`` when every message has a
    parsable timestamp (ISO 8601 or epoch seconds), else file order; ties keep file order. ChatGPT: the branch order
    above. Other formats: file order. ``message_index`` is the position in that order. A message without
    ``uuid``/``id`` is ``msg-<file position>``.

Short messages
    A human turn shorter than ``min_message_chars`` (characters, after the rules above) opens the section of the
    next turn (several in a row all do), so a question is never lost and never chunked alone; a short answer joins
    the section before it (it stays with its question); a short question at the end is a section of its own.
    A longer question, up to ``question_max_chars`` (default 1,000 characters, about half the 500-token target),
    opens the section of the answer right after it as well (the question retrieved beside its answer); the SPEC
    rule for turns under ``min_message_chars`` is unchanged (they never stand alone, whatever follows them).
    Such a section's meta has ``message_index`` of its first message and ``extra.message_indexes`` /
    ``message_ids`` / ``senders`` of all of them. Whitespace-only messages are left out (listed).

Quarantined
    Problems are returned as ``(location, reason)`` and quarantined by the caller as ``<file>#<location>``: a
    conversation that is not an object or has no messages; a message that is not an object or whose
    ``content``/``text`` have impossible types; a content block that is not an object or whose text field is not a
    string (the block is left out, the message proceeds). A file whose every conversation is unusable raises
    :class:`ParseError` (the whole file is quarantined).

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
from datetime import datetime, timezone
from typing import Any

from heritage_pipeline.core.config import ConversationSourceConfig
from .accounting import left_out_groups
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


SUPPORTED_FORMATS = ("Claude export (chat_messages), ChatGPT export (mapping tree), {\"messages\": [{role, content}]} "
                     "(also one conversation per JSONL line, or a bare list of such messages) and ShareGPT "
                     "(conversations: [{from, value}])")
# The asking and the answering side of a conversation, in the words of chat exports, customer-service logs and
# helpdesk transcripts (trial: a sales chat's ``agent`` turns were left out as an unknown role). Compared
# case-folded with ``-``/space as ``_``.
HUMAN_ROLES = frozenset({"human", "user", "prompter", "customer", "client", "visitor", "caller", "guest", "patron",
                         "end_user", "enduser", "lead", "prospect"})
ASSISTANT_ROLES = frozenset({"assistant", "gpt", "model", "gemini", "bot", "ai", "chatgpt", "claude", "bard",
                             "agent", "human_agent", "support", "support_agent", "chatbot", "operator",
                             "representative", "rep", "staff", "advisor", "adviser", "consultant", "seller",
                             "salesperson", "sales", "librarian", "helpdesk", "ai_assistant", "copilot", "llm"})
_ROLE_KEYS = ("role", "sender", "from", "type", "speaker")


def _looks_like_message(v: Any) -> bool:
    return isinstance(v, dict) and any(k in v for k in ("role", "from", "sender")) and \
        any(k in v for k in ("content", "value", "text")) and "chat_messages" not in v and "mapping" not in v


def iter_conversations(data: Any) -> list[Any]:
    """The conversation objects of any accepted top-level shape (see :data:`SUPPORTED_FORMATS`): a list of
    conversations, one conversation object, ``{"conversations": [...]}``, or a bare list of messages (one
    conversation). Raises ParseError naming the supported formats for other shapes."""
    if isinstance(data, list):
        if data and all(_looks_like_message(x) for x in data if isinstance(x, dict)) and any(isinstance(x, dict) for x in data):
            return [{"messages": data}]
        return data
    if isinstance(data, dict):
        convs = data.get("conversations")
        if isinstance(convs, list):
            if convs and all(_looks_like_message(x) or (isinstance(x, dict) and "value" in x) for x in convs):
                return [data]  # ShareGPT: the list holds the messages of one conversation
            return convs
        if any(k in data for k in ("chat_messages", "mapping", "messages", "uuid")):
            return [data]
    raise ParseError(f"not a conversation export: expected {SUPPORTED_FORMATS}")


def _jsonl_as_array(text: str) -> tuple[str, list[tuple[str, str]]] | None:
    """JSON Lines -> one JSON array and the lines left out of it.

    The array is ``[`` + the text with the newline after every value but the last replaced by ``,`` + ``]``, so every
    offset shifts by exactly one; a line that is not JSON on its own (a ``# comment``, a truncated line) is blanked
    (same length, spaces) and returned as ``("line N", reason)`` (1-based) to be quarantined alone, as bad lines of
    an ISIL list are (trial defect 3: one comment line quarantined the whole file).

    Returns:
        ``(array text, bad lines)``, or None when the text is not JSON Lines: fewer than two non-empty lines, or
        fewer lines that are JSON objects on their own than lines that are not JSON (a broken pretty-printed JSON
        file stays one parse error).
    """
    lines = text.split("\n")
    filled = [i for i, line in enumerate(lines) if line.strip()]
    if len(filled) < 2:
        return None
    good: set[int] = set()
    bad: list[tuple[str, str]] = []
    for i in filled:
        try:
            value = json.loads(lines[i])
        except ValueError as exc:
            what = "a comment line" if lines[i].lstrip().startswith(("#", "//")) else \
                f"invalid JSON at column {getattr(exc, 'colno', 1)}: {getattr(exc, 'msg', exc)}"
            bad.append((f"line {i + 1}", f"JSON Lines line is not JSON ({what})"))
            continue
        if isinstance(value, dict):
            good.add(i)
        else:
            bad.append((f"line {i + 1}", f"JSON Lines line is {value_kind(value)}, not an object"))
    if not good or len(good) < len(bad):
        return None
    last = max(good)
    out = []
    for i, line in enumerate(lines):
        body = line if i in good else " " * len(line)
        out.append(body + ("," if i in good and i != last else "\n" if i < len(lines) - 1 else ""))
    return "[" + "".join(out) + "]", bad


def _timestamp(value: Any) -> datetime | None:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        try:
            return datetime.fromtimestamp(float(value), tz=timezone.utc)
        except (OverflowError, OSError, ValueError):
            return None
    if not isinstance(value, str) or not value:
        return None
    try:
        ts = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return ts if ts.tzinfo is not None else ts.replace(tzinfo=None)


def _order(msgs: list[tuple[int, SpannedDict]], key: str = "created_at") -> list[tuple[int, SpannedDict]]:
    """Messages in conversation order (see module docstring, Order)."""
    if msgs and all(isinstance(m.get("index"), int) and not isinstance(m.get("index"), bool) for _, m in msgs):
        return sorted(msgs, key=lambda pm: (pm[1]["index"], pm[0]))
    stamps = [_timestamp(m.get(key)) for _, m in msgs]
    if msgs and all(s is not None for s in stamps) and len({s.tzinfo is None for s in stamps}) == 1:  # type: ignore[union-attr]
        order = sorted(range(len(msgs)), key=lambda k: (stamps[k], msgs[k][0]))
        return [msgs[k] for k in order]
    return list(msgs)


def _role(msg: dict) -> str:
    """The sender of a message in the file's own words (``human``, ``user``, ``assistant``, ``gpt``...)."""
    author = msg.get("author")
    if isinstance(author, dict) and isinstance(author.get("role"), str):
        return author["role"]
    for k in _ROLE_KEYS:
        v = msg.get(k)
        if isinstance(v, str) and v:
            return v
    return "unknown"


def role_side(role: str) -> str | None:
    """``"human"`` for an asking role (:data:`HUMAN_ROLES`), ``"assistant"`` for an answering one
    (:data:`ASSISTANT_ROLES`), else None (system, tool, function, info, error...). Case, ``-`` and spaces ignored."""
    low = re.sub(r"[\s\-]+", "_", role.strip().casefold())
    return "human" if low in HUMAN_ROLES else "assistant" if low in ASSISTANT_ROLES else None


def _kept_role(role: str, cfg: ConversationSourceConfig) -> bool:
    low = role.lower()
    return role_side(role) is not None or low == "unknown" or low in {r.lower() for r in cfg.keep_roles}


@dataclass
class _Turn:
    """One message of a conversation, in order, before the grouping of short messages."""

    pos: int
    mid: str
    sender: str
    created: str | None
    built: "_Text"
    span: tuple[int, int]


def _chatgpt_nodes(mapping: dict) -> list[tuple[int, str, Any]]:
    """(file position, node id, message) of a ChatGPT ``mapping`` along the current branch: from ``current_node``
    up the ``parent`` links, reversed; without ``current_node``, from the root down the last child; without links,
    by ``create_time`` when every message has one, else file order."""
    ids = list(mapping)
    pos = {k: i for i, k in enumerate(ids)}
    nodes = {k: v for k, v in mapping.items() if isinstance(v, dict)}
    has_links = any("parent" in v or "children" in v for v in nodes.values())
    chain: list[str] = []
    if has_links:
        cur = None
        cn = getattr(mapping, "_current_node", None)
        if isinstance(cn, str) and cn in nodes:
            cur = cn
        if cur is not None:
            seen = set()
            while cur is not None and cur in nodes and cur not in seen:
                seen.add(cur)
                chain.append(cur)
                parent = nodes[cur].get("parent")
                cur = parent if isinstance(parent, str) else None
            chain.reverse()
        else:
            roots = [k for k, v in nodes.items() if not v.get("parent") or v.get("parent") not in nodes]
            cur = roots[0] if roots else None
            seen = set()
            derived: dict[str, list[str]] = {}  # children from the parent links (exports without "children")
            for k, v in nodes.items():
                if isinstance(v.get("parent"), str):
                    derived.setdefault(v["parent"], []).append(k)
            while cur is not None and cur not in seen:
                seen.add(cur)
                chain.append(cur)
                kids = [c for c in (nodes[cur].get("children") or derived.get(cur) or []) if isinstance(c, str) and c in nodes]
                cur = kids[-1] if kids else None
    else:
        with_msg = [(pos[k], k) for k, v in nodes.items() if isinstance(v.get("message"), dict)]
        stamps = [_timestamp(nodes[k]["message"].get("create_time")) for _, k in with_msg]
        if with_msg and all(st is not None for st in stamps):
            order = sorted(range(len(with_msg)), key=lambda i: (stamps[i], with_msg[i][0]))
            chain = [with_msg[i][1] for i in order]
        else:
            chain = [k for _, k in with_msg]
    return [(pos[k], k, nodes[k].get("message")) for k in chain]


def parse_conversations(text: str, *, doc_id: str, source_path: str, lang: str,
                        cfg: ConversationSourceConfig) -> tuple[ParsedDocument, list[tuple[str, str]]]:
    """Parse a conversation export (any of :data:`SUPPORTED_FORMATS`) into one standalone section per message, or
    per short question + its answer (see the module docstring, Short messages).

    Args:
        text: the decoded file (JSON, or JSON Lines of conversation objects).
        doc_id, source_path, lang: identity of the document.
        cfg: ``sources.conversation`` (``min_message_chars`` in characters, ``thinking``, ``keep_roles``).

    Returns:
        ``(document, problems)``; problems are ``(location, reason)`` pairs (quarantined parts). ``document.meta``
        counts ``conversations``, ``messages`` (read), ``messages_chunked``, ``messages_joined`` (short messages
        chunked with a neighbour), ``messages_left_out`` (other roles, empty or hidden), ``messages_quarantined``
        (``messages == messages_chunked + messages_left_out + messages_quarantined``), ``left_out_reasons`` (the
        left-out messages grouped by reason, :func:`~heritage_pipeline.sources.accounting.left_out_groups`), and
        ``formats``. A JSON Lines line that is not a JSON object is a problem of its own (``line N``).

    Raises:
        ParseError: not JSON/JSONL, not a conversation export (the message names the supported formats), or no
            usable conversation at all.
    """
    raw, shift = text, 0
    try:
        data = loads_with_spans(text)
    except JSONSpanError as exc:
        as_array = _jsonl_as_array(text)
        if as_array is None:
            raise ParseError(str(exc)) from None
        (raw, bad_lines), shift = as_array, 1
        data = loads_with_spans(raw)
    else:
        bad_lines = []
    convs = iter_conversations(data)
    reader = _MessageReader(raw, cfg.thinking == "keep")
    problems = reader.problems
    problems += bad_lines
    skipped: list[str] = []
    groups: list[tuple[str, str, list[_Turn]]] = []  # (conversation id, name, turns of one section)
    usable = 0
    n_read = n_left_out = n_bad = 0
    left_items: list[tuple[str, str]] = []
    formats: dict[str, int] = {}
    for ci, conv in enumerate(convs):
        if not isinstance(conv, dict):
            problems.append((f"conversation[{ci}]", f"is {value_kind(conv)}, not an object"))
            continue
        cid = str(conv.get("uuid") or conv.get("conversation_id") or conv.get("id") or conv.get("sessionId")
                  or f"conversation-{ci}")
        name = str(conv.get("name") or conv.get("title") or "").strip() or cid
        turns, fmt, read, left_out, bad = _turns(conv, cid, reader, cfg, raw, skipped, problems, left_items)
        if fmt is None:
            continue
        usable += 1
        formats[fmt] = formats.get(fmt, 0) + 1
        n_read += read
        n_left_out += left_out
        n_bad += bad
        for g in _group_short(turns, cfg.min_message_chars, cfg.question_max_chars):
            groups.append((cid, name, g))
    if not usable:
        raise ParseError("; ".join(f"{loc} {why}" for loc, why in problems) or "no conversation in the file")
    if reader.ignored_types:
        skipped.append("content blocks of unknown type ignored: " +
                       ", ".join(f"{k} ({v})" for k, v in sorted(reader.ignored_types.items())))
    builder = DerivedTextBuilder()
    sections: list[Section] = []
    n_chunked = n_joined = 0
    for cid, name, turns in groups:
        first = len(builder.blocks)
        union = (min(t.span[0] for t in turns) - shift, max(t.span[1] for t in turns) - shift)
        in_order = all(turns[k].span[0] >= turns[k - 1].span[1] for k in range(1, len(turns)))
        for t in turns:
            m = Message(cid, name, t.mid, 0, t.sender, t.created, t.built.text,
                        array("q", (o - shift for o in t.built.offs)) if shift else t.built.offs,
                        (t.span[0] - shift, t.span[1] - shift))
            _add_message_blocks(builder, m, None if in_order else union)
        if len(builder.blocks) == first:
            continue
        n_chunked += len(turns)
        n_joined += len(turns) - 1 if len(turns) > 1 else 0
        head, last = turns[0], turns[-1]
        indexes = [t.pos for t in turns]
        label = f"message {head.pos} ({head.sender})" + (
            "".join(f" + {t.pos} ({t.sender})" for t in turns[1:]))
        extra = {"message_id": head.mid}
        if len(turns) > 1:
            extra["message_indexes"] = ", ".join(map(str, indexes))
            extra["message_ids"] = ", ".join(t.mid for t in turns)
            extra["senders"] = ", ".join(t.sender for t in turns)
        sections.append(
            Section(
                anchors=[name, label],
                level=1,
                first=first,
                last=len(builder.blocks),
                meta={
                    "source_id": cid,
                    "conversation_id": cid,
                    "message_index": head.pos,
                    "sender": last.sender if len(turns) > 1 else head.sender,
                    "created_at": head.created,
                    "primary_class": "observation",
                    "extra": extra,
                },
                standalone=True,
                key=f"{cid}/{head.mid}",
            )
        )
    doc = ParsedDocument(doc_id=doc_id, source_path=source_path, source_type="conversation", lang=lang,
                         text=builder.text, blocks=builder.blocks, sections=sections, text_is_raw=False,
                         skipped=skipped,
                         meta={"conversations": usable, "messages": n_read, "messages_chunked": n_chunked,
                               "messages_joined": n_joined, "messages_left_out": n_left_out,
                               "messages_quarantined": n_bad,
                               "left_out_reasons": left_out_groups(left_items),
                               "formats": ", ".join(f"{k} ({v})" for k, v in sorted(formats.items()))})
    return doc, problems


def _turns(conv: dict, cid: str, reader: "_MessageReader", cfg: ConversationSourceConfig, raw: str,
           skipped: list[str], problems: list[tuple[str, str]],
           left_items: list[tuple[str, str]]) -> tuple[list[_Turn], str | None, int, int, int]:
    """The kept turns of one conversation in order, its format (None when it has no recognisable messages: a
    problem is recorded), and the numbers of messages read, left out (role, empty, hidden; each also appended to
    ``left_items`` as ``(location, reason)``) and quarantined (not an object, or unusable content):
    read = kept + left out + quarantined."""

    def leave(loc: str, why: str) -> None:
        skipped.append(f"{loc}: {why}")
        left_items.append((loc, why))

    where = f"conversation {cid}"
    if "chat_messages" in conv:
        fmt, msgs = "claude", conv.get("chat_messages")
    elif "mapping" in conv:
        fmt, msgs = "chatgpt", conv.get("mapping")
    elif "messages" in conv:
        fmt, msgs = "messages", conv.get("messages")
    elif isinstance(conv.get("conversations"), list):
        fmt, msgs = "sharegpt", conv.get("conversations")
    else:
        problems.append((where, "has no messages: none of 'chat_messages' (Claude), 'mapping' (ChatGPT), 'messages' "
                                "or 'conversations' (ShareGPT)"))
        return [], None, 0, 0, 0
    bad = 0
    key = {"claude": "chat_messages", "chatgpt": "mapping", "messages": "messages", "sharegpt": "conversations"}[fmt]
    if fmt == "chatgpt":
        if not isinstance(msgs, dict):
            problems.append((where, f"'mapping' is {value_kind(msgs)}, not an object"))
            return [], None, 0, 0, 0
        msgs._current_node = conv.get("current_node")  # type: ignore[attr-defined]
        entries = [(p, nid, m) for p, nid, m in _chatgpt_nodes(msgs)]
    else:
        if not isinstance(msgs, list):
            problems.append((where, f"'{key}' is {value_kind(msgs)}, not an array"))
            return [], None, 0, 0, 0
        valid: list[tuple[int, SpannedDict]] = []
        for pos, msg in enumerate(msgs):
            if not isinstance(msg, dict):
                problems.append((f"{where} message[{pos}]", f"is {value_kind(msg)}, not an object"))
                bad += 1
            else:
                valid.append((pos, msg))
        ordered = _order(valid, "created_at") if fmt == "claude" else valid
        entries = [(p, str(m.get("uuid") or m.get("id") or f"msg-{p}"), m) for p, m in ordered]
    if not entries:
        skipped.append(f"{where}: no messages")
    turns: list[_Turn] = []
    seen_ids: set[str] = set()
    read, left_out = bad, 0
    for rank, (pos, mid, msg) in enumerate(entries):
        if msg is None:
            continue  # a ChatGPT root node without a message
        read += 1
        if not isinstance(msg, dict):
            problems.append((f"{where} message {mid}", f"is {value_kind(msg)}, not an object"))
            bad += 1
            continue
        if mid in seen_ids:
            mid = f"{mid}-{pos}"
        seen_ids.add(mid)
        sender = _role(msg)
        if not _kept_role(sender, cfg):
            left_out += 1
            leave(f"{where} message {mid}", f"role {sender!r} left out (not an asking or answering role; "
                                            "sources.conversation.keep_roles keeps it)")
            continue
        if fmt == "chatgpt":
            meta = msg.get("metadata")
            if isinstance(meta, dict) and meta.get("is_visually_hidden_from_conversation"):
                left_out += 1
                leave(f"{where} message {mid}", "hidden in the conversation")
                continue
            built = _chatgpt_text(reader, raw, msg)
        elif fmt == "claude" and "text" not in msg and "content" not in msg and isinstance(msg.get("text_message"), dict):
            built = _Text()  # a claude.ai variant: the text under text_message.content
            if isinstance(msg["text_message"].get("content"), str):
                built.add(*_literal(raw, msg["text_message"], "content"))
        elif fmt == "sharegpt" and "value" in msg:
            built = _Text()
            if isinstance(msg.get("value"), str):
                built.add(*_literal(raw, msg, "value"))
        else:
            built = reader.read(msg, f"{where} message {mid}")
        if built is None:
            bad += 1
            continue
        if not built.text.strip():
            left_out += 1
            leave(f"{where} message {mid}", "empty message")
            continue
        span = msg.span if isinstance(msg, SpannedDict) else (0, len(raw))
        created = msg.get("created_at") or msg.get("create_time") or msg.get("timestamp")
        turns.append(_Turn(rank, mid, sender, str(created) if isinstance(created, (str, int, float)) and
                           not isinstance(created, bool) and created != "" else None, built, span))
    return turns, fmt, read, left_out, bad


def _chatgpt_text(reader: "_MessageReader", raw: str, msg: SpannedDict) -> "_Text":
    """Text of a ChatGPT message: string ``parts`` (and dict parts with ``text``), ``text`` (code fenced with its
    language), ``thoughts`` only with ``thinking: keep``; image pointers and other parts carry no text."""
    out = _Text()
    content = msg.get("content")
    if not isinstance(content, dict):
        if isinstance(content, str):
            out.add(*_literal(raw, msg, "content"))
        return out
    ctype = content.get("content_type")
    at = getattr(content, "span", (0, 0))[0]
    parts = content.get("parts")
    if isinstance(parts, list):
        spans = getattr(parts, "item_spans", None)
        for i, p in enumerate(parts):
            if isinstance(p, str) and p.strip():
                out.sep(at)
                if spans and raw[spans[i][0]:spans[i][0] + 1] == '"':
                    out.add(*string_offsets(raw, spans[i][0]))
                else:
                    out.add(p, at)
            elif isinstance(p, dict) and isinstance(p.get("text"), str) and p["text"].strip():
                out.sep(at)
                out.add(*_literal(raw, p, "text"))
    elif ctype == "thoughts":
        if reader.keep_thinking:
            for t in content.get("thoughts") or []:
                if isinstance(t, dict) and isinstance(t.get("content"), str) and t["content"].strip():
                    out.sep(at)
                    out.add("[thinking] ", at)
                    out.add(*_literal(raw, t, "content"))
    elif isinstance(content.get("text"), str) and content["text"].strip():
        if ctype == "code":
            lang = content.get("language")
            out.add(f"```{lang if isinstance(lang, str) and lang != 'unknown' else ''}\n", at)
            out.add(*_literal(raw, content, "text"))
            out.add("\n```", at)
        else:
            out.add(*_literal(raw, content, "text"))
    elif ctype not in (None, "text", "multimodal_text", "reasoning_recap"):
        reader.ignored_types[f"chatgpt:{ctype}"] = reader.ignored_types.get(f"chatgpt:{ctype}", 0) + 1
    return out


def _group_short(turns: list[_Turn], min_chars: int, question_max_chars: int = 0) -> list[list[_Turn]]:
    """Sections of a conversation's turns: a human turn under ``min_chars`` characters (stripped) waits for the next
    turn and opens its section (several short questions in a row all do); a short non-human turn joins the section
    before it (a short answer stays with its question); a short question at the end is a section of its own. So no
    message is dropped for its length.

    A human turn of ``min_chars`` up to ``question_max_chars`` characters that is followed by a non-human turn opens
    that answer's section too (a question is retrieved beside its answer: a user searching for the answer finds the
    question with it, and an answer alone often says "Yes, use the change event"); followed by another human turn
    or at the end it stays a section of its own. ``question_max_chars`` 0 switches this off.

    Args:
        turns: the conversation's turns in order.
        min_chars: ``sources.conversation.min_message_chars`` (characters).
        question_max_chars: ``sources.conversation.question_max_chars`` (characters).
    Returns:
        The turns grouped into sections, in order; every turn in exactly one group.
    """
    out: list[list[_Turn]] = []
    pending: list[_Turn] = []
    for k, t in enumerate(turns):
        n = len(t.built.text.strip())
        short = n < min_chars
        human = role_side(t.sender) == "human"
        answer_next = k + 1 < len(turns) and role_side(turns[k + 1].sender) != "human"
        if human and (short or (n <= question_max_chars and answer_next)):
            pending.append(t)
            continue
        if short and not pending and out:
            out[-1].append(t)
        else:
            out.append(pending + [t])
            pending = []
    if pending:
        out.append(pending)
    return out


def _add_message_blocks(builder: DerivedTextBuilder, m: Message, span: tuple[int, int] | None = None) -> None:
    """Split a message into Markdown blocks and add them with their raw spans (see module docstring, Spans); with
    ``span``, every block gets that span (the messages of one section are not in file order)."""
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
        if span is not None:
            rs, re_ = span
        elif not monotonic:
            rs, re_ = m.span
        idx = builder.add(b.kind, body[b.start : e], rs, re_, level=b.level, title=b.title, info=b.info)
        if idx is not None and b.header_end > b.start:
            added = builder.blocks[idx]
            added.header_end = min(added.content_end, added.start + (b.header_end - b.start))
