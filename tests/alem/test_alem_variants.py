"""benchmarks/alem_variants.py's paired verdict: what a helper reads to keep or drop a variant."""

from __future__ import annotations

from pathlib import Path

import pytest
from alem_testlib import LIBRARY, needs_alem

from compass.games.alem.protocol import LEADERBOARD_EVAL_SEED

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"


@pytest.fixture
def paired_line(monkeypatch):
    monkeypatch.syspath_prepend(str(BENCH))  # the script imports its sibling alem_dev
    from alem_variants import paired_line

    return paired_line


def _rows(scores):
    return [{"team_total_pct": s} for s in scores]


def test_a_variant_up_on_every_seed_is_better(paired_line):
    ref = [8.0, 10.0, 12.0, 9.0, 11.0, 7.5]
    line = paired_line(_rows(ref), _rows([s + 1.0 + 0.1 * i for i, s in enumerate(ref)]))
    assert "6 up / 0 down" in line
    assert line.endswith(": better")


def test_per_seed_swings_that_cancel_are_a_tie(paired_line):
    # The shape of this session's variants: a few seeds up and down by several points.
    ref = [12.0, 9.0, 15.0, 6.0, 11.0, 13.0, 8.0, 10.0]
    var = [15.5, 5.0, 15.0, 10.0, 7.5, 13.0, 11.0, 8.0]
    line = paired_line(_rows(ref), _rows(var))
    assert "3 up / 3 down" in line
    assert line.endswith(": tie")


@pytest.fixture
def reference_rows(monkeypatch):
    monkeypatch.syspath_prepend(str(BENCH))
    from alem_variants import reference_rows

    return reference_rows


def _report(tmp_path, seeds=(392, 393), steps=3000, preset="rl"):
    path = tmp_path / "main.json"
    rows = [{"seed": s, "team_total_pct": 9.0} for s in seeds]
    report = {"seeds": list(seeds), "steps": steps, "preset": preset, "variants": {"main": {"rows": rows}}}
    path.write_text(__import__("json").dumps(report))
    return path


def test_against_takes_the_first_variant_of_an_earlier_report(reference_rows, tmp_path):
    path = _report(tmp_path)
    label, rows = reference_rows(str(path), [392, 393], 3000, "rl")
    assert label == "main"
    assert [r["seed"] for r in rows] == [392, 393]


def test_against_takes_this_runs_seeds_from_a_report_played_on_more(reference_rows, tmp_path):
    # A bound played on part of a judged block pairs with the block's rows for its own seeds.
    path = _report(tmp_path, seeds=(390, 391, 392, 393))
    _, rows = reference_rows(str(path), [393, 391], 3000, "rl")
    assert [r["seed"] for r in rows] == [393, 391]


def test_against_refuses_a_report_on_other_seeds_or_steps(reference_rows, tmp_path):
    path = _report(tmp_path)
    with pytest.raises(SystemExit, match="seeds"):
        reference_rows(str(path), [392, 394], 3000, "rl")
    with pytest.raises(SystemExit, match="steps=3000"):
        reference_rows(str(path), [392, 393], 2000, "rl")
    with pytest.raises(SystemExit, match="no variant 'v9'"):
        reference_rows(f"{path}:v9", [392, 393], 3000, "rl")


def test_the_dev_scripts_refuse_a_variant_without_a_label_and_evaluation_seeds(monkeypatch, capsys):
    monkeypatch.syspath_prepend(str(BENCH))
    from alem_dev import dev_parser, parse_dev_args

    a = parse_dev_args(
        dev_parser("x"), ["main=/tmp/a/p.py", "v1=/tmp/b/p.py", "--seeds", "0-2,7", "--out", "o"]
    )
    assert a.seeds == [0, 1, 2, 7]
    assert [(label, str(path)) for label, path in a.variants] == [
        ("main", "/tmp/a/p.py"),
        ("v1", "/tmp/b/p.py"),
    ]
    with pytest.raises(SystemExit):
        parse_dev_args(dev_parser("x"), ["/tmp/a/p.py", "--out", "o"])
    assert "expected LABEL=PATH" in capsys.readouterr().err
    # The judging range is tuning too; the gate's seeds (1000..) and the evaluation seeds are not.
    b = parse_dev_args(dev_parser("x", variants=False), ["p.py", "--seeds", "100000-100002", "--out", "o"])
    assert b.seeds == [100_000, 100_001, 100_002]
    for bad in ("1000", str(LEADERBOARD_EVAL_SEED), "199999-200000"):
        with pytest.raises(SystemExit, match="tuning seeds"):
            parse_dev_args(dev_parser("x", variants=False), ["p.py", "--seeds", bad, "--out", "o"])


def test_a_missing_skill_file_is_refused_in_one_line(monkeypatch, tmp_path):
    monkeypatch.syspath_prepend(str(BENCH))
    from alem_dev import load_policy

    with pytest.raises(SystemExit, match="no skill file at .*nope.py"):
        load_policy(tmp_path / "nope.py")


def test_a_report_that_cannot_be_written_leaves_the_last_one_whole(monkeypatch, tmp_path):
    # --out is a reference later runs are judged against (--against): a run killed while writing
    # must not leave half a file there.
    monkeypatch.syspath_prepend(str(BENCH))
    import alem_dev

    out = tmp_path / "main_I.json"
    alem_dev.write_out(out, {"seeds": [1, 2], "path": tmp_path})
    before = out.read_text()
    assert '"path": "' in before  # paths and other non-JSON values are written as text

    def crash(*_args):
        raise KeyboardInterrupt

    monkeypatch.setattr("compass.util.atomic.os.replace", crash)
    with pytest.raises(KeyboardInterrupt):
        alem_dev.write_out(out, {"seeds": list(range(5_000))})
    assert out.read_text() == before
    assert [p.name for p in tmp_path.iterdir()] == ["main_I.json"]


@needs_alem
def test_play_in_chunks_gives_the_episodes_one_batch_gives(monkeypatch):
    # A 192-episode block is played 96 at a time to bound memory; the rows must not depend on it.
    monkeypatch.syspath_prepend(str(BENCH))
    from alem_dev import load_policy, play

    policy = load_policy(LIBRARY / "alem_role_policy.py")
    jobs = [(policy, s) for s in (0, 1, 2)]
    seen: set[int] = set()
    chunked = play(jobs, 40, on_step=lambda i, views, actions: seen.add(i), chunk=2)
    together = play(jobs, 40, chunk=3)
    assert seen == {0, 1, 2}
    assert [t.score().as_dict() for t in chunked] == [t.score().as_dict() for t in together]


@needs_alem
def test_a_variant_whose_skill_raises_is_reported_not_scored_in_silence(monkeypatch, tmp_path, capfd):
    # A variant calling a helper its skill API lacks (played against another checkout's API) raises on
    # every step and plays NOOP: its rows look like a weak team unless the errors are said.
    monkeypatch.syspath_prepend(str(BENCH))
    from alem_dev import load_policy, play

    text = (LIBRARY / "alem_role_policy.py").read_text()
    broken = tmp_path / "alem_role_policy.py"
    broken.write_text(
        text.replace("    d = parse_obs(obs)\n", "    d = parse_obs(obs)\n    no_such_helper(d)\n", 1)
    )
    play([(load_policy(broken), 5)], 5)
    err = capfd.readouterr().err
    assert "seed 5: the skill raised on 15 agent-steps" in err and "no_such_helper" in err
    play([(load_policy(LIBRARY / "alem_role_policy.py"), 5)], 5)
    assert "raised" not in capfd.readouterr().err
