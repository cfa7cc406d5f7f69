"""The seeds' worked examples, checked. Where a seed's figure rests on a wrong datasheet number
the test uses the right one and says so."""

import json

import pytest
from synthetic import synthetic_stream_result, write

from triaudit import commands as cli
from triaudit.core.specs import card_by_key, match_card
from triaudit.plan import model as P
from triaudit.plan import questions as Q


def ans(capsys, *argv):
    assert cli.main(["plan", "--json", *argv]) == 0
    out = json.loads(capsys.readouterr().out)
    return out, {r[0]: r[1] for r in out["rows"]}


def test_decode_7b_fp16_h100_sxm_239_tokens(capsys):
    out, rows = ans(capsys, "--card", "h100-sxm", "decode", "--params", "7e9", "--weights", "fp16")
    assert rows["tokens/s per sequence (batch 1)"] == pytest.approx(239.3, abs=0.1)
    # Without an architecture the KV cache is unknown: users served are not guessed as tokens/s ÷ 20
    # (the seed's "a dozen or so", which ignored batching); see test_plan_decode.py.
    assert "users at 20 token/s" not in rows and any("users served cannot be said" in n for n in out["notes"])
    assert out["binds"] == "bandwidth" and rows["fits in memory"] == "yes"


def test_decode_70b_h200_34_tokens_and_other_cards(capsys):
    _, rows = ans(capsys, "--card", "h200", "decode", "--params", "70e9")
    assert rows["tokens/s per sequence (batch 1)"] == pytest.approx(34.3, abs=0.1)
    assert P.decode_tokens_per_s(card_by_key("a100-sxm-80").mem_bw, 7e9, 2) == pytest.approx(145.6, abs=0.1)
    assert P.decode_tokens_per_s(card_by_key("rtx-4090").mem_bw, 7e9, 2) == pytest.approx(72.0, abs=0.1)
    # 70B FP16 (140 GB) does not fit one H100 (80 GB); 4-bit (35 GB) does.
    _, rows = ans(capsys, "--card", "h100-sxm", "decode", "--params", "70e9")
    assert rows["fits in memory"] == "no"
    _, rows = ans(capsys, "--card", "h100-sxm", "decode", "--params", "70e9", "--weights", "int4")
    assert rows["fits in memory"] == "yes"
    assert rows["tokens/s per sequence (batch 1)"] == pytest.approx(4 * 23.93, abs=0.1)


def test_training_7b_3e11_tokens_8x312_at_50pct_117_days(capsys):
    _, rows = ans(
        capsys, "train", "--params", "7e9", "--tokens", "3e11", "--gpus", "8", "--tflops", "312", "--mfu", "0.5"
    )
    assert rows["total FLOPs"] == pytest.approx(1.26e22)
    assert rows["time"] == pytest.approx(116.9, abs=0.1)
    # The same from the A100's datasheet BF16 figure (312 TFLOP/s dense).
    _, rows = ans(
        capsys, "--card", "a100-sxm-80", "train", "--params", "7e9", "--tokens", "3e11", "--gpus", "8", "--mfu", "0.5"
    )
    assert rows["time"] == pytest.approx(116.9, abs=0.1)


def test_training_without_mfu_warns(capsys):
    out, _ = ans(capsys, "--card", "h100-sxm", "train", "--params", "7e9", "--tokens", "1e12", "--gpus", "8")
    assert any("MFU not given" in n for n in out["notes"])


def test_allreduce_14gb_8_gpus(capsys):
    out, rows = ans(capsys, "allreduce", "--payload-gb", "14", "--gpus", "8", "--link-gbps", "600")
    assert rows["bytes sent per rank"] == pytest.approx(24.5)
    assert rows["time"] == pytest.approx(40.8, abs=0.1)  # the seed's "about 41 ms at 600 GB/s"
    assert out["binds"] == "movement"
    # The seed's 600 GB/s is A100 NVLink's total over both directions; a ring sends and receives
    # at once, so the right per-direction figure is 300 GB/s: about 82 ms.
    _, rows = ans(capsys, "allreduce", "--payload-gb", "14", "--gpus", "8", "--link", "nvlink-a100")
    assert rows["time"] == pytest.approx(81.7, abs=0.1)
    # "On PCIe Gen4 x16 nearly a second" (at ~25 GB/s achieved).
    _, rows = ans(capsys, "allreduce", "--payload-gb", "14", "--gpus", "8", "--link-gbps", "25")
    assert rows["time"] == pytest.approx(980, abs=1)


def test_host_transfer_2gb_at_25gbps_80ms(capsys):
    _, rows = ans(capsys, "transfer", "--payload-gb", "2", "--link-gbps", "25")
    assert rows["time"] == pytest.approx(80.0)


def test_h100_ridge_point(capsys):
    # The seed divides "about 495 TFLOPS FP16 dense" by 3.35 TB/s and gets 148 FLOP/B. 494.7 is
    # H100 SXM's TF32 figure; dense FP16/BF16 is 989.4 TFLOP/s, so the FP16 ridge is ~295 FLOP/B.
    _, rows = ans(capsys, "--card", "h100-sxm", "roofline")
    assert rows["ridge point fp16"] == pytest.approx(295.3, abs=0.1)
    assert rows["ridge point tf32"] == pytest.approx(147.7, abs=0.1)  # where the seed's 148 comes from
    _, rows = ans(capsys, "--card", "h200", "roofline")
    assert rows["ridge point bf16"] == pytest.approx(206.1, abs=0.1)  # gpus.md: H200 ≈ 206


