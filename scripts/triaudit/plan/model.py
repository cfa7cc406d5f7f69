"""`triaudit plan`: the triangle audit as arithmetic — which corner binds, and the time floor.

Every answer says which numbers it used and where they came from: measured (a run's result
files) or datasheet (specs.py). Formulas (the seeds'):
  ridge point        = peak FLOP/s / memory bytes/s                     [FLOP/B]
  roofline floor     = max(FLOPs / peak FLOP/s, bytes / bytes/s)
  decode tokens/s    = batch x bandwidth / (weights + batch x KV bytes), until 2 x params FLOP per
                       token x batch reaches the compute roof; users = the largest batch that fits in
                       memory and keeps each user at the target rate (KV = 2 x layers x kv_heads x
                       head_dim x context x bytes per sequence)
  training time      = 6 x parameters x tokens / (FLOP/s x GPUs x MFU)
  full fine-tune     = 16 B/parameter (bf16 weights 2 + grads 2 + fp32 master 4 + Adam m, v 8) + activations
  collective time    = bytes each rank sends (a ring: 2(n-1)/n x payload) / per-direction link bytes/s
  host transfer      = payload / link bytes/s
  kernel launches    = count x per-kernel cost (eager, or inside a CUDA Graph)
  cost (plan_cost.py) = GPUs x hours x price per GPU-hour: the rent / utilisation, or (buying) price /
                       (years x 8760 h x utilisation) + watts / 1000 x price per kWh
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

from triaudit.core.errors import TriauditError
from triaudit.core.specs import CardSpec, pcie_gbps

DTYPE_BYTES = {"fp64": 8, "fp32": 4, "tf32": 4, "fp16": 2, "bf16": 2, "fp8": 1, "int8": 1, "int4": 0.5}

# Per-direction link bandwidths, GB/s (1e9 B/s). NVLink datasheet totals count both directions:
# A100's "600 GB/s" is 300 each way. Achieved figures are lower (see gpus.md).
LINKS = {
    "nvlink-a100": (300.0, "NVLink 3 (A100): 600 GB/s total = 300 GB/s per direction"),
    "nvlink-h100": (450.0, "NVLink 4 (H100/H200): 900 GB/s total = 450 GB/s per direction"),
    "nvlink-b200": (900.0, "NVLink 5 (B200): 1800 GB/s total = 900 GB/s per direction"),
    "pcie3": (pcie_gbps(3, 16), "PCIe Gen3 x16 theoretical per direction"),
    "pcie4": (pcie_gbps(4, 16), "PCIe Gen4 x16 theoretical per direction (≈ 25–27 achieved pinned)"),
    "pcie5": (pcie_gbps(5, 16), "PCIe Gen5 x16 theoretical per direction (≈ 55 achieved pinned)"),
    "ib-200g": (25.0, "InfiniBand 200 Gb/s"),
    "ib-400g": (50.0, "InfiniBand 400 Gb/s"),
    "eth-1g": (0.125, "Ethernet 1 Gb/s"),
    "eth-100g": (12.5, "Ethernet 100 Gb/s"),
}


class PlanError(TriauditError):
    pass


@dataclass
class Figure:
    value: float
    source: str  # "measured: <case> in <file>" or "datasheet: <card>"
    # The mean power the case behind a measured figure drew (its energy counter's watts_mean),
    # for the energy part of a cost (plan_cost.py); None: not measured.
    watts: Figure | None = None


@dataclass
class Basis:
    """The numbers a plan rests on, each with its source."""

    card: str
    flops: dict[str, Figure] = field(default_factory=dict)
    mem_bw: Figure | None = None
    memory_bytes: Figure | None = None
    host_pinned: Figure | None = None
    host_pageable: Figure | None = None
    # The collective a data-parallel step synchronises its gradients with (the headline of role
    # "gradient_sync"): its busbw, the GPUs it spanned, and its GPU-count sweep
    # (count -> message bytes -> busbw measured there).
    sync_busbw: Figure | None = None
    sync_gpus: int = 1
    sync_scaling: dict[int, dict[int, Figure]] = field(default_factory=dict)
    launch_eager_s: Figure | None = None  # per kernel in a chain, launch to completion
    launch_graph_s: Figure | None = None

    def need_flops(self, precision: str) -> Figure:
        if precision not in self.flops:
            raise PlanError(
                f"no {precision} compute figure for {self.card} (known: {', '.join(sorted(self.flops)) or 'none'})"
            )
        return self.flops[precision]

    def need_bw(self) -> Figure:
        if self.mem_bw is None:
            raise PlanError(f"no memory bandwidth figure for {self.card}")
        return self.mem_bw


def basis_from_spec(spec: CardSpec) -> Basis:
    src = f"datasheet: {spec.name}"
    b = Basis(card=spec.name)
    b.flops = {p: Figure(v * 1e12, src) for p, v in spec.tflops.items()}
    if spec.mem_bw_gbps:
        b.mem_bw = Figure(spec.mem_bw, src)
    if spec.memory_gb:
        b.memory_bytes = Figure(spec.memory_gb * 1e9, src)
    b.host_pinned = Figure(
        spec.pcie_gbps_per_direction * 1e9, f"datasheet: PCIe Gen{spec.pcie_gen} x{spec.pcie_width} theoretical"
    )
    return b


def basis_from_figures(figs, card: str, spec: CardSpec | None) -> Basis:
    """The plan's basis of one card from its headline figures (results/figures.py headline_figures:
    one row per figure, with the roles it stands for), the datasheet of `spec` filling the gaps."""
    b = basis_from_spec(spec) if spec else Basis(card=card)
    b.card = card
    if figs is None or figs.empty:
        return b
    for r in figs[figs["card"] == card].to_dict("records"):
        where = f"{r['case']} ({Path(str(r['file'])).parent.name})"
        w = r.get("watts")
        watts = Figure(float(w), f"measured: watts_mean of {where}") if w is not None and w == w else None
        fig = Figure(float(r["median"]), f"measured: {where}", watts)
        for role in str(r.get("roles") or "").split("|"):
            if role.startswith("flops:"):
                b.flops[role.split(":", 1)[1]] = fig
            elif role == "hbm":
                b.mem_bw = fig
            elif role in ("host_pinned", "host_pageable"):
                setattr(b, role, fig)
            elif role in ("launch_eager", "launch_graph"):
                setattr(b, f"{role}_s", fig)
            elif role == "gradient_sync":
                b.sync_busbw = fig
                ranks = r.get("ranks")
                b.sync_gpus = int(ranks) if ranks is not None and ranks == ranks else 1
    return b


# --- the formulas -------------------------------------------------------------------------


def ridge_point(peak_flops: float, bw: float) -> float:
    return peak_flops / bw


def gemm_counts(m: int, n: int, k: int, elem_bytes: float) -> tuple[float, float]:
    """FLOPs (2mnk) and the minimum bytes (read A and B, write C once)."""
    return 2.0 * m * n * k, (m * k + k * n + m * n) * elem_bytes


def elementwise_counts(
    n: int, reads: int, writes: int, flops_per_element: float, elem_bytes: float
) -> tuple[float, float]:
    return n * flops_per_element, n * (reads + writes) * elem_bytes


def roofline(flops: float, nbytes: float, peak_flops: float, bw: float) -> dict:
    intensity = flops / nbytes if nbytes else math.inf
    ridge = ridge_point(peak_flops, bw)
    t_compute, t_memory = flops / peak_flops, nbytes / bw
    return {
        "intensity_flop_per_byte": intensity,
        "ridge_flop_per_byte": ridge,
        "bound": "compute" if intensity >= ridge else "bandwidth",
        "time_floor_s": max(t_compute, t_memory),
        "compute_time_s": t_compute,
        "memory_time_s": t_memory,
        "attainable_flops": min(peak_flops, intensity * bw),
    }


def decode_tokens_per_s(bw: float, params: float, bytes_per_param: float) -> float:
    return bw / (params * bytes_per_param)


# The compute roof a decode step runs at, by weight precision (4-bit weights are dequantised and
# multiplied in 16 bits); the first name the basis has is used.
DECODE_COMPUTE = {
    "fp16": ["fp16", "bf16"],
    "bf16": ["bf16", "fp16"],
    "fp8": ["fp8", "fp8e4m3", "fp8e4m3fast"],
    "int8": ["int8"],
    "int4": ["fp16", "bf16"],
}


@dataclass
class Decode:
    """Batched decode on `gpus` GPUs (tensor parallel, communication not counted). One step produces
    one token for each of `batch` sequences and reads every weight once and each sequence's KV cache:
      bytes per step = weights + batch x KV bytes per sequence
      step time      = max(bytes per step / bandwidth, batch x 2 x params FLOP / compute)
      tokens/s       = batch / step time;  each user gets 1 / step time tokens/s."""

    weight_bytes: float
    kv_bytes_per_seq: float | None  # None: architecture not given
    bw: float  # bytes/s, all GPUs together
    flops: float | None  # FLOP/s, all GPUs together (None: no compute figure)
    params: float
    memory: float | None  # bytes, all GPUs together

    def step_s(self, batch: int) -> float:
        kv = self.kv_bytes_per_seq or 0.0
        t_mem = (self.weight_bytes + batch * kv) / self.bw
        t_comp = batch * 2 * self.params / self.flops if self.flops else 0.0
        return max(t_mem, t_comp)

    def bound(self, batch: int) -> str:
        kv = self.kv_bytes_per_seq or 0.0
        t_comp = batch * 2 * self.params / self.flops if self.flops else 0.0
        return "compute" if t_comp > (self.weight_bytes + batch * kv) / self.bw else "bandwidth"

    def fits(self, batch: int) -> bool:
        return self.memory is None or self.weight_bytes + batch * (self.kv_bytes_per_seq or 0.0) <= self.memory

    def max_batch_memory(self) -> int | None:
        """Sequences whose KV cache fits beside the weights (None: unbounded or unknown)."""
        if self.memory is None or not self.kv_bytes_per_seq:
            return None
        return max(0, math.floor((self.memory - self.weight_bytes) / self.kv_bytes_per_seq))

    def max_batch_rate(self, rate: float) -> int | None:
        """The largest batch whose step is short enough that every user gets `rate` tokens/s."""
        if not self.kv_bytes_per_seq:
            return None
        b = (self.bw / rate - self.weight_bytes) / self.kv_bytes_per_seq
        if self.flops:
            b = min(b, self.flops / (rate * 2 * self.params))
        return max(0, math.floor(b + 1e-9))


def kv_bytes_per_token(layers: int, kv_heads: int, head_dim: int, elem_bytes: float) -> float:
    """K and V for every layer: 2 x layers x kv_heads x head_dim x bytes."""
    return 2.0 * layers * kv_heads * head_dim * elem_bytes


def gpus_to_fit(need_bytes: float, per_gpu_bytes: float, limit: int = 64) -> int | None:
    """The smallest power-of-two GPU count (as tensor parallelism splits) whose memory holds `need_bytes`."""
    g = 1
    while g <= limit:
        if need_bytes <= g * per_gpu_bytes:
            return g
        g *= 2
    return None


def training_seconds(params: float, tokens: float, flops_per_gpu: float, gpus: int, mfu: float) -> float:
    return 6.0 * params * tokens / (flops_per_gpu * gpus * mfu)


def finetune_memory_bytes(
    params: float, mode: str = "full", lora_trainable_fraction: float = 0.01, activation_factor: float = 0.0
) -> dict:
    """Mixed-precision Adam: bf16 weights (2) + bf16 grads (2) + fp32 master weights (4) + Adam
    m and v in fp32 (8) = 16 bytes per trained parameter. LoRA: frozen bf16 weights plus 16 bytes
    per trainable adapter parameter. Activations: activation_factor x weight bytes (workload-dependent)."""
    if mode == "full":
        parts = {
            "weights": 2 * params,
            "gradients": 2 * params,
            "master_weights_fp32": 4 * params,
            "adam_states_fp32": 8 * params,
        }
    elif mode == "lora":
        t = params * lora_trainable_fraction
        parts = {
            "frozen_weights": 2 * params,
            "adapter_weights": 2 * t,
            "adapter_gradients": 2 * t,
            "adapter_master_fp32": 4 * t,
            "adapter_adam_states_fp32": 8 * t,
        }
    else:
        raise PlanError(f"unknown fine-tuning mode {mode!r} (full or lora)")
    parts["activations"] = activation_factor * 2 * params
    parts["total"] = sum(parts.values())
    return parts


def transfer_seconds(payload_bytes: float, bw: float) -> float:
    return payload_bytes / bw
