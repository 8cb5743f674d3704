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

from compass.cli_errors import ErrorReportingGroup, set_debug
from compass.cli_errors import state as cli_state
from compass.config import DEFAULT_ENV, RunConfig
from compass.demos.cli import demos_app, skills_bootstrap
from compass.eval.cli import register as register_eval
from compass.library_cli import register as register_library_commands
from compass.util.console import Console, log_handler, print_code, print_exception, print_table
from compass.viewer.cli import view_command

app = typer.Typer(
    cls=ErrorReportingGroup,
    add_completion=False,
    no_args_is_help=False,
    help="compass: VLM agents that write and choose skills.",
)
skills_app = typer.Typer(no_args_is_help=True, help="Inspect and check the skill library.")
app.add_typer(skills_app, name="skills")
register_eval(app)  # compass eval, compass runs (compass/eval/cli.py)
app.add_typer(demos_app, name="demos")
skills_app.command("bootstrap")(skills_bootstrap)
console = Console()
err = Console(stderr=True, soft_wrap=True)


def _fail(message: str, exc: BaseException | None = None, code: int = 2) -> None:
    exc = exc or sys.exc_info()[1]
    if cli_state.debug and exc is not None:  # --debug: the traceback of the error being reported
        print_exception(err, exc)
    err.print(f"[bold red]error:[/] {escape(message)}", soft_wrap=True)  # one line, however long
    raise typer.Exit(code)


@app.callback(invoke_without_command=True)
def main(
    ctx: typer.Context,
    debug: Annotated[bool, typer.Option("--debug", help="show tracebacks and debug logs")] = False,
) -> None:
    """With no command, play the embedded default (one library-only SMAX episode)."""
    set_debug(debug)
    if ctx.invoked_subcommand is None:
        ctx.invoke(run)


