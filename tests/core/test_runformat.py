"""The run directory format (compass/core/runformat.py): what ``compass run`` writes carries
``format_version``, and every reader (the viewer, ``compass runs``, eval's run rows, ``replay:``)
refuses a directory of a newer format with a message naming it, instead of misreading it."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from compass.cli import app
from compass.core.runformat import FORMAT_VERSION, RunFormatError, read_manifest, read_summary
from compass.eval.runs import list_runs, run_rows
from compass.viewer.runs import RunStore


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    """One short library run, written by ``compass run``."""
    out = tmp_path_factory.mktemp("runs")
    res = CliRunner().invoke(app, ["run", "--out", str(out), "--run-id", "r", "--max-steps", "3"])
    assert res.exit_code == 0, res.output
    return out


def _copy_with_version(written, tmp_path, version):
    import shutil

    out = tmp_path / "runs"
    shutil.copytree(written, out)
    for name in ("summary.json", "manifest.json"):
        path = out / "r" / name
        obj = json.loads(path.read_text())
        obj["format_version"] = version
        path.write_text(json.dumps(obj))
    return out


def test_a_run_is_written_with_the_current_format_version(written):
    assert read_manifest(written / "r")["format_version"] == FORMAT_VERSION
    summary = read_summary(written / "r")
    assert summary.format_version == FORMAT_VERSION and summary.run_id == "r"
    assert summary.env == "smax:protoss_5_vs_5" and summary.episodes[0]["steps"] == 3
    assert [r["seed"] for r in run_rows(written / "r")] == [0]


def test_a_directory_from_before_the_version_reads_as_version_0(written, tmp_path):
    out = _copy_with_version(written, tmp_path, 0)
    for name in ("summary.json", "manifest.json"):
        path = out / "r" / name
        obj = json.loads(path.read_text())
        del obj["format_version"]
        path.write_text(json.dumps(obj))
    assert read_summary(out / "r").format_version == 0
    assert RunStore(out).run_row("r")["status"] == "finished"


def test_every_reader_refuses_a_newer_format(written, tmp_path):
    out = _copy_with_version(written, tmp_path, FORMAT_VERSION + 1)
    newer = f"run format {FORMAT_VERSION + 1}"
    with pytest.raises(RunFormatError, match=newer):
        read_summary(out / "r")
    # the viewer lists it, saying why it cannot be shown
    row = RunStore(out).run_row("r")
    assert row["status"].startswith("unreadable") and newer in row["status"]
    # compass runs list / show
    (info,) = list_runs(out)
    assert info.headline.startswith("unreadable") and newer in info.headline
    res = CliRunner().invoke(app, ["runs", "show", str(out / "r")])
    assert res.exit_code == 2 and newer in " ".join(res.output.split()), res.output
    assert "Traceback" not in res.output
    # replay:RUN_DIR
    res = CliRunner().invoke(
        app, ["run", "--vlm", f"replay:{out / 'r'}", "--out", str(tmp_path / "again"), "--max-steps", "3"]
    )
    assert res.exit_code == 1 and newer in " ".join(res.output.split()), res.output


def test_a_summary_of_the_wrong_shape_is_named(tmp_path):
    (tmp_path / "r").mkdir()
    (tmp_path / "r" / "summary.json").write_text(json.dumps({"run_id": "r", "env": "smax:x", "episodes": 3}))
    with pytest.raises(RunFormatError, match="'episodes' must be a list"):
        read_summary(tmp_path / "r")
