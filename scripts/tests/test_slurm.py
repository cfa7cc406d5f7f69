"""`triaudit slurm` without a cluster: the job script, the state parsers (scontrol's line as Slurm
22.05.8 printed it here), the node verdicts and collect on synthetic job folders, submit against
stand-in sbatch/sacct/scontrol scripts (in folders named synthetic). The real cluster:
test_slurm_cluster.py."""

from __future__ import annotations

import json
import os
import stat
import subprocess
from pathlib import Path

import pytest
from synthetic_fleet import stream_entries, uuid_of, write_gpu_result

from triaudit import commands as cli
from triaudit.fleet import slurm as S
from triaudit.fleet import slurm_job
from triaudit.results.status import StatusFile

# `scontrol show job -o 2` on the one-node test cluster (Slurm 22.05.8), a job whose task exited 77.
SCONTROL_LINE = (
    "JobId=2 JobName=j.sh UserId=root(0) GroupId=root(0) MCS_label=N/A Priority=4294901758 Nice=0 "
    "Account=(null) QOS=(null) JobState=FAILED Reason=NonZeroExitCode Dependency=(null) Requeue=1 "
    "Restarts=0 BatchFlag=1 Reboot=0 ExitCode=77:0 RunTime=00:00:00 TimeLimit=UNLIMITED TimeMin=N/A "
    "SubmitTime=2026-11-30T04:50:35 EligibleTime=2026-11-30T04:50:35 NodeList=vm BatchHost=vm NumNodes=1 "
    "NumCPUs=2 NumTasks=1 CPUs/Task=1 ReqB:S:C:T=0:0:*:* TRES=cpu=2,node=1,billing=2 Socks/Node=*"
)


