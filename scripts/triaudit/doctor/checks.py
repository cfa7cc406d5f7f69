"""`triaudit doctor`: the environment check to run after installing a card.

GPUs (nvidia-smi), CUDA_VISIBLE_DEVICES, whether the built executables carry code for each
visible GPU (fatbin.py), driver vs the CUDA runtime the build uses, library versions, PCIe link,
NVLink, ECC, MIG, clocks and throttle reasons, other processes on the GPU.
Exit codes: 0 no problem; 1 problems found; 77 no GPU visible (toolchain still reported).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from triaudit.corners import EXECUTABLES
from triaudit.doctor import fatbin
from triaudit.doctor import health as health_mod
from triaudit.doctor import interconnect as interconnect_check

SMI_FIELDS = [
    "index",
    "name",
    "uuid",
    "pci.bus_id",
    "compute_cap",
    "driver_version",
    "memory.total",
    "pcie.link.gen.current",
    "pcie.link.gen.max",
    "pcie.link.width.current",
    "pcie.link.width.max",
    "ecc.mode.current",
    "mig.mode.current",
    "clocks.sm",
    "clocks.max.sm",
    "clocks_event_reasons.active",
]
SLOWDOWN_BITS = {
    0x4: "sw_power_cap",
    0x8: "hw_slowdown",
    0x20: "sw_thermal_slowdown",
    0x40: "hw_thermal_slowdown",
    0x80: "hw_power_brake_slowdown",
}


@dataclass
class Report:
    sections: dict = field(default_factory=dict)
    problems: list = field(default_factory=list)
    warnings: list = field(default_factory=list)
    gpus: list = field(default_factory=list)


def _run(cmd: list[str], timeout: int = 20) -> tuple[int, str]:
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        return p.returncode, p.stdout + p.stderr
    except FileNotFoundError:
        return 127, f"{cmd[0]}: not found"
    except (OSError, subprocess.SubprocessError) as e:
        return 1, str(e)


def parse_smi_csv(text: str) -> list[dict]:
    """nvidia-smi --query-gpu=<SMI_FIELDS> --format=csv,noheader,nounits output -> one dict per GPU."""
    gpus = []
    for line in text.strip().splitlines():
        cells = [c.strip() for c in line.split(",")]
        if len(cells) != len(SMI_FIELDS):
            continue
        gpus.append(dict(zip(SMI_FIELDS, cells)))
    return gpus


def _int(v) -> int | None:
    try:
        return int(str(v).strip(), 0)
    except ValueError:
        return None


def check_gpu(g: dict, codes_by_exe: dict[str, set], report: Report) -> dict:
    """Problems and warnings for one GPU description (as parse_smi_csv returns it)."""
    label = f"GPU {g['index']} ({g['name']})"
    out = dict(g)
    cc = g.get("compute_cap", "")
    m = re.match(r"(\d+)\.(\d+)", cc)
    if m:
        major, minor = int(m.group(1)), int(m.group(2))
        for exe, codes in codes_by_exe.items():
            ok, how = fatbin.runs_on(codes, major, minor)
            out[f"code:{exe}"] = how
            if not ok:
                report.problems.append(
                    f"{label}: {exe} has no code for compute capability {cc} "
                    f"({fatbin.describe(codes)}): it would fail with 'no kernel image is available'. "
                    f"Rebuild with -DCMAKE_CUDA_ARCHITECTURES={major}{minor} (or 'native')."
                )
    else:
        report.warnings.append(f"{label}: compute capability not reported ({cc!r}); cannot check the executables' code")
    gen_c, gen_m = _int(g.get("pcie.link.gen.current")), _int(g.get("pcie.link.gen.max"))
    w_c, w_m = _int(g.get("pcie.link.width.current")), _int(g.get("pcie.link.width.max"))
    if w_c is not None and w_m is not None and w_c < w_m:
        report.problems.append(
            f"{label}: PCIe link runs at x{w_c} of x{w_m}: host copies get a fraction of their bandwidth "
            "(check the slot, riser and BIOS lane settings)"
        )
    if gen_m is not None and gen_m <= 3:
        report.warnings.append(
            f"{label}: PCIe Gen{gen_m} maximum: host copies are limited to ~{gen_m and (1 << (gen_m - 1))} GB/s per lane-group"
        )
    if gen_c is not None and gen_m is not None and gen_c < gen_m:
        report.warnings.append(
            f"{label}: PCIe Gen{gen_c} now, Gen{gen_m} possible: links slow down at idle; "
            "if it stays low under load (triaudit_memcpy), check the slot"
        )
    if str(g.get("mig.mode.current", "")).lower() == "enabled":
        report.warnings.append(f"{label}: MIG is enabled: each instance sees a slice of the SMs and memory bandwidth")
    ecc = str(g.get("ecc.mode.current", "")).lower()
    if ecc in ("disabled",):
        report.warnings.append(f"{label}: ECC is off (bandwidth figures are not comparable with ECC-on cards)")
    reasons = _int(g.get("clocks_event_reasons.active", ""))
    if reasons:
        slow = [n for bit, n in SLOWDOWN_BITS.items() if reasons & bit]
        if slow:
            report.problems.append(f"{label}: clocks held down right now by {', '.join(slow)}")
    sm, sm_max = _int(g.get("clocks.sm")), _int(g.get("clocks.max.sm"))
    if sm is not None and sm_max:
        out["sm_clock"] = f"{sm} of {sm_max} MHz"
    return out


def cuda_runtime_view() -> tuple[list[dict], str]:
    """What the CUDA runtime itself sees (through ctypes, no build needed): per device its compute
    capability and whether it is integrated (shares host memory: Jetson, GH200's view differs).
    Returns (devices, reason when none)."""
    import ctypes
    import glob as _glob

    candidates = ["libcudart.so"] + sorted(_glob.glob("/usr/local/cuda/lib64/libcudart.so*"), reverse=True)
    lib = None
    for c in candidates:
        try:
            lib = ctypes.CDLL(c)
            break
        except OSError:
            continue
    if lib is None:
        return [], "libcudart not found"
    count = ctypes.c_int(0)
    rc = lib.cudaGetDeviceCount(ctypes.byref(count))
    if rc != 0:
        lib.cudaGetErrorString.restype = ctypes.c_char_p
        return [], f"CUDA runtime: {lib.cudaGetErrorString(rc).decode(errors='replace')}"
    devices = []
    for d in range(count.value):
        vals = {}
        for name, attr in (("major", 75), ("minor", 76), ("integrated", 18)):
            v = ctypes.c_int(0)
            lib.cudaDeviceGetAttribute(ctypes.byref(v), attr, d)
            vals[name] = v.value
        devices.append(
            {"index": d, "compute_cap": f"{vals['major']}.{vals['minor']}", "integrated": bool(vals["integrated"])}
        )
    return devices, ""


def _cuda_version_of_driver() -> str | None:
    rc, text = _run(["nvidia-smi"])
    m = re.search(r"CUDA Version:\s*([\d.]+)", text) if rc == 0 else None
    return m.group(1) if m else None


def _toolkit_version() -> str | None:
    for nvcc in (shutil.which("nvcc"), "/usr/local/cuda/bin/nvcc"):
        if nvcc and Path(nvcc).exists():
            rc, text = _run([nvcc, "--version"])
            m = re.search(r"release ([\d.]+)", text)
            if m:
                return m.group(1)
    return None


def _header_version(header: Path, names: tuple[str, str, str]) -> str | None:
    try:
        text = header.read_text(errors="replace")
    except OSError:
        return None
    parts = [re.search(rf"#define {n}\s+(\d+)", text) for n in names]
    return ".".join(p.group(1) for p in parts) if all(parts) else None


def compare_driver_runtime(driver_cuda: str | None, runtime: str | None, report: Report) -> None:
    if not driver_cuda or not runtime:
        return
    d = tuple(int(x) for x in driver_cuda.split(".")[:2])
    r = tuple(int(x) for x in runtime.split(".")[:2])
    if d[0] < r[0]:
        report.problems.append(
            f"the driver supports CUDA {driver_cuda}, the build uses CUDA {runtime}: the driver is too old "
            f"for this major version (every CUDA call fails with 'driver version is insufficient'); "
            f"install a driver for CUDA {r[0]}.x or build with an older toolkit"
        )
    elif d < r:
        report.warnings.append(
            f"the driver supports CUDA {driver_cuda}, the build uses {runtime}: minor-version "
            "compatibility applies (PTX JIT of newer PTX will fail)"
        )


def diagnose(
    build_dir: Path,
    smi_csv: str | None = None,
    driver_cuda: str | None = None,
    processes: str | None = None,
    nvlink: str | None = None,
    topo_file: Path | None = None,
    nccl_log: Path | None = None,
    run_nccl: bool = True,
    health: tuple[str, str] | None = None,
) -> Report:
    """Everything doctor reports. The nvidia-smi outputs may be passed in (recorded descriptions);
    topo_file / nccl_log are saved `nvidia-smi topo -m` / NCCL_DEBUG=INFO outputs (interconnect_check);
    health the outputs of doctor/health.py's two error-counter queries."""
    r = Report()
    r.sections["environment"] = {"CUDA_VISIBLE_DEVICES": os.environ.get("CUDA_VISIBLE_DEVICES", "(unset)")}
    toolkit = _toolkit_version()
    inc = Path("/usr/local/cuda/include")
    r.sections["toolchain"] = {
        "nvcc": toolkit or "not found",
        "cmake": (_run(["cmake", "--version"])[1].splitlines() or ["?"])[0],
        "cuBLAS headers": _header_version(
            inc / "cublas_api.h", ("CUBLAS_VER_MAJOR", "CUBLAS_VER_MINOR", "CUBLAS_VER_PATCH")
        )
        or "not found",
        "NCCL headers": _header_version(inc / "nccl.h", ("NCCL_MAJOR", "NCCL_MINOR", "NCCL_PATCH")) or "not found",
        "python": sys.version.split()[0],
    }
    codes = {}
    exes = {}
    for name in EXECUTABLES:  # every corner's (runner/corners.py)
        hits = sorted(p for p in build_dir.rglob(name) if p.is_file()) if build_dir.is_dir() else []
        if hits:
            try:
                codes[name] = fatbin.gpu_code_of(hits[0])
                exes[name] = f"{hits[0]}: {fatbin.describe(codes[name])}"
            except (OSError, fatbin.FatbinError) as e:
                exes[name] = f"{hits[0]}: unreadable ({e})"
    r.sections["executables"] = exes or {"(none)": f"no triaudit executable under {build_dir}: build first"}
    if not exes:
        r.warnings.append(f"no built executables under {build_dir}")

    recorded = smi_csv is not None
    if smi_csv is None:
        rc, smi_csv = _run(["nvidia-smi", f"--query-gpu={','.join(SMI_FIELDS)}", "--format=csv,noheader,nounits"])
        if rc != 0 and "not a valid field" in smi_csv:
            # Drivers before the "clocks event reasons" rename know the field as throttle reasons.
            old = [f.replace("clocks_event_reasons", "clocks_throttle_reasons") for f in SMI_FIELDS]
            rc, smi_csv = _run(["nvidia-smi", f"--query-gpu={','.join(old)}", "--format=csv,noheader,nounits"])
        if rc != 0:
            # Older drivers lack some fields: fall back without the newest ones.
            r.sections["gpus"] = {"nvidia-smi": smi_csv.strip().splitlines()[0] if smi_csv.strip() else f"exit {rc}"}
            smi_csv = ""
        driver_cuda = _cuda_version_of_driver()
        _, processes = _run(
            ["nvidia-smi", "--query-compute-apps=gpu_uuid,pid,process_name,used_memory", "--format=csv,noheader"]
        )
        _, nvlink = _run(["nvidia-smi", "nvlink", "-s"])
    gpus = parse_smi_csv(smi_csv)
    runtime_devices, runtime_reason = cuda_runtime_view() if not recorded else ([], "")
    r.sections.setdefault("cuda runtime", {})["devices"] = (
        ", ".join(
            f"{d['index']}: cc {d['compute_cap']} {'integrated' if d['integrated'] else 'discrete'}"
            for d in runtime_devices
        )
        or runtime_reason
        or "none"
    )
    if not gpus and runtime_devices:
        # No nvidia-smi (e.g. an integrated Jetson part): describe what CUDA sees.
        gpus = [
            {"index": str(d["index"]), "name": "(nvidia-smi unavailable)", "compute_cap": d["compute_cap"]}
            for d in runtime_devices
        ]
    if not gpus:
        r.sections.setdefault("gpus", {})["visible"] = "none: no NVIDIA GPU visible to this process"
        if topo_file or nccl_log:  # a machine known only by its dumps
            _interconnect(r, build_dir, topo_file, nccl_log, False, [], None, False, 0)
        return r
    for g in gpus:
        match = next((d for d in runtime_devices if str(d["index"]) == str(g.get("index"))), None)
        g["kind"] = ("integrated" if match["integrated"] else "discrete") if match else "discrete (seen by nvidia-smi)"
    r.sections["driver"] = {
        "driver_version": gpus[0].get("driver_version"),
        "supports CUDA": driver_cuda or "unknown",
        "build uses CUDA": toolkit or "unknown",
    }
    compare_driver_runtime(driver_cuda, toolkit, r)
    r.gpus = [check_gpu(g, codes, r) for g in gpus]
    if health is None and not recorded:
        health = (_run(health_mod.HEALTH_QUERY)[1], _run(health_mod.REMAP_QUERY)[1])
    if health is not None:
        rows, problems, warnings = health_mod.judge(
            *health, {str(g.get("index")): str(g.get("pci.bus_id", "")) for g in gpus}
        )
        r.sections["health"] = rows or {"nvidia-smi": "no error counters read"}
        r.problems += problems
        r.warnings += warnings
    procs = [p for p in (processes or "").strip().splitlines() if p.strip() and "No running" not in p]
    if procs:
        r.warnings.append(
            f"{len(procs)} other process(es) use the GPU(s): measurements will be disturbed: " + "; ".join(procs[:4])
        )
    _interconnect(
        r,
        build_dir,
        topo_file,
        nccl_log,
        not recorded,
        gpus,
        nvlink,
        run_nccl,
        len(runtime_devices) if runtime_devices else len(gpus),
    )
    return r


def _interconnect(r: Report, build_dir, topo_file, nccl_log, live, gpus, nvlink, run_nccl, visible) -> None:
    f = interconnect_check.check(build_dir, topo_file, nccl_log, live, gpus, nvlink, run_nccl, visible)
    r.sections.update(f.rows)
    r.problems += f.problems
    r.warnings += f.warnings


def exit_code(r: Report) -> int:
    if not r.gpus:
        return 77
    return 1 if r.problems else 0


def render(r: Report) -> str:
    lines = []
    for name, items in r.sections.items():
        lines.append(f"{name}:")
        lines += [f"  {k}: {v}" for k, v in items.items()]
    for g in r.gpus:
        lines.append(
            f"GPU {g['index']}: {g['name']} (compute capability {g.get('compute_cap')}, {g.get('memory.total')} MiB, "
            f"PCIe Gen{g.get('pcie.link.gen.current')}/{g.get('pcie.link.gen.max')} x{g.get('pcie.link.width.current')}/"
            f"{g.get('pcie.link.width.max')}, ECC {g.get('ecc.mode.current')}, MIG {g.get('mig.mode.current')}, "
            f"SM clock {g.get('sm_clock', '?')}); {g.get('kind', '')}"
        )
        lines += [f"  {k[5:]}: {v}" for k, v in g.items() if k.startswith("code:")]
    if not r.gpus:
        lines.append("no GPU visible: nothing to measure on this machine (toolchain reported above)")
    lines += [f"PROBLEM: {p}" for p in r.problems] + [f"warning: {w}" for w in r.warnings]
    if r.gpus and not r.problems:
        lines.append("no problems found")
    return "\n".join(lines)
