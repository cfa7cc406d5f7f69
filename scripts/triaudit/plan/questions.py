"""The questions `triaudit plan` answers (which corner binds, and by how much), as a function of a
Question: its fields are the command line's options, by the same names; report sections ask them
too (the cost section's decode rows). The arithmetic is plan/model.py's; the answer is a dict:
question, card, rows (label, value, unit, source), binds, formula, notes."""

from __future__ import annotations

from dataclasses import dataclass, fields
from pathlib import Path

from triaudit.core import numbers as N
from triaudit.core.specs import card_by_key, match_card
from triaudit.plan import collective
from triaudit.plan import model as P
from triaudit.plan.models import MODELS


@dataclass
class Question:
    """One plan question and its inputs. The defaults are the command line's."""

    question: str
    card: str | None = None
    run: list[Path] | None = None
    json: bool = False
    # roofline
    precision: str = "bf16"
    flops: float | None = None
    bytes: float | None = None
    gemm: list[int] | None = None
    elementwise: int | None = None
    reads: int = 2
    writes: int = 1
    flops_per_element: float = 1.0
    # decode
    model: str | None = None
    params: float | None = None
    weights: str = "fp16"
    layers: int | None = None
    kv_heads: int | None = None
    head_dim: int | None = None
    context: int | None = None
    kv_dtype: str = "fp16"
    batch: int | None = None
    gpus: int = 1
    tokens_per_user: float = 20.0
    kv_cache_gb: float = 0.0
    # train
    tokens: float | None = None
    mfu: float | None = None
    tflops: float | None = None
    # memory
    mode: str = "both"
    lora_fraction: float = 0.01
    activation_factor: float = 0.0
    # collective, transfer
    payload_gb: float | None = None
    link: str | None = None
    link_gbps: float | None = None
    # launches
    count: int | None = None
    eager_us: float | None = None
    graph_us: float | None = None
    # cost (plan/cost.py)
    price_per_hour: float | None = None
    price: float | None = None
    years: float | None = None
    power_price_kwh: float | None = None
    utilisation: float | None = None
    watts: float | None = None

    @classmethod
    def from_args(cls, args) -> Question:
        """The question an argparse namespace asks (its options have the fields' names)."""
        return cls(**{f.name: getattr(args, f.name) for f in fields(cls) if hasattr(args, f.name)})


def basis_from_run(paths: list[Path], card_key: str | None = None) -> P.Basis:
    """Measured figures from result files (each the card's headline figure, results/figures.py: the
    same figures the report's summary and the gate quote); the matching card's datasheet fills the gaps."""
    from triaudit.results.figures import headline_figures
    from triaudit.results.table import load_results

    rs = load_results(paths)
    df = rs.table
    ok = df[df["status"] == "ok"] if not df.empty else df
    if ok.empty:
        errors = df[df["status"] == "error"]["message"].astype(str).tolist() if not df.empty else []
        said = f" ({len(errors)} error(s), the first: {errors[0]})" if errors else ""
        raise P.PlanError("the given runs hold no measured case" + said)
    cards = sorted(str(c) for c in ok["card"].unique())
    if len(cards) != 1:
        raise P.PlanError(f"the given runs hold several cards ({', '.join(cards)}): plan one card at a time")
    card = cards[0]
    try:
        spec = card_by_key(card_key) if card_key else match_card(card)
    except KeyError as e:
        raise P.PlanError(str(e.args[0])) from None
    b = P.basis_from_figures(headline_figures(df, rs.contexts), card, spec)
    b.sync_scaling = collective.sync_scaling_from(df)
    return b


def figures_for(a: Question) -> P.Basis:
    """The figures a question is answered from: the run's measurements, or the card's datasheet."""
    if a.run:
        return basis_from_run(a.run, a.card)
    if a.card:
        try:
            return P.basis_from_spec(card_by_key(a.card))
        except KeyError as e:
            raise P.PlanError(str(e.args[0])) from None
    raise P.PlanError("say which card: --card KEY (datasheet) or --run RESULTS (measured)")


def _link(a, basis: P.Basis | None) -> tuple[float, str]:
    if a.link_gbps:
        return a.link_gbps * 1e9, f"given: {a.link_gbps:g} GB/s per direction"
    if a.link:
        gbps, what = P.LINKS[a.link]
        return gbps * 1e9, what
    raise P.PlanError("say which link: --link NAME or --link-gbps N")


