"""Result schema 2: each entry states what schema 1 left to the name grammar (its axes, the counter it
is judged on, its scope, the headline it may stand for), written by the executables themselves and
read by the table; files of schema 1 read as before. The executables' own output here is real (the
no-GPU path of this machine); the files with figures are synthetic."""

from __future__ import annotations

import json
import re
import subprocess

import synthetic
from conftest import REPO

from triaudit.results.counters import JUDGED
from triaudit.results.figures import headline_figures
from triaudit.results.table import load_results


def test_the_executables_write_schema_2_with_every_entry_described(no_gpu_json):
    data = json.loads(no_gpu_json.read_text())
    assert data["context"]["triaudit_schema_version"] == "2"
    assert data["context"]["triaudit_provenance"] == "measured"
    for e in data["benchmarks"]:
        info = e["triaudit"]
        name = e["run_name"].removesuffix("/manual_time")
        corner, op, variant, *args = name.split("/")
        assert info["axes"] == {"op": op, "variant": variant, **dict(a.split(":", 1) for a in args)}
        assert info["scope"] == "gpu" and info["judged"] == "bytes_per_second"  # as the catalogue declares it
        assert info.get("headline", "") == ("triad" if name.startswith("stream/triad/fp32/cache:cold/") else "")
    t = load_results([no_gpu_json]).table
    assert set(t["status"]) == {"skipped"} and set(t["provenance"]) == {"measured"}
    assert {"op", "variant", "cache", "bytes"} <= set(t.columns)


def test_describe_cases_lists_the_catalogue_with_its_axes_without_a_device(stream_exe):
    listed = subprocess.run([str(stream_exe), "--benchmark_list_tests"], capture_output=True, text=True, timeout=60)
    described = subprocess.run([str(stream_exe), "--describe-cases"], capture_output=True, text=True, timeout=60)
    assert described.returncode == 0, described.stderr
    cases = json.loads(described.stdout)
    names = [c["name"] for c in cases]
    assert sorted(names) == sorted(n.removesuffix("/manual_time") for n in listed.stdout.split())
    triad = next(c for c in cases if c["name"] == "stream/triad/fp32/cache:cold/bytes:1073741824")
    assert triad["triaudit"]["axes"] == {"op": "triad", "variant": "fp32", "cache": "cold", "bytes": "1073741824"}


def test_the_cpp_judged_counters_are_the_python_ones():
    src = (REPO / "benchmarks" / "common" / "case_description.cpp").read_text()
    body = re.search(r"kJudgedCounters = \{(.*?)\};", src, re.S).group(1)
    assert re.findall(r'"([a-z_]+)"', body) == [name for name, _ in JUDGED]


def _schema2_file(tmp_path, described: bool):
    """A synthetic schema-2 run: the same two triads, with and without their descriptions, one of
    them named outside the grammar the selector's globs know and tagged as the HBM headline."""
    entries = []
    for r in range(3):
        for name, bw, axes, headline in (
            ("stream/triad/fp32/cache:cold/bytes:1073741824", 3.0e12, None, ""),
            (
                "stream/triad_streaming/fp32/cache:cold/bytes:2147483648",
                3.1e12,
                {"op": "triad", "variant": "fp32", "cache": "cold", "bytes": "2147483648", "store": "streaming"},
                "triad",
            ),
        ):
            e = synthetic._entry(name, 1e-3, r, 3, bytes_per_second=bw)
            if described:
                split = name.split("/")
                e["triaudit"] = {
                    "axes": axes or {"op": split[1], "variant": split[2], "cache": "cold", "bytes": split[-1][6:]},
                    "judged": "bytes_per_second",
                    "scope": "gpu",
                    **({"headline": headline} if headline else {}),
                }
            entries.append(e)
    ctx = synthetic.synthetic_context("NVIDIA H200") | {"triaudit_schema_version": "2" if described else "1"}
    path = tmp_path / ("described" if described else "plain") / "triaudit_stream_synthetic.json"
    synthetic.write(path, {"context": ctx, "benchmarks": entries})
    return path


def test_a_described_case_is_read_by_its_axes_and_tagged_for_its_headline(tmp_path):
    t = load_results([_schema2_file(tmp_path, True)]).table
    row = t[t["case"] == "stream/triad_streaming/fp32/cache:cold/bytes:2147483648"].iloc[0]
    assert (row["op"], row["variant"], row["bytes"], row["store"]) == ("triad", "fp32", "2147483648", "streaming")
    assert (row["judged"], row["scope"], row["headline"]) == ("bytes_per_second", "gpu", "triad")
    assert set(t["provenance"]) == {"synthetic"}
    figs = headline_figures(t, keys={"triad"})
    assert figs["case"].tolist() == ["stream/triad_streaming/fp32/cache:cold/bytes:2147483648"]


def test_the_same_file_without_descriptions_reads_as_schema_1(tmp_path):
    t = load_results([_schema2_file(tmp_path, False)]).table
    row = t[t["case"] == "stream/triad_streaming/fp32/cache:cold/bytes:2147483648"].iloc[0]
    assert (row["op"], row["variant"]) == ("triad_streaming", "fp32") and "store" not in t
    assert "judged" not in t and "headline" not in t
    # Without the tag, the name outside the grammar is no triad: the headline is the plain one.
    figs = headline_figures(t, keys={"triad"})
    assert figs["case"].tolist() == ["stream/triad/fp32/cache:cold/bytes:1073741824"]


def _described(exe):
    out = subprocess.run([str(exe), "--describe-cases"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_the_executables_headline_tags_are_the_corners_headlines(stream_exe):
    """Each executable tags the cases a headline's first source names (the Python corners' keys),
    and only those: the tag and the selector's globs say the same. A per-link headline (p2p: a pair
    stands for both the slowest and the fastest of its link type) has no tag."""
    from triaudit import corners as registry
    from triaudit.results.figures import source_index

    build = stream_exe.parents[2]
    declared = {h.key: h for _, h in registry.headlines()}
    seen_tags = set()
    for corner in registry.RUN_CORNERS:
        exe = build / "benchmarks" / corner.name / corner.executable
        cases = _described(exe)
        assert cases, corner.name
        for c in cases:
            name, tag = c["name"], c["triaudit"].get("headline", "")
            for h in corner.headlines:
                if h.per_link:
                    continue
                first = source_index(__import__("pandas").Series([name]), h.sources[:1])[0] == 0
                assert first == (tag == h.key), (name, tag, h.key)
            if tag:
                seen_tags.add(tag)
                # a tag no headline declares (a precision the summary does not quote) is a precision's mode
                assert tag in declared or re.fullmatch(r"[a-z0-9]+/(burst|sustained)", tag), (name, tag)
    # every headline with a first source in the default catalogues is tagged somewhere
    assert {"triad", "triad/sustained", "bf16/burst", "h2d", "d2d", "launch/eager", "allreduce"} <= seen_tags
