"""Language identification accuracy on documents whose language is known, lingua vs py3langid.

Data (read-only, /work/shared/data): golden/{en,de,fr}/docs/*.md (XQuAD en/de, PIAF fr) and
faq/gbif_grscicoll/zh/faq.md, which sits in a "zh" folder but is English.

Levels:
* document: :func:`heritage_pipeline.enrich.langid.detect_document_language` style, i.e. the whole document's segments
  (paragraphs) weighted by length, for each backend;
* paragraph: every blank-line-separated paragraph with at least MIN letters (headings included), expected = the
  document's language (a few paragraphs are genuinely in another language, e.g. an English film title heading in
  a French article: they count as errors for every backend alike);
* short: the first 60 characters of each paragraph (short-text robustness);
* chunk rule: :func:`heritage_pipeline.enrich.langid.detect_chunk_language` on each paragraph with the *detected*
  document language as the fallback (what ``meta.lang`` gets in the pipeline);
* switch: the same rule with a *wrong* document language (en->fr, fr->de, de->en), i.e. a paragraph embedded in
  a document of another language: how often the chunk is still relabelled to its true language.

Usage: python -m heritage_pipeline_eval.langid [--shared /work/shared/data]
"""

from __future__ import annotations

import argparse
import re
import time
from collections import Counter
from pathlib import Path

from heritage_pipeline.enrich import langid

MIN_LETTERS = 20
_OTHER = {"en": "fr", "fr": "de", "de": "en"}


def paragraphs(text: str) -> list[str]:
    body = re.sub(r"^---\n.*?\n---\n", "", text, flags=re.S)  # front matter
    paras = [p.strip() for p in re.split(r"\n\s*\n", body)]
    return [p for p in paras if len(re.sub(r"[\W\d_]+", "", langid.strip_markup(p))) >= MIN_LETTERS]


def load(shared: Path) -> list[tuple[str, str, str]]:
    """(name, expected language, text) per document."""
    docs = []
    for lang in ("en", "de", "fr"):
        for p in sorted((shared / "golden" / lang / "docs").glob("*.md")):
            docs.append((f"golden/{lang}/{p.name}", lang, p.read_text(encoding="utf-8")))
    zh = shared / "faq" / "gbif_grscicoll" / "zh" / "faq.md"
    docs.append(("faq/gbif_grscicoll/zh/faq.md", "en", zh.read_text(encoding="utf-8")))
    return docs


def _rss_mb() -> float:
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--shared", default=str(Path(__file__).resolve().parents[2] / "shared" / "data"))
    args = ap.parse_args()
    docs = load(Path(args.shared))
    backends = langid.BACKENDS
    print(f"{len(docs)} documents; backends: {', '.join(backends)}")
    for name in backends:
        rss0 = _rss_mb()
        t0 = time.perf_counter()
        try:
            det = langid.get_detector(name)
        except ImportError as exc:
            print(f"\n== {name}: not installed ({exc})")
            continue
        det.detect("warm up the models with a short English sentence")
        load_s = time.perf_counter() - t0
        rss = _rss_mb() - rss0
        res = {"document": Counter(), "paragraph": Counter(), "short": Counter(), "chunk rule": Counter(), "switch": Counter()}
        errors: Counter[tuple[str, str]] = Counter()
        per_lang: dict[str, Counter] = {}
        t0 = time.perf_counter()
        n_calls = 0
        for doc_name, expected, text in docs:
            paras = paragraphs(text)
            got = langid.detect_document_language(paras, backend=name)
            res["document"]["ok" if got == expected else "bad"] += 1
            if got != expected:
                errors[(doc_name, got)] += 1
            for p in paras:
                rule = langid.detect_chunk_language(p, got, backend=name)
                res["chunk rule"]["ok" if rule == expected else "bad"] += 1
                foreign = langid.detect_chunk_language(p, _OTHER[expected], backend=name)
                res["switch"]["ok" if foreign == expected else "bad"] += 1
                lang, _ = det.detect(p)
                n_calls += 1
                ok = lang == expected
                res["paragraph"]["ok" if ok else "bad"] += 1
                per_lang.setdefault(expected, Counter())["ok" if ok else "bad"] += 1
                lang_s, _ = det.detect(p[:60])
                n_calls += 1
                res["short"]["ok" if lang_s == expected else "bad"] += 1
        dt = time.perf_counter() - t0
        print(f"\n== {name}  (load + first call {load_s:.2f} s, +{rss:.0f} MB peak RSS; {n_calls} calls in {dt:.2f} s)")
        for level, c in res.items():
            n = c["ok"] + c["bad"]
            print(f"  {level:9s} accuracy {c['ok']}/{n} = {c['ok'] / n:.4f}")
        for lang, c in sorted(per_lang.items()):
            n = c["ok"] + c["bad"]
            print(f"  paragraph[{lang}] {c['ok']}/{n} = {c['ok'] / n:.4f}")
        for (doc_name, got), k in errors.items():
            print(f"  document error: {doc_name} -> {got}")


if __name__ == "__main__":
    main()
