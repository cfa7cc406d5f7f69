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
  ring allreduce     = each rank sends 2(n-1)/n x payload; time = that / per-direction link bytes/s
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
from triaudit.core.specs import CardSpec, card_by_key, match_card, pcie_gbps

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
    allreduce_busbw: Figure | None = None
    # triaudit_allreduce --scaling: GPU (or rank) count -> message bytes -> busbw measured there
    allreduce_scaling: dict[int, dict[int, Figure]] = field(default_factory=dict)
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


def basis_from_run(paths: list[Path], card_key: str | None = None) -> Basis:
    """Measured figures from result files; the datasheet of the matching card fills the gaps."""
    from triaudit.results.table import load_table, plain

    df = load_table(paths)
    ok = plain(df[df["status"] == "ok"]) if not df.empty else df
    if ok.empty:
        errors = df[df["status"] == "error"]["message"].astype(str).tolist() if not df.empty else []
        said = f" ({len(errors)} error(s), the first: {errors[0]})" if errors else ""
        raise PlanError("the given runs hold no measured case" + said)
    cards = sorted(ok["card"].unique())
    if len(cards) != 1:
        raise PlanError(f"the given runs hold several cards ({', '.join(cards)}): plan one card at a time")
    card = cards[0]
    spec = card_by_key(card_key) if card_key else match_card(card)
    return basis_from_rows(ok, card, spec)


def basis_from_rows(ok, card: str, spec: CardSpec | None) -> Basis:
    """The measured figures of one card's measured rows (`ok`: plain text, status ok), the
    datasheet of `spec` filling the gaps."""
    import pandas as pd  # here, not at the top: doctor and run must work without pandas

    b = basis_from_spec(spec) if spec else Basis(card=card)
    b.card = card

    watts = {
        (f, c): float(v)
        for f, c, v in ok.loc[ok["metric"] == "watts_mean", ["file", "case", "median"]].itertuples(index=False)
    }

    def best(rows, metric, pick=max):
        rows = rows[rows["metric"] == metric]
        if rows.empty:
            return None
        idx = rows["median"].idxmax() if pick is max else rows["median"].idxmin()
        r = rows.loc[idx]
        w = watts.get((r["file"], r["case"]))
        where = f"{r['case']} ({Path(r['file']).parent.name})"
        return Figure(
            float(r["median"]),
            f"measured: {where}",
            Figure(w, f"measured: watts_mean of {where}") if w is not None else None,
        )

    stream = ok[(ok["corner"] == "stream") & (ok.get("cache") == "cold")] if "cache" in ok else ok.iloc[0:0]
    if not stream.empty:
        largest = stream["bytes"].astype("int64").max()
        f = best(stream[stream["bytes"].astype("int64") == largest], "bytes_per_second")
        if f:
            b.mem_bw = f
    gemm = ok[ok["corner"] == "gemm"]
    for prec in sorted(set(gemm["variant"])) if not gemm.empty else []:
        f = best(gemm[gemm["variant"] == prec], "flops")
        if f:
            b.flops[prec] = f
    memcpy = ok[(ok["corner"] == "memcpy") & (ok["op"] == "h2d")]
    for kind in ("pinned", "pageable"):
        f = best(memcpy[memcpy["variant"] == kind], "bytes_per_second") if not memcpy.empty else None
        if f:
            setattr(b, f"host_{kind}", f)
    ar = ok[ok["corner"] == "allreduce"]
    if not ar.empty:
        b.allreduce_busbw = best(ar, "busbw")
        b.allreduce_scaling = allreduce_scaling_from(ar)
    launch = ok[(ok["corner"] == "launch") & ok["op"].isin(["chain_fit", "chain"])]
    for variant in ("eager", "graph"):
        rows = launch[launch["variant"] == variant]
        fit = rows[rows["op"] == "chain_fit"]
        # The fitted per-kernel cost where measured, else the longest chain's per-kernel time.
        if not fit.empty:
            f = best(fit, "per_kernel_s", pick=min)
        elif not rows.empty:
            longest = rows[
                pd.to_numeric(rows["kernels"], errors="coerce") == pd.to_numeric(rows["kernels"], errors="coerce").max()
            ]
            f = best(longest, "per_kernel_s", pick=min)
        else:
            f = None
        if f:
            setattr(b, f"launch_{variant}_s", f)
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


def ring_allreduce(payload_bytes: float, gpus: int, link_bw: float) -> dict:
    if gpus < 1:
        raise PlanError("--gpus must be at least 1")
    per_rank = 2.0 * (gpus - 1) / gpus * payload_bytes
    return {"bytes_per_rank": per_rank, "time_s": per_rank / link_bw if link_bw else math.inf}


def transfer_seconds(payload_bytes: float, bw: float) -> float:
    return payload_bytes / bw


# --- allreduce from a run's scaling cases ------------------------------------------------------


def allreduce_scaling_from(ar) -> dict[int, dict[int, Figure]]:
    """busbw of `allreduce/scaling/<type>/algo:<a>/gpus:<g>|ranks:<r>/bytes:<N>` cases, per count
    and size: Ring where measured (the formula here is a ring's), else NCCL's own choice; the
    best type."""
    import pandas as pd

    rows = ar[(ar["op"] == "scaling") & (ar["metric"] == "busbw")]
    if rows.empty:
        return {}
    count = pd.Series(float("nan"), index=rows.index)
    for col in ("ranks", "gpus"):
        if col in rows:
            count = pd.to_numeric(rows[col], errors="coerce").fillna(count)
    rows = rows.assign(
        count=count,
        nbytes=pd.to_numeric(rows["bytes"], errors="coerce"),
        algo_rank=(rows["algo"] if "algo" in rows else pd.Series("", index=rows.index)).map(
            lambda a: 0 if a == "ring" else 1
        ),
    ).dropna(subset=["count", "nbytes"])
    out: dict[int, dict[int, Figure]] = {}
    for (g, n), grp in rows.groupby(["count", "nbytes"]):
        grp = grp[grp["algo_rank"] == grp["algo_rank"].min()]
        r = grp.loc[grp["median"].idxmax()]
        out.setdefault(int(g), {})[int(n)] = Figure(
            float(r["median"]), f"measured: {r['case']} ({Path(r['file']).parent.name})"
        )
    return out


def pick_scaling(
    scaling: dict[int, dict[int, Figure]], gpus: int, payload_bytes: float
) -> tuple[int, int, Figure, list[str]]:
    """The measured busbw to plan n GPUs and a payload with: the same GPU count where measured
    (else the nearest below, else above), the measured size nearest the payload (log scale).
    Returns (count, bytes, figure, notes)."""
    import math

    notes = []
    counts = sorted(c for c in scaling if c >= 2)
    if not counts:
        raise PlanError("the run's scaling cases have no multi-GPU count")
    if gpus in counts:
        g = gpus
    elif gpus > counts[-1]:
        g = counts[-1]
        notes.append(
            f"measured up to {g} GPUs: busbw at {g} used for {gpus}; beyond the measured counts it is an "
            "extrapolation (busbw usually falls as GPUs are added)"
        )
    else:
        below = [c for c in counts if c < gpus]
        g = below[-1] if below else counts[0]
        notes.append(f"no measurement at {gpus} GPUs: busbw at {g} used")
    sizes = sorted(scaling[g])
    n = min(sizes, key=lambda s: abs(math.log2(s) - math.log2(max(payload_bytes, 1))))
    if payload_bytes > sizes[-1] * 2:
        notes.append(
            f"the payload is larger than the largest size measured ({sizes[-1] / 2**20:g} MiB): busbw there used"
        )
    return g, n, scaling[g][n], notes
