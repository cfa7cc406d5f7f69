"""`triaudit outliers` on synthetic per-GPU result sets (synthetic_fleet.py: made-up numbers)."""

from __future__ import annotations

import json
import random
import zlib

import pytest
from synthetic_fleet import gemm_entries, stream_entries, uuid_of, write_gpu_result

from triaudit import commands as cli
from triaudit.judge import outliers as O

TRIAD = "stream/triad/fp32/cache:cold/bytes:1073741824"
COPY = "stream/copy/fp32/cache:cold/bytes:1073741824"


def fleet(
    root,
    hosts=2,
    gpus_per_host=8,
    gbps=3000.0,
    noise=0.01,
    slow=None,
    seed=1,
    card="NVIDIA H100 80GB HBM3",
    driver="550.54.15",
    host_prefix="synthetic-node",
    slow_cases=(TRIAD,),
):
    """hosts x gpus_per_host GPUs; each GPU's bandwidth = gbps x (1 + uniform(-noise, noise));
    slow = {(host_no, index): fraction} makes those GPUs that much slower on slow_cases."""
    rng = random.Random(seed)
    for h in range(hosts):
        for i in range(gpus_per_host):
            f = 1 + rng.uniform(-noise, noise)
            cut = (slow or {}).get((h, i), 0.0)
            entries = []
            for case in (TRIAD, COPY):
                bw = gbps * f * (1 - cut if case in slow_cases else 1)
                entries += stream_entries(bw, cases=(case,))
            write_gpu_result(
                root,
                f"{host_prefix}-{h}",
                i,
                uuid_of(h, i, zlib.crc32(host_prefix.encode()) % 65536),
                entries,
                card=card,
                driver=driver,
            )
    return root


def test_one_gpu_15_percent_slow_among_16_is_named(tmp_path):
    fleet(tmp_path, slow={(1, 5): 0.15})
    j = O.find_outliers([tmp_path])
    assert O.exit_code(j) == 1
    assert len(j.outliers) == 1
    o = j.outliers.iloc[0]
    assert (o["host"], o["gpu_index"], o["case"]) == ("synthetic-node-1", "5", TRIAD)
    assert o["gpu_uuid"] == uuid_of(1, 5, zlib.crc32(b"synthetic-node") % 65536)
    assert o["gpus"] == 16
    assert 0.14 < o["deficit"] < 0.16
    assert abs(o["group_median"] / 3000e9 - 1) < 0.01
    md = O.summary_markdown(j)
    assert "**1 outlier(s)** on 1 GPU(s)" in md
    assert f"| synthetic-node-1 | 5 | {o['gpu_uuid']} |" in md
    assert "| NVIDIA H100 80GB HBM3 | 550.54.15 | 16 | 2 | 2 | 2 |" in md


@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5])
def test_one_percent_noise_names_nobody(tmp_path, seed):
    fleet(tmp_path, noise=0.01, seed=seed)
    j = O.find_outliers([tmp_path])
    assert j.outliers.empty and j.judged == 2
    assert O.exit_code(j) == 0
    assert "**No outliers** in 2 judged (group, case) pair(s)." in O.summary_markdown(j)


def test_mixed_models_are_grouped_apart(tmp_path):
    fleet(
        tmp_path / "h100",
        hosts=1,
        gpus_per_host=12,
        gbps=3000,
        card="NVIDIA H100 80GB HBM3",
        host_prefix="synthetic-h100",
    )
    fleet(
        tmp_path / "a100",
        hosts=1,
        gpus_per_host=4,
        gbps=1800,
        card="NVIDIA A100-SXM4-80GB",
        host_prefix="synthetic-a100",
        seed=7,
    )
    j = O.find_outliers([tmp_path])
    assert j.outliers.empty, O.summary_markdown(j)  # pooled, the four A100s would be 40 % "slow" H100s
    assert sorted(zip(j.groups["model"], j.groups["gpus"])) == [
        ("NVIDIA A100-SXM4-80GB", 4),
        ("NVIDIA H100 80GB HBM3", 12),
    ]
    assert j.judged == 4 and O.exit_code(j) == 0
    pooled, _ = O.judge(
        j.per.assign(model="one pool")[
            [
                "model",
                "driver",
                "gpu",
                "host",
                "gpu_index",
                "gpu_uuid",
                "case",
                "metric",
                "higher_better",
                "value",
                "siblings_loaded",
            ]
        ]
    )
    assert pooled["outlier"].sum() == 8  # the check above would catch pooling


