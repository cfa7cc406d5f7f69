"""`triaudit import` on real outputs of every reader (issue #28): a refused output is exit 2 naming
the file and line and writes nothing; a run with error entries is written and exit 1."""

from pathlib import Path

import pytest

from triaudit import commands as cli

REAL = Path(__file__).parent / "data" / "real"  # real published outputs, sources in SOURCES.md


@pytest.mark.parametrize(
    "tool,name,code,says",
    [
        ("nccl-tests", "nccl_tests_allreduce_hash_stripped_truncated_l40s_2nodes.txt", 2, ":34: expected the table's"),
        ("nccl-tests", "nccl_tests_allreduce_rtx5090x2_test_nccl_failure_no_rows.txt", 2, ":10: expected an nccl"),
        ("nccl-tests", "nccl_tests_old_5collectives_one_file_error_column_v100x12.txt", 1, "4 error entries"),
        ("nvbandwidth", "nvbandwidth_gb300x4_grep_SUM_only_no_running_lines.txt", 2, ":1: expected nvbandwidth's"),
        ("nvbandwidth", "nvbandwidth_a100x8_assert_pattern_check_failure.txt", 1, "1 error entry"),
        ("babelstream", "babelstream_hip_error_invalid_device_ordinal_v5.0.txt", 2, ":8: expected BabelStream's"),
        ("babelstream", "babelstream_cuda_a100_ncu_wrapped_PROF_lines_v5.0.txt", 1, "run under a profiler"),
        ("mamf-finder", "mamf_h200_new_MAMF_MSMF_format_doc_example.txt", 2, "expected mamf-finder's header"),
    ],
)
def test_import_exit_codes_on_real_outputs(capsys, tmp_path, tool, name, code, says):
    res = tmp_path / "results"
    assert cli.main(["import", tool, str(REAL / name), "--results", str(res)]) == code
    out = capsys.readouterr()
    if code == 2:
        assert f"{name}{says}" in out.err or (says in out.err and name in out.err)
        assert not res.exists() or not any(res.rglob("*.json"))
    else:
        assert says in out.out and len(list(res.rglob("manifest.json"))) == 1
