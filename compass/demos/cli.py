"""``compass demos train|record|evaluate`` and ``compass skills bootstrap`` (registered from ``compass.cli``)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from compass.cli.errors import exit_code
from compass.cli.errors import fail as _fail
from compass.util.console import Console

demos_app = typer.Typer(no_args_is_help=True, help="Train MAPPO demonstrators and record demonstrations.")
console = Console()
err = Console(stderr=True)


def parse_steps(text: str) -> int:
    """``3M``, ``500k``, ``1.5M``, ``20000`` -> an int; anything else is a ``ValueError``."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([kKmM]?)\s*", text)
    if not m:
        raise ValueError(f"--steps takes a number like 3M, 500k or 20000, got {text!r}")
    n = float(m.group(1)) * {"": 1, "k": 1e3, "m": 1e6}[m.group(2).lower()]
    if n < 1:
        raise ValueError(f"--steps must be at least 1, got {text!r}")
    return int(n)


@demos_app.command("train")
def train_cmd(
    env: Annotated[
        str, typer.Option(help="smax:protoss_5_vs_5 | smax:terran_5_vs_5 | smax:zerg_5_vs_5 | alem:SCENARIO")
    ] = "smax:protoss_5_vs_5",
    steps: Annotated[
        str | None, typer.Option(help="total env steps, e.g. 3M or 500k (default: the config's)")
    ] = None,
    out: Annotated[Path, typer.Option(help="training folder: checkpoint/, metrics.jsonl, eval.json")] = Path(
        "demos/run"
    ),
    config: Annotated[
        Path | None, typer.Option(help="YAML MappoConfig (keys of compass.marl.config)")
    ] = None,
    seed: Annotated[int | None, typer.Option()] = None,
    num_envs: Annotated[int | None, typer.Option(min=1)] = None,
    resume: Annotated[bool, typer.Option(help="--no-resume: start over even if OUT has a checkpoint")] = True,
    epo: Annotated[
        bool,
        typer.Option(
            help="train under SMACv2's extended partial observability (what compass eval's epo: true plays)"
        ),
    ] = False,
) -> None:
    """Train MAPPO (recurrent shared actor, centralised critic) and checkpoint it to OUT/checkpoint."""
    from compass.marl.config import MappoConfig, load_config

    try:
        cfg = load_config(config) if config else MappoConfig()
        update = {"env": env}
        if steps is not None:
            update["total_steps"] = parse_steps(steps)
        if seed is not None:
            update["seed"] = seed
        if num_envs is not None:
            update["num_envs"] = num_envs
        if epo:
            update["epo"] = True
        cfg = MappoConfig(**{**cfg.model_dump(), **update})
    except ValueError as e:
        _fail(str(e).splitlines()[0] if "validation error" not in str(e) else str(e).replace("\n", " "))
    import jax

    from compass.marl.checkpoint import CheckpointError
    from compass.marl.train import device_description, train

    err.print(
        f"training MAPPO on [bold]{cfg.env}[/]{' under EPO' if cfg.epo else ''} for {cfg.num_updates * cfg.steps_per_update:,} steps "
        f"({cfg.num_updates} updates of {cfg.num_envs}x{cfg.num_steps}) on JAX device "
        f"[bold]{device_description()}[/] (backend {jax.default_backend()})"
    )
    with Progress(
        TextColumn("[bold]{task.fields[env]}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("updates  {task.fields[sps]} steps/s  win {task.fields[win]}  return {task.fields[ret]}"),
        TimeElapsedColumn(),
        console=err,
    ) as bar:
        task = bar.add_task("", total=cfg.num_updates, env=cfg.env, sps="-", win="-", ret="-")

        def on_update(row: dict) -> None:
            bar.update(
                task,
                completed=row["update"],
                sps=f"{row['steps_per_s']:,.0f}",
                win="-" if row["win_rate"] is None else f"{row['win_rate']:.2f}",
                ret="-" if row["return"] is None else f"{row['return']:.2f}",
            )

        failure = None
        try:
            summary = train(cfg, out, on_update=on_update, resume=resume)
        except (CheckpointError, ValueError) as e:
            failure = str(e)  # reported after the progress display has closed
    if failure:
        _fail(failure)
    ev = summary.get("greedy_eval")
    if ev:
        lo, hi = ev["win_rate_ci95"]
        console.print(
            f"greedy win rate {ev['win_rate']:.2f} [{lo:.2f}, {hi:.2f}] on {ev['episodes']} held-out seeds"
        )
    console.print(
        f"{summary['steps']:,} steps in {summary['train_seconds']:.0f} s; checkpoint in {out / 'checkpoint'}"
    )


@demos_app.command("record")
def record_cmd(
    policy: Annotated[str, typer.Option(help="a MAPPO checkpoint folder, 'library' or 'heuristic'")],
    env: Annotated[str, typer.Option(help="KIND:SCENARIO, e.g. smax:protoss_5_vs_5")] = "smax:protoss_5_vs_5",
    episodes: Annotated[int, typer.Option(min=1)] = 3,
    seed: int = 0,
    out: Annotated[Path, typer.Option(help="folder for ep_SEED.mp4 + ep_SEED.jsonl")] = Path(
        "demos/episodes"
    ),
    max_steps: Annotated[int | None, typer.Option(min=1)] = None,
    epo: bool = False,
    library: Annotated[Path | None, typer.Option(help="skill library root for --policy library")] = None,
) -> None:
    """Record episodes of a policy: a followable MP4 and a trajectory JSONL per episode."""
    from compass.core.family import UnknownFamilyError
    from compass.marl.checkpoint import CheckpointError

    if policy not in ("library", "heuristic") and not Path(policy).exists():
        _fail(f"--policy {policy!r} is neither 'library', 'heuristic' nor an existing checkpoint folder")
    from compass.demos.record import record_episodes

    with Progress(
        TextColumn("[bold]recording"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("steps"),
        TimeElapsedColumn(),
        console=err,
        transient=True,
    ) as bar:
        task = bar.add_task("", total=None)

        def on_episode(row: dict) -> None:
            color = {"win": "green", "loss": "red"}.get(row["outcome"], "yellow")
            console.print(
                f"seed {row['seed']}: [{color}]{row['outcome']}[/] in {row['steps']} steps -> "
                f"{out / row.get('video', '')}, {out / row.get('trajectory', '')}"
            )

        failure = None
        try:
            record_episodes(
                env,
                policy,
                episodes,
                seed,
                out,
                max_steps=max_steps,
                epo=epo,
                library=library,
                on_step=lambda: bar.advance(task),
                on_episode=on_episode,
            )
        except (CheckpointError, UnknownFamilyError, ValueError, FileNotFoundError) as e:
            failure = str(e)  # reported after the progress display has closed
    if failure:
        _fail(failure)


@demos_app.command("replay")
def replay_cmd(trajectory: Path) -> None:
    """Re-play a recorded trajectory's actions from its seed and check it reaches the same outcome."""
    from compass.demos.record import replay_trajectory

    try:
        r = replay_trajectory(trajectory)
    except (ValueError, KeyError) as e:
        _fail(str(e))
    verdict = "[green]same[/]" if r["match"] else "[red]different[/]"
    console.print(
        f"recorded {r['recorded_outcome']} in {r['recorded_steps']} steps, replayed "
        f"{r['replayed_outcome']} in {r['replayed_steps']} steps: {verdict}"
    )
    if not r["match"]:
        raise typer.Exit(1)


def skills_bootstrap(
    demos: Annotated[
        Path, typer.Option(help="folder of recorded episodes (ep_*.jsonl + ep_*.mp4) or one file")
    ],
    library: Annotated[Path, typer.Option(help="output library root (created from the seed skills if new)")],
    vlm: Annotated[
        str | None, typer.Option(help=escape("openai:MODEL[@URL], anthropic:MODEL[@URL], ..."))
    ] = None,
    offline: Annotated[
        bool, typer.Option(help="no VLM: fit the seed skills' parameters to the demos")
    ] = False,
    family: Annotated[str | None, typer.Option(help="game family, for videos without trajectories")] = None,
    max_frames: Annotated[int, typer.Option(min=1)] = 6,
    max_tactics: Annotated[int, typer.Option(min=1)] = 4,
    eval_episodes: Annotated[
        int, typer.Option(min=2, help="episodes per candidate and for the current best (paired seeds)")
    ] = 20,
    eval_max_steps: Annotated[int | None, typer.Option(min=1)] = None,
) -> None:
    """Bootstrap skills from demonstrations: with a VLM (--vlm) or by fitting parameters (--offline)."""
    if offline == (vlm is not None):
        _fail("give exactly one of --vlm SPEC and --offline")
    from compass.skills.bootstrap import DemoError, bootstrap_offline, run_bootstrap_vlm
    from compass.vlm.errors import VLMError

    try:
        if offline:
            report = bootstrap_offline(demos, library, family)
            console.print(escape(f"measured {report['trajectories']} trajectories of {report['env']}:"))
            for k, v in report["measures"].items():
                if not k.endswith("_samples"):
                    console.print(escape(f"  {k}: {v}"))
            for name, params in report["changes"].items():
                changes = ", ".join(f"{p} {c['from']} -> {c['to']}" for p, c in params.items())
                console.print(f"[green]fitted[/] {name}: {escape(changes)}")
            if not report["changes"]:
                console.print("[yellow]no parameter had enough samples to fit; library unchanged[/]")
            console.print(escape(f"library: {report['library']}"))
            return
        with Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=err,
        ) as bar:
            tasks: dict[str, object] = {}

            def progress(stage: str, done: int, total: int) -> None:
                if stage not in tasks:
                    tasks[stage] = bar.add_task(stage, total=total)
                bar.update(tasks[stage], completed=done, total=total)

            report = run_bootstrap_vlm(
                demos,
                vlm,
                library,
                family_name=family,
                max_frames=max_frames,
                max_tactics=max_tactics,
                eval_episodes=eval_episodes,
                eval_max_steps=eval_max_steps,
                progress=progress,
            )
    except (DemoError, VLMError, FileNotFoundError) as e:
        _fail(str(e), exit_code(e))  # VLMError: 1, as from compass run
    for c in report["candidates"]:
        color = "green" if c["status"] == "added" else "red"
        console.print(f"[{color}]{c['status']}[/] {escape(c['name'])} {escape(c['reason'])}")
    console.print(escape(f"{len(report['added'])} skill(s) added to {report['library']}"))


@demos_app.command("evaluate")
def evaluate_cmd(
    checkpoint: Annotated[Path, typer.Argument(help="a checkpoint folder (OUT/checkpoint)")],
    episodes: Annotated[int, typer.Option(min=1, help="greedy episodes on held-out seeds")] = 100,
    out: Annotated[
        Path | None,
        typer.Option(help="write the result (JSON) here, e.g. OUT/eval.json; default: print only"),
    ] = None,
) -> None:
    """Greedy win rate of a checkpoint on held-out seeds (in the trainer's env); printed, and written
    only where --out says (a training folder's eval.json may be a published figure)."""
    from compass.marl.checkpoint import CheckpointError, load_actor, read_meta
    from compass.marl.config import load_config
    from compass.marl.train import Trainer, device_description
    from compass.util.atomic import atomic_write_json

    try:
        meta = read_meta(checkpoint)
        params, _ = load_actor(checkpoint)
        cfg = load_config(checkpoint / "config.yaml")
    except (CheckpointError, ValueError) as e:
        _fail(str(e))
    ev = Trainer.build(cfg).evaluate(params, episodes)
    lo, hi = ev["win_rate_ci95"]
    console.print(
        f"{meta['env']} after {meta['steps']:,} steps: greedy win rate {ev['win_rate']:.2f} [{lo:.2f}, {hi:.2f}] "
        f"on {episodes} held-out seeds, mean return {ev['mean_return']:.2f}"
    )
    summary = {
        "env": meta["env"],
        "steps": meta["steps"],
        "updates": meta["updates"],
        "train_seconds": meta["train_seconds"],
        "device": device_description(),
        "seed": meta["seed"],
        "greedy_eval": ev,
    }
    if out is None:
        console.print(
            escape(f"not written anywhere (--out {checkpoint.parent / 'eval.json'} would record it)")
        )
        return
    atomic_write_json(out, summary)
    console.print(escape(f"written to {out}"))


def register(app: typer.Typer, skills: typer.Typer) -> None:
    """Add the ``demos`` group and ``skills bootstrap`` to the ``compass`` command line."""
    app.add_typer(demos_app, name="demos")
    skills.command("bootstrap")(skills_bootstrap)
