"""Which corner binds a few named workloads on each card, from its measured figures through the
plan's model (plan/model.py), fed the summary's own headline figures: LLM decode at batch 1 and at the batch that fills the card's memory,
a prefill, and a training step with its gradient synchronisation. Each workload states its parameters;
each answer names the corner that sets its time and the figure it rests on. A figure the run did
not measure comes from the datasheet and the answer says so."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from triaudit.core import numbers as N
from triaudit.core.specs import match_card
from triaudit.plan import collective
from triaudit.plan import model as P
from triaudit.plan.models import MODELS
from triaudit.report.sections.summary.headline import Headlines

DECODE_MODEL = MODELS["llama-3-70b"]
CONTEXT = 8192  # tokens held per sequence in the KV cache
KV_BYTES = 2.0  # KV cache in BF16
PREFILL_TOKENS = 8192
TRAIN_MODEL = MODELS["llama-3-8b"]
TRAIN_TOKENS_PER_GPU = 8 * 8192  # tokens per GPU per step: 8 sequences of 8192


@dataclass
class Workload:
    name: str
    parameters: str
    answer: Callable[[P.Basis, int], str]  # (the card's figures, GPUs of its gradient sync) -> the answer


def _src(f: P.Figure | None) -> str:
    return "" if f is None or f.source.startswith("measured") else " (datasheet figure: not measured)"


def _flops(b: P.Basis, names: list[str]) -> tuple[P.Figure | None, str]:
    """The first of `names` the run measured, else the first the datasheet has."""
    for measured in (True, False):
        for n in names:
            f = b.flops.get(n)
            if f is not None and f.source.startswith("measured") == measured:
                return f, n
    return None, ""


def _decode(b: P.Basis, batch_fills: bool) -> str:
    m = DECODE_MODEL
    if b.mem_bw is None:
        return "no memory bandwidth figure"
    params = m.params()
    weights = params * 1.0  # FP8: one byte per weight
    kv_seq = P.kv_bytes_per_token(m.layers, m.kv_heads, m.dim, KV_BYTES) * CONTEXT
    mem = b.memory_bytes.value if b.memory_bytes else None
    gpus = (P.gpus_to_fit(weights + kv_seq, mem) or 0) if mem else 1
    if gpus == 0:
        return "does not fit on 64 GPUs"
    flops, prec = _flops(b, P.DECODE_COMPUTE["fp8"])
    note = ""
    if flops is None:
        flops, prec = _flops(b, ["bf16", "fp16"])
        note = f"; no FP8 compute: {prec} used" if flops else "; no compute figure: bandwidth alone"
    d = P.Decode(
        weights, kv_seq, b.mem_bw.value * gpus, flops.value * gpus if flops else None, params, (mem or 0) * gpus or None
    )
    # Every card's figure per GPU first, so a card that needs four GPUs is not read beside one that
    # needs one as if the totals compared; the GPUs it needs are said before it.
    need = f"{gpus} GPUs needed (the weights and one sequence's cache do not fit on one): " if gpus > 1 else ""
    if not batch_fills:
        t = d.step_s(1)
        total = f" ({N.number(1 / t)} in all)" if gpus > 1 else ""
        return (
            f"{need}≈ {N.number(1 / t / gpus)} token/s per GPU{total}, {d.bound(1)}-bound at the measured "
            f"memory triad{_src(b.mem_bw)}{note}"
        )
    batch = d.max_batch_memory()
    if batch is None:
        return "memory size unknown: no batch that fills it"
    if batch < 1:
        return "the weights leave no room for a sequence's KV cache"
    t = d.step_s(batch)
    total = f" ({N.number(batch / t)} in all)" if gpus > 1 else ""
    return (
        f"{need}batch {batch:,}: ≈ {N.number(batch / t / gpus)} token/s per GPU{total}, {N.number(1 / t)} per "
        f"user, {d.bound(batch)}-bound{_src(b.mem_bw)}{note}"
    )


def _prefill(b: P.Basis, _gpus: int) -> str:
    m = DECODE_MODEL
    flops, prec = _flops(b, P.DECODE_COMPUTE["fp8"] + ["bf16", "fp16"])
    if flops is None or b.mem_bw is None:
        return "needs a compute and a bandwidth figure"
    work = 2.0 * m.params() * PREFILL_TOKENS  # the weights' FLOPs; attention's are left out
    moved = m.params() * 1.0 + P.kv_bytes_per_token(m.layers, m.kv_heads, m.dim, KV_BYTES) * PREFILL_TOKENS
    rf = P.roofline(work, moved, flops.value, b.mem_bw.value)
    t = rf["time_floor_s"]
    # The ridge is the one of the precision the prefill runs at (FP8 where the card has it), named:
    # the summary's ridge row is BF16's.
    return (
        f"{rf['bound']}-bound ({N.number(rf['intensity_flop_per_byte'])} FLOP/byte against the {prec} ridge "
        f"of {N.number(rf['ridge_flop_per_byte'])}), ≈ {N.number(t * 1e3)} ms at the {prec} ceiling{_src(flops)}"
    )


def _training(b: P.Basis, gpus: int) -> str:
    m = TRAIN_MODEL
    flops = b.flops.get("bf16")
    if flops is None:
        return "no BF16 compute figure"
    compute_s = 6.0 * m.params() * TRAIN_TOKENS_PER_GPU / flops.value
    sync = collective.sync_corner()
    if gpus < 2 or b.sync_busbw is None or not b.sync_busbw.value:
        return f"compute ≈ {compute_s:,.2f} s per step{_src(flops)}; no {sync} between GPUs measured"
    sync_s = collective.ring_time(2.0 * m.params(), gpus, b.sync_busbw.value)["time_s"]
    bound = "compute" if compute_s >= sync_s else f"movement ({sync})"
    return (
        f"{bound}-bound: GEMM ≈ {compute_s:,.2f} s, gradient {sync} ≈ {sync_s:,.2f} s on {gpus} GPUs "
        f"(not overlapped){_src(flops)}"
    )


WORKLOADS = [
    Workload(
        f"{DECODE_MODEL.name} decode, batch 1",
        f"FP8 weights (1 byte), BF16 KV cache of {CONTEXT:,} tokens; tensor-parallel over as many GPUs as the "
        "weights need, communication not counted",
        lambda b, g: _decode(b, False),
    ),
    Workload(
        f"{DECODE_MODEL.name} decode, the batch that fills memory",
        f"as batch 1; as many sequences of {CONTEXT:,} tokens as fit beside the weights",
        lambda b, g: _decode(b, True),
    ),
    Workload(
        f"{DECODE_MODEL.name} prefill",
        f"{PREFILL_TOKENS:,} prompt tokens in FP8 (2 × parameters FLOP per token; weights read once, KV written)",
        _prefill,
    ),
    Workload(
        f"{TRAIN_MODEL.name} training step",
        f"BF16, data parallel over the GPUs of the run's {collective.sync_corner()}, {TRAIN_TOKENS_PER_GPU:,} "
        "tokens per GPU (6 × parameters FLOP per token at the measured BF16 ceiling); BF16 gradients "
        f"{collective.sync_corner()}d once at the measured busbw",
        _training,
    ),
]


def basis_of(h: Headlines, card: str) -> tuple[P.Basis, int]:
    """The card's plan basis from its headline figures (the datasheet filling what was not
    measured), and the GPU count of its gradient-sync figure (1: none between GPUs): the same
    function `plan --run` builds its basis with."""
    b = P.basis_from_figures(h.figures, card, match_card(card))
    return b, b.sync_gpus


def binding(h: Headlines) -> dict[str, dict[str, str]]:
    """{workload name: {card: answer}}, from the headline figures (headline.py): the same numbers
    the summary's table shows."""
    out: dict[str, dict[str, str]] = {w.name: {} for w in WORKLOADS}
    for card in h.cards:
        basis, gpus = basis_of(h, card)
        for w in WORKLOADS:
            out[w.name][card] = w.answer(basis, gpus)
    return out
