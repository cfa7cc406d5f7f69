"""Case names of earlier schemas are read as today's (results/legacy_names.py): schema 2 renamed
p2p/latency/... (back-to-back small copies, never nvbandwidth's pointer-chase latency) to
p2p/small_copy/...; a run of either schema gives the same case."""

from __future__ import annotations

import json

from triaudit.results import gbench
from triaudit.results.legacy_names import LEGACY_PREFIXES, current_name


def test_old_prefixes_become_new_ones_and_nothing_else_changes():
    assert current_name("p2p/latency/ce/src:0/dst:1/bytes:4") == "p2p/small_copy/ce/src:0/dst:1/bytes:4"
    assert (
        current_name("p2p/small_copy/sm_write/src:1/dst:0/bytes:256") == "p2p/small_copy/sm_write/src:1/dst:0/bytes:256"
    )
    assert current_name("p2p/ce/uni/src:0/dst:1/bytes:4096") == "p2p/ce/uni/src:0/dst:1/bytes:4096"
    assert current_name("latency/p2p/sm/src:0/dst:1") == "latency/p2p/sm/src:0/dst:1"  # nvbandwidth's, imported
    for old, new in LEGACY_PREFIXES.items():
        assert old.endswith("/") and new.endswith("/") and old != new


def _file(tmp_path, name, schema):
    row = {
        "name": name,
        "run_name": name,
        "run_type": "iteration",
        "repetitions": 1,
        "repetition_index": 0,
        "iterations": 1,
        "real_time": 2.5,
        "cpu_time": 2.5,
        "time_unit": "us",
        "seconds_per_op": 2.5e-6,
    }
    path = tmp_path / f"synthetic_schema{schema}.json"
    path.write_text(json.dumps({"context": {"triaudit_schema_version": schema}, "benchmarks": [row]}))
    return gbench.load_result(path)


def test_a_schema_1_file_reads_under_the_new_name_without_a_note(tmp_path):
    old = _file(tmp_path, "p2p/latency/ce/src:0/dst:1/bytes:4/manual_time", "1")
    new = _file(tmp_path, "p2p/small_copy/ce/src:0/dst:1/bytes:4/manual_time", gbench.SCHEMA_VERSION)
    assert [r.case for r in old.runs] == [r.case for r in new.runs] == ["p2p/small_copy/ce/src:0/dst:1/bytes:4"]
    assert not any("schema" in n for n in old.notes + new.notes)


def test_a_newer_schema_is_said(tmp_path):
    newer = str(int(gbench.SCHEMA_VERSION) + 1)
    f = _file(tmp_path, "p2p/small_copy/ce/src:0/dst:1/bytes:4/manual_time", newer)
    assert any(f"schema {newer}" in n for n in f.notes)
