"""``compass run --config FILE.yaml``: a run configuration from a file, with command-line overrides.

The file is a YAML mapping of :class:`~compass.config.RunConfig` fields (``max_steps: 60`` or
``max-steps: 60``). Options given on the command line win over the file; the file wins over the
options' defaults. Every error names the file, the line and the setting (``run.yaml:2: unknown
setting 'episods' (did you mean 'episodes'?)``), checked before anything is built: the values'
types, and a file's ``comm`` mode and ``env`` scenario too.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from compass.config import RunConfig
from compass.core.errors import CompassError


class ConfigFileError(CompassError, ValueError):
    """The config file cannot be read or does not describe a valid run (one line: what and where)."""


class FileValues(dict):
    """A config file's settings; ``lines``: each setting's 1-based line in the file."""

    lines: dict[str, int]


def load_config_file(path: str | Path) -> FileValues:
    """The mapping in ``path`` with keys normalised to field names (``max-steps`` -> ``max_steps``)."""
    import yaml

    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
        data = yaml.safe_load(text)
    except OSError as exc:
        raise ConfigFileError(f"cannot read config file {path}: {exc.strerror or exc}") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark is not None else str(path)
        raise ConfigFileError(f"{where}: not valid YAML ({getattr(exc, 'problem', None) or exc})") from None
    out = FileValues()
    out.lines = {}
    if data is None:
        return out
    if not isinstance(data, Mapping):
        raise ConfigFileError(f"{path}: expected a mapping of run settings, got {type(data).__name__}")
    root = yaml.compose(text)  # the same document, for the keys' lines
    for key, _ in root.value:
        out.lines[str(key.value).replace("-", "_")] = key.start_mark.line + 1
    out.update({str(k).replace("-", "_"): v for k, v in data.items()})
    for k in out:
        if k not in RunConfig.model_fields:
            close = difflib.get_close_matches(k, list(RunConfig.model_fields), n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise ConfigFileError(
                f"{path}:{out.lines.get(k, 1)}: unknown setting {k!r}{hint}; "
                f"known: {', '.join(RunConfig.model_fields)}"
            )
    return out


def build_config(
    file_values: Mapping[str, Any], cli_values: Mapping[str, Any], source: str = ""
) -> RunConfig:
    """``RunConfig`` from file values overridden by ``cli_values`` (only options given explicitly)."""
    lines = getattr(file_values, "lines", {})

    def where(field: str) -> str:
        """``FILE:LINE: `` for a value the file gave, ``FILE: `` (or nothing) otherwise."""
        if field in file_values and field not in cli_values and field in lines:
            return f"{source}:{lines[field]}: "
        return f"{source}: " if source else ""

    merged = {**file_values, **cli_values}
    try:
        cfg = RunConfig(**merged)
    except ValidationError as exc:
        errors = exc.errors()
        field = str(errors[0]["loc"][0]) if errors[0]["loc"] else ""
        problems = "; ".join(f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in errors)
        raise ConfigFileError(f"{where(field)}{problems}") from None
    # Checked later for a command-line value too, but then nothing says which file and line.
    from compass.comm.modes import parse_mode
    from compass.eval.spec import check_env

    for field, check in (("comm", parse_mode), ("env", check_env)):
        if field in file_values and field not in cli_values:
            try:
                check(getattr(cfg, field))
            except ValueError as exc:
                raise ConfigFileError(f"{where(field)}{field}: {exc}") from None
    return cfg
