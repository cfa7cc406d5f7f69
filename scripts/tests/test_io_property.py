"""Every command driven with generated paths (issue 38): for each path option its row declares, a
kind of path — missing, empty, a file where a folder is wanted and back, a FIFO, a folder nobody
may write, the output equal to / inside / above an input run, a folder or file already holding a
user's file of every name the command writes. Whatever the mix:
- no traceback (an exception escaping main() fails the example), no hang (an alarm fails it);
- no file that was there before is changed, except an append target growing at its end;
- no staging folder left behind;
- the exit code is one the command's row declares (argparse's refusals are 2).
Commands run in this process through triaudit.commands.main (a FIFO is refused before it is opened,
and the alarm turns a hang into a failure). Run folders are synthetic (synthetic.py), named so."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from synthetic_gate import synthetic_floors
from test_io_outputs import _runs

from triaudit import commands as cli
from triaudit.core.io.rows import APPEND, INPUT, OUTPUT_FILE, OUTPUT_FOLDER, RESULTS

ROWS = cli.rows()


def _chattr(flag: str, path: Path) -> bool:
    try:
        return subprocess.run(["chattr", flag, str(path)], capture_output=True).returncode == 0
    except FileNotFoundError:
        return False


with tempfile.TemporaryDirectory() as _probe:
    CAN_LOCK = _chattr("+i", Path(_probe)) and _chattr("-i", Path(_probe))

KINDS = {
    INPUT: ["good", "missing", "empty", "wrong type", "fifo", "locked"],
    OUTPUT_FOLDER: [
        "fresh",
        "user files",
        "the input",
        "inside the input",
        "above the input",
        "a file",
        "fifo",
        "locked",
        "empty",
    ],
    OUTPUT_FILE: ["fresh", "user file", "the input", "inside the input", "a folder", "fifo", "locked", "empty"],
    APPEND: ["fresh", "user file", "the input", "inside the input", "a folder", "fifo", "locked", "empty"],
    RESULTS: ["fresh", "existing", "a file", "fifo", "empty"],
}
if not CAN_LOCK:
    KINDS = {role: [k for k in kinds if k != "locked"] for role, kinds in KINDS.items()}

# The commands driven, with what each needs besides its paths (no GPU, no Slurm daemon, no build).
COMMANDS = {
    "report": [],
    "compare": [],
    "history": [],
    "export": ["--format", "bmf"],
    "outliers": [],
    "gate": [],
    "floors derive": [],
    "import": [],
    "plan": [],
    "doctor": ["--no-nccl-run"],
    "soak": [],
    "run": [],
    "slurm submit": ["--nodes", "1"],
}


class Hung(Exception):
    pass


@contextlib.contextmanager
def time_limit(seconds: int):
    def hung(signum, frame):
        raise Hung(f"no answer within {seconds} s")

    old = signal.signal(signal.SIGALRM, hung)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


class World:
    """One example's folder: two synthetic runs, a floors file, and the paths made for it."""

    def __init__(self, root: Path):
        self.root = root
        self.runs = _runs(root)
        self.floors = Path(synthetic_floors(root))
        self.locked: list[Path] = []
        self.user_files: set[Path] = set()
        self.n = 0

    def fresh(self, stem: str) -> Path:
        self.n += 1
        return self.root / f"{stem}{self.n}"

    def user_file(self, path: Path, text: str = "the user's own\n") -> Path:
        path.write_text(text)
        self.user_files.add(path)
        return path

    def lock(self, folder: Path) -> Path:
        if _chattr("+i", folder):
            self.locked.append(folder)
        return folder

    def input_path(self, kind: str, option, good: Path) -> str:
        if kind == "good":
            return str(good)
        if kind == "missing":
            return str(self.root / "nowhere" / "x")
        if kind == "empty":
            return ""
        if kind == "wrong type":  # a folder where a file is wanted, a file where a folder is
            if good.is_dir():
                return str(self.user_file(self.fresh("file")))
            d = self.fresh("folder")
            d.mkdir()
            return str(d)
        if kind == "fifo":
            p = self.fresh("fifo")
            os.mkfifo(p)
            return str(p)
        if kind == "locked":
            d = self.fresh("locked")
            shutil.copytree(good, d) if good.is_dir() else (d.mkdir(), shutil.copy(good, d / good.name))
            return str(self.lock(d) if good.is_dir() else d / good.name)
        raise AssertionError(kind)

    def output_path(self, kind: str, role: str, files: tuple[str, ...]) -> str:
        run = self.runs[1]
        if kind == "empty":
            return ""
        if kind == "fresh":
            return str(self.fresh("summary" if role in (OUTPUT_FILE, APPEND) else "out"))
        if kind == "existing":
            return str(self.root / "results")
        if kind == "user files":
            d = self.fresh("out")
            d.mkdir()
            for name in (*files, "index.md"):
                self.user_file(d / name)
            return str(d)
        if kind == "user file":
            return str(self.user_file(self.fresh("summary")))
        if kind == "the input":
            return str(run / "manifest.json") if role in (OUTPUT_FILE, APPEND) else str(run)
        if kind == "inside the input":
            return str(run / ("summary.md" if role in (OUTPUT_FILE, APPEND) else "out"))
        if kind == "above the input":
            return str(run.parent)
        if kind in ("a file",):
            return str(self.user_file(self.fresh("file")))
        if kind == "a folder":
            d = self.fresh("folder")
            d.mkdir()
            self.user_file(d / "kept.txt")
            return str(d)
        if kind == "fifo":
            p = self.fresh("fifo")
            os.mkfifo(p)
            return str(p)
        if kind == "locked":
            d = self.fresh("locked")
            d.mkdir()
            self.user_file(d / "kept.txt")
            self.lock(d)
            return str(d / "x.out") if role in (OUTPUT_FILE, APPEND) else str(d)
        raise AssertionError(kind)

    def unlock(self) -> None:
        for d in self.locked:
            _chattr("-i", d)


