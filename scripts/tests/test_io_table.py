"""The table of what each command reads and writes (each command module's IO row, core/io/rows.py)
is one thing: the parser, the layer, README and the behaviour agree with it (issue 38)."""

from __future__ import annotations

import json

import pytest
from test_io_outputs import _runs

from triaudit import commands as cli
from triaudit.core.errors import EXIT_CODES
from triaudit.core.io import rows as R


def test_every_command_has_a_row_and_every_row_a_command():
    names = set(cli.command_parsers(cli.build_parser(), cli.rows()))
    assert names == set(cli.rows()) and "floors derive" in names and "slurm collect" in names
    top = {a.dest for a in cli.build_parser()._actions}
    assert "command" in top


@pytest.mark.parametrize("name", sorted(cli.rows()))
def test_each_declared_path_is_an_option_of_its_command(name):
    parser = cli.command_parsers(cli.build_parser(), cli.rows())[name][0]
    actions = {a.dest: a for a in parser._actions}
    for p in cli.rows()[name].paths:
        assert p.dest in actions, f"{name}: {p.dest} declared but not an option"
        shown = actions[p.dest].option_strings or [actions[p.dest].dest]
        assert p.flag in shown, f"{name}: {p.flag} is not how the user writes {shown}"
        assert p.role in (R.INPUT, R.OUTPUT_FOLDER, R.OUTPUT_FILE, R.APPEND, R.RESULTS)


@pytest.mark.parametrize("name", sorted(cli.rows()))
def test_each_undeclared_option_that_takes_a_path_is_declared(name):
    """An option of type Path that no row declares would escape the layer's rules."""
    from pathlib import Path

    declared = {p.dest for p in cli.rows()[name].paths}
    for a in (a for parser in cli.command_parsers(cli.build_parser(), cli.rows())[name] for a in parser._actions):
        t = getattr(a.type, "convert", a.type)
        if t is Path or getattr(t, "__name__", "") == "out_folder":
            assert a.dest in declared or (name, a.dest) in {("slurm submit", "build_dir")}, f"{name}: {a.dest}"


def test_every_code_of_every_row_is_in_the_exit_code_table():
    known = {code for code, _ in EXIT_CODES}
    for row in [*cli.rows().values(), R.EXECUTABLE]:
        assert set(row.codes) <= known, row.command
        assert 0 in row.codes and 2 in row.codes


def test_readme_holds_the_tables_as_the_rows_say():
    import docs_gen

    assert docs_gen.readme_page() == (docs_gen.REPO / "README.md").read_text()
    text = (docs_gen.REPO / "README.md").read_text()
    for row in cli.rows().values():
        assert f"| `{row.command}` | {row.writes} |" in text


@pytest.mark.parametrize(
    ("command", "extra"),
    [("history", []), ("export", ["--format", "bmf"]), ("export", ["--format", "github-action-benchmark"])],
)
def test_an_output_folder_holds_what_its_row_says_and_lists_it(tmp_path, capsys, command, extra):
    runs = _runs(tmp_path)
    out = tmp_path / "out"
    args = [str(r) for r in (runs if command == "history" else runs[:1])]
    assert cli.main([command, *args, *extra, "--out", str(out)]) in cli.rows()[command].codes
    names = {p.name for p in out.iterdir()}
    listed = json.loads((out / f".triaudit-{command}.json").read_text())["files"]
    assert names == set(listed) | {f".triaudit-{command}.json"}
    assert set(listed) <= set(cli.rows()[command].files)
    capsys.readouterr()


def test_a_report_folder_holds_its_rows_files_and_lists_everything_it_wrote(tmp_path, capsys):
    run = _runs(tmp_path, 1)[0]
    out = tmp_path / "rep"
    assert cli.main(["report", str(run), "--out", str(out)]) == 0
    listed = set(json.loads((out / ".triaudit-report.json").read_text())["files"])
    assert {"report.md", "report.html", "summary.md"} <= listed
    assert {p.name for p in out.iterdir()} == listed | {".triaudit-report.json"}
    written = {line.split("/")[-1] for line in capsys.readouterr().out.splitlines() if line.startswith("wrote ")}
    assert written == listed
