"""Report section "Health: hardware error counters" — what the GPUs' error counters did while
the suite ran (benchmarks/common/health.hpp reads them around every case): per GPU, only the
counters that moved or that the GPU cannot report, then the cases during which one moved, and the
cases whose figure was thrown out because the hardware reported an error during them."""

from __future__ import annotations

import pandas as pd

from triaudit.report.section import Section
from triaudit.results.table import ResultSet, plain

# JSON counter -> how the table names it (docs/health.md lists their NVML sources).
COUNTERS = {
    "health_ecc_corrected": "corrected ECC errors",
    "health_ecc_uncorrected": "uncorrected ECC errors",
    "health_remapped_rows_correctable": "rows remapped (correctable)",
    "health_remapped_rows_uncorrectable": "rows remapped (uncorrectable)",
    "health_remap_pending": "row remap pending",
    "health_remap_failure": "row remap failed",
    "health_retired_pages_sbe": "pages retired (single-bit)",
    "health_retired_pages_dbe": "pages retired (double-bit)",
    "health_nvlink_crc_errors": "NVLink CRC errors",
    "health_nvlink_replay_errors": "NVLink replays",
    "health_nvlink_recovery_errors": "NVLink recoveries",
    "health_pcie_replays": "PCIe replays",
    "health_nvlink_links_down": "NVLink links gone down",
    "health_xid_events": "critical XID events",
}
# The context's health_counters names (without "health_") for the counters it lists.
_SUPPORT_NAME = {k[len("health_") :]: k for k in COUNTERS}


def _gpu(row, contexts: dict[str, dict]) -> str:
    ctx = contexts.get(str(row["file"]), {})
    index = ctx.get("gpu_index")
    return f"{row['card']} · {row['run']}" + (f" · GPU {index}" if index not in (None, "") else "")


def _unsupported(contexts: dict[str, dict]) -> dict[str, dict[str, str]]:
    """file -> {counter: NVML's reason} from each result's health_counters context entry."""
    out: dict[str, dict[str, str]] = {}
    for f, ctx in contexts.items():
        said = str(ctx.get("health_counters") or "")
        for part in said.split(";"):
            name, _, state = part.strip().partition(": ")
            key = _SUPPORT_NAME.get(name.strip())
            if key and state.strip() and state.strip() != "ok":
                out.setdefault(f, {})[key] = state.strip()
    return out


def health_section(rs: ResultSet) -> Section:
    sec = Section("health", "Health: hardware error counters")
    df = rs.table
    if df.empty:
        return sec
    rows = plain(df[df["metric"].isin(list(COUNTERS))])
    errors = plain(df[df["status"] == "error"])
    failed = errors[errors["message"].astype(str).str.contains("health: ", regex=False)]
    unsupported = _unsupported(rs.contexts)
    if rows.empty and failed.empty and not unsupported:
        return sec
    per_gpu: dict[str, dict[str, str]] = {}
    if not rows.empty:
        rows = rows.assign(gpu=[_gpu(r, rs.contexts) for _, r in rows.iterrows()])
        for (gpu, metric), g in rows.groupby(["gpu", "metric"]):
            moved = g[g["max"] > 0]
            if moved.empty:
                continue
            per_gpu.setdefault(gpu, {})[COUNTERS[metric]] = (
                f"moved in {len(moved)} case(s), at most {moved['max'].max():,.0f} in one call"
            )
    first = plain(df.drop_duplicates("file")[["file", "card", "run"]]).set_index("file") if unsupported else None
    for f, missing in unsupported.items():
        if first is None or f not in first.index:
            continue
        gpu = _gpu({"file": f, **first.loc[f].to_dict()}, rs.contexts)
        for key, why in missing.items():
            per_gpu.setdefault(gpu, {}).setdefault(COUNTERS[key], f"not supported ({why})")
    if per_gpu:
        table = pd.DataFrame(per_gpu).sort_index()
        table.index.name = "counter"
        sec.tables.append(
            (
                "Per GPU: counters that moved or that the GPU cannot report (quiet ones left out; read through "
                "NVML before and after every call of every case, on each GPU the case uses)",
                table,
            )
        )
    if not rows.empty:
        moved = rows[rows["max"] > 0]
        if not moved.empty:
            cases = moved.assign(counter=moved["metric"].map(COUNTERS), most=moved["max"].map("{:,.0f}".format))
            cases = cases[["gpu", "case", "counter", "most"]].rename(columns={"most": "most in one call"})
            sec.tables.append(("Cases during which a counter moved", cases.set_index(["gpu", "case"])))
    if not failed.empty:
        errs = failed.assign(gpu=[_gpu(r, rs.contexts) for _, r in failed.iterrows()])
        sec.tables.append(
            (
                "Cases not trusted: the hardware reported an error during them",
                errs[["gpu", "case", "message"]].set_index(["gpu", "case"]),
            )
        )
    if not rows.empty:
        sec.csv = rows[["card", "run", "gpu", "case", "metric", "median", "max", "reps"]]
    return sec
