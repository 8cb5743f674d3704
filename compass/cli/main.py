"""``compass`` command line: run episodes and work with the skill library."""

from __future__ import annotations

import logging
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Column, Table

from compass.cli import library as library_cli
from compass.cli.errors import ErrorReportingGroup, exit_code, set_debug
from compass.cli.errors import fail as _fail
from compass.config import RUN_DEFAULTS, RunConfig
from compass.demos import cli as demos_cli
from compass.eval import cli as eval_cli
from compass.play import cli as play_cli
from compass.util.console import Console, log_handler, print_code, print_table
from compass.viewer import cli as viewer_cli

app = typer.Typer(
    cls=ErrorReportingGroup,
    add_completion=False,
    no_args_is_help=False,
    help="compass: VLM agents that write and choose skills.",
)
skills_app = typer.Typer(no_args_is_help=True, help="Inspect and check the skill library.")
app.add_typer(skills_app, name="skills")
console = Console()
err = Console(stderr=True, soft_wrap=True)


@app.callback(invoke_without_command=True)
def main(
    ctx: typer.Context,
    debug: Annotated[bool, typer.Option("--debug", help="show tracebacks and debug logs")] = False,
) -> None:
    """With no command, play the embedded default (one library-only SMAX episode)."""
    set_debug(debug)
    if ctx.invoked_subcommand is None:
        ctx.invoke(run)


