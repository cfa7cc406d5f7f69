"""Datasheet figures for the cards users compare (vendor datasheets; docs/cards.md lists the figures and their doubts), as data.

Dense rates (no sparsity), TFLOP/s; memory bandwidth GB/s (1e9 B/s). `doubts` says where a
figure is uncertain. Matched against the device name CUDA reports (`gpu_name` in the context).
These are datasheet peaks, never measurements: reports label them so.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field


@dataclass(frozen=True)
class CardSpec:
    key: str  # short name used on the command line, e.g. "h100-sxm"
    name: str
    pattern: str  # regex over the CUDA device name
    compute_capability: str
    sms: int
    boost_mhz: int
    tflops: dict = field(default_factory=dict)  # precision -> dense TFLOP/s (TOP/s for int8)
    memory_gb: float = 0.0
    mem_bw_gbps: float = 0.0
    l2_mb: float = 0.0
    pcie_gen: int = 4
    pcie_width: int = 16
    nvlink_gbps: float = 0.0  # total, both directions, as datasheets quote it
    tdp_w: int = 0
    doubts: str = ""
    memory: str = ""  # the memory's kind on the datasheet: HBM3e, GDDR6X, ... ("" unknown)

    def peak_flops(self, precision: str) -> float | None:
        v = self.tflops.get(precision)
        return None if v is None else v * 1e12

    @property
    def mem_bw(self) -> float:
        return self.mem_bw_gbps * 1e9

    @property
    def pcie_gbps_per_direction(self) -> float:
        return pcie_gbps(self.pcie_gen, self.pcie_width)


def pcie_gbps(gen: int, width: int) -> float:
    """Theoretical per-direction PCIe bandwidth, GB/s (Gen3 ~1 GB/s per lane, doubling each generation)."""
    per_lane = {1: 0.25, 2: 0.5, 3: 0.985, 4: 2.0, 5: 4.0, 6: 8.0}.get(gen, 0.0)
    return per_lane * width


def _tf(fp64, fp64_tc, fp32, tf32, fp16, bf16, fp8, int8):
    d = {
        "fp64": fp64,
        "fp64_tc": fp64_tc,
        "fp32": fp32,
        "tf32": tf32,
        "fp16": fp16,
        "bf16": bf16,
        "fp8": fp8,
        "int8": int8,
    }
    return {k: v for k, v in d.items() if v is not None}


CARDS: list[CardSpec] = [
    CardSpec(
        "a100-sxm-80",
        "A100 SXM4 80GB",
        r"A100[- ]SXM4?[- ]80GB|A100 80GB HBM2e|A100-SXM-80GB",
        "8.0",
        108,
        1410,
        _tf(9.7, 19.5, 19.5, 156, 312, 312, None, 624),
        80,
        2039,
        40,
        4,
        16,
        600,
        400,
        memory="HBM2e",
    ),
    CardSpec(
        "a100-pcie-80",
        "A100 PCIe 80GB",
        r"A100 80GB PCIe|A100-PCIE-80GB",
        "8.0",
        108,
        1410,
        _tf(9.7, 19.5, 19.5, 156, 312, 312, None, 624),
        80,
        1935,
        40,
        4,
        16,
        600,
        300,
        "NVLink through a bridge",
        memory="HBM2e",
    ),
    CardSpec(
        "a100-sxm-40",
        "A100 SXM4 40GB",
        r"A100[- ]SXM4?[- ]40GB",
        "8.0",
        108,
        1410,
        _tf(9.7, 19.5, 19.5, 156, 312, 312, None, 624),
        40,
        1555,
        40,
        4,
        16,
        600,
        400,
        memory="HBM2",
    ),
    CardSpec(
        "h100-sxm",
        "H100 SXM5 80GB",
        r"H100 80GB HBM3|H100[- ]SXM",
        "9.0",
        132,
        1980,
        _tf(34, 67, 67, 494.7, 989.4, 989.4, 1979, 1979),
        80,
        3350,
        50,
        5,
        16,
        900,
        700,
        memory="HBM3",
    ),
    CardSpec(
        "h100-pcie",
        "H100 PCIe 80GB",
        r"H100 PCIe",
        "9.0",
        114,
        1755,
        _tf(26, 51, 51, 378, 756, 756, 1513, 1513),
        80,
        2000,
        50,
        5,
        16,
        600,
        350,
        "NVLink through a bridge",
        memory="HBM2e",
    ),
    CardSpec(
        "h200",
        "H200 SXM 141GB",
        r"H200(?! NVL)",
        "9.0",
        132,
        1980,
        _tf(34, 67, 67, 494.7, 989.4, 989.4, 1979, 1979),
        141,
        4800,
        50,
        5,
        16,
        900,
        700,
        "L2 read off a device: 60 MB",
        memory="HBM3e",
    ),
    CardSpec(
        "rtx-4090",
        "RTX 4090",
        r"RTX 4090(?! D)(?! Laptop)",
        "8.9",
        128,
        2520,
        _tf(1.29, None, 82.6, 82.6, 165.2, 165.2, 330.3, 660.6),
        24,
        1008,
        72,
        4,
        16,
        0,
        450,
        "FP16 shown with FP32 accumulate (330.3 with FP16 accumulate); FP8 uncertain",
        memory="GDDR6X",
    ),
    CardSpec(
        "l40s",
        "L40S",
        r"L40S",
        "8.9",
        142,
        2520,
        _tf(1.4, None, 91.6, 183, 362, 362, 733, 733),
        48,
        864,
        96,
        4,
        16,
        0,
        350,
        "FP64 approximate; L2 size uncertain",
        memory="GDDR6",
    ),
    CardSpec(
        "b200",
        "B200 (HGX)",
        r"B200",
        "10.0",
        148,
        1900,
        _tf(37, 40, 80, 1100, 2250, 2250, 4500, 4500),
        180,
        8000,
        0,
        5,
        16,
        1800,
        1000,
        "uncertain: figures vary by source (FP64 37-40, TF32 1100-1125, memory 180-192 GB)",
        memory="HBM3e",
    ),
    CardSpec(
        "rtx-4060-laptop",
        "RTX 4060 Laptop",
        r"RTX 4060 Laptop",
        "8.9",
        24,
        0,
        _tf(None, None, 14.6, None, None, None, None, None),
        8,
        256,
        32,
        4,
        8,
        0,
        0,
        "Tensor Core rates not listed",
        memory="GDDR6",
    ),
]


# A GEMM precision as the executables name it -> the datasheet rates it is held to, first the
# one it runs at (FP64 GEMMs run on the FP64 Tensor Cores where the card has them).
PRECISION_RATES = {
    "fp64": ("fp64_tc", "fp64"),
    "fp32": ("fp32",),
    "tf32": ("tf32",),
    "fp16": ("fp16",),
    "fp16acc16": ("fp16",),
    "bf16": ("bf16",),
    "fp8e4m3": ("fp8",),
    "fp8e4m3fast": ("fp8",),
    "int8": ("int8",),
}


def match_card(device_name: str) -> CardSpec | None:
    """The spec whose pattern matches the CUDA device name, or None for an unknown card."""
    for c in CARDS:
        if re.search(c.pattern, device_name or "", re.IGNORECASE):
            return c
    return None


def canonical_gpu_name(name: str) -> str:
    """One name per card, however a driver or a tool spelled it: spaces collapsed, and "NVIDIA "
    in front of a known card's name that lacks it (old drivers report "A100-SXM4-40GB", new ones
    "NVIDIA A100-SXM4-40GB"; nccl-tests and nvbandwidth print what the driver said). A card the
    datasheets do not know keeps its name as given."""
    n = " ".join(str(name or "").split())
    if n and not n.upper().startswith("NVIDIA ") and match_card(n) is not None:
        n = "NVIDIA " + n
    return n


def card_by_key(key: str) -> CardSpec:
    k = key.lower().strip()
    for c in CARDS:
        if c.key == k:
            return c
    matched = match_card(key)
    if matched:
        return matched
    raise KeyError(f"unknown card {key!r}; known: {', '.join(c.key for c in CARDS)}")