def _exe(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def test_render_puts_directives_after_the_templates_and_exports_settings(tmp_path):
    text = S.render(
        S.TEMPLATE.read_text(),
        4,
        Path("/shared/res ults"),
        Path("/shared/build"),
        "quick",
        "/usr/bin/python3",
        Path("/shared/repo"),
        "gpu",
        "0:30:00",
        "--budget-s 600",
        "sbatch x",
    )
    lines = text.splitlines()
    sb = [i for i, line in enumerate(lines) if line.startswith("#SBATCH")]
    assert sb == list(range(sb[0], sb[0] + len(sb)))  # one block, before any command
    assert [lines[i] for i in sb[-4:]] == [
        "#SBATCH --nodes=4",
        "#SBATCH --output=/shared/res ults/job-%j.out",
        "#SBATCH --partition=gpu",
        "#SBATCH --time=0:30:00",
    ]
    assert sum(line.startswith("#SBATCH --output") for line in lines) == 1
    assert "export TRIAUDIT_RESULTS='/shared/res ults'" in lines
    assert "export TRIAUDIT_RUN_ARGS='--budget-s 600'" in lines
    assert S.SETTINGS_MARK not in text
    first_command = next(i for i, line in enumerate(lines) if line and not line.startswith("#"))
    assert first_command > sb[-1]
    script = tmp_path / "x.sbatch"
    script.write_text(text)
    assert subprocess.run(["bash", "-n", str(script)]).returncode == 0


def test_parse_scontrol_and_sacct():
    st = S.parse_scontrol(SCONTROL_LINE)
    assert (st.state, st.exit_code, st.nodelist, st.reason, st.source) == (
        "FAILED",
        "77:0",
        "vm",
        "NonZeroExitCode",
        "scontrol",
    )
    assert S.parse_scontrol("slurm_load_jobs error: Invalid job id specified") is None
    # sacct -X -n -P -o JobID,State,ExitCode,NodeList,Reason prints one '|'-separated line per job
    st = S.parse_sacct("41|COMPLETED|0:0|vm|None\n42|CANCELLED by 0|0:15|gpu[01-02]|None\n", "42")
    assert (st.state, st.exit_code, st.nodelist) == ("CANCELLED", "0:15", "gpu[01-02]")
    assert S.parse_sacct("", "42") is None


def test_expand_nodelist_fallback():
    assert slurm_job._expand("gpu[01-03,07],login") == ["gpu01", "gpu02", "gpu03", "gpu07", "login"]
    assert slurm_job._expand("a[1-2]-ib[3-4]") == ["a1-ib3", "a1-ib4", "a2-ib3", "a2-ib4"]
    assert slurm_job._expand("vm") == ["vm"]


def test_job_state_falls_back_when_accounting_is_off(tmp_path, monkeypatch):
    bindir = tmp_path / "synthetic-slurm-bin"
    _exe(bindir / "sacct", "#!/bin/sh\necho 'Slurm accounting storage is disabled' >&2\nexit 1\n")
    _exe(bindir / "scontrol", f"#!/bin/sh\necho '{SCONTROL_LINE}'\n")
    monkeypatch.setenv("PATH", f"{bindir}:{os.environ['PATH']}")
    st = S.job_state("2")
    assert st.state == "FAILED" and st.source == "scontrol"
    assert st.notes == ["sacct: accounting storage is disabled on this cluster (no slurmdbd): asked scontrol"]
    _exe(bindir / "scontrol", "#!/bin/sh\necho 'slurm_load_jobs error: Invalid job id specified' >&2\nexit 1\n")
    _exe(bindir / "squeue", "#!/bin/sh\nexit 0\n")
    st = S.job_state("2")
    assert st.state == "unknown" and st.done and "judged from the hosts' status files alone" in st.notes[-1]


def _job(results: Path, job_id: str, nodes: list[str], states: dict[str, str], slow=None, gpus=8) -> Path:
    """A synthetic job folder as the batch script and each node's run leave it."""
    jobdir = results / f"job-{job_id}"
    jobdir.mkdir(parents=True)
    (jobdir / slurm_job.JOB_RECORD).write_text(json.dumps({"job_id": job_id, "nodes": nodes}))
    for n, (node, state) in enumerate(states.items()):
        rec = {
            "host": node,
            "node": node,
            "state": "running",
            "started_utc": "20260101T000000Z",
            "gpus": [{"index": i} for i in range(gpus)],
        }
        sf = StatusFile(jobdir, rec)
        if state == "complete":
            run = f"synthetic-gpu/20260101T000000Z-{node}"
            for i in range(gpus):
                bw = 3000 * (1 - (slow or {}).get((node, i), 0)) * (1 + 0.001 * ((i * 7 + n) % 5))
                write_gpu_result(
                    jobdir / "synthetic-gpu",
                    node,
                    i,
                    uuid_of(n, i),
                    stream_entries(bw, cases=("stream/triad/fp32/cache:cold/bytes:1073741824",)),
                    folder=f"20260101T000000Z-{node}",
                )
            sf.update(state="complete", exit_code=0, run_dir=run, gpus_measured=list(range(gpus)))
        elif state != "running":
            sf.update(
                state=state,
                exit_code=77,
                reason="no CUDA device (cudaErrorNoDevice: no CUDA-capable device is detected)",
            )
    return jobdir


def _state(state: str, nodelist: str = ""):
    return lambda job_id: S.JobState(state, "0:0", nodelist, "", "synthetic")


def test_collect_names_timed_out_and_silent_nodes(tmp_path):
    _job(tmp_path, "12", ["n1", "n2", "n3"], {"n1": "complete", "n2": "running"})
    lines: list[str] = []
    code = S.collect("12", tmp_path, 0, lines.append, state_fn=_state("TIMEOUT"))
    assert code == 1
    assert "| n1 | measured 8 GPU(s) | 8 | synthetic-gpu/20260101T000000Z-n1 |" in lines
    assert "| n2 | timed out | 8 |  |" in lines
    assert "| n3 | timed out before it recorded anything |  |  |" in lines
    fleet = (tmp_path / "job-12" / "report" / "fleet.md").read_text()
    assert "Slurm: TIMEOUT" in fleet and "3 node(s) in the job; 1 measured." in fleet
    assert "**No outliers**" in fleet


def test_collect_names_the_slow_gpu_and_never_overwrites(tmp_path):
    _job(tmp_path, "7", ["n1", "n2"], {"n1": "complete", "n2": "complete"}, slow={("n2", 3): 0.15})
    lines: list[str] = []
    assert S.collect("7", tmp_path, 0, lines.append, state_fn=_state("COMPLETED")) == 1
    fleet = (tmp_path / "job-7" / "report" / "fleet.md").read_text()
    assert f"| n2 | 3 | {uuid_of(1, 3)} |" in fleet
    assert (tmp_path / "job-7" / "report" / "report.html").exists()
    first = (tmp_path / "job-7" / "report" / "fleet.md").read_bytes()
    assert S.collect("7", tmp_path, 0, lines.append, state_fn=_state("COMPLETED")) == 1
    assert (tmp_path / "job-7" / "report-2" / "fleet.md").exists()
    assert (tmp_path / "job-7" / "report" / "fleet.md").read_bytes() == first


def test_collect_clean_fleet_exits_0(tmp_path):
    _job(tmp_path, "8", ["n1", "n2"], {"n1": "complete", "n2": "complete"})
    assert S.collect("8", tmp_path, 0, lambda m: None, state_fn=_state("COMPLETED")) == 0


def test_collect_all_nodes_without_gpu_is_77_and_mixed_is_1(tmp_path):
    _job(tmp_path, "9", ["n1", "n2"], {"n1": "no CUDA device", "n2": "no CUDA device"})
    lines: list[str] = []
    assert S.collect("9", tmp_path, 0, lines.append, state_fn=_state("FAILED")) == 77
    assert "| n1 | no CUDA device (exit 77): cudaErrorNoDevice: no CUDA-capable device is detected | 8 |  |" in lines
    _job(tmp_path, "10", ["n1", "n2"], {"n1": "complete", "n2": "no CUDA device"})
    assert S.collect("10", tmp_path, 0, lambda m: None, state_fn=_state("FAILED")) == 1


def test_collect_still_running_and_unknown_jobs(tmp_path, capsys):
    _job(tmp_path, "11", ["n1"], {"n1": "running"})
    lines: list[str] = []
    assert S.collect("11", tmp_path, 0, lines.append, state_fn=_state("RUNNING")) == 3
    assert lines[-1].startswith("job 11 is still RUNNING after 0 s")
    with pytest.raises(S.SlurmError, match="wrong --results"):
        S.collect("99", tmp_path, 0, lines.append, state_fn=_state("unknown"))
    with pytest.raises(S.SlurmError, match="expected a number"):
        S.collect("abc", tmp_path, 0, lines.append, state_fn=_state("unknown"))


def test_collect_uses_the_newest_folder_of_a_reused_id(tmp_path):
    _job(tmp_path, "5", ["old"], {"old": "no CUDA device"})
    newer = _job(tmp_path / "tmp", "5", ["n1"], {"n1": "complete"})
    os.rename(newer, tmp_path / "job-5-20260102T000000Z")
    lines: list[str] = []
    S.collect("5", tmp_path, 0, lines.append, state_fn=_state("COMPLETED"))
    assert any("2 folders for job id 5" in line for line in lines)
    assert any(line.startswith("| n1 | measured") for line in lines)


def test_submit_with_stand_in_sbatch(tmp_path, monkeypatch, capsys):
    bindir = tmp_path / "synthetic-slurm-bin"
    _exe(bindir / "sbatch", '#!/bin/sh\necho "$@" > "$(dirname "$0")/args"\necho \'42;cluster\'\n')
    monkeypatch.setenv("PATH", f"{bindir}:{os.environ['PATH']}")
    build = tmp_path / "build"
    build.mkdir()
    res = tmp_path / "res"
    code = cli.main(
        [
            "slurm",
            "submit",
            "--nodes",
            "3",
            "--results",
            str(res),
            "--build-dir",
            str(build),
            "--partition",
            "gpu",
            "--",
            "--gpus-per-node=8",
            "--account=x",
        ]
    )
    out = capsys.readouterr()
    assert code == 0 and out.out.strip() == "42"
    assert "triaudit slurm collect 42" in out.err
    kept = res / "job-42.sbatch"
    assert "#SBATCH --nodes=3" in kept.read_text() and "#SBATCH --partition=gpu" in kept.read_text()
    args = (bindir / "args").read_text().split()
    assert args[:3] == ["--parsable", "--gpus-per-node=8", "--account=x"] and args[3].endswith(".sbatch")

    _exe(bindir / "sbatch", "#!/bin/sh\necho 'sbatch: error: invalid partition specified: nope' >&2\nexit 1\n")
    assert cli.main(["slurm", "submit", "--nodes", "1", "--results", str(res), "--build-dir", str(build)]) == 2
    err = capsys.readouterr().err
    assert "sbatch refused the job (exit 1): sbatch: error: invalid partition specified: nope" in err
    assert "script kept:" in err and kept.exists()
    assert cli.main(["slurm", "submit", "--nodes", "0", "--results", str(res), "--build-dir", str(build)]) == 2
    assert "--nodes 0: needs at least one node" in capsys.readouterr().err
    assert (
        cli.main(["slurm", "submit", "--nodes", "1", "--results", str(res), "--build-dir", str(tmp_path / "nope")]) == 2
    )
    assert "does not exist: build first" in capsys.readouterr().err


def test_submit_without_slurm(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    assert cli.main(["slurm", "submit", "--nodes", "1", "--results", str(tmp_path), "--build-dir", str(tmp_path)]) == 2
    assert "sbatch not found" in capsys.readouterr().err
