"""Floors: what a healthy GPU of one SKU measures at least, with where each figure came from.

A floors file (TOML) holds one or more `[[sku]]` entries. An entry is chosen for a GPU by what
changes the expectation: the model (`gpu_name`, a regular expression over the CUDA device name,
and/or `pci_device_id` where the context records one; `memory_gb`, a [low, high] range of what CUDA
reports), then the topology (`nvlink_links`, `pcie_generation`, `pcie_width`,
`power_limit_w_min`). Among the entries of one model, the one whose topology keys all hold wins, so
a known topology (a PCIe-only card, a board with fewer NVLinks) gets its own expectations; a GPU
that holds none of them gets the nearest, and the environment checks name what differs.

Every floor states its provenance (`kind` = published, datasheet-fraction, derived or policy, with
the fields each kind needs): a floor without one is refused, as is a file that is not TOML, a
check the gate does not know or a WARN band on the wrong side of the FAIL floor (FloorsError, exit 2).

The provisional floors shipped with the package (judge/shipped_floors/*.toml, one file per SKU)
are read unless `--floors` files match the GPU first.
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from triaudit.core.errors import TriauditError
from triaudit.judge.gate_checks import CHECKS, ENVIRONMENT, HEALTH_BANDED, fmt, split_floor_key

SCHEMA = 1
SHIPPED = Path(__file__).resolve().parent / "shipped_floors"
MODEL_KEYS = ("gpu_name", "pci_device_id", "memory_gb")
TOPOLOGY_KEYS = ("nvlink_links", "pcie_generation", "pcie_width", "power_limit_w_min")
EXPECT_KEYS = ("ecc", "driver_min")
ECC_EXPECTED = ("on", "off", "unsupported")
# What each kind of provenance must say.
PROVENANCE_FIELDS = {
    "published": ("source", "figure", "statistic"),
    "datasheet-fraction": ("datasheet", "figure", "fraction", "basis"),
    "derived": ("gpus", "fleet", "date", "statistic"),
    "policy": ("basis",),
}


class FloorsError(TriauditError):
    """A floors file that cannot be used; the message names the file and the key."""


@dataclass(frozen=True)
class Floor:
    key: str  # "hbm", "p2p:NV18"
    case: str  # the case it holds (fnmatch pattern: p2p's src and dst are "*")
    fail: float  # base units (bytes/s, FLOP/s, seconds)
    warn: float
    provenance: dict
    gpus: int | None = None  # a collective's: the GPU count the floor is for
    false_fail_rate: str = ""  # derived floors: the expected rate, stated
    source_file: str = ""

    @property
    def check(self) -> str:
        return split_floor_key(self.key)[0]

    @property
    def link(self) -> str:
        return split_floor_key(self.key)[1]

    def describe(self) -> str:
        """The provenance in one line, for people and for JUnit bodies."""
        p = self.provenance
        kind = p.get("kind")
        if kind == "published":
            text = f"published: {p['source']}, {fmt(p['figure'], self.check)} ({p['statistic']})"
            url = p.get("source_url") or p.get("url")  # `url`: the key's first name, still read
            text += f", {url}" if url else f"; {p.get('url_note', 'no URL recorded')}"
        elif kind == "datasheet-fraction":
            text = f"datasheet fraction: {p['fraction']:g} × {p['datasheet']} ({p['basis']})"
        elif kind == "derived":
            units = p.get("units", "GPUs")  # a node check (p2p, a collective) counts nodes
            text = f"derived from {p['gpus']} {units} of fleet {p['fleet']} on {p['date']}, {p['statistic']}"
            if self.false_fail_rate:
                text += f"; expected false-fail rate {self.false_fail_rate}"
        else:
            text = f"policy: {p['basis']}"
        if p.get("doubt"):
            text += f"; doubt: {p['doubt']}"
        if p.get("rule"):
            text += f"; {p['rule']}"
        if p.get("note"):
            text += f"; {p['note']}"
        return text


@dataclass(frozen=True)
class Band:
    """A health counter's band: counts over the run from which it is a WARN, a FAIL (None: never)."""

    warn: float | None
    fail: float | None
    provenance: dict


@dataclass
class Sku:
    name: str
    source_file: str
    provisional: bool = False
    match: dict = field(default_factory=dict)
    expect: dict = field(default_factory=dict)
    floors: dict[str, Floor] = field(default_factory=dict)
    not_applicable: dict[str, str] = field(default_factory=dict)
    health: dict[str, Band] = field(default_factory=dict)
    note: str = ""

    def label(self) -> str:
        # Made once: said in every verdict (270,000 at 8,192 GPUs).
        got = self.__dict__.get("_label")
        if got is None:
            got = f"{self.name} ({os.path.basename(self.source_file)}{', provisional' if self.provisional else ''})"
            self.__dict__["_label"] = got
        return got


def _toml():
    try:
        import tomllib  # Python >= 3.11
    except ModuleNotFoundError:  # pragma: no cover - Python < 3.11
        import tomli as tomllib
    return tomllib


