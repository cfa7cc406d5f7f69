"""`triaudit gate --prom` read by Prometheus' own tools: `promtool check metrics` lints the file,
and a real prometheus-node-exporter (started here on 127.0.0.1 and a free port, stopped by its pid)
serves it through `--collector.textfile.directory`; the figures and verdicts are read back from
its /metrics over HTTP. Both come from Debian's packages (scripts/test.sh installs them); without
them these tests report SKIPPED, naming what is missing."""

from __future__ import annotations

import re
import shutil
import socket
import subprocess
import time
import urllib.request

import pytest
from slurm_cluster import stop_process
from synthetic_gate import HEALTHY, node_run, synthetic_floors

from triaudit import commands as cli

_SAMPLE = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$")
_LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


def _tool(name: str, package: str) -> str:
    path = shutil.which(name) or shutil.which(name, path="/usr/bin:/usr/sbin:/bin")
    if path is None:
        pytest.skip(f"{name} not installed (Debian package {package}; scripts/test.sh installs it as root)")
    return path


def samples(text: str) -> list[tuple[str, dict, float]]:
    out = []
    for line in text.splitlines():
        m = _SAMPLE.match(line)
        if m and not line.startswith("#"):
            out.append((m.group(1), dict(_LABEL.findall(m.group(2) or "")), float(m.group(3))))
    return out


def _one(rows, name, **labels) -> float:
    hits = [v for n, lab, v in rows if n == name and all(lab.get(k) == want for k, want in labels.items())]
    assert len(hits) == 1, (name, labels, len(hits))
    return hits[0]


@pytest.fixture
def prom(tmp_path):
    run = node_run(tmp_path / "runs", gpus=2, scale={(1, "hbm"): 0.8}, noise=0.0)
    folder = tmp_path / "textfile"
    folder.mkdir()
    out = folder / "triaudit.prom"
    floors = synthetic_floors(tmp_path, entries=[("synthetic H100", 18, "NV18", 2)])
    assert cli.main(["gate", str(run), "--floors", floors, "--prom", str(out)]) == 1
    return out, run, floors


def test_promtool_parses_it_and_lints_only_dcgm_exporters_label_names(prom):
    """promtool exits 1 on a file it cannot parse and 3 on lint problems. The only problem it may
    name is the camelCase of dcgm-exporter's labels (UUID, modelName, Hostname), kept on purpose:
    they are what lets a verdict join the GPU's telemetry."""
    promtool = _tool("promtool", "prometheus")
    out, _, _ = prom
    r = subprocess.run([promtool, "check", "metrics"], stdin=out.open("rb"), capture_output=True, text=True, timeout=60)
    assert r.returncode in (0, 3), r.stdout + r.stderr
    problems = (r.stdout + r.stderr).strip().splitlines()
    camel = "label names should be written in 'snake_case' not 'camelCase'"
    assert all(line.endswith(camel) for line in problems), problems
    # The check can fail: a counter without _total is a lint problem, a torn line an error.
    bad = out.with_name("broken-synthetic.txt")
    bad.write_text("# HELP x_requests requests\n# TYPE x_requests counter\nx_requests 1\n")
    r = subprocess.run([promtool, "check", "metrics"], stdin=bad.open("rb"), capture_output=True, text=True, timeout=60)
    assert r.returncode == 3 and '"_total" suffix' in r.stdout + r.stderr
    bad.write_text('triaudit_hbm_bytes_per_second{gpu="0" 1\n')
    r = subprocess.run([promtool, "check", "metrics"], stdin=bad.open("rb"), capture_output=True, text=True, timeout=60)
    assert r.returncode == 1, r.stdout + r.stderr


