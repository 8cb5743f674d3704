"""``compass eval SPEC`` and ``compass runs list|show|compare`` (registered in ``compass.cli``)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table

from compass.cli.errors import fail as _fail
from compass.util.console import Console, print_markdown, print_table

console = Console()
err = Console(stderr=True)
runs_app = typer.Typer(no_args_is_help=True, help="List, show and compare runs and evals.")


def eval_command(
    spec: Annotated[Path, typer.Argument(help="experiment spec (YAML); see examples/eval/")],
    seeds: Annotated[int | None, typer.Option(min=1, help="override the spec: seeds 0..N-1")] = None,
    workers: Annotated[
        int | None, typer.Option(min=1, help="override the spec: parallel worker processes")
    ] = None,
    ray: Annotated[
        str | None,
        typer.Option(help="run on Ray: local (a private instance), auto (the running cluster) or ADDRESS"),
    ] = None,
    batch: Annotated[
        int | None,
        typer.Option(
            min=1,
            help=escape(
                "most episodes of one configuration played at once in one batched env "
                "(where it applies: no VLM planner, the env's own enemy, SMAX or ALEM; 1: one by one) "
                "[default: 16]"  # (compass.eval.driver.DEFAULT_BATCH, not imported for --help)
            ),
        ),
    ] = None,
    out: Annotated[Path, typer.Option(help="where eval directories go (<out>/<spec name>)")] = Path("runs"),
) -> None:
    """Run an experiment spec over seeds; resumable; writes episodes.csv, report.md and report.png."""
    from compass.eval.driver import DEFAULT_BATCH, prepare, run_eval
    from compass.eval.episode import EpisodeError
    from compass.eval.report import write_report
    from compass.eval.spec import SpecError, load_spec

    try:
        plan = load_spec(spec, seeds=seeds, workers=workers)
        prepared = prepare(plan, out)
    except (SpecError, ValueError, OSError) as e:
        _fail(str(e))
    n_done = prepared.total - len(prepared.todo)
    where = f"Ray ({ray})" if ray else f"{plan.workers} local worker(s)"
    err.print(
        f"{plan.name}: {len(plan.configs)} configuration(s) x {len(plan.envs)} env(s) x {len(plan.seeds)} seed(s) = "
        f"{prepared.total} episodes; {n_done} already done; {len(prepared.todo)} to play on {where}"
    )
    t0 = time.perf_counter()
    with Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[last]}"),
        TimeElapsedColumn(),
        TextColumn("ETA"),
        TimeRemainingColumn(),
        console=err,
        transient=True,
    ) as bar:
        task = bar.add_task("episodes", total=prepared.total, completed=n_done, last="")

        def on_row(row: dict) -> None:
            bar.update(task, advance=1, last=f"{row['config']} seed {row['seed']}: {row['outcome']}")

        try:
            rows = run_eval(prepared, plan.workers, ray, on_row, batch or DEFAULT_BATCH)
        except EpisodeError as e:
            if not e.user_error:
                err.print(escape(e.tb))
            _fail(
                f"{e}; finished episodes are kept in {prepared.run_dir / 'episodes.csv'} (rerun to resume)", 1
            )
        except (ImportError, ConnectionError) as e:
            _fail(str(e))
        except KeyboardInterrupt:
            _fail(f"interrupted; finished episodes are kept in {prepared.run_dir} (rerun to resume)", 130)
    keys = {j.key for j in plan.jobs()}
    mine = [r for r in rows if (r["config"], r["env"], r["seed"]) in keys]
    summary = write_report(prepared.run_dir, mine, plan.name, [c.name for c in plan.configs])
    from compass.eval.report import markdown

    print_markdown(console, markdown(summary, plan.name))
    console.print(
        f"{len(prepared.todo)} episode(s) played in {time.perf_counter() - t0:.1f} s; "
        f"report: {prepared.run_dir / 'report.md'}, {prepared.run_dir / 'report.png'}"
    )


OutOpt = Annotated[Path, typer.Option(help="where runs live")]


@runs_app.command("list")
def runs_list(out: OutOpt = Path("runs")) -> None:
    """Every eval and run directory under --out, newest first."""
    from compass.eval.runs import fmt_time, list_runs

    infos = list_runs(out)
    if not infos:
        console.print(escape(f"no runs under {out}"))
        return
    table = Table("run", "kind", "when", "env(s)", "config(s)", "episodes", "status / result")
    for i in infos:
        configs = ", ".join(i.configs) if len(i.configs) <= 3 else f"{len(i.configs)} configurations"
        table.add_row(
            i.path.name, i.kind, fmt_time(i.modified), ", ".join(i.envs), configs, str(i.episodes), i.headline
        )
    print_table(console, table)


@runs_app.command("show")
def runs_show(
    run: Annotated[str, typer.Argument(help="RUN (directory or name under --out)")],
    out: OutOpt = Path("runs"),
) -> None:
    """A readable summary: per configuration metrics with CIs, costs, paired comparisons."""
    from compass.eval.report import markdown, summarize
    from compass.eval.runs import is_eval_dir, resolve_run, rows_of
    from compass.eval.store import read_meta

    try:
        path, config = resolve_run(run, out)
        rows = rows_of(path)
    except (FileNotFoundError, ValueError) as e:
        _fail(str(e))
    if config:
        rows = [r for r in rows if r["config"] == config]
    if not rows:
        _fail(f"{path} has no finished episodes yet")
    order = read_meta(path).get("config_order") if is_eval_dir(path) else None
    print_markdown(console, markdown(summarize(rows, order), path.name))
    if is_eval_dir(path) and not (path / "report.md").exists():
        console.print(
            "[yellow]partial: the eval has not finished (rerun compass eval on its spec to resume)[/]"
        )


@runs_app.command("compare")
def runs_compare(
    a: Annotated[str, typer.Argument(help="RUN or RUN:CONFIG")],
    b: Annotated[str, typer.Argument(help="RUN or RUN:CONFIG")],
    out: OutOpt = Path("runs"),
) -> None:
    """Two runs (or two configurations of evals) side by side on the seeds both played."""
    from compass.eval.report import metric_names, metric_value, paired_comparison
    from compass.eval.runs import resolve_run, rows_of

    sides = []
    for target in (a, b):
        try:
            path, config = resolve_run(target, out)
            rows = rows_of(path)
        except (FileNotFoundError, ValueError) as e:
            _fail(str(e))
        configs = list(dict.fromkeys(r["config"] for r in rows))
        if config is None and len(configs) > 1:
            _fail(
                f"{target} holds {len(configs)} configurations; pick one as {target}:CONFIG ({', '.join(configs)})"
            )
        config = config or (configs[0] if configs else None)
        chosen = [r for r in rows if r["config"] == config]
        if not chosen:
            _fail(f"{target}: no episodes of configuration {config!r} (has: {', '.join(configs)})")
        sides.append([{**r, "config": target} for r in chosen])
    rows = sides[0] + sides[1]
    names = metric_names(rows)
    ra = {(r["env"], r["seed"]): r for r in sides[0]}
    rb = {(r["env"], r["seed"]): r for r in sides[1]}
    common = sorted(set(ra) & set(rb))
    if not common:
        _fail(f"{a} and {b} share no (env, seed) episodes")
    table = Table("env", "seed", f"A: {a}", f"B: {b}", *(f"Δ {n}" for n in names))
    for k in common:
        x, y = ra[k], rb[k]

        def cell(r):
            extra = "  ".join(f"{n} {metric_value(r, n):.1f}" for n in names if n != "win")
            return f"{r['outcome']} ({r['steps']} steps){'  ' + extra if extra else ''}"

        diffs = [f"{metric_value(x, n) - metric_value(y, n):+.2f}" for n in names]
        table.add_row(k[0], str(k[1]), cell(x), cell(y), *diffs)
    print_table(console, table)
    p = paired_comparison(rows, a, b, names)
    for n in names:
        s = 100.0 if n == "win" else 1.0
        ma = sum(metric_value(ra[k], n) for k in common) / len(common) * s
        mb = sum(metric_value(rb[k], n) for k in common) / len(common) * s
        d = p[n]
        console.print(
            f"{'win %' if n == 'win' else n}: A {ma:.1f}, B {mb:.1f}, A - B {d['diff'] * s:+.1f} "
            f"[{d['ci95'][0] * s:+.1f}, {d['ci95'][1] * s:+.1f}] over {len(common)} common seeds"
        )
    console.print(
        f"seeds only A won: {p['wins_only_a']}, only B won: {p['wins_only_b']} (sign test p = {p['sign_test_p']:.3g}); "
        f"only in A: {len(set(ra) - set(rb))}, only in B: {len(set(rb) - set(ra))}"
    )


def register(app: typer.Typer, skills: typer.Typer) -> None:
    """Add ``eval`` and ``runs`` to the ``compass`` command line."""
    app.command("eval")(eval_command)
    app.add_typer(runs_app, name="runs")
