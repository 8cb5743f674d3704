"""A library writer process for the concurrency tests: ``python -m tests.skills.library_writer ROOT TAG N``.

Adds N skills (``<tag>_<i>``; every 10th also a ``shared_probe`` that collides with the other
writers), counts one use of ``attack_nearest`` per add and saves statistics every 10 adds.
Prints ``added NAME`` (flushed) after each add returns, so a test knows what was acknowledged.
"""

from __future__ import annotations

import sys

from compass.skills.library import SkillLibrary
from compass.skills.skill import Skill

CODE = '''def {name}(obs: str) -> int:
    """Writer {tag} skill {i}: hold position while probing concurrency."""
    return 1
'''


def main(root: str, tag: str, n: int) -> None:
    lib = SkillLibrary(root, "combat")
    for i in range(n):
        names = [f"{tag}_{i}"] + (["shared_probe"] if i % 10 == 0 else [])
        for name in names:
            skill = Skill(
                name,
                "combat",
                CODE.format(name=name, tag=tag, i=i),
                f"writer {tag} {i}",
                {"provenance": "generated", "model": f"writer-{tag}"},
            )
            stored = lib.add(skill)
            print(f"added {stored.name}", flush=True)
        lib.record_use("attack_nearest", uses=1)
        if i % 10 == 9 or i == n - 1:
            lib.save_stats()
    print("done", flush=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]))
