"""Light rule-based NER: ``{label: [names]}`` for ORG, PRODUCT, LAW, API, CLASS, FUNC (:func:`simple_ner`).
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict

import regex

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
    attributes never count), character entities decoded.

    Deliberately not :func:`heritage_pipeline.core.text.strip_markup`: the API rule reads web-API URLs
    (``https://api.…``), which that stripper removes, and the name rules need entities decoded and tags removed
    without a space (``<b>Rijks</b>museum`` stays one word)."""
    import html

    out = _SCRIPT.sub(" ", strip_markup_code(text))
    out = _TAGS.sub("", out)
    return html.unescape(out) if "&" in out else out


def strip_markup_code(text: str) -> str:
    return re.sub(r"^(`{3,}|~{3,}).*?^\1[ \t]*$", " ", text, flags=re.S | re.M)


def simple_ner(text: str, keep: list[str] | tuple[str, ...] = tuple(LABELS), context_prefix: str = "",
               lang: str = "und") -> dict[str, list[str]]:
    """Rule-based entities ``{label: [names]}`` (labels in ``keep`` only; names deduplicated, in text order).

    Rules (measured on data/eval/ner, see ``heritage_pipeline_eval/ner.py``; no gazetteer of names):

    * LAW: article references with lists and ranges (``article L. 211-1``, ``articles 1112-1 et 1143``,
      ``articles L. 123-1 à L. 123-3``), numbered acts (``loi n° 2016-925 du 7 juillet 2016``, ``ordonnance n° ...``,
      ``décret n° ...``) and codes (``code civil``, ``Code du patrimoine``), read on the text without HTML tags.
    * FUNC / CLASS / API from code: ``def``/``class`` and other definitions in fenced blocks (also pieces of split
      blocks) through :mod:`heritage_pipeline.enrich.codeblocks`; route decorators and ``GET /path`` lines -> API
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
    # Each pattern below runs only when the literal it cannot match without is in the text (same result; a registry
    # row of `slot: value` lines has none of them, and NER is a tenth of a millisecond per row at 100,000 rows).
    fenced = "```" in text or "~~~" in text
    for block in (re.findall(r"^(?:`{3,}|~{3,})[^\n]*\n(.*?)^(?:`{3,}|~{3,})", text, flags=re.S | re.M) if fenced else ()):
        m = _PATH_LINE.fullmatch(block.strip()) if block.strip().count("\n") == 0 else None
        if m and len(m.group(1)) > 1:
            add("API", m.group(1))
    prose = ner_prose(text)
    for m in _LAW.finditer(prose):
        add("LAW", m.group())
    ticks = "`" in prose
    for m in (_INLINE_CODE.finditer(prose) if ticks else ()):
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
    for m in (_API_NAMED.finditer(prose) if "API" in prose or "lookup service" in prose else ()):
        add("API", f"{m.group(1)} {m.group(2)}")
    for m in (_API_URL.finditer(prose) if "http" in prose else ()):
        add("API", m.group().rstrip(".,;"))
    acronyms: dict[str, str] = {}
    for m in (_ACRONYM_DEF.finditer(prose) if "(" in prose else ()):
        long_form, acr = m.group(1), m.group(2)
        label = "ORG" if _ORG_WORDS.search(long_form) else "PRODUCT"
        add(label, long_form)
        add(label, acr)
        acronyms[acr] = label
    for m in _ORG_FR.finditer(prose):
        name = m.group(1)
        if name[:1].isupper():
            add("ORG", name)
    names_prose = _INLINE_CODE.sub(" ", prose) if ticks else prose  # identifiers in inline code are handled above, not as names
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
    for rx, needs in ((_BOLD, "**"), (_LINK_TEXT, "](")):
        for m in (rx.finditer(names_prose) if needs in names_prose else ()):
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


def extract_entities(text: str, keep=tuple(LABELS), context_prefix: str = "", lang: str = "und") -> dict[str, list[str]]:
    """:func:`simple_ner` (the configured rule set); the entry point measured by ``heritage_pipeline_eval/ner.py``."""
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