def test_the_file_carries_dcgm_exporter_labels_and_base_units(prom):
    out, _, _ = prom
    rows = samples(out.read_text())
    uuid1 = "GPU-5e7e7e7e-0000-0001-0000-000000000000"
    who = {"Hostname": "synthetic-node-0", "gpu": "1", "UUID": uuid1, "modelName": "NVIDIA H100 80GB HBM3"}
    assert _one(rows, "triaudit_hbm_bytes_per_second", **who) == pytest.approx(HEALTHY["hbm"][2] * 0.8)
    assert _one(rows, "triaudit_check_status", **who, check="hbm", status="fail") == 1
    assert _one(rows, "triaudit_check_status", **who, check="hbm", status="pass") == 0
    assert _one(rows, "triaudit_check_floor_fail", **who, check="hbm") == pytest.approx(HEALTHY["hbm"][2] * 0.9)
    assert _one(rows, "triaudit_launch_seconds", gpu="0") == pytest.approx(2.5e-6)
    assert _one(rows, "triaudit_gemm_flops_per_second", gpu="0", precision="bf16") == pytest.approx(8.2e14)
    assert _one(rows, "triaudit_copy_bytes_per_second", gpu="0", direction="h2d") == pytest.approx(5.6e10)
    assert _one(rows, "triaudit_health_events", gpu="0", counter="ecc_uncorrected") == 0
    assert _one(rows, "triaudit_gate_exit_code", Hostname="synthetic-node-0") == 1
    assert _one(rows, "triaudit_check_status", check="allreduce", status="pass") == 1
    p2p = [lab for n, lab, v in rows if n == "triaudit_p2p_bytes_per_second"]
    assert len(p2p) == 1 and p2p[0]["link"] == "NV18" and {p2p[0]["gpu"], p2p[0]["peer_gpu"]} == {"0", "1"}


def test_node_exporter_serves_the_file_and_reads_the_next_one(prom):
    exporter = _tool("prometheus-node-exporter", "prometheus-node-exporter")
    out, run, floors = prom
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    log = (out.parent.parent / "node-exporter.log").open("w")
    p = subprocess.Popen(
        [
            exporter,
            f"--web.listen-address=127.0.0.1:{port}",
            f"--collector.textfile.directory={out.parent}",
            "--collector.disable-defaults",
            "--collector.textfile",
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:

        def scrape() -> str:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as r:
                return r.read().decode()

        text = ""
        for _ in range(50):
            if p.poll() is not None:
                break
            try:
                text = scrape()
                break
            except OSError:
                time.sleep(0.2)
        assert text, f"node_exporter did not answer: {(out.parent.parent / 'node-exporter.log').read_text()[-2000:]}"
        rows = samples(text)
        assert _one(rows, "node_textfile_scrape_error") == 0
        assert _one(rows, "triaudit_check_status", gpu="1", check="hbm", status="fail") == 1
        assert _one(rows, "triaudit_hbm_bytes_per_second", gpu="1") == pytest.approx(HEALTHY["hbm"][2] * 0.8)
        mtimes = [lab.get("file", "") for n, lab, v in rows if n == "node_textfile_mtime_seconds" and v > 0]
        assert [m.rsplit("/", 1)[-1] for m in mtimes] == ["triaudit.prom"]
        # The next gate (the slow GPU measured again, healthy) replaces the file whole; the next
        # scrape serves the new verdict.
        again = node_run(out.parent.parent / "runs", gpus=2, noise=0.0, stamp="20260102T000000Z")
        assert cli.main(["gate", str(again), "--floors", floors, "--prom", str(out)]) == 0
        rows = samples(scrape())
        assert _one(rows, "triaudit_check_status", gpu="1", check="hbm", status="pass") == 1
        assert _one(rows, "triaudit_gate_exit_code", Hostname="synthetic-node-0") == 0
        assert sorted(x.name for x in out.parent.iterdir()) == ["triaudit.prom"]  # no temporary file left
    finally:
        stop_process(p)
        log.close()


def test_the_alerting_rules_of_docs_gate_md_pass_promtool(tmp_path):
    """The rules docs/gate.md shows (alerts on a FAIL, on NOT TESTED, on a stale file; a join with
    dcgm-exporter's telemetry on UUID) are parsed by `promtool check rules`, which refuses a broken
    expression."""
    from conftest import REPO

    promtool = _tool("promtool", "prometheus")
    text = (REPO / "docs" / "gate.md").read_text()
    [rules] = [b for b in re.findall(r"```yaml\n(.*?)```", text, re.S) if b.startswith("groups:")]
    for name in ("triaudit_check_status", "triaudit_gate_exit_code", "triaudit_gate_timestamp_seconds", "on(UUID)"):
        assert name in rules, name
    good = tmp_path / "triaudit-rules.yml"
    good.write_text(rules)
    r = subprocess.run([promtool, "check", "rules", str(good)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and "SUCCESS: 5 rules found" in r.stdout + r.stderr, r.stdout + r.stderr
    bad = tmp_path / "broken-rules.yml"
    bad.write_text(rules.replace('{status="fail"} == 1', '{status="fail"} == == 1', 1))
    r = subprocess.run([promtool, "check", "rules", str(bad)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 1, r.stdout + r.stderr
