"""Module list of the product and evaluation packages with line counts, at two git revisions.

Usage: ``python -m heritage_pipeline_eval.layout [BEFORE [AFTER]]`` (default ``main`` and the working tree),
prints one row per module: path, lines before, lines after, difference (``-`` where the module does not exist).
"""

from __future__ import annotations

import argparse
import subprocess
from pathlib import Path

PACKAGES = ("heritage_pipeline/", "heritage_pipeline_eval/")
REPO = Path(__file__).resolve().parents[1]


def line_counts(rev: str | None) -> dict[str, int]:
    """Lines of every ``.py`` module of the packages.

    Args:
        rev: a git revision, or None for the working tree.

    Returns:
        ``{repository-relative path: number of lines}``.

    Raises:
        subprocess.CalledProcessError: ``rev`` is not a revision of the repository.
    """
    if rev is None:
        return {str(p.relative_to(REPO)): len(p.read_text(encoding="utf-8").splitlines())
                for pkg in PACKAGES for p in sorted((REPO / pkg).rglob("*.py"))}
    names = subprocess.run(["git", "ls-tree", "-r", "--name-only", rev, "--", *PACKAGES], cwd=REPO, check=True,
                           capture_output=True, text=True).stdout.split()
    return {n: len(subprocess.run(["git", "show", f"{rev}:{n}"], cwd=REPO, check=True, capture_output=True,
                                  text=True).stdout.splitlines()) for n in names if n.endswith(".py")}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("before", nargs="?", default="main", help="git revision (default: main)")
    ap.add_argument("after", nargs="?", default=None, help="git revision (default: the working tree)")
    args = ap.parse_args(argv)
    before, after = line_counts(args.before), line_counts(args.after)
    print(f"{'module':60} {'before':>7} {'after':>7} {'diff':>6}")
    for name in sorted(set(before) | set(after)):
        b, a = before.get(name), after.get(name)
        diff = (a or 0) - (b or 0)
        if b != a:
            print(f"{name:60} {b if b is not None else '-':>7} {a if a is not None else '-':>7} {diff:>+6}")
    print(f"{'total (' + str(len(before)) + ' -> ' + str(len(after)) + ' modules)':60} {sum(before.values()):>7} "
          f"{sum(after.values()):>7} {sum(after.values()) - sum(before.values()):>+6}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
