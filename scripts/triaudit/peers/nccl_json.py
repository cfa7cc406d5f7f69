"""nccl-tests' JSON (`-J file.json` / `--output_file`, src/util.cu, file versions 1 to 3): one
`results` row per printed table row, the whole environment, the devices per rank.

Version 3 (nccl-tests 2.19) adds per_iter_skip and the bitwise check; booleans are strings
("true"/"false"), `root` the 6-wide padded string of the text table, `nwrong` a number or null
(validation off). The same judgement as the table's: nwrong != 0 is an error entry, an
`out_of_bounds.okay` of "false" with no such row is one too, in-place figures on one rank are left out.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

from triaudit.peers import nccl_common as C
from triaudit.peers import statistics
from triaudit.peers.model import PeerCase, PeerRun, refuse


def read_json(path: Path, text: str) -> PeerRun:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise refuse(path, exc.lineno, f"nccl-tests JSON ({exc.msg} at column {exc.colno}; truncated?)") from None
    if not isinstance(data, dict) or "results" not in data:
        raise refuse(path, 1, "an nccl-tests JSON object with a 'results' list")
    run = PeerRun(tool=C.TOOL, source=path, statistic="")
    run.context["json_file_version"] = str(data.get("version", "unknown"))
    if isinstance(data.get("nccl_version"), int):
        run.context["nccl_version"] = C.nccl_code_to_version(data["nccl_version"])
    if data.get("start_time"):
        run.context["peer_run_started"] = str(data["start_time"])
    args = data.get("args") or []
    collective = "allreduce"
    if args and isinstance(args[0], str):
        collective = C.collective_name(args[0])
        run.context["program"] = " ".join(str(a) for a in args)
    else:
        run.context["collective"] = "allreduce: all_reduce_perf assumed (the JSON records no args)"
    env = dict(e.split("=", 1) for e in data.get("env") or [] if isinstance(e, str) and "=" in e)
    cfg = data.get("config") or {}
    config = {
        "iters": cfg.get("iterations"),
        "warmup": cfg.get("warmup_iters"),
        "agg": cfg.get("aggregated_iterations") or 1,
        "graph": cfg.get("graph") or 0,
        "validation": cfg.get("validation"),
    }
    ranks = {
        int(d["rank"]): C.Rank(str(d.get("hostname", "")), str(d.get("device_hex", "")), str(d.get("device_info", "")))
        for d in cfg.get("devices") or []
        if isinstance(d, dict) and "rank" in d
    }
    results = data["results"]
    if not isinstance(results, list):
        raise refuse(path, 1, "'results' to be a list")
    in_place_algbw = _cases(
        run, results, collective, config, C.rank_count(ranks), C.algo_arg(env.get("NCCL_ALGO")), path
    )
    _verdicts(run, data, collective)
    C.single_rank_in_place(run, in_place_algbw)
    avg = data.get("average_bus_bandwidth")
    if isinstance(avg, dict) and "bandwidth" in avg:
        run.context["avg_bus_bandwidth_gbps"] = str(avg["bandwidth"])
    for e in data.get("errors") or []:
        if e:
            run.context["nccl_last_error"] = str(e)
    if "end_time" not in data:
        run.not_read.append("the end time (the JSON has none: the run may not have finished)")
    run.statistic = statistics.nccl_tests(config["iters"], config["agg"], config["warmup"], config["graph"])
    C.ranks_to_context(run, ranks)
    C.versions_to_context(run, None, env.get("NCCL_PROTO"), config["validation"])
    if env.get("NCCL_ALGO"):
        run.context["nccl_algo"] = f"{env['NCCL_ALGO']} (NCCL_ALGO in the recorded environment)"
    else:
        run.context["nccl_algo"] = "NCCL's own choice (algo:auto): NCCL_ALGO is not in the recorded environment"
    run.not_read = [n for n in run.not_read if "nccl-tests version" not in n]
    run.not_read.append("the nccl-tests version (the JSON records its file format version, not the tool's)")
    return run


def _cases(run, results, collective, config, nranks, algo, path) -> list[float]:
    """The cases of every results row; -> the in-place algbws left out on one rank."""
    derived: list[dict] = []  # rows whose algbw was written as 0
    left_out = []
    for i, r in enumerate(results):
        if not isinstance(r, dict) or "size" not in r or "type" not in r:
            raise refuse(path, None, f"results[{i}] to be an object with size and type")
        if int(r.get("count", 1)) == 0:
            continue
        try:
            root = int(str(r.get("root", "-1")).strip())
        except ValueError:
            root = None
        for key, title in (("out_of_place", "out-of-place"), ("in_place", "in-place")):
            part = r.get(key)
            if part is None:
                continue
            if not isinstance(part, dict):
                raise refuse(path, None, f"results[{i}].{key} to be an object")
            vals = {f: part.get(f) for f in ("time", "cpu_time", "alg_bw", "bus_bw")}
            nums = {f: (float("nan") if v == "nan" else v) for f, v in vals.items() if v is not None}
            if any(not isinstance(v, (int, float)) for v in nums.values()):
                raise refuse(path, None, f"numbers in results[{i}].{key}")
            if key == "in_place" and nranks == 1:
                left_out.append(float(nums.get("alg_bw", 0)) * 1e9)
                continue
            name = C.case_name(
                collective,
                C.placement(title, config["graph"]),
                str(r["type"]),
                str(r.get("redop", "")),
                root,
                algo,
                int(r["size"]),
            )
            err = ""
            nwrong = part.get("nwrong")
            if nwrong not in (None, "nan") and float(nwrong) != 0:
                err = f"nccl-tests found {float(nwrong):g} wrong elements (#wrong): not a number"
            counters = {}
            if "alg_bw" in nums:
                counters["algbw"] = nums["alg_bw"] * 1e9
            if "bus_bw" in nums:
                counters["busbw"] = nums["bus_bw"] * 1e9
            if "cpu_time" in nums:
                counters["cpu_time_s"] = nums["cpu_time"] * 1e-6
            if nranks:
                counters["ranks"] = float(nranks)
            time_s = nums["time"] * 1e-6 if "time" in nums else None
            if not err and not all(math.isfinite(v) for v in counters.values()):
                err = "nccl-tests wrote a non-finite bandwidth or time"
            if not err:
                C.algbw_from_time(counters, int(r["size"]), time_s, run, derived)
            run.cases.append(
                PeerCase(
                    name=name,
                    counters={} if err else counters,
                    time_s=None if err else time_s,
                    error=err,
                    iterations=r.get("actual_iterations") or config["iters"],
                )
            )
    C.busbw_of_rounded_rows(derived, run.cases)
    return left_out


def _verdicts(run: PeerRun, data: dict, collective: str) -> None:
    oob = data.get("out_of_bounds")
    if isinstance(oob, dict):
        run.context["out_of_bounds"] = f"{oob.get('count')} (okay: {oob.get('okay')})"
        if str(oob.get("okay")).lower() == "false" and not any(c.error for c in run.cases):
            run.cases.append(
                PeerCase(
                    name=f"nccl_tests_run/{collective}",
                    error=f"nccl-tests recorded out_of_bounds {oob.get('count')} (okay: false), but no row shows "
                    "a wrong count: its results are not verified",
                )
            )
