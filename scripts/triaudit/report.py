"""`triaudit report`: result files -> Markdown and CSV tables and PNG plots in one folder.

Never writes over an input: the output folder may not hold any of the files read.
"""
from __future__ import annotations

from pathlib import Path

from . import stream_report
from .table import expand_paths, load_table


class ReportError(ValueError):
    pass


def write_report(paths: list[Path], out: Path) -> list[Path]:
    files = expand_paths(paths)
    out = Path(out)
    inputs = {f.resolve() for f in files}
    targets = {name: out / name for name in ("report.md", "stream.csv", "stream_bandwidth.png")}
    for t in targets.values():
        if t.resolve() in inputs:
            raise ReportError(f"refusing to write {t}: it is one of the inputs")
    out.mkdir(parents=True, exist_ok=True)
    df = load_table(files)
    written = []
    cards = sorted(c for c in df["card"].dropna().unique()) if not df.empty else []
    header = ["# triaudit report", "",
              f"{len(files)} result file(s); cards: {', '.join(cards) if cards else 'none'}.", ""]
    if not files:
        header.append("No result files found: run the suite on a GPU first (`triaudit run`).")
    md = "\n".join(header) + "\n" + stream_report.markdown(df) + "\n"
    targets["report.md"].write_text(md, encoding="utf-8")
    written.append(targets["report.md"])
    stream_report.csv_table(df).to_csv(targets["stream.csv"], index=False)
    written.append(targets["stream.csv"])
    if stream_report.plot(df, targets["stream_bandwidth.png"]) is not None:
        written.append(targets["stream_bandwidth.png"])
    return written
