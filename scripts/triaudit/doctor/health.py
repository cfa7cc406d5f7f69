"""The GPUs' hardware error totals now, as nvidia-smi reports them (standard library only): ECC
counts since the driver loaded, retired pages, remapped rows. The executables read the same
counters through NVML around every case (docs/health.md); doctor says where a machine stands
before anything is measured.

A problem (exit 1): an uncorrected ECC error since the driver loaded, a page retirement or row
remap pending (the GPU needs a reset), a failed remap. A warning: corrected errors (the memory is
working, and may be wearing). "N/A" or "[Not Supported]" is said as such, never read as 0.
"""

from __future__ import annotations

HEALTH_FIELDS = [
    "index",
    "ecc.errors.corrected.volatile.total",
    "ecc.errors.uncorrected.volatile.total",
    "retired_pages.single_bit_ecc.count",
    "retired_pages.double_bit.count",
    "retired_pages.pending",
]
REMAP_FIELDS = [
    "gpu_bus_id",
    "remapped_rows.correctable",
    "remapped_rows.uncorrectable",
    "remapped_rows.pending",
    "remapped_rows.failure",
]
HEALTH_QUERY = ["nvidia-smi", f"--query-gpu={','.join(HEALTH_FIELDS)}", "--format=csv,noheader,nounits"]
REMAP_QUERY = ["nvidia-smi", f"--query-remapped-rows={','.join(REMAP_FIELDS)}", "--format=csv,noheader,nounits"]

_UNKNOWN = ("n/a", "[n/a]", "[not supported]", "not supported", "[unknown error]", "")


def _rows(text: str, fields: list[str]) -> list[dict[str, str]]:
    out = []
    for line in (text or "").strip().splitlines():
        cells = [c.strip() for c in line.split(",")]
        if len(cells) == len(fields):
            out.append(dict(zip(fields, cells)))
    return out


def _count(v: str | None) -> int | None:
    """A count as nvidia-smi prints it; None for N/A, [Not Supported] and the like."""
    if v is None or v.strip().lower() in _UNKNOWN:
        return None
    try:
        return int(v.strip())
    except ValueError:
        return None


def _yes(v: str | None) -> bool | None:
    if v is None or v.strip().lower() in _UNKNOWN:
        return None
    return v.strip().lower() in ("yes", "1", "true")


def _said(v) -> str:
    return "not supported" if v is None else str(v)


def judge(health_csv: str, remap_csv: str, bus_id_of: dict[str, str]) -> tuple[dict, list[str], list[str]]:
    """(rows per GPU for the report, problems, warnings) from the two queries' outputs.
    `bus_id_of`: nvidia-smi index -> PCI bus id (to join the remapped-rows query, keyed by bus id)."""
    remaps = {r["gpu_bus_id"].lower(): r for r in _rows(remap_csv, REMAP_FIELDS)}
    rows: dict[str, str] = {}
    problems: list[str] = []
    warnings: list[str] = []
    for h in _rows(health_csv, HEALTH_FIELDS):
        gpu = f"GPU {h['index']}"
        corrected = _count(h["ecc.errors.corrected.volatile.total"])
        uncorrected = _count(h["ecc.errors.uncorrected.volatile.total"])
        sbe, dbe = _count(h["retired_pages.single_bit_ecc.count"]), _count(h["retired_pages.double_bit.count"])
        retire_pending = _yes(h["retired_pages.pending"])
        parts = [f"ECC since the driver loaded: corrected {_said(corrected)}, uncorrected {_said(uncorrected)}"]
        if sbe is not None or dbe is not None:
            parts.append(f"retired pages: single-bit {_said(sbe)}, double-bit {_said(dbe)}")
        r = remaps.get(bus_id_of.get(str(h["index"]), "").lower())
        pending = failure = None
        if r is not None:
            pending, failure = _yes(r["remapped_rows.pending"]), _yes(r["remapped_rows.failure"])
            parts.append(
                f"remapped rows: correctable {_said(_count(r['remapped_rows.correctable']))}, "
                f"uncorrectable {_said(_count(r['remapped_rows.uncorrectable']))}, pending {_said(pending)}, "
                f"failure {_said(failure)}"
            )
        rows[gpu] = "; ".join(parts)
        if uncorrected:
            problems.append(f"{gpu}: {uncorrected} uncorrected ECC error(s) since the driver loaded")
        if pending or retire_pending:
            problems.append(f"{gpu}: a memory repair (row remap or page retirement) is pending: the GPU needs a reset")
        if failure:
            problems.append(f"{gpu}: a row remap failed: the GPU's memory cannot be repaired further")
        if corrected:
            warnings.append(f"{gpu}: {corrected} corrected ECC error(s) since the driver loaded")
    return rows, problems, warnings