def _argv(command: str, paths: dict[str, str | None], world: World) -> list[str]:
    """The command line: each path option given its generated path (None: left out)."""
    runs = [str(r) for r in world.runs]
    pos = {k: v for k, v in paths.items() if v is not None}

    def opt(dest: str, flag: str) -> list[str]:
        return [flag, pos[dest]] if dest in pos else []

    if command == "report":
        return ["report", pos.get("paths", runs[0]), *opt("out", "--out"), *opt("prices", "--prices")]
    if command == "compare":
        return ["compare", pos.get("baseline", runs[0]), pos.get("new", runs[1]), *opt("markdown", "--markdown")]
    if command == "history":
        return ["history", runs[0], pos.get("runs", runs[1]), *opt("out", "--out")]
    if command == "export":
        return ["export", pos.get("paths", runs[0]), "--format", "bmf", *opt("out", "--out")]
    if command == "outliers":
        return ["outliers", pos.get("results", runs[1]), *opt("markdown", "--markdown")]
    if command == "gate":
        return [
            "gate",
            pos.get("runs", runs[1]),
            *opt("floors", "--floors"),
            *opt("junit", "--junit"),
            *opt("prom", "--prom"),
            *opt("markdown", "--markdown"),
        ]
    if command == "floors derive":
        return ["floors", "derive", pos.get("runs", runs[1]), "--out", pos.get("out", str(world.fresh("floors")))]
    if command == "import":
        return [
            "import",
            "nccl-tests",
            pos.get("files", runs[1] + "/manifest.json"),
            "--results",
            pos.get("results", str(world.fresh("res"))),
        ]
    if command == "plan":
        return ["plan", *opt("run", "--run"), "roofline", "--flops", "1e12", "--bytes", "1e9"]
    if command == "doctor":
        return [
            "doctor",
            "--no-nccl-run",
            *opt("build_dir", "--build-dir"),
            *opt("topo_file", "--topo-file"),
            *opt("nccl_log", "--nccl-log"),
        ]
    if command == "soak":
        return [
            "soak",
            "--build-dir",
            str(world.root / "no-build"),
            *opt("results", "--results"),
            *opt("resume", "--resume"),
        ]
    if command == "run":
        return ["run", "--build-dir", str(world.root / "no-build"), *opt("results", "--results")]
    if command == "slurm submit":
        return [
            "slurm",
            "submit",
            "--nodes",
            "1",
            "--build-dir",
            str(world.root / "no-build"),
            *opt("results", "--results"),
        ]
    raise AssertionError(command)