def _number(v, where: str, path: Path, positive: bool = True) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or (positive and v <= 0):
        raise FloorsError(f"{path}: {where} is {v!r}, not a {'positive ' if positive else ''}number")
    return float(v)


def _table(v, where: str, path: Path) -> dict:
    if not isinstance(v, dict):
        raise FloorsError(f"{path}: {where} must be a table")
    return v


def _provenance(p, where: str, path: Path) -> dict:
    p = _table(p, f"{where}.provenance", path)
    kind = p.get("kind")
    if kind not in PROVENANCE_FIELDS:
        raise FloorsError(
            f"{path}: {where}.provenance.kind is {kind!r}; every floor states its provenance as one of "
            + ", ".join(PROVENANCE_FIELDS)
        )
    missing = [k for k in PROVENANCE_FIELDS[kind] if k not in p or p[k] in ("", None)]
    if missing:
        raise FloorsError(f"{path}: {where}.provenance ({kind}) lacks {', '.join(missing)}")
    return dict(p)


def _floor(key: str, t, path: Path, where: str) -> Floor:
    t = _table(t, where, path)
    check, link = split_floor_key(key)
    if check not in CHECKS:
        raise FloorsError(f"{path}: {where}: unknown check {check!r}; known: {', '.join(CHECKS)}")
    if bool(link) != (check == "p2p"):
        raise FloorsError(f'{path}: {where}: p2p floors are keyed by link type ("p2p:NV18"), and only they')
    case = t.get("case")
    if not isinstance(case, str) or not case:
        raise FloorsError(f"{path}: {where}.case: the case the floor holds is required")
    fail = _number(t.get("fail"), f"{where}.fail", path)
    warn = _number(t.get("warn"), f"{where}.warn", path)
    higher = CHECKS[check].higher_better
    if (higher and warn < fail) or (not higher and warn > fail):
        side = "at or above" if higher else "at or below"
        raise FloorsError(f"{path}: {where}: warn {warn:g} must be {side} fail {fail:g} ({CHECKS[check].metric})")
    gpus = t.get("gpus")
    if gpus is not None and (isinstance(gpus, bool) or not isinstance(gpus, int) or gpus < 1):
        raise FloorsError(f"{path}: {where}.gpus is {gpus!r}, not a GPU count")
    rate = t.get("false_fail_rate", "")
    return Floor(key, case, fail, warn, _provenance(t.get("provenance"), where, path), gpus, str(rate), str(path))


def _match(t, where: str, path: Path) -> dict:
    t = _table(t, where, path)
    unknown = set(t) - set(MODEL_KEYS) - set(TOPOLOGY_KEYS)
    if unknown:
        raise FloorsError(f"{path}: {where}: unknown key(s) {', '.join(sorted(unknown))}")
    if not t.get("gpu_name") and not t.get("pci_device_id"):
        raise FloorsError(f"{path}: {where}: gpu_name or pci_device_id is required (the model)")
    out = dict(t)
    if "gpu_name" in t:
        try:
            re.compile(str(t["gpu_name"]))
        except re.error as exc:
            raise FloorsError(f"{path}: {where}.gpu_name: not a regular expression: {exc}") from None
    if "pci_device_id" in t:
        ids = t["pci_device_id"] if isinstance(t["pci_device_id"], list) else [t["pci_device_id"]]
        out["pci_device_id"] = [str(i).lower() for i in ids]
    if "memory_gb" in t:
        m = t["memory_gb"]
        if not (isinstance(m, list) and len(m) == 2):
            raise FloorsError(f"{path}: {where}.memory_gb must be [low, high] (GB as CUDA reports them)")
        out["memory_gb"] = [_number(x, f"{where}.memory_gb", path) for x in m]
    for k in ("nvlink_links", "pcie_generation", "pcie_width"):
        if k in t and (isinstance(t[k], bool) or not isinstance(t[k], int) or t[k] < 0):
            raise FloorsError(f"{path}: {where}.{k} is {t[k]!r}, not a whole number")
    if "power_limit_w_min" in t:
        out["power_limit_w_min"] = _number(t["power_limit_w_min"], f"{where}.power_limit_w_min", path)
    return out


