"""Experiment specs: a YAML file of environments, seeds and run configurations (with grids).

Example (``examples/eval/``)::

    name: ablation            # default: the file's stem; the run directory is <out>/<name>
    envs: [smax:protoss_5_vs_5]
    seeds: 50                 # 0..49; or a list [0, 3, 7]; or {start: 100, count: 50}
    workers: 2
    base: {planner: library, epo: true}     # fields every configuration shares
    configs:                                # named configurations (optional)
      - {name: lib}
    grid:                                   # cartesian product on top of each configuration
      comm: [none, onehop, multihop]

A configuration takes every ``compass run`` option (:class:`~compass.config.RunConfig`) except
``episodes``/``seed``/``out``/``run_id``/``video``, plus ``team`` and ``enemy`` (per-unit
controllers, :mod:`compass.eval.controllers`; ``{scenario}`` in them is each env's scenario, e.g.
``mappo:demos/{scenario}_epo/checkpoint``). Every error names the file, line and field.
"""

from __future__ import annotations

import difflib
import hashlib
import itertools
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from compass.config import SPEED_ONLY, RunConfig
from compass.core.errors import CompassError

_NOT_PER_EPISODE = ("episodes", "seed", "out", "run_id", "video")


class SpecError(CompassError, ValueError):
    """A spec that cannot run; the message names file, line and field."""


class ConfigSpec(RunConfig):
    """One configuration: a run configuration plus who controls which units."""

    name: str = ""
    #: ``compass`` (this configuration's planner) or per unit: ``0-2 compass, 3-4 mappo:ckpt/``
    team: str = "compass"
    #: ``default`` (the environment's own opponent, e.g. SMAX's heuristic) or a team spec
    enemy: str = "default"

    @model_validator(mode="after")
    def _per_episode_fields(self) -> ConfigSpec:
        bad = [f for f in _NOT_PER_EPISODE if f in self.model_fields_set]
        if bad:
            raise ValueError(f"{bad[0]} is set by the eval (seeds, out), not per configuration")
        return self

    @field_validator("comm")
    @classmethod
    def _comm_mode(cls, v: str) -> str:
        from compass.comm.modes import parse_mode

        parse_mode(v)
        return v

    @field_validator("env")
    @classmethod
    def _known_env(cls, v: str) -> str:
        check_env(v)
        return v

    @field_validator("team", "enemy")
    @classmethod
    def _team_syntax(cls, v: str, info) -> str:
        from compass.eval.controllers import parse_team

        if not (info.field_name == "enemy" and v == "default"):
            parse_team(v)
        return v

    def run_config(self, env: str, seed: int, max_steps: int | None) -> RunConfig:
        """The ``RunConfig`` of one episode of this configuration."""
        fields = self.model_dump(exclude={"name", "team", "enemy"})
        fields.update(env=env, seed=seed, episodes=1)
        if max_steps is not None and self.max_steps is None:
            fields["max_steps"] = max_steps
        return RunConfig(**fields)

    def fields(self) -> dict[str, Any]:
        """The configuration as plain data (what a worker rebuilds it from)."""
        return self.model_dump(mode="json", exclude=set(_NOT_PER_EPISODE))

    def key(self) -> str:
        """A hash of everything that determines this configuration's episodes (resume checks it;
        not :data:`~compass.config.SPEED_ONLY` settings, which change no episode)."""
        fields = {k: v for k, v in self.fields().items() if k != "name" and k not in SPEED_ONLY}
        blob = json.dumps(fields, sort_keys=True)
        return hashlib.sha256(blob.encode()).hexdigest()[:16]


def check_env(spec: str) -> None:
    """``KIND:SCENARIO`` names a registered family and one of its scenarios."""
    from compass.core.family import family_for_env

    family = family_for_env(spec)
    kind, _, scenario = spec.partition(":")
    valid = family.scenarios.get(kind)
    if valid and scenario not in valid:
        raise ValueError(f"unknown scenario {scenario!r} for {kind}; valid: {', '.join(valid)}")


class SeedRange(BaseModel):
    model_config = ConfigDict(extra="forbid")
    start: int = 0
    count: int = Field(ge=1)


