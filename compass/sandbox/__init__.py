"""Compiling and running untrusted skill code: policy, guards, budget and the per-family skill API."""

from compass.sandbox.guards import BudgetExceeded, SkillError
from compass.sandbox.runtime import CompiledSkill, SkillExecutor, SkillResult, code_hash, compile_skill

__all__ = [
    "BudgetExceeded",
    "CompiledSkill",
    "SkillError",
    "SkillExecutor",
    "SkillResult",
    "code_hash",
    "compile_skill",
]