@app.command()
def run(
    ctx: typer.Context = None,  # type: ignore[assignment]  # None when `compass` runs the default
    env: Annotated[
        str, typer.Option(help="FAMILY:SCENARIO, e.g. smax:protoss_5_vs_5, smacv2:zerg_5_vs_6, alem:hard")
    ] = DEFAULT_ENV,
    episodes: Annotated[int, typer.Option(min=1)] = 1,
    seed: int = 0,
    planner: Annotated[
        str | None, typer.Option(help="library (no VLM) or vlm; default: vlm when --vlm is given")
    ] = None,
    vlm: Annotated[
        str | None,
        typer.Option(
            help="openai:MODEL[@URL][?dialect=...], anthropic:MODEL[@URL], llamacpp:PATH.gguf, hf:PATH, replay:RUN_DIR"
        ),
    ] = None,
    library: Annotated[
        Path | None, typer.Option(help="skill library root (holds one folder per game family)")
    ] = None,
    out: Annotated[Path, typer.Option(help="where run directories go")] = Path("runs"),
    max_steps: Annotated[int | None, typer.Option(min=1, help="cap on episode length")] = None,
    video: Annotated[bool, typer.Option(help="write videos/episode_NNN.mp4, one per episode")] = False,
    epo: Annotated[
        bool, typer.Option(help="SMACv2 extended partial observability (prob_obs_enemy=0)")
    ] = False,
    comm: Annotated[str, typer.Option(help="multihop | onehop | full | none | lossy:P[:DELAY]")] = "multihop",
    task: Annotated[
        str | None, typer.Option(help="the team's overall goal (default: the env family's)")
    ] = None,
    skill: Annotated[
        str | None, typer.Option(help="library planner: every agent runs this named skill (no retrieval)")
    ] = None,
    decision_interval: Annotated[int, typer.Option(min=1, help="env steps between VLM decisions")] = 8,
    reflection: Annotated[bool, typer.Option(help="--no-reflection: skip Self-Reflection (ablation)")] = True,
    image: Annotated[bool, typer.Option(help="--no-image: text-only prompts (ablation)")] = True,
    vlm_cache: Annotated[Path | None, typer.Option(help="disk cache of VLM responses")] = None,
    isolation: Annotated[
        str,
        typer.Option(help="process (locked-down skill workers, default) | inprocess (trusted skills only)"),
    ] = "process",
    sandbox_workers: Annotated[
        int, typer.Option(min=1, help="skill worker processes (--isolation process)")
    ] = 1,
    config: Annotated[
        Path | None, typer.Option(help="YAML file of run settings; options given here override it")
    ] = None,
    run_id: Annotated[
        str | None, typer.Option(help="name of the run directory (default: a fresh unique id)")
    ] = None,
    max_repairs: Annotated[int, typer.Option(min=0, help="VLM fixes tried per broken skill")] = 2,
    vlm_concurrency: Annotated[int, typer.Option(min=1, help="VLM calls in flight at once")] = 8,
    vlm_output: Annotated[
        str, typer.Option(help="auto | json (schema-constrained answers) | text (the paper's format)")
    ] = "auto",
    max_vlm_errors: Annotated[
        int, typer.Option(min=0, help="failed VLM calls after which the run stops with exit code 1")
    ] = 10,
    log_prompts: Annotated[
        bool, typer.Option(help="store prompts, images and raw responses in the run directory")
    ] = False,
    vlm_max_tokens: Annotated[
        int | None, typer.Option(min=16, help="cap on every module's completion tokens (small local models)")
    ] = None,
    keep_gate: Annotated[
        str,
        typer.Option(help="off | check | eval: keep new skills only when they hold up (docs/evolution.md)"),
    ] = "off",
    keep_gate_episodes: Annotated[
        int, typer.Option(min=2, help="keep gate: evaluation episodes (paired seeds)")
    ] = 20,
    keep_gate_steps: Annotated[
        int, typer.Option(min=1, help="keep gate: steps per evaluation episode")
    ] = 300,
    keep_gate_seed: Annotated[int, typer.Option(min=0, help="keep gate: first evaluation seed")] = 1000,
    keep_gate_judge: Annotated[
        str, typer.Option(help="keep gate: team | author (only the agent that wrote the skill runs it)")
    ] = "team",
) -> None:
    """Play episodes and write runs/<run-id>/ (manifest.json, trace.jsonl, summary.json, optional video)."""
    from compass.config_file import ConfigFileError, build_config, load_config_file

    given = {k: v for k, v in locals().items() if k != "config" and k in RunConfig.model_fields}
    try:
        file_values = load_config_file(config) if config is not None else {}
        cfg = build_config(file_values, _explicit(ctx, given), str(config or ""))
    except ConfigFileError as e:
        _fail(str(e))
    if "planner" not in file_values and planner is None:
        cfg = cfg.model_copy(update={"planner": "vlm" if cfg.vlm else "library"})
    from compass.session import run as run_session
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

        failure: tuple[str, BaseException, int] | None = None
        try:
            summary = run_session(cfg, on_episode=on_episode, progress=progress)
        except VLMError as e:  # the model is absent or the replay does not match: no result
            failure = (str(e), e, 1)
        except (ValueError, FileNotFoundError, FileExistsError, ImportError) as e:
            failure = (str(e), e, 2)
        finally:
            logging.getLogger("compass").removeHandler(events)
    if failure is not None:  # reported once the progress display has let go of the terminal
        _fail(*failure)
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


@skills_app.command("list")
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


@skills_app.command("show")
def skills_show(name: str, library: LibraryOpt = None, family: FamilyOpt = "combat") -> None:
    """Print one skill's file."""
    lib = _library(library, family)
    try:
        skill = lib.get(name)
    except KeyError as e:
        _fail(str(e.args[0]))
    print_code(console, skill.file_text())


@skills_app.command("search")
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


@skills_app.command("check")
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


register_library_commands(skills_app)  # add | edit | rm | rename | diff | history | revert
app.command("view")(view_command)


def entrypoint() -> None:  # pragma: no cover - console script shim
    app(sys.argv[1:])


if __name__ == "__main__":  # python -m compass.cli (runs this checkout, not an installed copy)
    app()