class EvalSpec(BaseModel):
    """The file as written (before grids are expanded)."""

    model_config = ConfigDict(extra="forbid")

    name: str | None = None
    envs: list[str] = Field(default_factory=lambda: ["smax:protoss_5_vs_5"], min_length=1)
    seeds: int | list[int] | SeedRange = 10
    workers: int = Field(1, ge=1)
    max_steps: int | None = Field(None, ge=1)
    #: write each episode's trace.jsonl under <run>/traces/ (off: traces are big and evals are many)
    traces: bool = False
    base: dict[str, Any] = Field(default_factory=dict)
    configs: list[dict[str, Any]] = Field(default_factory=list)
    grid: dict[str, list[Any]] = Field(default_factory=dict)

    @field_validator("envs")
    @classmethod
    def _envs(cls, v: list[str]) -> list[str]:
        for e in v:
            RunConfig(env=e)
            check_env(e)
        return v

    @field_validator("seeds")
    @classmethod
    def _seeds(cls, v):
        if isinstance(v, int) and v < 1:
            raise ValueError("seeds must be >= 1 (a count), a list of seeds or {start, count}")
        if isinstance(v, list):
            if not v:
                raise ValueError("seeds list is empty")
            if len(set(v)) != len(v):
                raise ValueError("seeds list repeats a seed")
        return v

    @field_validator("grid")
    @classmethod
    def _grid(cls, v: dict[str, list[Any]]) -> dict[str, list[Any]]:
        for k, values in v.items():
            if not values:
                raise ValueError(f"grid.{k} is empty")
        return v


@dataclass(frozen=True)
class Plan:
    """A validated, expanded spec: what to run."""

    name: str
    envs: tuple[str, ...]
    seeds: tuple[int, ...]
    workers: int
    max_steps: int | None
    traces: bool
    configs: tuple[ConfigSpec, ...]
    source: str  # the YAML text

    def jobs(self, run_dir: Path | None = None) -> list[Job]:
        """Every episode, ordered config by config, env by env, seed by seed."""
        traces = str(Path(run_dir) / "traces") if self.traces and run_dir is not None else None
        return [
            Job(c.name, e, s, for_env(c.fields(), e), self.max_steps, traces)
            for c in self.configs
            for e in self.envs
            for s in self.seeds
        ]


def for_env(fields: dict[str, Any], env: str) -> dict[str, Any]:
    """A configuration's fields for one env: ``{scenario}`` in ``team``/``enemy`` becomes the env's
    scenario, so one configuration can name a checkpoint per scenario
    (``mappo:demos/{scenario}_epo/checkpoint``)."""
    scenario = env.partition(":")[2]
    return {
        **fields,
        **{k: fields[k].replace("{scenario}", scenario) for k in ("team", "enemy") if k in fields},
    }


@dataclass(frozen=True)
class Job:
    """One episode: a pure function of (config, env, seed)."""

    config: str
    env: str
    seed: int
    config_fields: dict[str, Any]
    max_steps: int | None
    trace_root: str | None = None  # write this episode's trace under it (a path the worker can reach)

    @property
    def key(self) -> tuple[str, str, int]:
        return (self.config, self.env, self.seed)


def _line_map(text: str) -> dict[tuple, int]:
    """YAML path (keys and list indices) -> 1-based line of its value (or key)."""
    out: dict[tuple, int] = {}

    def walk(node, path: tuple) -> None:
        out[path] = node.start_mark.line + 1
        if isinstance(node, yaml.MappingNode):
            for k, v in node.value:
                out[(*path, k.value)] = k.start_mark.line + 1
                walk(v, (*path, k.value))
                out[(*path, k.value)] = k.start_mark.line + 1
        elif isinstance(node, yaml.SequenceNode):
            for i, v in enumerate(node.value):
                walk(v, (*path, i))

    root = yaml.compose(text)
    if root is not None:
        walk(root, ())
    return out


def _where(path_map: dict[tuple, int], loc: tuple) -> int | None:
    loc = tuple(loc)
    while loc:
        if loc in path_map:
            return path_map[loc]
        loc = loc[:-1]
    return path_map.get(())


def _dotted(loc: tuple) -> str:
    out = ""
    for p in loc:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out


def _first_error(e: ValidationError, model: type[BaseModel]) -> tuple[tuple, str]:
    x = e.errors()[0]
    msg = x["msg"].removeprefix("Value error, ")
    if x["type"] == "extra_forbidden":
        msg = "unknown field"
        if len(x["loc"]) == 1:  # one of ``model``'s own fields was meant (seed -> seeds)
            close = difflib.get_close_matches(str(x["loc"][0]), list(model.model_fields), n=1)
            msg += f" (did you mean {close[0]!r}?)" if close else ""
    return tuple(p for p in x["loc"] if not (isinstance(p, str) and p.startswith("function-"))), msg


