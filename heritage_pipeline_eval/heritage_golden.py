"""Recipe of the heritage golden set ``data/golden/heritage/heritage.jsonl``: template questions (nl/en/fr/de) about
real registries, LinkML-style instance lists and pages of the shared corpus (``../shared/data``, including
``realworld``).

Question families:

- ``identifier``: "Which institution has the ISIL DE-3?" (ISIL or Wikidata id of a registry row);
- ``place_of_named``: "Where is <name> located?";
- ``type_in_place``: "Which libraries / museums are located in <place>?";
- ``visit``: opening hours and address of an institution, from a page.

Relevance is defined by record identity, never by the pipeline's column mapping: a registry row is its file plus its
physical line (``line``, 1-based) and that line's code-point range (``char_start``/``char_end`` in the file decoded
as UTF-8); an instance-list entity is its file plus the range of its YAML block; a page answer is its file plus the
range of the answer text. A retrieved chunk is relevant when it comes from that file and its span overlaps that
range (:func:`heritage_pipeline_eval.heritage_eval.is_relevant`). Relevant sets hold every row that answers (an ISIL
on several rows, several libraries of a city).

Held-out: ``heritage/isil_wikidata``, ``crd-api-sample`` and ``UnifiedOpenAccessArt`` rows were not looked at while
choosing the ranking rules (identifier/field tiers); ``cdvost2018``, ``OpenSourceInLibraries`` and the page are the
tuning files. ``heldout`` is stored per question.

Run: ``python -m heritage_pipeline_eval.heritage_golden [--data ../shared/data] [--out data/golden/heritage]``.
Fixed seed: the same files give the same set.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import random
import re
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

LANGS = ("nl", "en", "fr", "de")
SEED = 13
PER_FAMILY = 40  # questions per family and file (at most)

TEMPLATES = {
    "identifier": {"en": "Which institution has the ISIL {id}?", "de": "Welche Einrichtung hat die ISIL {id}?",
                   "fr": "Quelle institution a l'ISIL {id} ?", "nl": "Welke instelling heeft ISIL-code {id}?"},
    "identifier_wikidata": {"en": "Which library is Wikidata item {id}?", "de": "Welche Bibliothek ist das Wikidata-Objekt {id}?",
                            "fr": "Quelle bibliothèque est l'élément Wikidata {id} ?", "nl": "Welke bibliotheek is Wikidata-item {id}?"},
    "place_of_named": {"en": "Where is {name} located?", "de": "Wo befindet sich {name}?", "fr": "Où se trouve {name} ?",
                       "nl": "Waar is {name} gevestigd?"},
    "type_in_place_L": {"en": "Which libraries are located in {place}?", "de": "Welche Bibliotheken gibt es in {place}?",
                        "fr": "Quelles bibliothèques se trouvent à {place} ?", "nl": "Welke bibliotheken zijn er in {place}?"},
    "type_in_place_M": {"en": "Which museums are located in {place}?", "de": "Welche Museen gibt es in {place}?",
                        "fr": "Quels musées se trouvent à {place} ?", "nl": "Welke musea zijn er in {place}?"},
}


@dataclass(frozen=True)
class Registry:
    """How to read one registry file for the recipe (column positions, not names: two files have no header)."""

    path: str           # relative to the shared data root
    delimiter: str
    header: bool
    name: int
    place: int | None   # column of the settlement (None: no place questions)
    isil: int | None
    wikidata: int | None
    type_code: str      # custodian type of every row (the file is a list of libraries / museums)
    heldout: bool


REGISTRIES = (
    Registry("realworld/raw/csv_registry/cdvost2018/libraries.csv", ",", True, 0, 2, 3, 4, "L", False),
    Registry("realworld/raw/csv_registry/OpenSourceInLibraries/libraries.csv", ",", False, 2, 1, None, None, "L", False),
    Registry("realworld/raw/csv_registry/crd-api-sample/libraries.tsv", "\t", False, 3, None, 8, None, "L", True),
    Registry("heritage/isil_wikidata/wikidata_isil_lookup_sample.tsv", "\t", True, 1, None, 2, None, "L", True),
)
YAML_LISTS = (("realworld/raw/yaml_instance/UnifiedOpenAccessArt/data/museums.yml", True),)
PAGE = "realworld/raw/document/rockarch.org/collections/access-and-request-materials/index.md"
PAGE_FACTS = (  # (question per language, answer text in the page)
    ({"en": "When is the Rockefeller Archive Center reading room open?",
      "de": "Wann ist der Lesesaal des Rockefeller Archive Center geöffnet?",
      "fr": "Quels sont les horaires d'ouverture de la salle de lecture du Rockefeller Archive Center ?",
      "nl": "Wat zijn de openingstijden van de leeszaal van het Rockefeller Archive Center?"},
     "open Monday through Friday from 9:30 am to 5:00 pm"),
    ({"en": "What is the address of the Rockefeller Archive Center?", "de": "Welche Adresse hat das Rockefeller Archive Center?",
      "fr": "Quelle est l'adresse du Rockefeller Archive Center ?", "nl": "Wat is het adres van het Rockefeller Archive Center?"},
     "15 Dayton Avenue, Sleepy Hollow, New York 10591"),
    ({"en": "How do I book an appointment for the RAC reading room?",
      "de": "Wie reserviere ich einen Termin im Lesesaal des RAC?",
      "fr": "Comment réserver un rendez-vous en salle de lecture du RAC ?",
      "nl": "Hoe reserveer ik een afspraak voor de leeszaal van het RAC?"},
     "please use the “Appointments” tab in your [RACcess](https://raccess.rockarch.org) account"),
)


def _lines(text: str) -> list[tuple[int, int, int, str]]:
    """(line number, char_start, char_end, line) of each physical line (newline excluded)."""
    out, pos = [], 0
    for n, line in enumerate(text.split("\n"), 1):
        out.append((n, pos, pos + len(line.rstrip("\r")), line.rstrip("\r")))
        pos += len(line) + 1
    return out


def registry_rows(data: Path, reg: Registry) -> list[dict]:
    """Rows of a registry with their identity: ``line``, ``char_start``, ``char_end`` and the fields (by position)."""
    text = (data / reg.path).read_text(encoding="utf-8")
    if text.startswith("\ufeff"):
        text = text[1:]
    rows = []
    for n, a, b, line in _lines(text)[1 if reg.header else 0:]:
        if not line.strip():
            continue
        fields = next(csv.reader(io.StringIO(line), delimiter=reg.delimiter), [])
        rows.append({"line": n, "char_start": a, "char_end": b, "fields": [f.strip() for f in fields]})
    return rows


def _field(row: dict, i: int | None) -> str:
    return row["fields"][i] if i is not None and i < len(row["fields"]) else ""


def _rel(reg_path: str, row: dict) -> dict:
    return {"path": reg_path, "line": row["line"], "char_start": row["char_start"], "char_end": row["char_end"]}


def _place(reg: Registry, row: dict) -> str:
    return _field(row, reg.place)


def build(data: Path) -> list[dict]:
    """All questions of the set (deterministic for the same files).

    Args:
        data: the shared data root (``../shared/data``).
    Returns:
        Question dicts: ``qid, question, lang, family, source_type, source, heldout, relevant`` (list of
        ``{path, line?, char_start, char_end}``), ``answer`` (the name, code or text asked about).
    Raises:
        FileNotFoundError: a source file is missing.
    """
    rng = random.Random(SEED)
    out: list[dict] = []

    def add(family, tmpl, values, relevant, source, source_type, heldout, answer):
        lang = LANGS[len(out) % len(LANGS)]
        out.append({"qid": f"h{len(out):04d}", "question": TEMPLATES[tmpl][lang].format(**values) if tmpl else values[lang],
                    "lang": lang, "family": family, "source_type": source_type, "source": source, "heldout": heldout,
                    "relevant": relevant, "answer": answer})

    for reg in REGISTRIES:
        rows = registry_rows(data, reg)
        by_isil: dict[str, list[dict]] = {}
        by_name: dict[str, list[dict]] = {}
        by_place: dict[str, list[dict]] = {}
        for r in rows:
            if _field(r, reg.isil):
                by_isil.setdefault(_field(r, reg.isil), []).append(r)
            if _field(r, reg.name):
                by_name.setdefault(_field(r, reg.name), []).append(r)
            if _place(reg, r):
                by_place.setdefault(_place(reg, r), []).append(r)
        codes = sorted(c for c in by_isil if re.match(r"^[A-Z]{1,4}-\S+$", c))
        for code in rng.sample(codes, min(PER_FAMILY, len(codes))):
            add("identifier", "identifier", {"id": code}, [_rel(reg.path, r) for r in by_isil[code]], reg.path,
                "csv_registry", reg.heldout, code)
        if reg.wikidata is not None:
            qids = sorted({_field(r, reg.wikidata) for r in rows if re.match(r"^Q\d+$", _field(r, reg.wikidata))})
            for q in rng.sample(qids, min(PER_FAMILY // 2, len(qids))):
                add("identifier", "identifier_wikidata", {"id": q},
                    [_rel(reg.path, r) for r in rows if _field(r, reg.wikidata) == q], reg.path, "csv_registry",
                    reg.heldout, q)
        names = sorted(n for n, rs in by_name.items() if len(n) >= 6)
        for name in rng.sample(names, min(PER_FAMILY, len(names))):
            add("place_of_named", "place_of_named", {"name": name}, [_rel(reg.path, r) for r in by_name[name]],
                reg.path, "csv_registry", reg.heldout, name)
        places = sorted(by_place)
        for place in rng.sample(places, min(PER_FAMILY, len(places))):
            add("type_in_place", f"type_in_place_{reg.type_code}", {"place": place},
                [_rel(reg.path, r) for r in by_place[place]], reg.path, "csv_registry", reg.heldout, place)
    for path, heldout in YAML_LISTS:
        text = (data / path).read_text(encoding="utf-8")
        starts = [m.start() for m in re.finditer(r"(?m)^\s*- name:", text)] + [len(text)]
        blocks = []
        for a, b in zip(starts, starts[1:]):
            block = text[a:b]
            name = re.search(r"(?m)^\s*- name:\s*(.+)$", block)
            loc = re.search(r"(?m)^\s+location:\s*(.+)$", block)
            if name:
                blocks.append({"path": path, "char_start": a, "char_end": a + len(block.rstrip()), "name": name.group(1).strip().strip("'\""),
                               "place": loc.group(1).strip().strip("'\"").split(",")[0] if loc else ""})
        for bl in blocks:
            rel = {k: bl[k] for k in ("path", "char_start", "char_end")}
            add("place_of_named", "place_of_named", {"name": bl["name"]}, [rel], path, "yaml_instance", heldout, bl["name"])
        for place in sorted({bl["place"] for bl in blocks if bl["place"]}):
            add("type_in_place", "type_in_place_M", {"place": place},
                [{k: bl[k] for k in ("path", "char_start", "char_end")} for bl in blocks if bl["place"] == place],
                path, "yaml_instance", heldout, place)
    # the same code or name in another registry of the set answers the question too (DE-3 is in cdvost2018 and in
    # the Wikidata ISIL lookup): relevant holds the rows of every registry
    index: dict[tuple[str, str], list[dict]] = defaultdict(list)
    for reg in REGISTRIES:
        for r in registry_rows(data, reg):
            for kind, col in (("identifier", reg.isil), ("identifier", reg.wikidata), ("place_of_named", reg.name)):
                if _field(r, col):
                    index[(kind, _field(r, col))].append(_rel(reg.path, r))
    for q in out:
        if q["source_type"] == "csv_registry" and (q["family"], q["answer"]) in index:
            extra = [r for r in index[(q["family"], q["answer"])] if r not in q["relevant"]]
            q["relevant"] = q["relevant"] + extra
    page = (data / PAGE).read_text(encoding="utf-8")
    for questions, answer in PAGE_FACTS:
        spans = [{"path": PAGE, "char_start": m.start(), "char_end": m.end()} for m in re.finditer(re.escape(answer), page)]
        if not spans:
            raise ValueError(f"{PAGE}: answer text {answer!r} not found")
        for lang in LANGS:
            out.append({"qid": f"h{len(out):04d}", "question": questions[lang], "lang": lang, "family": "visit",
                        "source_type": "document", "source": PAGE, "heldout": False, "relevant": spans, "answer": answer})
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=str(Path(__file__).resolve().parents[2] / "shared" / "data"),
                    help="shared data root (default: ../shared/data next to the repository)")
    ap.add_argument("--out", default=str(Path(__file__).resolve().parents[1] / "data" / "golden" / "heritage"),
                    help="output folder (default: data/golden/heritage)")
    args = ap.parse_args(argv)
    qs = build(Path(args.data))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "heritage.jsonl", "w", encoding="utf-8") as fh:
        for q in qs:
            fh.write(json.dumps(q, ensure_ascii=False) + "\n")
    counts: dict[tuple, int] = {}
    for q in qs:
        counts[(q["family"], q["heldout"])] = counts.get((q["family"], q["heldout"]), 0) + 1
    print(f"{len(qs)} questions -> {out / 'heritage.jsonl'}; (family, held-out): {dict(sorted(counts.items()))}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
