"""The results store (store/): an index of the JSON folders that answers as they do. On a small
synthetic fleet with the awkward cases (synthetic_store.py): the table, contexts, runs and notes it
loads equal load_results' of the JSON; gate, floors derive, outliers, history, figures and report
say the same from either; rebuilding equals adding run by run; adding twice changes nothing; a
killed write or rebuild leaves the store as it was; a folder changed behind the store's back is read
from its JSON. Made-up numbers throughout, not measurements."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
from pathlib import Path

import pandas as pd
import pytest
import synthetic
import synthetic_store
from synthetic_gate import H100, node_run, synthetic_floors

from triaudit import commands as cli
from triaudit.judge import compare as C
from triaudit.judge import gate as G
from triaudit.judge import outliers as O
from triaudit.store import compact, ingest
from triaudit.store import source as S
from triaudit.store.catalog import read_catalog
from triaudit.store.layout import STORE_DIR, Store

pytest.importorskip("duckdb")
pytest.importorskip("pyarrow")


@pytest.fixture()
def json_only(monkeypatch):
    """Read as if there were no store (the path every command took before it)."""
    monkeypatch.setattr(S, "_open_catalog", lambda paths: None)
    monkeypatch.setattr(S, "_newest_source", lambda path: None)


def _fleet(tmp_path: Path) -> Path:
    return synthetic_store.fleet(tmp_path / "fleet")


def _snapshot(root: Path) -> dict[str, bytes]:
    store = root / STORE_DIR
    return {str(p.relative_to(store)): p.read_bytes() for p in sorted(store.rglob("*")) if p.is_file()}


def _both(monkeypatch, fn):
    """fn() from the store, then fn() from the JSON files alone."""
    from_store = fn()
    with monkeypatch.context() as m:
        m.setattr(S, "_open_catalog", lambda paths: None)
        m.setattr(S, "_newest_source", lambda path: None)
        from_json = fn()
    return from_store, from_json


def _store_reads(monkeypatch) -> list[str]:
    """The store's datasets read from its Parquet files (store/load.py sources_sql), as they are
    read: a comparison of the store with the JSON files compares something only if it has some."""
    from triaudit.store import load

    seen: list[str] = []
    real = load.parquet_list

    def spy(paths):
        paths = [Path(p) for p in paths]
        seen.extend(sorted({p.parts[p.parts.index(STORE_DIR) + 1] for p in paths}))
        return real(paths)

    monkeypatch.setattr(load, "parquet_list", spy)
    return seen


def _assert_same_results(a, b) -> None:
    pd.testing.assert_frame_equal(a.table, b.table)
    assert list(a.contexts) == list(b.contexts) and a.contexts == b.contexts
    assert a.runs == b.runs
    assert a.notes == b.notes


def test_the_store_loads_what_the_json_files_hold(tmp_path, capsys):
    root = _fleet(tmp_path)
    assert cli.main(["store", "rebuild", str(root)]) == 0
    assert "run(s) indexed" in capsys.readouterr().out
    src = S.open_source([root])
    assert isinstance(src, S.Source) and all(r.stored is not None for r in src.runs)
    js = S.JsonSource([root])
    loaded = src.load()
    _assert_same_results(loaded, js.rs)
    assert src.skipped == js.skipped and any("leads nowhere" in n or "dangling" in n for n in src.skipped)
    assert [str(f) for f in src.files()] == [str(f) for f in js.files()]
    assert src.notes() == js.notes()
    t = loaded.table
    # The awkward cases are there, as the JSON path makes them:
    assert t["message"].astype(str).str.startswith("conflict:").any()
    assert t["message"].astype(str).str.contains("not a measurement").any()
    assert any("ends before its last entry closes" in n for n in loaded.notes)
    assert not all(r.complete for r in loaded.runs.values())


def test_relative_paths_and_a_folder_below_the_store_read_alike(tmp_path, monkeypatch):
    root = _fleet(tmp_path)
    compact.rebuild(root)
    monkeypatch.chdir(tmp_path)
    for given in (
        Path("fleet"),
        Path("fleet") / "synthetic-node-1",
        Path("fleet/synthetic-node-0/../synthetic-node-2"),
    ):
        a, b = _both(monkeypatch, lambda given=given: S.open_source([given]).load())
        _assert_same_results(a, b)


def test_adding_run_by_run_equals_a_rebuild_and_adding_twice_changes_nothing(tmp_path, monkeypatch):
    root = _fleet(tmp_path)
    store = Store(root)
    folders = compact.run_folders(root)
    assert [ingest.add_run(store, f) for f in folders] == ["added"] * len(folders)
    one_by_one = S.open_source([root]).load()
    before = _snapshot(root)
    assert [ingest.add_run(store, f) for f in folders] == ["unchanged"] * len(folders)
    assert _snapshot(root) == before
    got = compact.update(root)
    assert got["added"] == 0 and got["merged"] >= 1  # the nights were a file per run: merged now
    merged = _snapshot(root)
    assert compact.update(root) == {**got, "merged": 0}
    assert _snapshot(root) == merged  # a second update leaves it as it was
    monkeypatch.setattr(compact, "PARALLEL_RUNS", 2)  # the rebuild's pool of processes, on a small fleet
    compact.rebuild(root)
    _assert_same_results(S.open_source([root]).load(), one_by_one)
    assert len(read_catalog(store)) == len(folders)


def test_a_write_killed_before_its_runs_row_leaves_the_store_as_it_was(tmp_path, monkeypatch):
    root = _fleet(tmp_path)
    compact.rebuild(root)
    before = read_catalog(Store(root))
    new = node_run(root, host="synthetic-node-9", gpus=2, stamp="20260105T000000Z")
    real = ingest.write_table

    def killed(table, target):
        if "runs" in target.parts:
            raise KeyboardInterrupt  # killed after the run's rows, before the row that makes them visible
        real(table, target)

    monkeypatch.setattr(ingest, "write_table", killed)
    with pytest.raises(KeyboardInterrupt):
        ingest.add_run(Store(root), new)
    monkeypatch.setattr(ingest, "write_table", real)
    assert read_catalog(Store(root)) == before
    a, b = _both(monkeypatch, lambda: S.open_source([root]).load())
    _assert_same_results(a, b)  # the run is read from its JSON meanwhile
    monkeypatch.setattr(compact, "STALE_S", -1)  # the leftovers count as old at once
    assert compact.update(root)["added"] == 1
    store = root / STORE_DIR
    runs = {p.relative_to(store / "runs") for p in (store / "runs").rglob("*.parquet")}
    data = {p.relative_to(store / ds) for ds in ("files", "tidy", "samples") for p in (store / ds).rglob("*.parquet")}
    assert data <= runs and not list(store.rglob(".*.tmp"))  # no rows without their run: the leftovers went
    _assert_same_results(S.open_source([root]).load(), b)


def test_a_night_merged_under_a_reader_is_read_from_the_merged_file(tmp_path, monkeypatch):
    root = _fleet(tmp_path)
    for f in compact.run_folders(root):
        ingest.add_run(Store(root), f)  # a file per run: nights to merge
    reading = S.open_source([root])  # its catalog names the runs' own files
    assert compact.update(root)["merged"] >= 1  # ... which a merge replaces now
    got = reading.load()
    _assert_same_results(got, S.JsonSource([root]).rs)
    assert any(r.stored.part.startswith("c-") for r in reading.runs)  # read anew from the merged files


def test_a_killed_rebuild_leaves_the_old_store(tmp_path, monkeypatch):
    root = _fleet(tmp_path)
    compact.rebuild(root)
    before = _snapshot(root)

    def killed(*args, **kw):
        raise KeyboardInterrupt

    monkeypatch.setattr(compact, "_add_all", killed)
    with pytest.raises(KeyboardInterrupt):
        compact.rebuild(root)
    assert _snapshot(root) == before
    assert sorted(p.name for p in root.iterdir() if p.name.startswith(STORE_DIR)) == [STORE_DIR]


def test_folders_changed_behind_the_stores_back_are_read_from_json(tmp_path, monkeypatch, capsys):
    root = _fleet(tmp_path)
    compact.rebuild(root)
    node_run(root, host="synthetic-node-7", gpus=2, stamp="20260103T000000Z")  # a run copied in
    shutil.rmtree(root / "synthetic-node-4" / "20260101T000000Z-synthetic-node-4")  # a run removed
    changed = root / "synthetic-node-2" / "20260102T000000Z-synthetic-node-2"
    (changed / "triaudit_stream.gpu3.synthetic.json").unlink()  # a run changed
    src = S.open_source([root])
    assert {r.run_dir for r in src.runs if r.tables is not None} == {
        str(changed),
        str(root / "synthetic-node-7" / "20260103T000000Z-synthetic-node-7"),
    }
    assert "not in its results store yet" in capsys.readouterr().err
    a, b = _both(monkeypatch, lambda: S.open_source([root]).load())
    _assert_same_results(a, b)


def _verdicts(result):
    return (
        [dataclasses.asdict(v) for v in result.verdicts],
        result.notes,
        [(n.host, n.run.name, n.files) for n in result.nodes],
    )


def test_gate_judges_alike_from_the_store_and_the_json(tmp_path, monkeypatch):
    root = _fleet(tmp_path)
    compact.rebuild(root)
    floors = [Path(synthetic_floors(tmp_path))]
    read = _store_reads(monkeypatch)
    a, b = _both(monkeypatch, lambda: _verdicts(G.gate([root], floors)))
    assert a == b and {"files", "tidy"} <= set(read)
    assert {v["status"] for v in a[0]} >= {"PASS", "FAIL", "NOT TESTED"}
    a, b = _both(monkeypatch, lambda: _verdicts(G.gate([root], floors, host="synthetic-node-4")))
    assert a == b and {v["host"] for v in a[0]} == {"synthetic-node-4"}
    assert any(v["check"] == "health" and v["status"] == "WARN" for v in a[0])


def test_the_gate_reads_each_hosts_newest_run_and_sees_what_changed(tmp_path, monkeypatch):
    """Of six nights the gate takes from the store only each host's newest run and the runs it says
    something of (their left-out older runs counted by the engine), and judges and notes alike; a
    run copied in, an older run removed, or a judged run changed sends it back to every run."""
    root = synthetic_store.fleet(tmp_path / "fleet", nights=6)
    compact.rebuild(root)
    floors = [Path(synthetic_floors(tmp_path))]
    every = read_catalog(Store(root))
    src = S.open_source([root], newest_per_host=True)
    assert src.hosts is not None and src.hosts["synthetic-node-1"][0] == 6
    stored = {r.stored.rel for r in src.runs}
    assert len(stored) < len(every) and "synthetic-node-1/20260106T000000Z-synthetic-node-1" in stored
    assert "synthetic-node-1/20260102T000000Z-synthetic-node-1" not in stored
    a, b = _both(monkeypatch, lambda: _verdicts(G.gate([root], floors)))
    assert a == b
    assert any(n.startswith("synthetic-node-1: the newest run 20260106T") and "5 older run(s)" in n for n in a[1])
    assert any(n.endswith(", ...)") for n in a[1])
    for below in (root / "synthetic-node-1", root / "synthetic-node-1" / "20260103T000000Z-synthetic-node-1"):
        assert S._newest_source(below) is not None  # a host's folder, a run's folder: the same reading
        a, b = _both(monkeypatch, lambda below=below: _verdicts(G.gate([below], floors)))
        assert a == b and {n[0] for n in a[2]} == {"synthetic-node-1"}

    def changed_alike(change) -> None:
        change()
        assert S._newest_source(root) is None  # the change was seen: every run read, as before
        a, b = _both(monkeypatch, lambda: _verdicts(G.gate([root], floors)))
        assert a == b

    changed_alike(lambda: node_run(root, host="synthetic-node-7", gpus=2, stamp="20260107T000000Z"))
    compact.update(root)
    assert S._newest_source(root) is not None
    changed_alike(lambda: shutil.rmtree(root / "synthetic-node-4" / "20260102T000000Z-synthetic-node-4"))
    compact.update(root)
    newest = root / "synthetic-node-2" / "20260106T000000Z-synthetic-node-2"
    changed_alike(lambda: (newest / "triaudit_stream.gpu3.synthetic.json").unlink())


def test_floors_derive_writes_the_same_floors_from_either(tmp_path, monkeypatch):
    root = _fleet(tmp_path)
    compact.rebuild(root)

    def derive(name):
        out = tmp_path / name
        assert cli.main(["floors", "derive", str(root), "--out", str(out), "--fleet", "synthetic"]) == 0
        return out.read_text()

    with monkeypatch.context() as m:
        m.setattr(S, "_open_catalog", lambda paths: None)
        from_json = derive("json.toml")
    read = _store_reads(monkeypatch)
    assert derive("store.toml") == from_json
    assert "tidy" in read  # the floors came from the store's rows
    assert from_json.count("\nfail = ") >= 8 and 'fleet = "synthetic"' in from_json  # floors, not an empty file


def test_outliers_name_the_same_gpus_from_either(tmp_path, monkeypatch):
    root = _fleet(tmp_path)
    compact.rebuild(root)
    read = _store_reads(monkeypatch)
    for cases in ("", "stream|memcpy"):
        read.clear()
        a, b = _both(monkeypatch, lambda cases=cases: O.find_outliers([root], cases=cases))
        assert "tidy" in read
        pd.testing.assert_frame_equal(a.per, b.per)
        pd.testing.assert_frame_equal(a.outliers, b.outliers)
        pd.testing.assert_frame_equal(a.groups, b.groups)
        assert (a.not_judged, a.not_measured, a.judged) == (b.not_judged, b.not_measured, b.judged)
        assert O.summary_markdown(a) == O.summary_markdown(b)
    assert not a.outliers.empty


def test_history_figures_and_report_say_the_same_from_either(tmp_path, monkeypatch):
    root = _fleet(tmp_path)
    compact.rebuild(root)
    runs = sorted((root / "synthetic-node-1").iterdir())
    single = sorted((root / "synthetic-card").iterdir())

    def history(out):
        return C.history(single, tmp_path / out)[1]

    read = _store_reads(monkeypatch)
    a = history("h-store")
    assert "samples" in read  # the repetitions came from the store
    with monkeypatch.context() as m:
        m.setattr(S, "_open_catalog", lambda paths: None)
        b = history("h-json")
        with pytest.raises(C.CompareError, match="holds results of 4 GPUs"):
            C.load_samples(runs[0])
    pd.testing.assert_frame_equal(a, b)
    with pytest.raises(C.CompareError, match="holds results of 4 GPUs"):
        C.load_samples(runs[0])
    # A week of one GPU's runs, four cases, the triad 10 % slower from the fifth night on.
    week = []
    for night in range(7):
        entries = [
            synthetic.stream_run(
                op,
                "fp32",
                "cold",
                1 << 30,
                gbps * (0.9 if op == "triad" and night >= 4 else 1.0) + 0.7 * ((rep * 7 + night * 3) % 5),
                rep,
                5,
                4e12,
            )
            for op, gbps in (("copy", 2900.0), ("scale", 2910.0), ("add", 3020.0), ("triad", 3050.0))
            for rep in range(5)
        ]
        run = root / "synthetic-week" / f"202601{night + 1:02d}T030000Z-synthetic-week"
        ctx = synthetic.synthetic_context(H100) | {"host": "synthetic-week", "gpu_uuid": "GPU-synthetic-week-0"}
        synthetic.write(run / "triaudit_stream.synthetic.json", {"context": ctx, "benchmarks": entries})
        stamp = {"started_utc": run.name[:16], "complete": True, "synthetic": "true"}
        (run / "manifest.json").write_text(json.dumps(stamp))
        week.append(run)
    compact.update(root)
    read.clear()
    wa, wb = _both(monkeypatch, lambda: C.history(week, tmp_path / "h-week")[1])
    assert "samples" in read
    pd.testing.assert_frame_equal(wa, wb)
    assert len(wa) == 4 * 7
    slower = wa[wa["verdict"] == "slower"]
    assert slower["case"].str.startswith("stream/triad/").all() and set(slower["run"]) == {week[4].name}

    from triaudit.commands.figures import records

    read.clear()
    fa, fb = _both(monkeypatch, lambda: records([root]))
    assert fa == fb and len(fa[0]) >= 5 and "tidy" in read

    from triaudit.report.page import write_report

    def report(out):
        write_report([root], tmp_path / out)
        return [x for x in (tmp_path / out / "report.md").read_text().splitlines() if not x.startswith("Made ")]

    ra, rb = _both(monkeypatch, lambda: report("r1"))
    assert ra == rb


def test_the_per_gpu_medians_and_the_outlier_query_in_sql_equal_pandas(tmp_path):
    import pyarrow as pa

    from triaudit.store.engine import connection, table
    from triaudit.store.load import sources_sql
    from triaudit.store.per_gpu import per_gpu
    from triaudit.store.sql import outliers_sql

    root = _fleet(tmp_path)
    compact.rebuild(root)
    src = S.open_source([root])
    per, _ = per_gpu(src)
    reference = O.per_gpu_table(S.JsonSource([root]).rs)[0]
    pd.testing.assert_frame_equal(per, reference)
    judged, _ = O.judge(reference.copy(), 0.05, O.MIN_GPUS)
    con = connection()
    con.register(
        "judged",
        pa.table(
            {
                "case_name": reference["case"].drop_duplicates().tolist(),
                "metric": reference.drop_duplicates("case")["metric"].tolist(),
                "higher_better": reference.drop_duplicates("case")["higher_better"].tolist(),
            }
        ),
    )
    con.sql(f"CREATE OR REPLACE TEMP VIEW tidy AS {sources_sql(src.store, src.runs, 'tidy', '*')}")
    got = table(outliers_sql()).to_pandas().rename(columns={"case_name": "case"})
    keys = ["gpu", "case"]
    got = got.sort_values(keys).reset_index(drop=True)
    ref = judged.sort_values(keys).reset_index(drop=True)
    for c in ("value", "throughput", "group_median", "robust_sigma", "deficit"):
        assert got[c].tolist() == ref[c].tolist(), c  # bit for bit
    assert got["outlier"].tolist() == ref["outlier"].tolist() and got["outlier"].any()
    assert got["gpus"].tolist() == ref["gpus"].tolist()


def test_the_stores_health_sums_equal_the_gates(tmp_path):
    from triaudit.judge.gate_rows import health_counters

    root = _fleet(tmp_path)
    compact.rebuild(root)
    src = S.open_source([root])
    sums, pairs = src.health_counters(src.runs, G.HEALTH)
    sums = sums.astype({"file": str, "metric": str})
    pairs = pairs.astype(str)
    rows = G._needed_rows(S.JsonSource([root]).rs)
    ref_sums, ref_pairs = health_counters(rows)
    key = ["file", "metric"]
    pd.testing.assert_frame_equal(
        sums.sort_values(key).reset_index(drop=True)[["file", "metric", "total"]],
        ref_sums.sort_values(key).reset_index(drop=True),
        check_dtype=False,
    )
    assert set(map(tuple, pairs.to_numpy())) == set(map(tuple, ref_pairs.to_numpy()))
    assert ref_sums["total"].sum() > 0


def test_store_commands_refuse_bad_input_by_name(tmp_path, capsys):
    assert cli.main(["store", "update", str(tmp_path / "missing")]) == 2
    assert str(tmp_path / "missing") in capsys.readouterr().err
    f = tmp_path / "x.json"
    f.write_text("{}")
    assert cli.main(["store", "rebuild", str(f)]) == 2
    assert "a file; a folder is wanted here" in capsys.readouterr().err or str(f) in capsys.readouterr().err
    root = _fleet(tmp_path)
    compact.rebuild(root)
    meta = root / STORE_DIR / "store.json"
    meta.write_text(json.dumps({"format": 99}))
    assert cli.main(["store", "update", str(root)]) == 2
    assert "format 99" in capsys.readouterr().err
    # A reader of that store says why it reads the JSON instead, and judges as the JSON says.
    r = G.gate([root])
    assert r.verdicts and "results store is not read" in capsys.readouterr().err


def test_a_run_bad_file_is_named_and_the_rest_added(tmp_path, capsys):
    root = _fleet(tmp_path)
    bad = root / "synthetic-node-0" / "20260101T000000Z-synthetic-node-0" / "triaudit_gemm.gpu0.synthetic.json"
    bad.write_text("[1, 2")
    assert cli.main(["store", "update", str(root)]) == 1
    out = capsys.readouterr().out
    assert str(bad.parent) in out and "not added" in out


def test_without_the_engine_runs_are_not_added_and_readers_take_the_json(tmp_path, monkeypatch, capsys):
    from triaudit.store import engine, hooks

    monkeypatch.setattr(engine, "_WHY", "cannot import duckdb (synthetic: not installed)")
    run = node_run(tmp_path / "results", host="synthetic-node-0", gpus=2)
    said = []
    hooks.add_after_writing(tmp_path / "results", run, said.append)
    assert said and "not updated" in said[0] and "triaudit store update" in said[0]
    assert not (tmp_path / "results" / STORE_DIR).exists()
    monkeypatch.setattr(engine, "_WHY", None)
    hooks.add_after_writing(tmp_path / "results", run, said.append)
    assert (tmp_path / "results" / STORE_DIR).is_dir() and len(said) == 1
    monkeypatch.setattr(engine, "_WHY", "cannot import duckdb (synthetic: not installed)")
    assert isinstance(S.open_source([tmp_path / "results"]), S.JsonSource)
    assert "is not read: cannot import duckdb" in capsys.readouterr().err


def test_run_all_gpus_adds_its_run_to_the_store(tmp_path, monkeypatch):
    from synthetic_fleet import fake_build, fake_nvidia_smi

    build = fake_build(tmp_path)
    smi = fake_nvidia_smi(
        tmp_path,
        [(i, f"GPU-synthetic-{i}", f"00000000:{0x18 + i:02X}:00.0", "NVIDIA H100 80GB HBM3") for i in range(2)],
    )
    bindir = tmp_path / "synthetic-bin"
    bindir.mkdir()
    (bindir / "nvidia-smi").symlink_to(smi)
    monkeypatch.setenv("PATH", f"{bindir}:{os.environ['PATH']}")
    monkeypatch.setenv("SYNTHETIC_SLEEP_S", "0.1")
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    results = tmp_path / "results"
    assert cli.main(["run", "--all-gpus", "--build-dir", str(build), "--results", str(results)]) == 0
    [run] = read_catalog(Store(results)).values()
    assert (results / run.rel / "manifest.json").is_file()
    a, b = _both(monkeypatch, lambda: S.open_source([results]).load())
    _assert_same_results(a, b)


def test_a_store_that_cannot_take_a_run_leaves_the_run_and_says_so(tmp_path, monkeypatch):
    """The run is whole in its folder before it is added: an engine error while adding it (here
    pyarrow refusing a table) is one line naming the run and `store update`, never a traceback
    after a run that went well, and the store holds no part of it."""
    import pyarrow as pa

    from triaudit.store import hooks, ingest

    run = node_run(tmp_path / "results", host="synthetic-node-0", gpus=2)

    def refused(table, target):
        raise pa.ArrowInvalid("synthetic: a column this pyarrow cannot write")

    monkeypatch.setattr(ingest, "write_table", refused)
    said = []
    hooks.add_after_writing(tmp_path / "results", run, said.append)
    assert len(said) == 1 and str(run) in said[0] and "ArrowInvalid" in said[0] and "store update" in said[0]
    store = tmp_path / "results" / STORE_DIR
    assert not list(store.rglob("*.parquet"))