def test_slow_gpu_judged_against_its_own_model(tmp_path):
    fleet(tmp_path / "h100", hosts=1, gbps=3000, card="NVIDIA H100 80GB HBM3", host_prefix="synthetic-h100")
    fleet(
        tmp_path / "a100",
        hosts=1,
        gbps=1800,
        card="NVIDIA A100-SXM4-80GB",
        host_prefix="synthetic-a100",
        slow={(0, 2): 0.15},
        seed=7,
    )
    j = O.find_outliers([tmp_path])
    assert list(j.outliers["host"]) == ["synthetic-a100-0"] and list(j.outliers["gpu_index"]) == ["2"]
    assert abs(j.outliers.iloc[0]["group_median"] / 1800e9 - 1) < 0.01


def test_another_driver_is_another_group(tmp_path):
    fleet(tmp_path / "a", hosts=1, driver="550.54.15", host_prefix="synthetic-a")
    fleet(tmp_path / "b", hosts=1, driver="560.28.03", gbps=2700, host_prefix="synthetic-b", seed=9)
    j = O.find_outliers([tmp_path])
    assert len(j.groups) == 2 and j.outliers.empty


def test_within_threshold_but_outside_a_tight_spread_is_not_named(tmp_path):
    """3 % slow is outside a 0.1 % spread, but under the 5 % threshold: not named; at 2 % it is."""
    fleet(tmp_path, noise=0.001, slow={(0, 0): 0.03})
    assert O.find_outliers([tmp_path]).outliers.empty
    assert len(O.find_outliers([tmp_path], threshold=0.02).outliers) == 1


def test_beyond_threshold_inside_a_loose_spread_is_not_named(tmp_path):
    """A case that scatters +-10 % on every GPU: the slowest at -8 % is inside the spread."""
    fleet(tmp_path, noise=0.10, seed=3)
    j = O.find_outliers([tmp_path])
    worst = j.per["deficit"].max()
    assert worst > 0.05 and j.outliers.empty


def test_time_metrics_judged_as_rates(tmp_path):
    """Launch cost: a GPU whose per-kernel time is 25 % longer is 20 % slower."""
    import synthetic

    for i in range(8):
        t = 2.0e-6 * (1.25 if i == 3 else 1 + 0.002 * i)
        entries = [
            synthetic._entry("launch/chain_fit/eager/kernels:1000", t * 1000, r, 5, per_kernel_s=t) for r in range(5)
        ]
        write_gpu_result(tmp_path, "synthetic-node-0", i, uuid_of(0, i), entries, executable="triaudit_launch")
    j = O.find_outliers([tmp_path])
    [o] = j.outliers.itertuples()
    assert o.gpu_index == "3" and abs(o.deficit - 0.2) < 0.01
    assert O.fmt_value(o.value, o.metric) == "2.50 us"


def test_cases_filter(tmp_path):
    fleet(tmp_path, slow={(0, 1): 0.2})
    assert O.find_outliers([tmp_path], cases="stream/copy").outliers.empty
    assert len(O.find_outliers([tmp_path], cases="triad").outliers) == 1


def test_too_few_gpus_to_judge(tmp_path):
    fleet(tmp_path, hosts=1, gpus_per_host=3, slow={(0, 1): 0.3})
    j = O.find_outliers([tmp_path])
    assert O.exit_code(j) == 3 and j.judged == 0
    assert "measured on fewer than 4 GPUs (at most 3), not judged" in O.summary_markdown(j)


def test_errored_case_is_listed_not_judged(tmp_path):
    import synthetic

    fleet(tmp_path)
    bad = {
        "name": TRIAD + "/manual_time",
        "run_name": TRIAD + "/manual_time",
        "run_type": "iteration",
        "repetitions": 1,
        "repetition_index": 0,
        "threads": 1,
        "iterations": 0,
        "real_time": 0,
        "cpu_time": 0,
        "time_unit": "us",
        "error_occurred": True,
        "error_message": "verification failed at index 7",
    }
    write_gpu_result(tmp_path, "synthetic-node-9", 0, uuid_of(9, 0), [bad] + stream_entries(3000, cases=(COPY,)))
    j = O.find_outliers([tmp_path])
    assert j.outliers.empty
    assert any("synthetic-node-9 GPU 0: 1 case(s) error" in n and "verification failed" in n for n in j.not_measured)
    del synthetic


