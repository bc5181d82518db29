"""``heritage-pipeline ablate``: the size x overlap grid on golden sets -> report.
"""

from __future__ import annotations

import argparse
import logging
import time
from pathlib import Path

from heritage_pipeline.core.config import (
    load_chunking_config,
    load_pipeline_config,
)

from .console import ProgressDisplay, console, err, quiet_output
from .run import recommendation_lines


# --------------------------------------------------------------------------------------------------------- ablate
def cmd_ablate(args: argparse.Namespace) -> int:
    from heritage_pipeline.core.storage import OutputLayout
    from heritage_pipeline.embed.cache import EmbeddingCache
    from heritage_pipeline.embed.embedders import make_embedder
    from heritage_pipeline_eval.ablation import default_distractors, distractor_docs, run_ablation
    from heritage_pipeline_eval.metrics import load_golden

    cfg = load_chunking_config(args.config)
    pcfg = load_pipeline_config(args.pipeline_config)
    update: dict = {"max_questions_per_language": args.max_questions}
    for key in ("modes", "sizes", "overlaps", "retrievers"):
        value = getattr(args, key)
        if value:
            cast = float if key == "overlaps" else int if key == "sizes" else str
            update[key] = [cast(v) for v in value.split(",") if v]
    if args.distractor_chars is not None:
        update["distractor_chars"] = args.distractor_chars
    if args.compare_embedders and not pcfg.ablation.embedder_candidates:
        from heritage_pipeline_eval.bench.embed import CANDIDATES

        update["embedder_candidates"] = [c.model_dump() for c in CANDIDATES.values()]
    abl = type(pcfg.ablation).model_validate({**pcfg.ablation.model_dump(), **update})
    golden: dict[str, Path] = {}
    for g in args.golden:
        qs, _ = load_golden(g, limit=1)
        if not qs:
            err.print(f"{g}: golden set is empty")
            return 2
        golden[qs[0].lang] = Path(g)
    distractors = {}
    for lang, folder in golden.items():
        if args.distractors:
            root = Path(args.distractors)
            if not root.is_dir():
                err.print(f"{root}: --distractors is not a folder")
                return 2
            distractors[lang] = distractor_docs(sorted(root.rglob("*.md")), None, None, root)
        else:  # a fixed sample of the data folder's other corpora of this language (<golden>/../..)
            distractors[lang] = default_distractors(folder.resolve().parent.parent, lang, abl.distractor_chars,
                                                    abl.distractor_corpora, abl.distractor_max_file_chars)
        n_chars = sum(len(d.text) for d in distractors[lang])
        if distractors[lang]:
            err.print(f"{lang}: {len(distractors[lang])} distractor documents, {n_chars:,} characters")
        else:  # the report says so too (distractor_docs = 0 in every row)
            where = (f"no Markdown files under {args.distractors}" if args.distractors else
                     "--distractor-chars 0" if not abl.distractor_chars else
                     f"no {lang} Markdown files under {folder.resolve().parent.parent} matching "
                     f"ablation.distractor_corpora {abl.distractor_corpora}")
            err.print(f"{lang}: no distractor documents ({where}): the index holds only the golden documents")
    out = Path(args.out)
    t0 = time.perf_counter()
    with quiet_output(out / "ablate.log", getattr(args, "verbose", 0)) as log_path, ProgressDisplay():
        embedder = make_embedder(pcfg.embedder, model_cache=OutputLayout(pcfg.output_path).model_cache)
        cache = EmbeddingCache(args.cache or out / "embeddings.sqlite")
        try:  # each grid point's scores go to the log; the progress display shows the grid with its ETA
            result = run_ablation(golden, distractors, cfg, abl, embedder, cache, out,
                                  progress=logging.getLogger("heritage_pipeline.ablation").info,
                                  lcfg=pcfg.lancedb, ecfg=pcfg.embedder)
        finally:
            cache.close()
    console.print(f"{len(result.rows)} settings evaluated; recommended setting:")
    for line in recommendation_lines(result.recommendations):
        console.print(line, markup=False, highlight=False)
    if args.heritage:
        import json
        import os

        from heritage_pipeline_eval.heritage_eval import evaluate, markdown

        data = Path(args.heritage_data or os.environ.get("HERITAGE_SHARED_DATA")
                    or Path(__file__).resolve().parents[2].parent / "shared" / "data")
        err.print(f"heritage golden set {args.heritage} (files under {data})")
        res = evaluate(Path(args.heritage), data, pcfg, cache_path=str(args.cache or out / "embeddings.sqlite"),
                       samples=abl.bootstrap_samples)
        md = markdown(res)
        (out / "heritage.json").write_text(json.dumps(res, indent=1, ensure_ascii=False))
        (out / "heritage.md").write_text(md)
        md_path = Path(result.paths.get("markdown", out / "ablation.md"))
        with open(md_path, "a", encoding="utf-8") as fh:
            fh.write("\n" + md)
        print(md, flush=True)
    console.print(f"embedding cache: {cache.hits} hits, {cache.misses} misses (hit rate {cache.hit_rate:.1%}); "
                  f"wall time {time.perf_counter() - t0:.0f} s", highlight=False)
    console.print(f"report: {', '.join(result.paths.values())}; library warnings and logs: {log_path}", highlight=False,
                  soft_wrap=True)
    return 0
