"""plan decode with batching, the KV cache and capacity (issue 13 item 6), checked by hand."""

import json

import pytest

from triaudit import commands as cli
from triaudit.plan.models import MODELS


def ans(capsys, *argv):
    assert cli.main(["plan", "--json", *argv]) == 0
    out = json.loads(capsys.readouterr().out)
    return out, {r[0]: r[1] for r in out["rows"]}


@pytest.mark.parametrize(
    "key,published",
    [
        ("llama-2-7b", 6.74e9),
        ("llama-2-13b", 13.0e9),
        ("llama-2-70b", 69.0e9),
        ("llama-3-8b", 8.03e9),
        ("llama-3-70b", 70.6e9),
        ("mistral-7b", 7.24e9),
        ("qwen2-72b", 72.7e9),
    ],
)
def test_preset_dimensions_give_the_published_parameter_counts(key, published):
    assert MODELS[key].params() == pytest.approx(published, rel=0.005)


def test_llama2_7b_on_h100_users_are_limited_by_the_kv_cache(capsys):
    out, rows = ans(capsys, "--card", "h100-sxm", "decode", "--model", "llama-2-7b")
    # weights 6.738e9 x 2 B = 13.48 GB; KV per sequence 2 x 32 x 32 x 128 x 2 B x 4096 = 2.147 GB.
    w, kv, bw = 13.4763e9, 2 * 32 * 32 * 128 * 2 * 4096, 3350e9
    assert rows["KV cache per sequence"] == pytest.approx(kv / 1e9, rel=1e-6)
    # Memory: (80 - 13.48) GB / 2.147 GB = 30.98 -> 30 sequences; the rate allows (3350/20 - 13.48)/2.147 = 71.7.
    assert rows["users at 20 token/s"] == 30
    assert out["binds"] == "capacity (KV cache)"
    assert rows["tokens/s at batch 30"] == pytest.approx(30 * bw / (w + 30 * kv), rel=1e-3)  # ≈ 1290
    assert rows["tokens/s per user at batch 30"] == pytest.approx(bw / (w + 30 * kv), rel=1e-3)  # ≈ 43
    assert rows["tokens/s per sequence (batch 1)"] == pytest.approx(bw / (w + kv), rel=1e-3)


def test_70b_4bit_on_a_24gb_card_binds_capacity_and_says_how_to_fit(capsys):
    out, rows = ans(capsys, "--card", "rtx-4090", "decode", "--model", "llama-2-70b", "--weights", "int4")
    # 68.98e9 x 0.5 B = 34.5 GB of weights (+ 1.34 GB of KV) > 24 GB: not "bandwidth".
    assert out["binds"] == "capacity" and rows["fits in memory"] == "no"
    assert rows["GPUs that would hold it"] == 2
    assert rows["weight precision that fits 1 GPU(s)"] == "none"
    _, rows = ans(capsys, "--card", "h100-sxm", "decode", "--model", "llama-2-70b")
    assert rows["GPUs that would hold it"] == 2 and rows["weight precision that fits 1 GPU(s)"] == "fp8"


def test_the_compute_roof_binds_a_large_batch_with_a_short_context(capsys):
    out, rows = ans(capsys, "--card", "h200", "decode", "--model", "llama-3-8b", "--context", "128", "--batch", "512")
    # bytes: 16.06 GB + 512 x 2 x 32 x 8 x 128 x 2 x 128 B = 24.65 GB -> 5.1 ms at 4.8 TB/s;
    # FLOPs: 512 x 2 x 8.03e9 = 8.22e12 -> 8.3 ms at 989.4 TFLOP/s: compute binds.
    assert out["binds"] == "compute"
    assert rows["tokens/s at batch 512"] == pytest.approx(989.4e12 / (2 * MODELS["llama-3-8b"].params()), rel=1e-3)


def test_flags_give_the_same_answer_as_the_preset_and_options_go_after_the_question(capsys):
    _, preset = ans(capsys, "--card", "h100-sxm", "decode", "--model", "llama-3-70b", "--gpus", "4")
    _, flags = ans(
        capsys,
        "decode",
        "--card",
        "h100-sxm",
        "--params",
        str(MODELS["llama-3-70b"].params()),
        "--layers",
        "80",
        "--kv-heads",
        "8",
        "--head-dim",
        "128",
        "--context",
        "8192",
        "--gpus",
        "4",
    )
    for k in ("KV cache per sequence", "users at 20 token/s", "tokens/s per sequence (batch 1)"):
        assert flags[k] == pytest.approx(preset[k])


def test_part_of_an_architecture_is_refused(capsys):
    assert cli.main(["plan", "--card", "h100-sxm", "decode", "--params", "7e9", "--layers", "32"]) == 2
    assert "--kv-heads" in capsys.readouterr().err


def test_mistral_sliding_window_caps_the_kv_cache(capsys):
    out, rows = ans(capsys, "--card", "h100-sxm", "decode", "--model", "mistral-7b", "--context", "32768")
    assert rows["KV cache per sequence"] == pytest.approx(2 * 32 * 8 * 128 * 2 * 4096 / 1e9)
    assert any("sliding-window" in n for n in out["notes"])