def test_roofline_gemm_and_elementwise(capsys):
    out, rows = ans(capsys, "--card", "h100-sxm", "roofline", "--gemm", "4096", "4096", "4096", "--precision", "fp16")
    assert rows["arithmetic intensity"] == pytest.approx(1365.3, abs=0.1)  # the seed's "1300 and more"
    assert out["binds"] == "compute"
    out, rows = ans(capsys, "--card", "h100-sxm", "roofline", "--elementwise", "1000000", "--precision", "fp32")
    assert rows["arithmetic intensity"] == pytest.approx(1 / 12)  # 1 FLOP per 12 bytes
    assert out["binds"] == "bandwidth"
    assert rows["time floor"] == pytest.approx(12e6 / 3350e9 * 1e6)


def test_finetune_memory(capsys):
    # The seed counts 7B full fine-tuning as 14 + 14 + 28 = 56 GB with FP16 optimizer states.
    # Mixed-precision Adam keeps FP32 master weights and FP32 m, v: 16 B/parameter = 112 GB.
    _, rows = ans(capsys, "memory", "--params", "7e9")
    assert rows["full: total"] == pytest.approx(112.0)
    assert rows["full: adam states fp32"] == pytest.approx(56.0)
    # LoRA with 1 % trainable: 14 GB frozen + 1.12 GB -> fits a 24 GB RTX 4090, as the seed says.
    assert rows["lora: total"] == pytest.approx(15.12)
    assert rows["lora: total"] < card_by_key("rtx-4090").memory_gb


def test_measured_basis_from_a_run(tmp_path, capsys):
    run = write(tmp_path / "r" / "synthetic_h200_stream.json", synthetic_stream_result("NVIDIA H200", hbm_gbps=4100))
    b = Q.basis_from_run([run])
    assert b.mem_bw.value == pytest.approx(4100e9)
    assert b.mem_bw.source.startswith("measured: stream/")
    assert b.flops["bf16"].source == "datasheet: H200 SXM 141GB"  # no GEMM in the run: datasheet fills in
    _, rows = ans(capsys, "--run", str(run), "decode", "--params", "70e9")
    assert rows["tokens/s per sequence (batch 1)"] == pytest.approx(4100 / 140, abs=0.01)


@pytest.mark.parametrize(
    "argv,needle",
    [
        (["decode", "--params", "7e9"], "say which card"),
        (["--card", "tpu-v5", "decode", "--params", "7e9"], "unknown card"),
        (["allreduce", "--payload-gb", "14", "--gpus", "8"], "say which link"),
        (["--card", "h100-sxm", "train", "--params", "7e9", "--tokens", "1e9", "--mfu", "1.5"], "--mfu"),
        (["--card", "rtx-4060-laptop", "roofline", "--precision", "bf16"], "no bf16 compute figure"),
    ],
)
def test_plan_refuses_with_a_reason(capsys, argv, needle):
    assert cli.main(["plan", *argv]) == 2
    assert needle in capsys.readouterr().err


def test_bad_numbers_are_refused(capsys):
    with pytest.raises(SystemExit) as e:
        cli.main(["plan", "--card", "h200", "decode", "--params", "-7"])
    assert e.value.code == 2
    assert "must be a positive number" in capsys.readouterr().err


def test_card_matching_by_device_name():
    assert match_card("NVIDIA H200").key == "h200"
    assert match_card("NVIDIA H200 NVL") is None  # a different card: no peak fraction rather than a wrong one
    assert match_card("NVIDIA H100 80GB HBM3").key == "h100-sxm"
    assert match_card("NVIDIA A100-SXM4-40GB").key == "a100-sxm-40"
    assert match_card("NVIDIA GeForce RTX 4090").key == "rtx-4090"
    assert match_card("Tesla T4") is None


def test_launches_thousands_of_small_kernels(tmp_path, capsys):
    # The seed: ~3000 small kernels per step cost 30-40 ms at 5-10 us each.
    _, rows = ans(capsys, "launches", "--count", "3000", "--eager-us", "10")
    assert rows["eager, per step"] == pytest.approx(30.0)
    # From a measured run (synthetic here): per-kernel eager 2.5 us and graph 0.6 us at 1000 kernels.
    from synthetic import synthetic_corners_result

    run = write(tmp_path / "r" / "synthetic_launch.json", synthetic_corners_result("NVIDIA H200"))
    out, rows = ans(capsys, "--run", str(run), "launches", "--count", "3000")
    assert rows["eager, per kernel"] == pytest.approx(2.504, abs=0.01)
    assert rows["graph, per kernel"] == pytest.approx(0.604, abs=0.01)
    assert rows["saved per step by a graph"] == pytest.approx(3000 * (2.504 - 0.604) / 1000, abs=0.05)
    assert out["binds"].startswith("movement")
    assert cli.main(["plan", "launches", "--count", "10"]) == 2