def _good_input(command: str, dest: str, world: World) -> Path:
    if dest == "floors":
        return world.floors
    if dest in ("prices", "topo_file", "nccl_log", "files"):
        return world.runs[1] / "manifest.json"  # a regular file (the command says what is wrong in it)
    if dest in ("build_dir",):
        return world.runs[1]
    if dest == "resume":
        return world.runs[1]
    return world.runs[1]


def _snapshot(root: Path) -> dict[Path, bytes | str]:
    out: dict[Path, bytes | str] = {}
    for p in root.rglob("*"):
        if p.is_fifo():
            out[p] = "fifo"
        elif p.is_file() and not p.is_symlink():
            out[p] = p.read_bytes()
    return out


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.data())
def test_every_command_with_generated_paths(data):
    command = data.draw(st.sampled_from(sorted(COMMANDS)), label="command")
    row = ROWS[command]
    # Half the examples are a plain use (good inputs, new outputs or none), so that the commands
    # also write, and what they write is held to the rules; the other half mixes every kind.
    plain = data.draw(st.booleans(), label="plain use")
    with tempfile.TemporaryDirectory() as tmp:
        world = World(Path(tmp))
        paths: dict[str, str | None] = {}
        appended: set[Path] = set()
        for option in row.paths:
            if command in ("soak", "run", "slurm submit") and option.dest == "build_dir":
                continue  # a missing build folder keeps these from starting anything
            required = option.role == INPUT and option.dest in ("paths", "runs", "baseline", "new", "results", "files")
            kinds = KINDS[option.role] + ([] if required else ["absent"])
            if plain:
                kinds = ["good"] if required else ["good", "absent"] if option.dest == "floors" else ["absent"]
                kinds = kinds if option.role == INPUT else ["fresh", "absent"]
            kind = data.draw(st.sampled_from(kinds), label=f"{option.flag}")
            if kind == "absent":
                paths[option.dest] = None
            elif option.role == INPUT:
                paths[option.dest] = world.input_path(kind, option, _good_input(command, option.dest, world))
            else:
                paths[option.dest] = world.output_path(kind, option.role, row.files)
                if option.role == APPEND and paths[option.dest]:
                    appended.add(Path(paths[option.dest]))
        argv = _argv(command, paths, world)
        before = _snapshot(world.root)
        here = os.getcwd()
        os.chdir(world.root)  # a default output folder (history/, export/) lands in the example's folder
        try:
            with time_limit(60):
                try:
                    code = cli.main(argv)
                except SystemExit as e:  # argparse's refusal of an option
                    code = e.code
        finally:
            os.chdir(here)
            world.unlock()
        if os.environ.get("IO_PROPERTY_LOG"):
            with open(os.environ["IO_PROPERTY_LOG"], "a") as log:
                log.write(f"{code}\t{argv}\n")
        assert code in (*row.codes, 2), f"{argv}: exit {code}, the row says {row.codes}"
        after = _snapshot(world.root)

        def in_a_run(p: Path) -> bool:
            return any(r == p or r in p.parents for r in world.runs)

        for p, old in before.items():
            assert p in after, f"{argv}: {p} was removed"
            if p in appended and not in_a_run(p):
                assert after[p][: len(old)] == old, f"{argv}: {p} changed other than at its end"
            else:
                assert after[p] == old, f"{argv}: {p} was changed"
        new_in_runs = [p for p in after if p not in before and in_a_run(p)]
        assert new_in_runs == [], f"{argv}: written into an input run: {new_in_runs}"
        left = [p for p in world.root.rglob("*triaudit-*") if p.is_dir()]
        assert left == [], f"{argv}: staging left: {left}"
