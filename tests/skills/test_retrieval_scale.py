"""Retrieval keeps one embedding matrix: an add embeds only the new skill, results equal brute force."""

from __future__ import annotations

import numpy as np
import pytest

from compass.skills.embedding import DIM, Embedder
from compass.skills.library import SkillLibrary
from compass.skills.skill import Skill


@pytest.fixture
def encoded(monkeypatch) -> list[str]:
    """Every text that reaches the model (the real one), in order."""
    import compass.skills.embedding as emb

    seen: list[str] = []
    real = emb.encode

    def counting(batch):
        seen.extend(batch)
        return real(batch)

    monkeypatch.setattr(emb, "encode", counting)
    return seen


def _skill(name: str, doc: str) -> Skill:
    code = f'def {name}(obs: str) -> int:\n    """{doc}"""\n    return 1\n'
    return Skill(name, "combat", code, doc, {"provenance": "human"})


def test_add_embeds_only_the_new_skill_and_it_is_found(lib_root, tmp_path, encoded):
    lib = SkillLibrary(lib_root, "combat", embedder=Embedder(tmp_path / "emb"))
    lib.retrieve("focus fire", 3)
    n_first = len(encoded)
    assert n_first == len(lib) + 1  # every skill once, plus the query

    lib.add(_skill("heal_wounded_allies", "Medivac: heal the most wounded ally in range."))
    hits = lib.retrieve("heal the most wounded ally", 3)
    new_texts = encoded[n_first:]
    assert len(new_texts) == 2 and new_texts[0].startswith("heal wounded allies:")  # the new skill, the query
    assert hits[0].skill.name == "heal_wounded_allies"

    lib.remove("heal_wounded_allies", author="t")
    assert "heal_wounded_allies" not in [h.skill.name for h in lib.retrieve("heal the most wounded ally", 10)]


def test_results_equal_brute_force_cosine(lib_root, tmp_path):
    lib = SkillLibrary(lib_root, "combat", embedder=Embedder(tmp_path / "emb"))
    for i, doc in enumerate(
        ["retreat to the base when shields are down", "flank the enemy from the north", "hold a chokepoint"]
    ):
        lib.add(_skill(f"extra_{i}", doc))
    query = "pull back when badly hurt"
    got = [(h.skill.name, round(h.score, 5)) for h in lib.retrieve(query, 5)]
    names = lib.names()
    vecs = lib.embedder.embed([f"{n.replace('_', ' ')}: {lib.skills[n].summary}" for n in names])
    q = lib.embedder.embed([query], persist=False)[0]
    scores = vecs @ q
    want = sorted(
        ((names[i], round(float(scores[i]), 5)) for i in range(len(names))), key=lambda x: (-x[1], x[0])
    )[:5]
    assert got == want


def test_identical_descriptions_tie_by_name(lib_root, tmp_path):
    lib = SkillLibrary(lib_root, "combat", embedder=Embedder(tmp_path / "emb"))
    for name in ("zz_twin", "aa_twin", "mm_twin"):
        lib.add(_skill(name, "Twin description used for the tie test."))
    lib.skills = {n: s for n, s in lib.skills.items() if n.endswith("_twin")}
    for _ in range(2):
        assert [h.skill.name for h in lib.retrieve("twin description", 2)] == ["aa_twin", "mm_twin"]


def test_embedding_cache_appends_and_survives_a_torn_record(tmp_path):
    a = Embedder(tmp_path)
    v = a.embed(["alpha skill", "beta skill"])
    assert (tmp_path / "embeddings.log").stat().st_size == 2 * (24 + DIM * 4)
    with open(tmp_path / "embeddings.log", "ab") as f:
        f.write(b"torn-record")  # a writer killed mid-append
    b = Embedder(tmp_path)
    assert np.allclose(b.embed(["alpha skill", "beta skill"]), v)
    b.embed(["gamma skill"])  # the next append realigns the log
    c = Embedder(tmp_path)
    assert set(c._cache) >= set(b._cache)
    assert (tmp_path / "embeddings.log").stat().st_size % (24 + DIM * 4) == 0


@pytest.mark.parametrize("text", ["kite zealots", "a" * 3000])
def test_direct_encoder_matches_sentence_transformers(text):
    from compass.skills.embedding import _model, encode

    ref = _model().encode([text], normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False)
    assert np.abs(encode([text]) - ref).max() < 1e-5


def test_onnx_query_path_matches_torch(monkeypatch):
    """Short batches (queries) go through ONNX Runtime; they give torch's vectors."""
    import compass.skills.embedding as emb

    texts = ["kite zealots", "gather wood and craft a pickaxe near the river", "b" * 2000]
    assert emb._onnx_session() is not None  # onnxruntime is a dependency: the fast path is in use
    fast = emb.encode(texts)
    monkeypatch.setenv("COMPASS_EMBED_BACKEND", "torch")
    emb._onnx_session.cache_clear()
    try:
        assert emb._onnx_session() is None
        slow = emb.encode(texts)
    finally:
        emb._onnx_session.cache_clear()
    assert fast.dtype == np.float32 and fast.shape == (3, DIM)
    assert np.abs(fast - slow).max() < 1e-5
