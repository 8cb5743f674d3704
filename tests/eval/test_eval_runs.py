"""Whole evals on SMAX: serial, parallel and Ray agree per seed; a killed eval resumes; reports and
``compass runs`` read the results."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from compass.cli import app
from compass.eval.driver import prepare, run_eval
from compass.eval.spec import parse_spec
from compass.eval.store import EpisodeStore, read_rows

ROOT = Path(__file__).resolve().parents[2]
SPEC = """\
name: {name}
envs: [smax:protoss_5_vs_5]
seeds: 2
max_steps: {steps}
base: {{planner: library, epo: true}}
grid:
  comm: [none, multihop]
"""

KILLED_AFTER_TWO_ROWS = """\
import os, signal
from compass.eval.driver import prepare, run_eval
from compass.eval.spec import parse_spec

rows = []
def on_row(row):
    rows.append(row)
    if len(rows) == 2:
        os.kill(os.getpid(), signal.SIGKILL)

plan = parse_spec(open({spec!r}).read(), {spec!r})
run_eval(prepare(plan, {out!r}), 1, on_row=on_row)
"""

pytestmark = pytest.mark.slow


def _run(tmp: Path, name: str, workers: int = 1, ray: str | None = None, steps: int = 20) -> list[dict]:
    plan = parse_spec(SPEC.format(name=name, steps=steps), f"{name}.yaml", workers=workers)
    return run_eval(prepare(plan, tmp), plan.workers, ray)


def _comparable(rows: list[dict]) -> list[dict]:
    return sorted(
        ({k: v for k, v in r.items() if k != "wall_s"} for r in rows), key=lambda r: (r["config"], r["seed"])
    )


@pytest.fixture(scope="module")
def serial(tmp_path_factory) -> tuple[Path, list[dict]]:
    tmp = tmp_path_factory.mktemp("serial")
    return tmp, _run(tmp, "serial")


def test_serial_rows_are_complete_and_written(serial):
    tmp, rows = serial
    assert len(rows) == 4
    assert read_rows(tmp / "serial" / "episodes.csv") == rows
    comm = {r["config"]: r["extra"]["comm"]["total_sent"] for r in rows if r["seed"] == 0}
    assert comm["comm=none"] == 0 and comm["comm=multihop"] > 0  # the grid reached the episodes


def test_parallel_workers_give_identical_per_seed_results(serial, tmp_path):
    _, rows = serial
    assert _comparable(_run(tmp_path, "parallel", workers=2)) == _comparable([{**r} for r in rows])


def test_ray_and_local_workers_agree(serial, tmp_path):
    pytest.importorskip("ray")
    _, rows = serial
    assert _comparable(_run(tmp_path, "ray", workers=2, ray="local")) == _comparable(rows)


def test_a_killed_eval_resumes_without_replaying_finished_episodes(tmp_path):
    spec = tmp_path / "resume.yaml"
    spec.write_text(SPEC.format(name="resume", steps=40).replace("seeds: 2", "seeds: 3"))
    # The eval kills itself with SIGKILL once its second row is on disk: polling the CSV from here
    # raced the eval, which can write all six rows between two polls.
    script = KILLED_AFTER_TWO_ROWS.format(spec=str(spec), out=str(tmp_path))
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, timeout=600)
    assert proc.returncode == -signal.SIGKILL, proc.stderr.decode()[-2000:]
    csv = tmp_path / "resume" / "episodes.csv"
    before = read_rows(csv)
    assert 2 <= len(before) < 6, "the eval should have been killed part-way"
    assert not (tmp_path / "resume" / "report.md").exists()
    played: list[dict] = []
    plan = parse_spec(spec.read_text(), str(spec))
    prepared = prepare(plan, tmp_path)
    assert len(prepared.todo) == 6 - len(before)
    rows = run_eval(prepared, 1, on_row=played.append)
    assert len(played) == 6 - len(before)
    assert rows[: len(before)] == before  # finished rows untouched
    keys = [(r["config"], r["seed"]) for r in rows]
    assert len(keys) == len(set(keys)) == 6


def test_a_torn_last_row_is_dropped_and_replayed(serial, tmp_path):
    _, rows = serial
    store = EpisodeStore(tmp_path)
    store.append(rows[0])
    store.append(rows[1])
    store.close()
    data = (tmp_path / "episodes.csv").read_bytes()
    (tmp_path / "episodes.csv").write_bytes(data[:-25])  # killed in the middle of the second row
    again = EpisodeStore(tmp_path)
    assert again.rows == [rows[0]]
    assert again.done() == {(rows[0]["config"], rows[0]["env"], rows[0]["seed"])}
    again.append(rows[1])
    again.close()
    assert read_rows(tmp_path / "episodes.csv") == rows[:2]


def test_changed_configuration_in_the_same_directory_is_refused(serial):
    from compass.eval.spec import SpecError

    tmp, _ = serial
    text = SPEC.format(name="serial", steps=20).replace("epo: true", "epo: false")
    with pytest.raises(SpecError, match="different settings"):
        prepare(parse_spec(text, "serial.yaml"), tmp)


def test_report_and_runs_commands(serial, tmp_path):
    from compass.eval.report import write_report

    tmp, rows = serial
    run_dir = tmp / "serial"
    summary = write_report(run_dir, rows, "serial", ["comm=none", "comm=multihop"])
    assert (run_dir / "report.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    md = (run_dir / "report.md").read_text()
    assert "| comm=none | 2 |" in md and "Paired on common seeds" in md
    assert summary["envs"]["smax:protoss_5_vs_5"]["paired"][0]["pairs"] == 2
    cli = CliRunner()
    res = cli.invoke(app, ["runs", "list", "--out", str(tmp)])
    assert res.exit_code == 0 and "serial" in res.stdout and "eval" in res.stdout
    res = cli.invoke(app, ["runs", "show", "serial", "--out", str(tmp)])
    assert res.exit_code == 0 and "comm=multihop" in res.stdout and "{" not in res.stdout
    res = cli.invoke(app, ["runs", "compare", "serial:comm=none", "serial:comm=multihop", "--out", str(tmp)])
    assert res.exit_code == 0 and "over 2 common seeds" in res.stdout
    res = cli.invoke(app, ["runs", "compare", "serial", "serial:comm=none", "--out", str(tmp)])
    assert res.exit_code == 2 and "pick one" in res.output


def test_eval_cli_reports_a_bad_spec_in_one_line(tmp_path):
    spec = tmp_path / "bad.yaml"
    spec.write_text("envs: [smax:protoss_5_vs_5]\nbase:\n  comm: twohop\n")
    res = CliRunner().invoke(app, ["eval", str(spec), "--out", str(tmp_path)])
    assert res.exit_code == 2
    assert f"{spec}:3: base.comm: invalid comm mode 'twohop'" in " ".join(res.output.split())
    assert "Traceback" not in res.output
    assert not (tmp_path / "bad").exists()
