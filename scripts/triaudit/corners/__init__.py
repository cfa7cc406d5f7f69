"""The corner registry: every module of this package that declares a `CORNER` (corners/base.py says
what a corner declares), in their `order`. The runner, the time model, doctor, the Slurm job, the
figure selector, the gate, the report and the peers loop over it; a new corner or collective is a
new module here (CONTRIBUTING.md: "Add a corner").

Standard library only, and found without importing anything beyond this package."""

from __future__ import annotations

import importlib
import pkgutil

from triaudit.corners.base import Check, Corner, Headline, Step

_SHARED = {"base", "timing", "collective"}  # the parts corners are made of, not corners


def _discover() -> tuple[Corner, ...]:
    found = []
    for info in pkgutil.iter_modules(__path__):
        if info.name in _SHARED or info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        corner = getattr(module, "CORNER", None)
        if not isinstance(corner, Corner):
            raise TypeError(f"{module.__name__} declares no CORNER (corners/base.py Corner)")
        if corner.name != info.name:
            raise ValueError(f"{module.__name__} declares the corner {corner.name!r}: a corner's module bears its name")
        found.append(corner)
    return tuple(sorted(found, key=lambda c: (c.order, c.name)))


CORNERS: tuple[Corner, ...] = _discover()
# The corners `triaudit run` executes (the soak has its own command).
RUN_CORNERS: tuple[Corner, ...] = tuple(c for c in CORNERS if c.run)
EXECUTABLES: list[str] = list(dict.fromkeys(s.executable for c in RUN_CORNERS for s in c.steps))
# A run's steps in order: each corner's first step in the registry's order, then the later ones.
STEPS: list[tuple[str, str]] = [(c.steps[0].name, c.steps[0].executable) for c in RUN_CORNERS] + [
    (s.name, s.executable) for c in RUN_CORNERS for s in c.steps[1:]
]
STEP_EXECUTABLE = dict(STEPS)
_BY_NAME = {c.name: c for c in CORNERS}
_BY_EXECUTABLE = {s.executable: c for c in CORNERS for s in c.steps}


def corner_named(name: str) -> Corner | None:
    return _BY_NAME.get(name)


def corner_of_executable(executable: str) -> Corner | None:
    """The corner an executable (or its `_mpi` build) measures."""
    return _BY_EXECUTABLE.get(executable.removesuffix("_mpi"))


def corner_of_case(case: str) -> Corner | None:
    return _BY_NAME.get(case.split("/", 1)[0])


def step(name: str) -> Step:
    return next(s for c in CORNERS for s in c.steps if s.name == name)


def node_level_executables() -> set[str]:
    """Executables measured once over all of a node's GPUs (a whole-node run's node-level files)."""
    return {s.executable for c in RUN_CORNERS if c.scope == "node" for s in c.steps}


def collectives() -> tuple[Corner, ...]:
    return tuple(c for c in CORNERS if c.collective)


def headlines() -> list[tuple[Corner, Headline]]:
    """Every corner's headline figures, in the registry's order."""
    return [(c, h) for c in CORNERS for h in c.headlines]


def checks() -> dict[str, Check]:
    """The gate's performance checks of every corner, by id, each with its headline's sources as the
    cases `floors derive` looks for."""
    from dataclasses import replace

    out: dict[str, Check] = {}
    for c in CORNERS:
        for k in c.checks:
            h = c.headline(k.headline)
            if h is None:
                raise ValueError(f"corner {c.name}: check {k.id} judges headline {k.headline!r}, which it lacks")
            out[k.id] = replace(k, candidates=h.sources)
    return out


def ranks_contexts() -> tuple[str, ...]:
    """The context keys a collective states its GPU count in."""
    return tuple(c.ranks_context for c in CORNERS if c.ranks_context)