def _decode(a, notes: list[str]) -> dict:
    b = figures_for(a)
    bw = b.need_bw()
    m = MODELS.get(a.model) if a.model else None
    params = a.params or (m.params() if m else None)
    if not params:
        raise P.PlanError("say how large the model is: --params N or --model NAME")
    layers, kv_heads, head_dim = (
        a.layers or (m.layers if m else None),
        a.kv_heads or (m.kv_heads if m else None),
        a.head_dim or (m.dim if m else None),
    )
    context = a.context or (m.context if m else None)
    arch = [x for x in (layers, kv_heads, head_dim, context) if x]
    if 0 < len(arch) < 4:
        raise P.PlanError("the KV cache needs --layers, --kv-heads, --head-dim and --context together (or --model)")
    kv_seq = None
    if arch:
        held = min(context, m.kv_window) if m and m.kv_window else context
        kv_seq = P.kv_bytes_per_token(layers, kv_heads, head_dim, P.DTYPE_BYTES[a.kv_dtype]) * held
        if held < context:
            notes.append(f"{m.name}: sliding-window attention, the KV cache holds the last {held} tokens")
    g = a.gpus
    weights = params * P.DTYPE_BYTES[a.weights]
    flops = next((b.flops[k] for k in P.DECODE_COMPUTE[a.weights] if k in b.flops), None)
    per_gpu_memory = b.memory_bytes.value if b.memory_bytes else None
    memory = per_gpu_memory * g - a.kv_cache_gb * 1e9 if per_gpu_memory else None
    d = P.Decode(weights, kv_seq, bw.value * g, flops.value * g if flops else None, params, memory)
    rate = a.tokens_per_user
    rows = [
        ("parameters", params / 1e9, "billion", f"{m.name} config" if m and not a.params else "given"),
        ("weights", weights / 1e9, "GB", a.weights),
        ("memory bandwidth", bw.value / 1e9, "GB/s per GPU", bw.source),
    ]
    if flops:
        rows.append(
            (
                f"compute ({next(k for k in P.DECODE_COMPUTE[a.weights] if k in b.flops)})",
                flops.value / 1e12,
                "TFLOP/s per GPU",
                flops.source,
            )
        )
    else:
        notes.append(f"no compute figure for {a.weights} weights: the compute roof is not counted")
    if g > 1:
        rows.append(("GPUs (tensor parallel)", g, "", "communication between them not counted"))
    if kv_seq is not None:
        rows.append(
            (
                "KV cache per sequence",
                kv_seq / 1e9,
                "GB",
                f"2 × {layers} layers × {kv_heads} KV heads × "
                f"{head_dim} × {context} tokens × {P.DTYPE_BYTES[a.kv_dtype]:g} B",
            )
        )
    rows.append(("tokens/s per sequence (batch 1)", 1 / d.step_s(1), "token/s", ""))
    binds = "bandwidth"
    need1 = weights + (kv_seq or 0.0)
    if memory is not None:
        rows.append(
            (
                "fits in memory",
                "yes" if d.fits(1) else "no",
                f"{need1 / 1e9:.1f} of {memory / 1e9:.0f} GB at batch 1",
                b.memory_bytes.source,
            )
        )
    if memory is not None and not d.fits(1):
        binds = "capacity"
        fit_gpus = P.gpus_to_fit(need1 + a.kv_cache_gb * 1e9, per_gpu_memory)
        rows.append(
            ("GPUs that would hold it", fit_gpus or "more than 64", "tensor parallel", "weights + one sequence's KV")
        )
        fitting = [w for w in ("fp16", "fp8", "int4") if params * P.DTYPE_BYTES[w] + (kv_seq or 0.0) <= memory]
        rows.append((f"weight precision that fits {g} GPU(s)", fitting[0] if fitting else "none", "", ""))
        return {
            "question": a.question,
            "card": b.card,
            "rows": rows,
            "binds": binds,
            "formula": "needed = weights + batch × KV cache per sequence > memory",
            "notes": notes,
        }
    if kv_seq is None:
        notes.append(
            "no architecture given (--model, or --layers/--kv-heads/--head-dim/--context): KV-cache reads "
            "and memory are not counted, so users served cannot be said; batch 1 is an upper bound"
        )
        if a.batch:
            rows.append((f"tokens/s at batch {a.batch}", a.batch / d.step_s(a.batch), "token/s", "weights only"))
            binds = d.bound(a.batch)
        return {
            "question": a.question,
            "card": b.card,
            "rows": rows,
            "binds": binds,
            "formula": "tokens/s = batch × bandwidth ÷ weight bytes (KV cache not counted)",
            "notes": notes,
        }
    by_rate, by_memory = d.max_batch_rate(rate), d.max_batch_memory()
    users = min(x for x in (by_rate, by_memory) if x is not None)
    rows.append(
        (
            f"users at {rate:g} token/s",
            users,
            "users",
            "limited by memory (KV cache)"
            if by_memory is not None and by_memory < by_rate
            else "limited by the rate each user gets",
        )
    )
    batch = a.batch or max(users, 1)
    step = d.step_s(batch)
    rows += [
        (f"tokens/s at batch {batch}", batch / step, "token/s", "all users together"),
        (f"tokens/s per user at batch {batch}", 1 / step, "token/s", ""),
    ]
    if not d.fits(batch):
        binds = "capacity"
        rows.append(
            (
                f"fits in memory at batch {batch}",
                "no",
                f"{(weights + batch * kv_seq) / 1e9:.1f} of {memory / 1e9:.0f} GB",
                "",
            )
        )
    elif by_memory is not None and not a.batch and by_memory < by_rate:
        binds = "capacity (KV cache)"
    else:
        binds = d.bound(batch)
    notes.append("attention FLOPs and kernel gaps not counted: real systems reach less")
    return {
        "question": a.question,
        "card": b.card,
        "rows": rows,
        "binds": binds,
        "formula": "tokens/s = batch × bandwidth ÷ (weights + batch × KV per sequence), at most batch × compute ÷ "
        "(2 × params); users = largest batch that fits and keeps each user at the target rate",
        "notes": notes,
    }


