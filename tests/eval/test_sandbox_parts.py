"""``sandbox_parts_from``: skill batches sent in parts where a core is free (``auto``), the same
episodes either way, and a wrong value named in the error."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from compass.config import RunConfig
from compass.eval.driver import local_chunks
from compass.eval.episode import play_batch
from compass.eval.spec import SpecError, parse_spec
from compass.sandbox.executors import resolve_parts_from
from compass.sandbox.isolated import PARTS_FROM, _Worker

SPEC = """\
name: parts
envs: [smax:protoss_5_vs_5]
seeds: [0, 1, 2, 3]
max_steps: 40
traces: true
base: {{planner: library, decision_interval: 4{extra}}}
"""


def _fields(chunks) -> list:
    return [j.config_fields["sandbox_parts_from"] for chunk in chunks for j in chunk]


def test_auto_is_on_only_where_a_core_is_free_of_the_episode_players(monkeypatch):
    assert resolve_parts_from("auto", players=1, cores=2) == PARTS_FROM
    assert resolve_parts_from("auto", players=2, cores=2) is None
    assert resolve_parts_from("auto", players=2, cores=3) == PARTS_FROM
    assert resolve_parts_from("auto", players=1, cores=1) is None
    assert resolve_parts_from(4, players=2, cores=2) == 4 and resolve_parts_from(None, 1, 8) is None

    # compass eval on a (faked) two-core machine: one local worker leaves a core, two do not
    monkeypatch.setattr("os.sched_getaffinity", lambda pid: {0, 1})
    jobs = parse_spec(SPEC.format(extra=""), "p.yaml").jobs()
    chunks, players = local_chunks(jobs, workers=1)
    assert players == 1 and _fields(chunks) == [PARTS_FROM] * 4
    chunks, players = local_chunks(jobs, workers=2)
    assert players == 2 and [len(c) for c in chunks] == [2, 2] and _fields(chunks) == [None] * 4
    # two workers but one batch to play: it plays in this process, so a core is free
    chunks, players = local_chunks(jobs[:1], workers=2)
    assert players == 1 and _fields(chunks) == [PARTS_FROM]
    # four cores: two workers leave two free
    monkeypatch.setattr("os.sched_getaffinity", lambda pid: {0, 1, 2, 3})
    assert _fields(local_chunks(jobs, workers=2)[0]) == [PARTS_FROM] * 4
    # a value the spec gives is kept as given
    monkeypatch.setattr("os.sched_getaffinity", lambda pid: {0, 1})
    given = parse_spec(SPEC.format(extra=", sandbox_parts_from: 4"), "p.yaml").jobs()
    assert _fields(local_chunks(given, workers=2)[0]) == [4] * 4


def test_a_wrong_value_names_the_field_and_what_it_takes():
    for bad in ("atuo", 0, -3, 2.5, True):
        with pytest.raises(ValidationError, match=r"sandbox_parts_from must be auto, a number of items"):
            RunConfig(sandbox_parts_from=bad)
    assert RunConfig(sandbox_parts_from="off").sandbox_parts_from is None
    assert RunConfig(sandbox_parts_from="12").sandbox_parts_from == 12  # as the command line gives it
    assert RunConfig().sandbox_parts_from == "auto"
    with pytest.raises(
        SpecError, match=r"p\.yaml:6: base\.sandbox_parts_from: sandbox_parts_from must be auto"
    ):
        parse_spec(SPEC.format(extra=", sandbox_parts_from: atuo"), "p.yaml")


def test_the_setting_is_not_part_of_a_configuration_key():
    """It changes no episode, so an eval resumed with another value goes on where it was."""
    (a,) = parse_spec(SPEC.format(extra=""), "p.yaml").configs
    (b,) = parse_spec(SPEC.format(extra=", sandbox_parts_from: 8"), "p.yaml").configs
    (c,) = parse_spec(SPEC.format(extra=", decision_interval: 5"), "p.yaml").configs
    assert a.key() == b.key() != c.key()


def _rows(rows: list[dict]) -> list[dict]:
    return [{k: v for k, v in r.items() if k != "wall_s"} for r in rows]


def _traces(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("trace.jsonl"))}


@pytest.mark.slow
def test_a_batched_eval_in_parts_plays_the_same_episodes(tmp_path, monkeypatch):
    """Four SMAX episodes in one batch (20 skill calls a step): with parts from 8 the batches go
    in parts, and every seed's row and trace equal those of one message per batch."""
    sent: list[str] = []
    post = _Worker.post

    def counting(self, message, wait, more=False):
        sent.append(message[0])
        return post(self, message, wait, more)

    monkeypatch.setattr(_Worker, "post", counting)
    played = {}
    for setting in ("off", "8"):
        sent.clear()
        jobs = parse_spec(SPEC.format(extra=f", sandbox_parts_from: {setting}"), "p.yaml").jobs(
            tmp_path / setting
        )
        played[setting] = _rows(play_batch(jobs))
        played[setting + " items"] = sent.count("items")
    assert played["off items"] == 0 and played["8 items"] > 0  # the parts were used
    assert played["8"] == played["off"] and len(played["off"]) == 4
    a, b = _traces(tmp_path / "off"), _traces(tmp_path / "8")
    assert len(a) == 4 and a == b
