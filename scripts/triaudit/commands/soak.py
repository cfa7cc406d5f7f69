"""`triaudit soak --duration 1h [--gpus all] [--results DIR]`: every selected GPU under every load
at once for the duration, every output checked bit for bit (soak/session.py). Exit 0 clean; 1 an
SDC event, an uncorrected error, an XID, a drift beyond its bound or a load that stopped; 2 bad
input; 77 no GPU; 130 interrupted (`--resume` continues it). Standard library only: it runs on
bare GPU nodes (`python3 -m triaudit soak`, PYTHONPATH=<repo>/scripts)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from triaudit.commands.console import say, warn
from triaudit.core.argtypes import positive
from triaudit.core.duration import duration_arg, format_duration
from triaudit.core.errors import EXIT_FOUND, EXIT_NO_DEVICE, EXIT_OK, EXIT_USAGE, TriauditError
from triaudit.core.io.rows import ANY, FOLDER, INPUT, RESULTS, PathOption, Row
from triaudit.soak.plan import DEFAULT_DRIFT_PCT, DEFAULT_WINDOW_S

IO = Row(
    command="soak",
    paths=(
        PathOption("results", "--results", RESULTS),
        PathOption("build_dir", "--build-dir", INPUT, FOLDER),
        PathOption("resume", "--resume", INPUT, ANY, special=("auto",), must_exist=False),
    ),
    writes="a new `results/<card>/<UTC stamp>-<host>-soak/` (a result file and hash log per GPU, `manifest.json` "
    "with the events); while it runs, `results/.incoming/soak-*` with its checkpoint",
    refuses="an earlier run or soak; a finished soak given to `--resume`; a FIFO as `--resume`",
    codes=(0, 1, 2, 77, 130),
)


def add_parser(sub) -> None:
    s = sub.add_parser(
        "soak",
        help="hours of full load on every GPU at once, every output checked bit for bit: exit 0 clean, "
        "1 SDC, uncorrected error, XID or drift, 77 no GPU",
    )
    s.add_argument("--duration", type=duration_arg, help="how long: 90s, 10m, 1h, 1h30m, 2d (seconds to days)")
    s.add_argument("--gpus", default="all", help="all (default), or GPU indices as nvidia-smi numbers them: 0,3")
    s.add_argument(
        "--results", type=Path, default=Path("results"), help="results folder (the soak goes to <results>/<card>/)"
    )
    s.add_argument("--build-dir", type=Path, default=None, help="the build folder (default: build/gpu, else build/ci)")
    s.add_argument(
        "--window",
        type=duration_arg,
        default=None,
        help=f"one point of every time series per window (default {DEFAULT_WINDOW_S:g}s; the whole duration "
        "when shorter)",
    )
    s.add_argument(
        "--drift-bound",
        type=positive,
        default=None,
        help=f"percent a rate may fall while the power stays before it is a drift (default {DEFAULT_DRIFT_PCT:g})",
    )
    s.add_argument(
        "--resume",
        nargs="?",
        const="auto",
        default=None,
        metavar="SOAK",
        help="continue an interrupted soak (its folder or checkpoint); alone: this node's newest unfinished "
        "soak under --results, or a new one with --duration when there is none",
    )
    s.add_argument("extra", nargs="*", help="arguments for triaudit_soak (after --), e.g. -- --gemm-level=5")
    s.set_defaults(func=run)


def _gpus(text: str, env: dict):
    """The GPUs to soak, as nvidia-smi lists them (those CUDA_VISIBLE_DEVICES leaves), and why
    there are none when there are none."""
    from triaudit.fleet import node_run
    from triaudit.soak.plan import SoakGpu

    wanted = None if text.strip().lower() == "all" else node_run.parse_gpu_list(text)
    listed, why_none = node_run.list_gpus()
    chosen, hidden = node_run.visible(listed, env.get("CUDA_VISIBLE_DEVICES"))
    if chosen:
        chosen = node_run.pick(chosen, wanted)
    return [SoakGpu(g.index, g.uuid, g.pci_bus_id, g.name) for g in chosen], hidden or why_none


def _same(a, ck) -> None:
    """A resumed soak keeps its own plan: an option given again must say the same."""
    from triaudit.soak.plan import windows_for

    where = "the soak being resumed"
    if a.duration is not None and abs(a.duration - ck.duration_s) > 1e-6:
        raise TriauditError(
            f"--duration {format_duration(a.duration)}: {where} runs {format_duration(ck.duration_s)}; leave it out"
        )
    if a.window is not None and windows_for(ck.duration_s, a.window)[1] != ck.window_s:
        raise TriauditError(
            f"--window {format_duration(a.window)}: {where} has windows of {format_duration(ck.window_s)}; leave it out"
        )
    if a.drift_bound is not None and a.drift_bound != ck.drift_bound_pct:
        raise TriauditError(f"--drift-bound {a.drift_bound:g}: {where} judges {ck.drift_bound_pct:g} %; leave it out")
    if a.extra and a.extra != ck.extra_args:
        raise TriauditError(
            f"{' '.join(a.extra)}: {where} runs with {' '.join(ck.extra_args) or 'no arguments'} for triaudit_soak"
        )


def _resume(a, node: str):
    """(folder, checkpoint) of the soak to continue; None: start a new one (--resume alone, none found)."""
    from triaudit.soak import checkpoint as C

    if a.resume == "auto":
        found = C.find_unfinished(a.results, node)
        if found is None:
            if a.duration is None:
                raise TriauditError(
                    f"--resume: no unfinished soak of {node} under {a.results}/.incoming; give --duration to start one"
                )
            say(f"no unfinished soak of {node} under {a.results}: starting a new one")
            return None
        path = found
    else:
        path = Path(a.resume)
    ck = C.Checkpoint.load(path)
    if ck.finished:
        raise TriauditError(f"--resume {path}: that soak has finished; start a new one with --duration")
    _same(a, ck)
    if a.build_dir is not None:
        ck.build_dir = str(a.build_dir.resolve())
    return (path if path.is_dir() else path.parent), ck


def _no_gpu(exe: Path, env: dict, why_none: str) -> TriauditError:
    """nvidia-smi named no GPU: CUDA's own word (exit 77), or a device nvidia-smi cannot name."""
    from triaudit.soak import session

    with tempfile.TemporaryDirectory() as scratch:
        code, said = session.probe(exe, env, Path(scratch))
    if code == EXIT_NO_DEVICE or why_none.startswith("CUDA_VISIBLE_DEVICES"):
        reason = said if code == EXIT_NO_DEVICE else why_none
        return TriauditError(f"{reason}: nothing soaked, nothing written", EXIT_NO_DEVICE)
    return TriauditError(
        f"{why_none}, yet {exe.name} found a CUDA device (exit {code}): a soak needs nvidia-smi to name each GPU",
        EXIT_FOUND,
    )