def answer(a: Question) -> dict:
    q = a.question
    notes: list[str] = []
    if q == "roofline":
        b = figures_for(a)
        peak, bw = b.need_flops(a.precision), b.need_bw()
        rows = [("memory bandwidth", bw.value / 1e9, "GB/s", bw.source)]
        for prec, f in sorted(b.flops.items()):
            rows.append((f"ridge point {prec}", P.ridge_point(f.value, bw.value), "FLOP/B", f.source))
        result = {
            "rows": rows,
            "binds": None,
            "formula": "ridge = peak FLOP/s ÷ memory bytes/s; floor = max(FLOPs ÷ peak, bytes ÷ bandwidth)",
        }
        op = None
        eb = P.DTYPE_BYTES[a.precision]
        if a.gemm:
            gm, gn, gk = a.gemm
            op = P.gemm_counts(gm, gn, gk, eb)
        elif a.elementwise:
            op = P.elementwise_counts(a.elementwise, a.reads, a.writes, a.flops_per_element, eb)
        elif a.flops or a.bytes:
            if not (a.flops and a.bytes):
                raise P.PlanError("--flops and --bytes go together")
            op = (a.flops, a.bytes)
        if op:
            r = P.roofline(op[0], op[1], peak.value, bw.value)
            rows += [
                ("operation FLOPs", op[0], "FLOP", ""),
                ("operation bytes", op[1], "B", ""),
                ("arithmetic intensity", r["intensity_flop_per_byte"], "FLOP/B", ""),
                (f"ridge point ({a.precision})", r["ridge_flop_per_byte"], "FLOP/B", peak.source),
                ("time floor", r["time_floor_s"] * 1e6, "µs", ""),
                ("attainable", r["attainable_flops"] / 1e12, "TFLOP/s", ""),
            ]
            result["binds"] = r["bound"]
        return {"question": q, "card": b.card, **result, "notes": notes}
    if q == "decode":
        return _decode(a, notes)
    if q == "train":
        mfu = a.mfu
        if mfu is None:
            mfu = 0.4
            notes.append("MFU not given: assuming 40 %; distributed training often reaches only 20–50 %")
        if not 0 < mfu <= 1:
            raise P.PlanError(f"--mfu must be in (0, 1]: {mfu}")
        if a.tflops:
            flops = P.Figure(a.tflops * 1e12, f"given: {a.tflops:g} TFLOP/s")
            card = "given peak"
        else:
            b = figures_for(a)
            flops, card = b.need_flops(a.precision), b.card
        s = P.training_seconds(a.params, a.tokens, flops.value, a.gpus, mfu)
        rows = [
            ("total FLOPs", 6 * a.params * a.tokens, "FLOP", ""),
            ("per-GPU peak", flops.value / 1e12, "TFLOP/s", flops.source),
            ("GPUs", a.gpus, "", ""),
            ("MFU", mfu, "", ""),
            ("time", s / 86400, "days", ""),
            ("time in seconds", s, "s", ""),
        ]
        return {
            "question": q,
            "card": card,
            "rows": rows,
            "binds": "compute",
            "formula": "time = 6 × parameters × tokens ÷ (FLOP/s × GPUs × MFU)",
            "notes": notes,
        }
    if q == "memory":
        rows = []
        modes = ["full", "lora"] if a.mode == "both" else [a.mode]
        for mode in modes:
            parts = P.finetune_memory_bytes(a.params, mode, a.lora_fraction, a.activation_factor)
            rows += [(f"{mode}: {k.replace('_', ' ')}", v / 1e9, "GB", "") for k, v in parts.items()]
        if a.activation_factor == 0:
            notes.append(
                "activations not counted (--activation-factor): they depend on batch, sequence and checkpointing"
            )
        return {
            "question": q,
            "card": None,
            "rows": rows,
            "binds": "memory capacity",
            "formula": "full: 16 B/parameter (bf16 weights 2 + grads 2 + fp32 master 4 + Adam m,v 8); "
            "LoRA: 2 B/parameter frozen + 16 B/trainable parameter",
            "notes": notes,
        }
    if q == collective.QUESTION:
        return collective.answer(a, basis_from_run(a.run, a.card) if a.run else None, _link, notes)
    if q == "transfer":
        rows = [("payload", a.payload_gb, "GB", "")]
        if a.link or a.link_gbps:
            link_bps, src = _link(a, None)
            rows += [
                ("link", link_bps / 1e9, "GB/s", src),
                ("time", P.transfer_seconds(a.payload_gb * 1e9, link_bps) * 1e3, "ms", ""),
            ]
        else:
            b = figures_for(a)
            for kind in ("pinned", "pageable"):
                f = getattr(b, f"host_{kind}")
                if f:
                    rows += [
                        (f"{kind} bandwidth", f.value / 1e9, "GB/s", f.source),
                        (f"{kind} time", P.transfer_seconds(a.payload_gb * 1e9, f.value) * 1e3, "ms", ""),
                    ]
            if b.host_pageable is None:
                notes.append(
                    "no pageable figure: measure it (triaudit_memcpy); pageable copies often reach half of pinned or less"
                )
        return {
            "question": q,
            "card": None,
            "rows": rows,
            "binds": "movement",
            "formula": "time = payload ÷ link bytes/s",
            "notes": notes,
        }
    if q == "launches":
        basis = basis_from_run(a.run, a.card) if a.run else None
        eager = (
            P.Figure(a.eager_us * 1e-6, f"given: {a.eager_us:g} µs")
            if a.eager_us
            else (basis.launch_eager_s if basis else None)
        )
        graph = (
            P.Figure(a.graph_us * 1e-6, f"given: {a.graph_us:g} µs")
            if a.graph_us
            else (basis.launch_graph_s if basis else None)
        )
        if eager is None:
            raise P.PlanError("no eager launch cost: give --run with triaudit_launch results, or --eager-us")
        rows = [
            ("kernels per step", a.count, "", ""),
            ("eager, per kernel", eager.value * 1e6, "µs", eager.source),
            ("eager, per step", a.count * eager.value * 1e3, "ms", ""),
        ]
        if graph is not None:
            rows += [
                ("graph, per kernel", graph.value * 1e6, "µs", graph.source),
                ("graph, per step", a.count * graph.value * 1e3, "ms", ""),
                ("saved per step by a graph", a.count * (eager.value - graph.value) * 1e3, "ms", ""),
            ]
        notes.append("launch cost only: the kernels' own work comes on top; fusion removes kernels instead")
        return {
            "question": q,
            "card": basis.card if basis else None,
            "rows": rows,
            "binds": "movement (launch)",
            "formula": "per step = kernels × per-kernel cost",
            "notes": notes,
        }
    raise P.PlanError(f"unknown question {q}")


def _fmt(v) -> str:
    """A figure in the report's one style (core/numbers.py); its unit is printed beside it."""
    if isinstance(v, str):
        return v
    return N.number(v)


def render(ans: dict) -> str:
    title = ans["question"] + (f" — {ans['card']}" if ans.get("card") else "")
    width = max(len(r[0]) for r in ans["rows"]) + 2
    lines = [title]
    for label, value, unit, source in ans["rows"]:
        lines.append(f"  {label:<{width}}{_fmt(value):>12} {unit}" + (f"   [{source}]" if source else ""))
    if ans.get("binds"):
        lines.append(f"binds: {ans['binds']}")
    lines.append(f"formula: {ans['formula']}")
    lines += [f"note: {n}" for n in ans.get("notes", [])]
    return "\n".join(lines)
