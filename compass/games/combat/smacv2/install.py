"""Finding smacv2, pysc2 and StarCraft II, and saying exactly what to install when one is missing.

``compass run --env smacv2:...`` must fail at once with install instructions, not a traceback from
deep inside pysc2. :func:`require_smacv2` checks everything the adapter needs before a game is
launched and raises :class:`Smacv2NotInstalledError` (an ``ImportError``, which the CLI prints as
a plain message) listing only the steps still missing.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from dataclasses import dataclass
from pathlib import Path

from compass.core.errors import CompassError

# The map file every 10gen_<race> scenario loads (smacv2's map registry: map_name "32x32_flat").
SMACV2_MAP_FILE = "32x32_flat.SC2Map"
SMACV2_GIT = "git+https://github.com/oxwhirl/smacv2.git"
SMACV2_MAPS_URL = "https://github.com/oxwhirl/smacv2/releases/download/maps/SMAC_Maps.zip"
SC2_LINUX_URL = "https://blzdistsc2-a.akamaihd.net/Linux/SC2.4.10.zip"
DOCS = "docs/smacv2.md"

# Lines stay short and free of square brackets: the CLI prints this through rich, which would wrap
# long lines and read "[...]" as markup.
STEP_PYTHON = (
    "pysc2 (brings s2clientprotocol, absl-py, pygame), then smacv2 from git\n"
    "   (not on PyPI; the PyPI package `smac` is an unrelated project):\n"
    "     pip install pysc2\n"
    f"     pip install --no-deps {SMACV2_GIT}"
)
STEP_PROTOBUF = (
    "the pure-Python protobuf runtime, which loads pysc2's old generated code:\n"
    "     export PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION=python\n"
    "   (compass sets it if protobuf is not loaded yet; or use protobuf 3.20.3)"
)
STEP_GAME = (
    "StarCraft II 4.10, Linux package (Blizzard's s2client-proto downloads;\n"
    "   the zip password iagreetotheeula accepts Blizzard's AI/ML license):\n"
    f"     wget {SC2_LINUX_URL}\n"
    "     unzip -P iagreetotheeula SC2.4.10.zip -d ~\n"
    "     export SC2PATH=~/StarCraftII\n"
    "   (macOS/Windows: the Battle.net game; set SC2PATH to its folder)"
)
STEP_MAPS = (
    "the SMACv2 maps (smacv2's release 'maps') into $SC2PATH/Maps/SMAC_Maps:\n"
    f"     wget {SMACV2_MAPS_URL}\n"
    "     mkdir -p $SC2PATH/Maps/SMAC_Maps\n"
    "     unzip -j SMAC_Maps.zip '*.SC2Map' -d $SC2PATH/Maps/SMAC_Maps\n"
    f"   (the race scenarios load {SMACV2_MAP_FILE})"
)


class Smacv2NotInstalledError(CompassError, ImportError):
    """smacv2, pysc2, StarCraft II or the SMACv2 maps are missing; the message says what to install."""


@dataclass(frozen=True)
class Sc2Install:
    """Where StarCraft II and the SMACv2 map were found."""

    sc2_path: Path
    map_path: Path


def default_sc2_path() -> Path:
    """``$SC2PATH``, else the platform's default install folder (as pysc2 looks it up)."""
    if os.environ.get("SC2PATH"):
        return Path(os.environ["SC2PATH"]).expanduser()
    if sys.platform == "darwin":
        return Path("/Applications/StarCraft II")
    if sys.platform == "win32":
        return Path("C:/Program Files (x86)/StarCraft II")
    return Path("~/StarCraftII").expanduser()


WRAPPER_MODULE = "smacv2.env.starcraft2.wrapper"


def import_problem(package: str = "smacv2", module: str = WRAPPER_MODULE) -> str | None:
    """Why smacv2's environment (``module`` of ``package``) cannot be imported, or None when it can."""
    # pysc2's *_pb2 modules predate protobuf 4; the pure-Python runtime still loads them. It is
    # chosen when protobuf is first imported, so this only helps if nothing imported it yet.
    os.environ.setdefault("PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION", "python")
    spec = importlib.util.find_spec(package)
    # A bare folder named smacv2 on sys.path is a namespace package, not smacv2.
    if spec is None or spec.origin in (None, "namespace"):
        return f"{package} is not installed (ModuleNotFoundError: {package})"
    try:
        importlib.import_module(module)
    except ImportError as e:
        return f"cannot import {module} ({type(e).__name__}: {e})"
    except TypeError as e:
        # protobuf's "Descriptors cannot be created directly" for old generated code.
        if "Descriptors cannot be created directly" in str(e):
            return "protobuf refused pysc2's generated code (Descriptors cannot be created directly)"
        raise
    return None


def find_sc2(sc2_path: Path | None = None) -> tuple[Sc2Install | None, list[str]]:
    """Locate the game and the SMACv2 map; return the install or the problems found."""
    root = sc2_path or default_sc2_path()
    problems: list[str] = []
    versions = root / "Versions"
    if not root.is_dir():
        problems.append(f"StarCraft II not found at {root} (SC2PATH is {os.environ.get('SC2PATH', 'unset')})")
    elif not versions.is_dir() or not any(p.name.startswith("Base") for p in versions.iterdir()):
        problems.append(f"{root} has no Versions/Base* game binary: not a StarCraft II install")
    map_path = root / "Maps" / "SMAC_Maps" / SMACV2_MAP_FILE
    if not map_path.is_file():
        problems.append(f"SMACv2 map missing: {map_path}")
    if problems:
        return None, problems
    return Sc2Install(root, map_path), []


def install_message(
    problems: list[str], *, need_python: bool, need_protobuf: bool, need_game: bool, need_maps: bool
) -> str:
    """The full text of the missing-dependency error: what is wrong, then the steps to fix it."""
    steps = [
        s
        for s, needed in (
            (STEP_PYTHON, need_python),
            (STEP_PROTOBUF, need_protobuf),
            (STEP_GAME, need_game),
            (STEP_MAPS, need_maps),
        )
        if needed
    ]
    lines = ["SMACv2 on StarCraft II is not ready:"]
    lines += [f"  - {p}" for p in problems]
    lines.append("To run compass on SMACv2, install:")
    lines += [f"{k}. {s}" for k, s in enumerate(steps, 1)]
    lines.append(f"See {DOCS}. Without the game: --env smax:SCENARIO")
    return "\n".join(lines)


def require_smacv2(sc2_path: Path | None = None) -> Sc2Install:
    """Check smacv2, pysc2, the game and the maps; raise :class:`Smacv2NotInstalledError` if any is missing."""
    problems: list[str] = []
    problem = import_problem()
    if problem:
        problems.append(problem)
    install, game_problems = find_sc2(sc2_path)
    problems += game_problems
    if not problems:
        assert install is not None
        return install
    protobuf = problem is not None and "protobuf" in problem
    raise Smacv2NotInstalledError(
        install_message(
            problems,
            need_python=problem is not None and not protobuf,
            need_protobuf=protobuf,
            need_game=any("StarCraft II" in p for p in game_problems),
            need_maps=any(p.startswith("SMACv2 map missing") for p in game_problems),
        )
    )