def test_identity_from_the_manifest_and_node_level_files_left_out(tmp_path):
    """Result files written before the executables recorded gpu_index/host: the manifest names the GPU."""
    run = tmp_path / "synthetic-gpu" / "20260101T000000Z-synthetic-node"
    gpus = []
    for i in range(5):
        bw = 3000 * (0.8 if i == 4 else 1 + 0.001 * i)
        data = {
            "context": {
                "gpu_available": "true",
                "gpu_name": "Synthetic GPU",
                "driver_version": "1.0",
                "host_name": "synthetic-node",
                "synthetic": "true",
            },
            "benchmarks": stream_entries(bw, cases=(TRIAD,)),
        }
        (run).mkdir(parents=True, exist_ok=True)
        (run / f"triaudit_stream.gpu{i}.json").write_text(json.dumps(data))
        gpus.append({"index": i, "uuid": uuid_of(0, i), "executables": [{"json": f"triaudit_stream.gpu{i}.json"}]})
    node = {
        "context": {
            "gpu_available": "true",
            "gpu_name": "Synthetic GPU",
            "gpu_uuid": uuid_of(0, 0),
            "allreduce_ranks": "5",
        },
        "benchmarks": gemm_entries(1.0),
    }
    (run / "triaudit_allreduce.node.json").write_text(json.dumps(node))
    (run / "manifest.json").write_text(
        json.dumps(
            {
                "host": "synthetic-node",
                "gpus": gpus,
                "node_level": {"executables": [{"json": "triaudit_allreduce.node.json"}]},
            }
        )
    )
    j = O.find_outliers([tmp_path])
    assert j.per["case"].unique().tolist() == [TRIAD]  # the allreduce file is not one GPU's
    [o] = j.outliers.itertuples()
    assert (o.host, o.gpu_index, o.gpu_uuid) == ("synthetic-node", "4", uuid_of(0, 4))


def test_cli_exit_codes_and_markdown(tmp_path, capsys):
    fleet(tmp_path / "r", slow={(0, 0): 0.15})
    md = tmp_path / "summary.md"
    assert cli.main(["outliers", str(tmp_path / "r"), "--markdown", str(md)]) == 1
    assert "synthetic-node-0 | 0 |" in md.read_text()
    assert "synthetic-node-0 | 0 |" in capsys.readouterr().out
    victim = next((tmp_path / "r").rglob("*.json"))
    assert cli.main(["outliers", str(tmp_path / "r"), "--markdown", str(victim)]) == 2
    assert "refusing to write over an input" in capsys.readouterr().err
    assert cli.main(["outliers", str(tmp_path / "r"), "--cases", "triad("]) == 2
    assert "--cases 'triad(': not a regular expression" in capsys.readouterr().err
    assert cli.main(["outliers", str(tmp_path / "nothing-here")]) == 2
    assert "nothing-here: no such file or directory" in capsys.readouterr().err
    assert cli.main(["outliers", str(tmp_path / "r"), "--threshold", "5"]) == 2
    assert "--threshold 5.0: must be a fraction" in capsys.readouterr().err
    broken = tmp_path / "broken" / "triaudit_stream.gpu0.synthetic.json"
    broken.parent.mkdir()
    broken.write_text('{"benchmarks": [')
    assert cli.main(["outliers", str(broken.parent)]) == 2
    assert f"{broken}: not valid JSON" in capsys.readouterr().err
    empty = tmp_path / "empty"
    empty.mkdir()
    assert cli.main(["outliers", str(empty)]) == 2
    assert "no result files under" in capsys.readouterr().err


@pytest.mark.parametrize(
    "manifest",
    [
        {"node_level": [], "gpus": "all"},
        {"node_level": {"executables": "x"}, "gpus": [1, "two", {"executables": 3}]},
        {"host": 7, "gpus": [{"index": 0, "executables": [None, "a"]}]},
        [],
    ],
)
def test_a_malformed_manifest_is_not_a_traceback(tmp_path, capsys, manifest):
    """Whatever shape a manifest has, outliers (and the report's fleet section) read the files."""
    root = fleet(tmp_path / "r", hosts=1, gpus_per_host=4)
    runs = {f.parent for f in root.rglob("*.json")}
    assert runs
    for run in runs:
        (run / "manifest.json").write_text(json.dumps(manifest))
    code = cli.main(["outliers", str(root)])
    err = capsys.readouterr().err
    assert code in (0, 1, 3) and "Traceback" not in err, err
