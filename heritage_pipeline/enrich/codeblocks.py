"""Code blocks in chunks: language, file path, FUNC / CLASS / API names, and a summary of over-long blocks.

What counts as a code block: a fenced block (```` ``` ```` or ``~~~``) in the chunk text, the continuation of a
fenced block split by the chunker (its opening fence line is repeated in ``meta.context_prefix``), and MkDocs /
FastAPI include directives ``{* ../../docs_src/app/tutorial001.py hl[3] *}`` (the code lives in another file: the
path and language are kept, there are no names to extract).

* language: the first word of the fence info string (```` ```Python title="main.py" ```` -> ``python``), else the
  file extension of the path (``.py`` -> ``python``);
* file path: a ``title="..."`` / ``file=`` attribute of the fence, an include directive's path, or a first-line
  comment naming a file (``# app/main.py``, ``// src/index.ts``);
* names (:func:`code_names`): for Python the ``ast`` module (``def`` -> FUNC, ``class`` -> CLASS, route
  decorators ``@app.get("/items/{id}")`` -> API ``GET /items/{id}``, calls of attributes of imported modules are
  not collected); when Python fails to parse (a piece of a split block, a doctest, shell) or for other languages,
  line-anchored regular expressions for ``def``/``function``/``fn``/``func``/``class``/``struct``/``interface``;
* summary (:func:`summarize_code`): for a block over ``max_tokens`` (600 cl100k tokens) the first
  lines plus the list of signature lines; it goes to ``meta.code_summary`` and never into the text (see
  :mod:`heritage_pipeline.enrich.tables` for why metadata and not the context prefix).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field

_FENCE_OPEN = re.compile(r"^[ \t]*(`{3,}|~{3,})[ \t]*([^\n`]*)$", re.M)
_INCLUDE = re.compile(r"\{\*\s*([^\s*]+)([^*]*)\*\}")
_ATTR_PATH = re.compile(r"""\b(?:title|file|filename|path)\s*=\s*["']?([^"'\s]+)""", re.I)
_COMMENT_PATH = re.compile(r"^\s*(?:#|//|--|;|/\*)\s*(?:file:\s*)?([\w./\\-]+\.[A-Za-z0-9]{1,6})\s*(?:\*/)?\s*$")
_EXT_LANG = {"py": "python", "pyi": "python", "js": "javascript", "mjs": "javascript", "ts": "typescript",
             "tsx": "typescript", "jsx": "javascript", "java": "java", "kt": "kotlin", "go": "go", "rs": "rust",
             "rb": "ruby", "php": "php", "cs": "csharp", "c": "c", "h": "c", "cpp": "cpp", "hpp": "cpp",
             "sh": "bash", "bash": "bash", "toml": "toml", "yaml": "yaml", "yml": "yaml", "json": "json",
             "sql": "sql", "html": "html", "css": "css", "md": "markdown", "r": "r", "swift": "swift"}
_LANG_ALIAS = {"py": "python", "python3": "python", "console": "bash", "shell": "bash", "sh": "bash", "js": "javascript",
               "ts": "typescript", "yml": "yaml", "pycon": "python"}
_HTTP = ("get", "post", "put", "delete", "patch", "options", "head", "trace", "websocket", "api_route")
# regex fallback (any language): definitions at the start of a line
_RX_FUNC = re.compile(r"^\s*(?:export\s+)?(?:pub(?:\([^)]*\))?\s+)?(?:async\s+)?(?:def|function|fn|func|fun|sub)\s+"
                      r"(?:\([^)]*\)\s*)?([A-Za-z_$][\w$]*)", re.M)
_RX_ARROW = re.compile(r"^\s*(?:export\s+)?(?:const|let|var)\s+([A-Za-z_$][\w$]*)\s*=\s*(?:async\s*)?\([^)]*\)\s*=>", re.M)
_RX_CLASS = re.compile(r"^\s*(?:export\s+)?(?:pub\s+)?(?:abstract\s+|final\s+|data\s+)?(?:class|struct|interface|trait|enum)\s+"
                       r"([A-Za-z_$][\w$]*)", re.M)
_RX_ROUTE = re.compile(r"@\w+\.(get|post|put|delete|patch|options|head|trace|websocket|api_route)\(\s*[\"']([^\"']+)[\"']", re.I)
_RX_HTTP_LINE = re.compile(r"^\s*(GET|POST|PUT|DELETE|PATCH|HEAD|OPTIONS)\s+(/[\w/{}.:\-]*)", re.M)
_SIGNATURE = re.compile(r"^\s*(?:@\w[\w.]*(?:\(.*\))?|(?:export\s+)?(?:pub\s+)?(?:async\s+)?(?:def|class|function|fn|func|"
                        r"interface|struct|trait|enum)\b.*)$")


@dataclass
class CodeBlock:
    """One code block (or piece) of a chunk: ``language`` ('' when unknown), ``path`` ('' when unknown),
    ``code`` (the lines inside the fences; '' for an include directive), ``continued`` (a split piece)."""

    language: str
    path: str
    code: str
    continued: bool = False
    include: bool = False


@dataclass
class CodeMeta:
    languages: list[str] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)
    names: dict[str, list[str]] = field(default_factory=dict)
    summary: str | None = None