def run(
    ctx: typer.Context = None,  # type: ignore[assignment]  # None when `compass` runs the default
    env: Annotated[
        str, typer.Option(help="FAMILY:SCENARIO, e.g. smax:protoss_5_vs_5, smacv2:zerg_5_vs_6, alem:hard")
    ] = RUN_DEFAULTS.env,
    episodes: Annotated[int, typer.Option(min=1)] = RUN_DEFAULTS.episodes,
    seed: int = RUN_DEFAULTS.seed,
    planner: Annotated[
        str | None, typer.Option(help="library (no VLM) or vlm; default: vlm when --vlm is given")
    ] = None,
    vlm: Annotated[
        str | None,
        typer.Option(
            # escaped: help texts are rich markup, where "[@URL]" is a tag and would vanish
            help=escape(
                "openai:MODEL[@URL][?dialect=...], anthropic:MODEL[@URL], llamacpp:PATH.gguf, hf:PATH, replay:RUN_DIR"
            )
        ),
    ] = RUN_DEFAULTS.vlm,
    library: Annotated[
        Path | None, typer.Option(help="skill library root (holds one folder per game family)")
    ] = RUN_DEFAULTS.library,
    out: Annotated[Path, typer.Option(help="where run directories go")] = RUN_DEFAULTS.out,
    max_steps: Annotated[
        int | None, typer.Option(min=1, help="cap on episode length")
    ] = RUN_DEFAULTS.max_steps,
    video: Annotated[
        bool, typer.Option(help="write videos/episode_NNN.mp4, one per episode")
    ] = RUN_DEFAULTS.video,
    epo: Annotated[
        bool, typer.Option(help="SMACv2 extended partial observability (prob_obs_enemy=0)")
    ] = RUN_DEFAULTS.epo,
    comm: Annotated[
        str, typer.Option(help="multihop | onehop | full | none | lossy:P[:DELAY]")
    ] = RUN_DEFAULTS.comm,
    task: Annotated[
        str | None, typer.Option(help="the team's overall goal (default: the env family's)")
    ] = RUN_DEFAULTS.task,
    skill: Annotated[
        str | None, typer.Option(help="library planner: every agent runs this named skill (no retrieval)")
    ] = RUN_DEFAULTS.skill,
    decision_interval: Annotated[
        int, typer.Option(min=1, help="env steps between VLM decisions")
    ] = RUN_DEFAULTS.decision_interval,
    reflection: Annotated[
        bool, typer.Option(help="--no-reflection: skip Self-Reflection (ablation)")
    ] = RUN_DEFAULTS.reflection,
    image: Annotated[
        bool, typer.Option(help="--no-image: text-only prompts (ablation)")
    ] = RUN_DEFAULTS.image,
    vlm_cache: Annotated[
        Path | None, typer.Option(help="disk cache of VLM responses")
    ] = RUN_DEFAULTS.vlm_cache,
    isolation: Annotated[
        str,
        typer.Option(help="process (locked-down skill workers, default) | inprocess (trusted skills only)"),
    ] = RUN_DEFAULTS.isolation,
    sandbox_workers: Annotated[
        int, typer.Option(min=1, help="skill worker processes (--isolation process)")
    ] = RUN_DEFAULTS.sandbox_workers,
    sandbox_parts_from: Annotated[
        str,
        typer.Option(
            help="auto | N | off: skill batches of N items or more (batched episodes) go to the worker "
            "in parts it runs as they arrive; auto = 8 where a core is free, else off"
        ),
    ] = str(RUN_DEFAULTS.sandbox_parts_from),
    config: Annotated[
        Path | None, typer.Option(help="YAML file of run settings; options given here override it")
    ] = None,
    run_id: Annotated[
        str | None, typer.Option(help="name of the run directory (default: a fresh unique id)")
    ] = RUN_DEFAULTS.run_id,
    max_repairs: Annotated[
        int, typer.Option(min=0, help="VLM fixes tried per broken skill")
    ] = RUN_DEFAULTS.max_repairs,
    vlm_concurrency: Annotated[
        int, typer.Option(min=1, help="VLM calls in flight at once")
    ] = RUN_DEFAULTS.vlm_concurrency,
    vlm_output: Annotated[
        str, typer.Option(help="auto | json (schema-constrained answers) | text (the paper's format)")
    ] = RUN_DEFAULTS.vlm_output,
    max_vlm_errors: Annotated[
        int, typer.Option(min=0, help="failed VLM calls after which the run stops with exit code 1")
    ] = RUN_DEFAULTS.max_vlm_errors,
    log_prompts: Annotated[
        bool, typer.Option(help="store prompts, images and raw responses in the run directory")
    ] = RUN_DEFAULTS.log_prompts,
    vlm_max_tokens: Annotated[
        int | None, typer.Option(min=16, help="cap on every module's completion tokens (small local models)")
    ] = RUN_DEFAULTS.vlm_max_tokens,
    keep_gate: Annotated[
        str,
        typer.Option(help="off | check | eval: keep new skills only when they hold up (docs/evolution.md)"),
    ] = RUN_DEFAULTS.keep_gate,
    keep_gate_episodes: Annotated[
        int, typer.Option(min=2, help="keep gate: evaluation episodes (paired seeds)")
    ] = RUN_DEFAULTS.keep_gate_episodes,
    keep_gate_steps: Annotated[
        int, typer.Option(min=1, help="keep gate: steps per evaluation episode")
    ] = RUN_DEFAULTS.keep_gate_steps,
    keep_gate_seed: Annotated[
        int, typer.Option(min=0, help="keep gate: first evaluation seed")
    ] = RUN_DEFAULTS.keep_gate_seed,
    keep_gate_judge: Annotated[
        str, typer.Option(help="keep gate: team | author (only the agent that wrote the skill runs it)")
    ] = RUN_DEFAULTS.keep_gate_judge,
) -> None:
    """Play episodes and write runs/<run-id>/ (manifest.json, trace.jsonl, summary.json, optional video)."""
    from compass.cli.config_file import ConfigFileError, build_config, load_config_file

    given = {k: v for k, v in locals().items() if k != "config" and k in RunConfig.model_fields}
    try:
        file_values = load_config_file(config) if config is not None else {}
        cfg = build_config(file_values, _explicit(ctx, given), str(config or ""))
    except ConfigFileError as e:
        _fail(str(e))
    if "planner" not in file_values and planner is None:
        cfg = cfg.model_copy(update={"planner": "vlm" if cfg.vlm else "library"})
    from compass.episode.session import run as run_session
    from compass.vlm import VLMError

    events = _console_events()
    with Progress(
        TextColumn("[bold]episode {task.fields[ep]}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("steps"),
        TimeElapsedColumn(),
        console=err,
        transient=True,
    ) as bar:

        def progress(ep: int, total: int):
            task_id = bar.add_task("", total=total or None, ep=ep)
            return lambda: bar.advance(task_id)

        def on_episode(row: dict) -> None:
            color = {"win": "green", "loss": "red"}.get(row["outcome"], "yellow")
            extra = ""
            failed = row.get("decision_errors", 0)
            if "vlm" in row:
                u = row["vlm"]
                faults = [
                    f"{u[k]} {label}"
                    for k, label in (("errors", "failed"), ("retries", "retried"))
                    if u.get(k)
                ]
                extra = (
                    f"  vlm: {u.get('calls', 0)} calls{' (' + ', '.join(faults) + ')' if faults else ''}, "
                    f"{u.get('prompt_tokens', 0)}+{u.get('completion_tokens', 0)} tokens, ${u.get('cost_usd', 0):.4f}"
                )
                if u.get("tokens", "reported") != "reported":
                    extra += f" (tokens {u['tokens']})"
                failed += u.get("events", {}).get("decision_errors", 0)
            if failed:
                extra += f"  [red]{failed} decision errors[/]"
            if "headline" in row:
                extra += f"  {row['headline']}"
            console.print(
                f"episode {row['episode']} seed {row['seed']}: [{color}]{row['outcome']}[/] "
                f"return {row['return']:.3f} in {row['steps']} steps, "
                f"{row['skill_errors']} skill errors{extra}"
            )

        failure: BaseException | None = None
        try:
            summary = run_session(cfg, on_episode=on_episode, progress=progress)
        # a model that is absent or a replay that does not match (exit 1); a bad request (exit 2)
        except (VLMError, ValueError, FileNotFoundError, FileExistsError, ImportError) as e:
            failure = e
        finally:
            logging.getLogger("compass").removeHandler(events)
    if failure is not None:  # reported once the progress display has let go of the terminal
        _fail(str(failure), exit_code(failure), failure)
    if "vlm_usage" in summary:
        _module_table(summary["vlm_usage"])
    if "headline" in summary:
        result = summary["headline"]
    else:
        o = summary["overall"]
        lo, hi = o["win_rate_ci95"]
        result = f"win rate {o['win_rate']:.2f} [{lo:.2f}, {hi:.2f}]"
    console.print(
        escape(f"{result} over {len(summary['episodes'])} episode(s); run written to {summary['run_dir']}")
    )


def _explicit(ctx: typer.Context | None, values: dict) -> dict:
    """The options the user gave on the command line (not their defaults)."""
    if ctx is None:
        return {}  # `compass` with no command: every option at its default
    given = ("COMMANDLINE", "ENVIRONMENT")
    return {k: v for k, v in values.items() if getattr(ctx.get_parameter_source(k), "name", None) in given}


def _console_events() -> logging.Handler:
    """Show VLM errors, retries, cache hits and planner fallbacks on stderr as they happen."""
    handler = log_handler(err)
    logger = logging.getLogger("compass")
    logger.addHandler(handler)
    if logger.level == logging.NOTSET or logger.level > logging.INFO:
        logger.setLevel(logging.INFO)
    return handler


def _module_table(usage: dict) -> None:
    """Per-module VLM summary: calls, failures, retries, cache hits, usable answers, tokens, latency."""
    table = Table(
        "module",
        "calls",
        "errors",
        "retries",
        "cached",
        "usable",
        "unusable",
        "tokens",
        "s/call",
        title=f"VLM {usage.get('model', '')}",
    )
    for module, m in usage.get("by_module", {}).items():
        table.add_row(
            module,
            str(m.get("calls", 0)),
            str(m.get("errors", 0)),
            str(m.get("retries", 0)),
            str(m.get("cached", 0)),
            str(m.get("usable", 0)),
            str(m.get("unusable", 0)),
            str(m.get("total_tokens", 0)),
            f"{m.get('latency_s_mean', 0):.2f}",
        )
    print_table(console, table)


# --- skills -----------------------------------------------------------------------------------------


def _library(library: Path | None, family: str):
    from compass.skills.library import SkillLibrary, default_library_root

    try:
        lib = SkillLibrary(library or default_library_root(), family)
    except (FileNotFoundError, ValueError) as e:
        _fail(str(e))
    for p in lib.problems:
        err.print(f"[yellow]{'skipped' if p.fatal else 'ignored'}[/] {escape(str(p))}")
    return lib


LibraryOpt = Annotated[Path | None, typer.Option(help="skill library root")]
FamilyOpt = Annotated[str, typer.Option(help="game family (compass.core.family: combat, alem, ...)")]


def skills_list(library: LibraryOpt = None, family: FamilyOpt = "combat") -> None:
    """List skills with provenance, parent and usage."""
    lib = _library(library, family)
    table = Table(Column("name", no_wrap=True), "provenance", "parent", "uses", "errors", "description")
    for name in lib.names():
        s = lib.get(name)
        st = lib.stats.get(name, {})
        table.add_row(
            name,
            s.provenance,
            s.parent or "-",
            str(st.get("uses", 0)),
            str(st.get("errors", 0)),
            (s.description.splitlines() or [""])[0][:70],
        )
    print_table(console, table)


def skills_show(name: str, library: LibraryOpt = None, family: FamilyOpt = "combat") -> None:
    """Print one skill's file."""
    lib = _library(library, family)
    try:
        skill = lib.get(name)
    except KeyError as e:
        _fail(str(e.args[0]))
    print_code(console, skill.file_text())


def skills_search(query: str, k: int = 5, library: LibraryOpt = None, family: FamilyOpt = "combat") -> None:
    """Rank skills by similarity of their description to QUERY."""
    lib = _library(library, family)
    table = Table("score", Column("name", no_wrap=True), "description")
    with err.status("ranking skills (the first search loads the embedding model, ~20 s)"):
        hits = lib.retrieve(query, k)
    for hit in hits:
        table.add_row(
            f"{hit.score:.3f}", hit.skill.name, (hit.skill.description.splitlines() or [""])[0][:80]
        )
    print_table(console, table)


def skills_check(library: LibraryOpt = None, family: FamilyOpt = "combat") -> None:
    """Compile every skill in the sandbox and run it on recorded observations."""
    from compass.skills.check import check_library

    lib = _library(library, family)
    report = check_library(lib)
    table = Table(Column("skill", no_wrap=True), "observations", "errors", "first error")
    for row in report:
        table.add_row(row.name, str(row.runs), str(len(row.errors)), row.errors[0] if row.errors else "")
    print_table(console, table)
    bad = [r for r in report if r.errors] + [p for p in lib.problems if p.fatal]
    if bad:
        err.print(f"[red]{len(bad)} skill file(s) with problems[/]")
        raise typer.Exit(1)
    if report and all(r.runs == 0 for r in report):
        console.print(
            f"[yellow]all {len(report)} skills compiled; no recorded observations to run them on[/]"
        )
        return
    console.print(f"[green]all {len(report)} skills compiled and ran cleanly[/]")


def register(app: typer.Typer, skills: typer.Typer) -> None:
    """Add ``run`` and ``skills list | show | search | check``."""
    app.command("run")(run)
    for name, fn in (
        ("list", skills_list),
        ("show", skills_show),
        ("search", skills_search),
        ("check", skills_check),
    ):
        skills.command(name)(fn)


#: One way to add commands: each command module has ``register(app, skills)`` (the ``compass``
#: app and its ``skills`` group); the order here is the order ``compass --help`` lists them in.
COMMANDS = (
    eval_cli.register,  # eval, runs ...
    demos_cli.register,  # demos ..., skills bootstrap
    register,  # run, skills list | show | search | check
    library_cli.register,  # skills init | add | edit | rm | rename | diff | history | revert
    viewer_cli.register,  # view
    play_cli.register,  # play
)
for _register in COMMANDS:
    _register(app, skills_app)


def entrypoint() -> None:  # pragma: no cover - console script shim
    app(sys.argv[1:])
