"""``compass run --config FILE.yaml``: a run configuration from a file, with command-line overrides.

The file is a YAML mapping of :class:`~compass.config.RunConfig` fields (``max_steps: 60`` or
``max-steps: 60``). Options given on the command line win over the file; the file wins over the
options' defaults. Unknown keys are errors that name the file and key.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from compass.config import RunConfig
from compass.core.errors import CompassError


class ConfigFileError(CompassError, ValueError):
    """The config file cannot be read or does not describe a valid run (one line: what and where)."""


def load_config_file(path: str | Path) -> dict[str, Any]:
    """The mapping in ``path`` with keys normalised to field names (``max-steps`` -> ``max_steps``)."""
    import yaml

    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigFileError(f"cannot read config file {path}: {exc.strerror or exc}") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark is not None else str(path)
        raise ConfigFileError(f"{where}: not valid YAML ({getattr(exc, 'problem', None) or exc})") from None
    if data is None:
        return {}
    if not isinstance(data, Mapping):
        raise ConfigFileError(f"{path}: expected a mapping of run settings, got {type(data).__name__}")
    out = {str(k).replace("-", "_"): v for k, v in data.items()}
    unknown = sorted(set(out) - set(RunConfig.model_fields))
    if unknown:
        raise ConfigFileError(
            f"{path}: unknown setting(s) {', '.join(unknown)}; known: {', '.join(RunConfig.model_fields)}"
        )
    return out


def build_config(
    file_values: Mapping[str, Any], cli_values: Mapping[str, Any], source: str = ""
) -> RunConfig:
    """``RunConfig`` from file values overridden by ``cli_values`` (only options given explicitly)."""
    merged = {**file_values, **cli_values}
    try:
        return RunConfig(**merged)
    except ValidationError as exc:
        where = f"{source}: " if source else ""
        problems = "; ".join(f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors())
        raise ConfigFileError(f"{where}{problems}") from None