def _norm_lang(word: str) -> str:
    w = word.strip().strip("{}.").lower()
    return _LANG_ALIAS.get(w, w)


def _lang_from_path(path: str) -> str:
    ext = path.rsplit(".", 1)[-1].lower() if "." in path else ""
    return _EXT_LANG.get(ext, "")


def _parse_info(info: str) -> tuple[str, str]:
    """(language, path) from a fence info string."""
    info = info.strip()
    lang = ""
    if info and not re.match(r"^[\w+#.-]*=", info):
        lang = _norm_lang(re.split(r"[\s{]", info, maxsplit=1)[0])
    m = _ATTR_PATH.search(info)
    path = m.group(1) if m else ""
    if not lang and path:
        lang = _lang_from_path(path)
    return lang, path


def code_blocks(text: str, context_prefix: str = "") -> list[CodeBlock]:
    """Code blocks of a chunk in order (module docstring); a leading piece of a split block is recognised by the
    fence line the chunker repeated at the end of ``context_prefix``."""
    out: list[CodeBlock] = []
    pos = 0
    last_prefix_line = context_prefix.rstrip().rsplit("\n", 1)[-1] if context_prefix else ""
    m_prefix = _FENCE_OPEN.match(last_prefix_line) if last_prefix_line else None
    if m_prefix and not _FENCE_OPEN.match(text.lstrip("\n").split("\n", 1)[0] if text else ""):
        fence = m_prefix.group(1)
        close = re.search(rf"^[ \t]*{re.escape(fence[0])}{{{len(fence)},}}[ \t]*$", text, re.M)
        end = close.start() if close else len(text)
        lang, path = _parse_info(m_prefix.group(2))
        out.append(_with_comment_path(CodeBlock(lang, path, text[:end], continued=True)))
        pos = close.end() if close else len(text)
    while True:
        m = _FENCE_OPEN.search(text, pos)
        if not m:
            break
        fence = m.group(1)
        close = re.compile(rf"^[ \t]*{re.escape(fence[0])}{{{len(fence)},}}[ \t]*$", re.M).search(text, m.end())
        body_start = m.end() + 1
        end = close.start() if close else len(text)
        lang, path = _parse_info(m.group(2))
        out.append(_with_comment_path(CodeBlock(lang, path, text[body_start:end])))
        pos = close.end() if close else len(text)
    for m in _INCLUDE.finditer(text):
        path = m.group(1)
        out.append(CodeBlock(_lang_from_path(path), path, "", include=True))
    return out


def _with_comment_path(b: CodeBlock) -> CodeBlock:
    if not b.path:
        first = b.code.lstrip("\n").split("\n", 1)[0]
        m = _COMMENT_PATH.match(first)
        if m:
            b.path = m.group(1)
            if not b.language:
                b.language = _lang_from_path(b.path)
    return b