def _sku(t, i: int, path: Path) -> Sku:
    where = f"sku[{i}]"
    t = _table(t, where, path)
    name = t.get("name")
    if not isinstance(name, str) or not name:
        raise FloorsError(f"{path}: {where}.name is required")
    where = f"sku {name!r}"
    sku = Sku(name, str(path), bool(t.get("provisional", False)), _match(t.get("match"), f"{where}.match", path))
    sku.note = str(t.get("note", ""))
    expect = _table(t.get("expect", {}), f"{where}.expect", path)
    unknown = set(expect) - set(EXPECT_KEYS)
    if unknown:
        raise FloorsError(f"{path}: {where}.expect: unknown key(s) {', '.join(sorted(unknown))}")
    if "ecc" in expect and expect["ecc"] not in ECC_EXPECTED:
        raise FloorsError(f"{path}: {where}.expect.ecc is {expect['ecc']!r}; one of {', '.join(ECC_EXPECTED)}")
    sku.expect = dict(expect)
    for key, ft in _table(t.get("floors", {}), f"{where}.floors", path).items():
        sku.floors[key] = _floor(key, ft, path, f"{where}.floors.{key}")
    na = _table(t.get("not_applicable", {}), f"{where}.not_applicable", path)
    for check, why in na.items():
        if check not in CHECKS and check not in ENVIRONMENT:
            raise FloorsError(f"{path}: {where}.not_applicable: unknown check {check!r}")
        if not isinstance(why, str) or not why:
            raise FloorsError(f"{path}: {where}.not_applicable.{check}: say why")
        sku.not_applicable[check] = why
    for counter, bt in _table(t.get("health", {}), f"{where}.health", path).items():
        name_ = counter if counter.startswith("health_") else f"health_{counter}"
        if name_ not in HEALTH_BANDED:
            raise FloorsError(
                f"{path}: {where}.health: {counter!r} is not a banded health counter "
                f"({', '.join(k.removeprefix('health_') for k in HEALTH_BANDED)})"
            )
        bt = _table(bt, f"{where}.health.{counter}", path)
        warn = None if "warn" not in bt else _number(bt["warn"], f"{where}.health.{counter}.warn", path, False)
        fail = None if "fail" not in bt else _number(bt["fail"], f"{where}.health.{counter}.fail", path, False)
        if warn is not None and fail is not None and warn > fail:
            raise FloorsError(f"{path}: {where}.health.{counter}: warn {warn:g} is above fail {fail:g}")
        sku.health[name_] = Band(warn, fail, _provenance(bt.get("provenance"), f"{where}.health.{counter}", path))
    return sku


def load_floors(path: Path) -> list[Sku]:
    """The SKUs of one floors file (FloorsError naming the file and key for anything wrong)."""
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise FloorsError(f"{path}: cannot be read: {exc.strerror or exc}") from None
    try:
        data = _toml().loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise FloorsError(f"{path}: not a TOML floors file: {exc}") from None
    if data.get("schema") != SCHEMA:
        raise FloorsError(f"{path}: schema is {data.get('schema')!r}; this triaudit reads floors schema {SCHEMA}")
    skus = data.get("sku")
    if not isinstance(skus, list) or not skus:
        raise FloorsError(f"{path}: no [[sku]] entry")
    return [_sku(t, i, path) for i, t in enumerate(skus)]


def shipped_files() -> list[Path]:
    return sorted(SHIPPED.glob("*.toml"))


@dataclass
class FloorSet:
    """The floors the gate holds GPUs against: the --floors files' SKUs first, then the shipped."""

    given: list[Sku]
    shipped: list[Sku]

    @classmethod
    def load(cls, paths: list[Path] | None = None, shipped: bool = True) -> FloorSet:
        given = [s for p in paths or [] for s in load_floors(p)]
        return cls(given, [s for p in shipped_files() for s in load_floors(p)] if shipped else [])


# --- choosing a GPU's SKU ------------------------------------------------------------------------


def _model_matches(match: dict, facts: dict) -> bool:
    name = str(facts.get("gpu_name") or "")
    if "gpu_name" in match and not re.search(match["gpu_name"], name, re.IGNORECASE):
        return False
    if "pci_device_id" in match:
        dev = str(facts.get("pci_device_id") or "").lower()
        if not dev or dev not in match["pci_device_id"]:
            return False
    mem = facts.get("memory_gb")
    if "memory_gb" in match and mem is not None:
        lo, hi = match["memory_gb"]
        if not lo <= mem <= hi:
            return False
    return True


def topology_mismatches(match: dict, facts: dict) -> dict[str, tuple]:
    """{key: (expected, found)} for each topology key of an entry the GPU does not hold (a fact
    the context does not know is no mismatch: its environment check says NOT TESTED)."""
    out = {}
    for k in ("nvlink_links", "pcie_generation", "pcie_width"):
        if k in match and facts.get(k) is not None and facts[k] != match[k]:
            out[k] = (match[k], facts[k])
    if "power_limit_w_min" in match and facts.get("power_limit_w") is not None:
        if facts["power_limit_w"] < match["power_limit_w_min"]:
            out["power_limit_w_min"] = (match["power_limit_w_min"], facts["power_limit_w"])
    return out


def choose_sku(facts: dict, floors: FloorSet) -> tuple[Sku | None, dict[str, tuple]]:
    """The entry a GPU is held against and the topology keys it does not hold. The --floors files'
    entries of the GPU's model come first; the shipped ones only when none of those is its model."""
    for pool in (floors.given, floors.shipped):
        models = [s for s in pool if _model_matches(s.match, facts)]
        if models:
            scored = [(len(topology_mismatches(s.match, facts)), i, s) for i, s in enumerate(models)]
            _, _, best = min(scored, key=lambda x: (x[0], x[1]))
            return best, topology_mismatches(best.match, facts)
    return None, {}
