"""Bad values and unwritable outputs found in review: each is refused with a message and exit 2
(3: nothing to judge), never a traceback, never a result written over. Synthetic runs (made-up
numbers in the executables' shape)."""

import json

import pytest
from synthetic import synthetic_corners_result, synthetic_stream_result, write

from triaudit import commands as cli


def _run(tmp_path, name, scale=1.0):
    d = tmp_path / "results" / "nvidia-h200" / name
    write(d / "synthetic_corners.json", synthetic_corners_result("NVIDIA H200", scale=scale))
    write(d / "synthetic_stream.json", synthetic_stream_result("NVIDIA H200", hbm_gbps=4100 * scale))
    (d / "manifest.json").write_text(json.dumps({"complete": True, "profile": "quick"}))
    return d


def test_compare_markdown_never_overwrites_a_result_file_inside_an_input_folder(tmp_path, capsys):
    base, new = _run(tmp_path, "20260101T000000Z-a"), _run(tmp_path, "20260102T000000Z-b")
    target = base / "synthetic_stream.json"
    before = target.read_bytes()
    code = cli.main(["compare", str(base), str(new), "--markdown", str(target)])
    assert code == 2 and "refusing to write over an input" in capsys.readouterr().err
    assert target.read_bytes() == before


@pytest.mark.parametrize(
    "flag,value",
    [("--alpha", "nan"), ("--alpha", "2"), ("--alpha", "0"), ("--min-effect", "-1"), ("--min-repetitions", "-1")],
)
def test_compare_refuses_statistics_it_could_not_judge_with(tmp_path, capsys, flag, value):
    base, new = _run(tmp_path, "20260101T000000Z-a"), _run(tmp_path, "20260102T000000Z-b", scale=0.5)
    with pytest.raises(SystemExit) as e:
        cli.main(["compare", str(base), str(new), f"{flag}={value}"])
    err = capsys.readouterr().err
    assert e.value.code == 2 and flag in err and "Traceback" not in err


def test_history_with_no_common_case_is_nothing_to_judge(tmp_path, capsys):
    a = tmp_path / "results" / "nvidia-h200" / "20260101T000000Z-a"
    b = tmp_path / "results" / "nvidia-h200" / "20260102T000000Z-b"
    write(a / "synthetic_stream.json", synthetic_stream_result("NVIDIA H200", hbm_gbps=4000, ops=("copy",)))
    write(b / "synthetic_stream.json", synthetic_stream_result("NVIDIA H200", hbm_gbps=4000, ops=("triad",)))
    code = cli.main(["history", str(a), str(b), "--out", str(tmp_path / "h")])
    assert code == 3 and "no case common" in capsys.readouterr().err


def test_export_to_an_uncreatable_folder_is_a_message(tmp_path, capsys):
    run = _run(tmp_path, "20260101T000000Z-a")
    blocker = tmp_path / "a_file"
    blocker.write_text("not a folder")
    code = cli.main(["export", str(run), "--format", "bmf", "--out", str(blocker / "sub")])
    err = capsys.readouterr().err
    assert code == 2 and "--out" in err and "Traceback" not in err


@pytest.mark.parametrize(
    "argv",
    [
        ["plan", "memory", "--params", "7e9", "--lora-fraction", "-1"],
        ["plan", "memory", "--params", "7e9", "--activation-factor", "nan"],
        ["plan", "decode", "--card", "h200", "--params", "7e9", "--kv-cache-gb", "nan"],
        ["plan", "decode", "--card", "h200", "--params", "7e9", "--kv-cache-gb", "-3"],
    ],
)
def test_plan_refuses_impossible_values(capsys, argv):
    with pytest.raises(SystemExit) as e:
        cli.main(argv)
    err = capsys.readouterr().err
    assert e.value.code == 2 and "Traceback" not in err and ("must be" in err or "not a finite" in err), err