def code_names(code: str, language: str = "") -> dict[str, list[str]]:
    """``{"FUNC": [...], "CLASS": [...], "API": [...]}`` defined in a code snippet (names deduplicated, in order).

    API entries are ``"<METHOD> <path>"`` for route decorators and HTTP request lines. Python is parsed with
    ``ast`` when possible (after removing doctest ``>>>`` prompts); otherwise regular expressions are used.
    """
    out: dict[str, list[str]] = {"FUNC": [], "CLASS": [], "API": []}

    def add(label: str, name: str) -> None:
        if name and name not in out[label]:
            out[label].append(name)

    tree = None
    if language in ("python", "pycon", "") and code.strip():
        src = "\n".join(ln[4:] if ln.startswith((">>> ", "... ")) else ln for ln in code.splitlines())
        try:
            tree = ast.parse(src)
        except (SyntaxError, ValueError):
            tree = None
    if tree is not None:
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                add("FUNC", node.name)
                for d in node.decorator_list:
                    if isinstance(d, ast.Call) and isinstance(d.func, ast.Attribute) and d.func.attr in _HTTP \
                            and d.args and isinstance(d.args[0], ast.Constant) and isinstance(d.args[0].value, str):
                        add("API", f"{d.func.attr.upper()} {d.args[0].value}")
            elif isinstance(node, ast.ClassDef):
                add("CLASS", node.name)
    else:
        for m in _RX_FUNC.finditer(code):
            add("FUNC", m.group(1))
        for m in _RX_ARROW.finditer(code):
            add("FUNC", m.group(1))
        for m in _RX_CLASS.finditer(code):
            add("CLASS", m.group(1))
        for m in _RX_ROUTE.finditer(code):
            add("API", f"{m.group(1).upper()} {m.group(2)}")
    for m in _RX_HTTP_LINE.finditer(code):
        add("API", f"{m.group(1)} {m.group(2)}")
    return {k: v for k, v in out.items() if v}


def summarize_code(b: CodeBlock, first_lines: int = 6, max_signatures: int = 30) -> str:
    """First ``first_lines`` non-blank lines of a block, then its signature lines (decorators, def/class/function/
    fn/func/struct/... lines) as a list; prefixed with the language and path when known."""
    lines = [ln.rstrip() for ln in b.code.splitlines()]
    head = [ln for ln in lines if ln.strip()][:first_lines]
    sigs = [ln.strip() for ln in lines if _SIGNATURE.match(ln)]
    label = " ".join(x for x in (b.language, b.path) if x) or "code"
    parts = [f"[{label}{' (continued)' if b.continued else ''}, {len(lines)} lines]", *head]
    if sigs:
        shown = sigs[:max_signatures]
        more = f" (+{len(sigs) - len(shown)} more)" if len(sigs) > len(shown) else ""
        parts.append("Signatures" + more + ":")
        parts += [f"- {s}" for s in shown]
    return "\n".join(parts)


def code_meta(text: str, context_prefix: str = "", *, count_tokens=None, max_tokens: int = 600) -> CodeMeta:
    """Languages, paths, names and (for blocks over ``max_tokens`` cl100k tokens, counted with ``count_tokens``;
    over 60 lines when no counter is given) a summary of the code blocks of one chunk."""
    meta = CodeMeta()
    summaries = []
    for b in code_blocks(text, context_prefix):
        if b.language and b.language not in meta.languages:
            meta.languages.append(b.language)
        if b.path and b.path not in meta.paths:
            meta.paths.append(b.path)
        for label, names in code_names(b.code, b.language).items():
            bucket = meta.names.setdefault(label, [])
            bucket.extend(n for n in names if n not in bucket)
        too_long = count_tokens(b.code) > max_tokens if count_tokens else len(b.code.splitlines()) > 60
        if b.code and too_long:
            summaries.append(summarize_code(b))
    meta.summary = "\n\n".join(summaries) if summaries else None
    return meta
