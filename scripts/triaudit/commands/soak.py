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
from triaudit.soak.plan import DEFAULT_DRIFT_PCT, DEFAULT_WINDOW_S


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
        default=DEFAULT_WINDOW_S,
        help="one point of every time series per window (default 60s; the whole duration when shorter)",
    )
    s.add_argument(
        "--drift-bound",
        type=positive,
        default=DEFAULT_DRIFT_PCT,
        help="percent a rate may fall while the power stays before it is a drift (default 3)",
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


def _resume(a, node: str):
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
    folder = path if path.is_dir() else path.parent
    if ck.finished:
        raise TriauditError(f"--resume {path}: that soak has finished; start a new one with --duration")
    if a.duration is not None and abs(a.duration - ck.duration_s) > 1e-6:
        raise TriauditError(
            f"--duration {format_duration(a.duration)}: the soak in {folder} runs {format_duration(ck.duration_s)}; "
            "leave --duration out to resume it"
        )
    if a.build_dir is not None:
        ck.build_dir = str(a.build_dir.resolve())
    return folder, ck


def run(a) -> int:
    from triaudit.core.builddir import find_build_dir
    from triaudit.fleet.node_run import node_name
    from triaudit.runner.suite import check_results_folder
    from triaudit.soak import session
    from triaudit.soak.progress import interactive

    if a.drift_bound >= 100:
        raise TriauditError(f"--drift-bound {a.drift_bound:g}: a percentage below 100")
    env = dict(os.environ)
    node = node_name()
    bad = check_results_folder(a.results)
    if bad:
        raise TriauditError(bad)
    resumed = _resume(a, node) if a.resume else None
    if resumed and a.extra:
        raise TriauditError(
            f"a resumed soak runs with its own arguments ({' '.join(resumed[1].extra_args) or 'none'}): leave {' '.join(a.extra)} out"
        )
    if resumed is None and a.duration is None:
        raise TriauditError("--duration is needed (e.g. --duration 1h), or --resume to continue a soak")
    build_dir = Path(resumed[1].build_dir) if resumed else find_build_dir(a.build_dir)[0]
    if build_dir is None:
        raise TriauditError(find_build_dir(a.build_dir)[1])
    exe = session.find_executable(build_dir)
    if exe is None:
        raise TriauditError(
            f"no {session.EXECUTABLE} under {build_dir}: build it (cmake --build {build_dir} --target {session.EXECUTABLE})"
        )
    gpus, why_none = _gpus(a.gpus, env)
    if resumed:
        missing = [g for g in resumed[1].gpus if g.uuid not in {x.uuid for x in gpus}]
        if gpus and missing:
            raise TriauditError(
                f"--resume: {', '.join(f'{g.tag} {g.uuid}' for g in missing)} of the soak not visible on {node} now"
            )
    if not gpus:
        with tempfile.TemporaryDirectory() as scratch:
            code, said = session.probe(exe, env, Path(scratch))
        if code == EXIT_NO_DEVICE or why_none.startswith("CUDA_VISIBLE_DEVICES"):
            raise TriauditError(
                f"{said if code == EXIT_NO_DEVICE else why_none}: nothing soaked, nothing written", EXIT_NO_DEVICE
            )
        raise TriauditError(
            f"{why_none}, yet {exe.name} found a CUDA device (exit {code}): a soak needs nvidia-smi to name each GPU",
            EXIT_FOUND,
        )
    if resumed:
        folder, ck = resumed
    else:
        try:
            folder, ck = session.new_soak(
                a.results, build_dir, gpus, a.duration, a.window, a.drift_bound, a.extra, node
            )
        except ValueError as e:
            raise TriauditError(
                f"--duration {format_duration(a.duration)}, --window {format_duration(a.window)}: {e}"
            ) from None
    out = session.run_soak(folder, ck, a.results, env, say, tty=interactive())
    if out.exit_code == EXIT_USAGE:
        raise TriauditError(out.message)
    (say if out.exit_code in (EXIT_OK, EXIT_FOUND) else warn)(out.message)
    return out.exit_code
