"""The gate's verdicts and figures in Prometheus' text format, for node_exporter's textfile
collector (`--collector.textfile.directory`). Base units (bytes per second, FLOP per second,
seconds), and dcgm-exporter's label names (`gpu`, `UUID`, `modelName`, `Hostname`) so a verdict
joins with the GPU's telemetry in PromQL:

    triaudit_check_status{status="fail"} == 1
    triaudit_hbm_bytes_per_second * on(UUID) group_left DCGM_FI_DEV_GPU_TEMP

Verdicts are a state set: triaudit_check_status has one series per status, 1 for the verdict the
check got and 0 for the others. The file is replaced whole (core/files.atomic_write), so a scrape
never reads half of it. Standard library only."""

from __future__ import annotations

import time

from triaudit.judge.gate_checks import CHECKS, HEALTH_BANDED, HEALTH_FATAL, STATUSES
from triaudit.judge.gate_verdict import Verdict

FIRST_LINE = "# triaudit gate: verdicts and measured figures (node_exporter textfile format)"

HELP = {
    "triaudit_check_status": "triaudit gate verdict per GPU (or node) and check: 1 for the status it got, 0 for the others",
    "triaudit_check_floor_fail": "the FAIL floor the check was held against, in the figure's base units (a ceiling for times)",
    "triaudit_check_floor_warn": "the WARN band's edge the check was held against, in the figure's base units",
    "triaudit_health_events": "health events during the gated run, per counter (ECC, row remapping, XID, NVLink, PCIe)",
    "triaudit_gate_exit_code": "the exit code of triaudit gate: 0 passed, 1 a check failed, 3 something not tested",
    "triaudit_gate_timestamp_seconds": "when triaudit gate wrote this file (Unix time)",
}
# Each check's own figure (the corners declare its name and help, corners/<name>.py).
FIGURE_HELP = {c.prom_name: c.prom_help for c in CHECKS.values()}


def _escape(value: str) -> str:
    return str(value).replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _labels(d: dict) -> str:
    return "{" + ",".join(f'{k}="{_escape(v)}"' for k, v in d.items() if v not in ("", None)) + "}"


def _identity(v: Verdict) -> dict:
    d = {"Hostname": v.host, "gpu": v.gpu, "UUID": v.uuid, "modelName": v.model}
    if v.peer:
        d.update(peer_gpu=v.peer, peer_UUID=v.peer_uuid)
    if v.link:
        d["link"] = v.link
    if v.provenance:  # a synthetic figure says so on every series it is part of
        d["provenance"] = v.provenance
    return d


def _num(x: float) -> str:
    return repr(float(x))


def prom_text(verdicts: list[Verdict], exit_codes: dict[str, int], now: float | None = None) -> str:
    families: dict[str, list[str]] = {}

    def add(name: str, labels: dict, value: float) -> None:
        families.setdefault(name, []).append(f"{name}{_labels(labels)} {_num(value)}")

    for v in verdicts:
        ident = _identity(v)
        for s in STATUSES:
            add(
                "triaudit_check_status",
                {**ident, "check": v.check, "status": s.lower().replace(" ", "_")},
                v.status == s,
            )
        if v.fail is not None:
            add("triaudit_check_floor_fail", {**ident, "check": v.check}, v.fail)
        if v.warn is not None:
            add("triaudit_check_floor_warn", {**ident, "check": v.check}, v.warn)
        c = CHECKS.get(v.check)
        if c is not None and v.measured is not None:
            add(c.prom_name, {**ident, **c.prom_labels}, v.measured)
        for counter, n in sorted(v.counts.items()):
            if counter in HEALTH_FATAL or counter in HEALTH_BANDED:
                add("triaudit_health_events", {**ident, "counter": counter.removeprefix("health_")}, n)
    stamp = time.time() if now is None else now
    for host, code in sorted(exit_codes.items()):
        add("triaudit_gate_exit_code", {"Hostname": host}, code)
        add("triaudit_gate_timestamp_seconds", {"Hostname": host}, stamp)
    lines = [FIRST_LINE]
    for name, samples in families.items():
        lines.append(f"# HELP {name} {HELP.get(name) or FIGURE_HELP.get(name, name)}")
        lines.append(f"# TYPE {name} gauge")
        lines += samples
    return "\n".join(lines) + "\n"


def written_by_gate(text: str) -> bool:
    """Whether a file is a textfile this command wrote (it may be replaced; nothing else is)."""
    return text.startswith(FIRST_LINE)
