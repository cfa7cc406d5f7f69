"""A run's `runs` row: what commands choose runs by and say of them (its manifest's facts, its files'
notes, the hosts the gate files it under, the files without a GPU), computed from its files'
contexts by results/facts.py. The store writes it when a run is added; the JSON path (no store)
computes the same row, so both choose alike. Standard library and results/ only (no pyarrow)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from triaudit.results.facts import file_facts
from triaudit.results.reading import Reading
from triaudit.results.runs import RunInfo, read_run
from triaudit.store.layout import RUN_MARK


class Capture:
    """A Reading that keeps what load_results does not: each file's own notes, cases and descriptions."""

    def __init__(self, reading: Reading):
        self.reading, self.files, self.notes = reading, reading.files, reading.notes
        self.per_file: dict[str, tuple[list[str], list[str], list]] = {}

    def __iter__(self):
        for item in self.reading:
            path, _ctx, notes, cases, cols = item
            self.per_file[str(path)] = (list(notes), list(cases), list(cols.get("info") or [None] * len(cases)))
            yield item

    def close(self) -> None:
        self.reading.close()


def marked(text: str, run_dir: str | None) -> str:
    """`text` with the run folder's path as RUN_MARK (a reader puts back its own spelling of it)."""
    return text.replace(run_dir, RUN_MARK) if run_dir and run_dir in text else text


def dumps(value) -> str:
    return json.dumps(value, separators=(",", ":"))


def run_row(
    info: RunInfo, contexts: dict[str, dict], per_file: dict, skipped: list, mark: str | None
) -> tuple[dict, dict[str, dict]]:
    """(the run's `runs` row, each file's facts). `mark`: the run folder's path as written into the
    row's text (replaced by RUN_MARK), None to keep the text as it is."""
    facts = {f: file_facts(Path(f), ctx, info) for f, ctx in contexts.items()}
    described: dict[str, list] = {}  # case -> [the first file describing it, its description]
    for f in contexts:
        _notes, cases, infos = per_file.get(f, ([], [], []))
        for case, case_info in zip(cases, infos):
            if case_info is not None and case not in described:
                described[case] = [Path(f).name, case_info]
    measured = Counter(x["card"] for x in facts.values() if x["gpu_measured"])
    cards = measured or Counter(x["card"] for x in facts.values())
    row = {
        "name": info.name,
        "started": info.started,
        # What the run itself records (its manifest, its folder's stamp), "" when neither says: the
        # dates a floors file says it was derived from.
        "started_recorded": read_run(Path(info.run_dir), []).started,
        "host": info.host,
        "git_commit": info.commit,
        "complete": bool(info.complete),
        "manifest_note": marked(info.manifest_note, mark),
        "gpu_files": dumps([list(g) for g in info.gpu_files]),
        "node_level_files": dumps(list(info.node_level_files)),
        "file_names": dumps([Path(f).name for f in contexts]),
        "n_files": len(contexts),
        "scan_notes": dumps(skipped),
        "file_notes": dumps(
            [[Path(f).name, [marked(n, mark) for n in per_file[f][0]]] for f in contexts if per_file[f][0]]
        ),
        # What the gate chooses each host's newest run by, without opening an older run's files.
        "gate_hosts": dumps(sorted({x["gate_host"] for x in facts.values() if x["gpu_measured"]})),
        "no_gpu": dumps([[Path(f).name, x["unavailable_reason"]] for f, x in facts.items() if not x["gpu_measured"]]),
        "card_name": cards.most_common(1)[0][0] if cards else "no GPU",
        # Each case's schema-2 description, the first file's (the table's columns come from it).
        "descriptions": dumps([[case, name, d] for case, (name, d) in described.items()]),
    }
    return row, facts
