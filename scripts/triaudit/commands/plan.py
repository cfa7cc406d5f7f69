"""`triaudit plan`: the options of each question (plan/questions.py answers them), printed or JSON."""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
from pathlib import Path

from triaudit.core import argtypes
from triaudit.core.errors import TriauditError
from triaudit.core.io.rows import INPUT, PathOption, Row
from triaudit.core.specs import CARDS
from triaudit.plan import collective
from triaudit.plan import cost as plan_cost
from triaudit.plan import model as P
from triaudit.plan.models import MODELS
from triaudit.plan.questions import Question, answer, render
from triaudit.results.gbench import LoadError

_number = argtypes.positive
_count = argtypes.count

IO = Row(
    command="plan",
    paths=(PathOption("run", "--run", INPUT),),
    writes="stdout only (`--json`: strict JSON)",
    refuses="a figure too large to compute (an overflow is refused, never printed as inf)",
    codes=(0, 2, 130),
)


def add_parser(sub) -> None:
    p = sub.add_parser(
        "plan",
        help="capacity planning from measured or datasheet figures: which corner binds",
        description=P.__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--card", help=f"datasheet figures of a card ({', '.join(c.key for c in CARDS)})")
    p.add_argument(
        "--run",
        type=Path,
        action="append",
        help="a result file or folder (repeatable): measured figures, datasheet fills gaps",
    )
    p.add_argument("--json", action="store_true", help="machine-readable output")
    q = p.add_subparsers(dest="question", required=True)

    r = q.add_parser("roofline", help="ridge points; where an operation sits and its time floor")
    r.add_argument("--precision", default="bf16", choices=sorted(P.DTYPE_BYTES))
    r.add_argument("--flops", type=_number)
    r.add_argument("--bytes", type=_number)
    r.add_argument("--gemm", type=_count, nargs=3, metavar=("M", "N", "K"))
    r.add_argument("--elementwise", type=_count, metavar="N", help="elements of an elementwise op")
    r.add_argument("--reads", type=_count, default=2)
    r.add_argument("--writes", type=_count, default=1)
    r.add_argument("--flops-per-element", type=_number, default=1.0)

    d = q.add_parser(
        "decode",
        help="LLM decode: tokens/s with batching, users served at a rate, whether it fits and on how many GPUs",
    )
    d.add_argument(
        "--model",
        choices=sorted(MODELS),
        help="an open model's published architecture (sets --params, --layers, --kv-heads, --head-dim, --context)",
    )
    d.add_argument("--params", type=_number, help="parameters, e.g. 7e9 (required without --model)")
    d.add_argument(
        "--weights", default="fp16", choices=["fp16", "bf16", "fp8", "int8", "int4"], help="weight precision"
    )
    d.add_argument("--layers", type=_count, help="transformer layers (KV cache)")
    d.add_argument("--kv-heads", type=_count, help="key/value heads (grouped-query attention: fewer than heads)")
    d.add_argument("--head-dim", type=_count, help="dimension of one attention head")
    d.add_argument("--context", type=_count, help="tokens of context held per sequence (default: the model's)")
    d.add_argument("--kv-dtype", default="fp16", choices=["fp16", "bf16", "fp8", "int8"], help="KV-cache precision")
    d.add_argument("--batch", type=_count, help="sequences decoded together (default: the most users served)")
    d.add_argument("--gpus", type=_count, default=1, help="GPUs the model is split over (tensor parallel)")
    d.add_argument("--tokens-per-user", type=_number, default=20.0, help="target tokens/s per user")
    d.add_argument(
        "--kv-cache-gb",
        type=argtypes.non_negative,
        default=0.0,
        help="memory reserved beside weights and KV cache (activations, CUDA context), GB in all",
    )

    t = q.add_parser("train", help="training time: 6 x params x tokens / (FLOP/s x GPUs x MFU), and memory")
    t.add_argument("--params", type=_number, required=True)
    t.add_argument("--tokens", type=_number, required=True)
    t.add_argument("--gpus", type=_count, default=1)
    t.add_argument("--precision", default="bf16", choices=sorted(P.DTYPE_BYTES))
    t.add_argument("--mfu", type=float, help="model FLOP utilisation, 0-1 (default 0.4, with a warning)")
    t.add_argument("--tflops", type=_number, help="override the per-GPU peak, TFLOP/s")

    m = q.add_parser("memory", help="fine-tuning memory: full (mixed-precision Adam) and LoRA")
    m.add_argument("--params", type=_number, required=True)
    m.add_argument("--mode", choices=["full", "lora", "both"], default="both")
    m.add_argument("--lora-fraction", type=argtypes.fraction, default=0.01, help="trainable fraction under LoRA")
    m.add_argument(
        "--activation-factor", type=argtypes.non_negative, default=0.0, help="activations as a multiple of weight bytes"
    )

    collective.add_parser(q, _number, _count, P.LINKS)

    x = q.add_parser("transfer", help="host-to-device time of a payload, pinned vs pageable")
    x.add_argument("--payload-gb", type=_number, required=True)
    x.add_argument("--link", choices=sorted(P.LINKS))
    x.add_argument("--link-gbps", type=_number)
    lc = q.add_parser("launches", help="what N small kernels cost per step, eager vs CUDA Graph")
    lc.add_argument("--count", type=_count, required=True, help="kernels per step")
    lc.add_argument("--eager-us", type=_number, help="per-kernel eager cost, µs (default: measured by --run)")
    lc.add_argument("--graph-us", type=_number, help="per-kernel cost inside a graph, µs (default: measured by --run)")
    # --card/--run/--json also after the question (`plan decode --card h100-sxm ...`): SUPPRESS keeps a
    # value given before the question when the question's parser does not see the option.
    for question in q.choices.values():
        question.add_argument("--card", default=argparse.SUPPRESS, help="datasheet figures of a card")
        question.add_argument(
            "--run", type=Path, action="append", default=argparse.SUPPRESS, help="a result file or folder (repeatable)"
        )
        question.add_argument("--json", action="store_true", default=argparse.SUPPRESS, help="machine-readable output")
    plan_cost.add_arguments(p, q.choices.values())  # --price-per-hour, --price ... (plan_cost.py)
    p.set_defaults(func=run)


def run(a) -> int:
    q = Question.from_args(a)
    try:
        ans = plan_cost.with_cost(q, answer(q))
    except (P.PlanError, LoadError) as e:
        print(f"triaudit plan: {e}", file=sys.stderr)
        return 2
    too_large = _not_finite(ans)
    if too_large:  # an overflow is no answer: never "inf GB", never Infinity in JSON
        raise TriauditError(
            f"a figure of the answer is too large to compute ({too_large}): check the sizes given (e.g. --params)"
        )
    print(json.dumps(ans, indent=2, allow_nan=False) if q.json else render(ans))
    return 0


def _not_finite(value, where: str = "") -> str:
    """Where the answer holds an infinite or NaN number ("" when nowhere): the JSON key path, or the
    text that says "inf"."""
    if isinstance(value, float) and not math.isfinite(value):
        return where or "a figure"
    if isinstance(value, str) and re.search(r"\b(inf|nan)\b", value):
        return f"{where}: {value!r}" if where else repr(value)
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, (list, tuple)) else ()
    if isinstance(value, (list, tuple)) and value and isinstance(value[0], str):
        where = value[0]  # a row of the answer: its label names it
    for k, v in items:
        found = _not_finite(
            v, where if isinstance(value, (list, tuple)) and where else f"{where}.{k}" if where else str(k)
        )
        if found:
            return found
    return ""