def run(a) -> int:
    from triaudit.core.builddir import find_build_dir
    from triaudit.core.terminal import interactive
    from triaudit.fleet.node_run import node_name
    from triaudit.runner.suite import check_results_folder
    from triaudit.soak import session

    if a.drift_bound is not None and a.drift_bound >= 100:
        raise TriauditError(f"--drift-bound {a.drift_bound:g}: a percentage below 100")
    env, node = dict(os.environ), node_name()
    bad = check_results_folder(a.results)
    if bad:
        raise TriauditError(bad)
    resumed = _resume(a, node) if a.resume else None
    if resumed is None and a.duration is None:
        raise TriauditError("--duration is needed (e.g. --duration 1h), or --resume to continue a soak")
    build_dir, found = (Path(resumed[1].build_dir), "") if resumed else find_build_dir(a.build_dir)
    if build_dir is None:
        raise TriauditError(found)
    exe = session.find_executable(build_dir)
    if exe is None:
        raise TriauditError(
            f"no {session.EXECUTABLE} under {build_dir}: build it (cmake --build {build_dir} --target {session.EXECUTABLE})"
        )
    gpus, why_none = _gpus(a.gpus, env)
    if not gpus:
        raise _no_gpu(exe, env, why_none)
    if resumed:
        folder, ck = resumed
        missing = [g for g in ck.gpus if g.uuid not in {x.uuid for x in gpus}]
        if missing:
            names = ", ".join(f"{g.tag} {g.uuid}" for g in missing)
            raise TriauditError(f"--resume: {names} of the soak in {folder} not visible on {node} now")
    else:
        window = DEFAULT_WINDOW_S if a.window is None else a.window
        drift = DEFAULT_DRIFT_PCT if a.drift_bound is None else a.drift_bound
        try:
            folder, ck = session.new_soak(a.results, build_dir, gpus, a.duration, window, drift, a.extra, node)
        except ValueError as e:
            raise TriauditError(
                f"--duration {format_duration(a.duration)}, --window {format_duration(window)}: {e}"
            ) from None
    out = session.run_soak(folder, ck, a.results, env, say, tty=interactive())
    if out.exit_code == EXIT_USAGE:
        raise TriauditError(out.message)
    (say if out.exit_code in (EXIT_OK, EXIT_FOUND) else warn)(out.message)
    if out.run_dir is not None and ".incoming" not in out.run_dir.parts:
        from triaudit.store.hooks import add_after_writing

        add_after_writing(a.results, out.run_dir, say)  # its results store (said, never fatal, when it cannot)
    return out.exit_code