def load_spec(path: str | Path, seeds: int | None = None, workers: int | None = None) -> Plan:
    """Read and validate a spec; ``seeds``/``workers`` override the file's. Raises :class:`SpecError`."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        raise SpecError(f"{path}: cannot read spec ({e.strerror})") from None
    return parse_spec(text, str(path), default_name=path.stem, seeds=seeds, workers=workers)


def parse_spec(
    text: str, filename: str = "<spec>", default_name: str = "eval", seeds: int | None = None, workers=None
) -> Plan:
    """Validate spec text and expand its grid into configurations."""
    try:
        raw = yaml.safe_load(text)
        lines = _line_map(text)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f":{mark.line + 1}" if mark else ""
        raise SpecError(f"{filename}{where}: not valid YAML ({getattr(e, 'problem', e)})") from None
    if not isinstance(raw, dict):
        raise SpecError(f"{filename}:1: a spec is a mapping (envs, seeds, configs, grid...)")

    def fail(loc: tuple, msg: str, line_loc: tuple | None = None) -> SpecError:
        line = _where(lines, line_loc if line_loc is not None else loc)
        return SpecError(f"{filename}:{line}: {_dotted(loc)}: {msg}" if loc else f"{filename}:{line}: {msg}")

    try:
        spec = EvalSpec(**raw)
    except ValidationError as e:
        loc, msg = _first_error(e, EvalSpec)
        raise fail(loc, msg) from None
    except Exception as e:  # a validator's own error (unknown family...)
        raise SpecError(f"{filename}: {e}") from None

    def check(fields: dict, where: tuple, field: str | None = None) -> None:
        for k in _NOT_PER_EPISODE:
            if k in fields:
                raise fail(
                    (*where, k) if field is None else where,
                    f"{k} is set by the eval (seeds, out), not per configuration",
                )
        try:
            ConfigSpec(**fields)
        except ValidationError as e:
            loc, msg = _first_error(e, ConfigSpec)
            if field is not None and loc[:1] == (field,):
                loc = loc[1:]  # grid.comm[1], not grid.comm[1].comm
            raise fail((*where, *loc), msg) from None

    check(spec.base, ("base",))
    for i, c in enumerate(spec.configs):
        check({**spec.base, **c}, ("configs", i))
    for k, values in spec.grid.items():
        if k == "name":
            raise fail(("grid", k), "the name of a grid configuration is made from its values")
        for j, v in enumerate(values):
            check({**spec.base, k: v}, ("grid", k, j), k)

    configs: list[ConfigSpec] = []
    names: dict[str, int] = {}
    keys = list(spec.grid)
    for i, c in enumerate(spec.configs or [{}]):
        for combo in itertools.product(*(spec.grid[k] for k in keys)):
            point = dict(zip(keys, combo, strict=True))
            fields = {**spec.base, **c, **point}
            label = ",".join(f"{k}={_short(v)}" for k, v in point.items())
            base_name = c.get("name") or ""
            fields["name"] = "/".join(x for x in (base_name, label) if x) or f"config{i}"
            where = ("configs", i) if spec.configs else ("grid",)
            try:
                cfg = ConfigSpec(**fields)
            except ValidationError as e:
                loc, msg = _first_error(e, ConfigSpec)
                raise fail((*where, *loc), msg) from None
            if cfg.name in names:
                raise fail(where, f"two configurations are both named {cfg.name!r}")
            names[cfg.name] = i
            configs.append(cfg)

    if seeds is not None:
        seed_list = tuple(range(seeds))
    elif isinstance(spec.seeds, int):
        seed_list = tuple(range(spec.seeds))
    elif isinstance(spec.seeds, SeedRange):
        seed_list = tuple(range(spec.seeds.start, spec.seeds.start + spec.seeds.count))
    else:
        seed_list = tuple(spec.seeds)
    name = spec.name or default_name
    if not name or "/" in name or name.startswith("."):
        raise fail(("name",), f"not usable as a directory name: {name!r}")
    return Plan(
        name=name,
        envs=tuple(spec.envs),
        seeds=seed_list,
        workers=workers or spec.workers,
        max_steps=spec.max_steps,
        traces=spec.traces,
        configs=tuple(configs),
        source=text,
    )


def _short(v: Any) -> str:
    if isinstance(v, bool):
        return "on" if v else "off"
    return str(v)
