"""Issue 38, outputs: nothing a user had is lost, nothing is written into an input, a folder that cannot
be written is exit 2 naming it. Each test failed on 0.3.0 (625bafb) and passes with the I/O layer
(core/io). Run folders are synthetic (synthetic.py), named so."""

from __future__ import annotations

import json

import pytest
from io_helpers import cli_process, runs, tree

from triaudit import commands as cli

_runs, _tree, _cli = runs, tree, cli_process  # io_helpers.py


def test_a_copied_report_without_its_list_keeps_the_users_files(tmp_path, capsys):
    run = _runs(tmp_path, 1)[0]
    site = tmp_path / "site"
    site.mkdir()
    (site / "report.md").write_text("# triaudit report\n\ncopied with cp report/* site/\n")
    (site / "index.md").write_text("the user's own page\n")
    (site / "notes.csv").write_text("the user's,own,table\n")
    before = _tree(site)
    assert cli.main(["report", str(run), "--out", str(site)]) == 2
    assert "report.md" in capsys.readouterr().err
    assert _tree(site) == before  # nothing removed, nothing replaced


def test_a_report_never_removes_a_path_its_list_names_outside_the_folder(tmp_path, capsys):
    run = _runs(tmp_path, 1)[0]
    out = tmp_path / "rep"
    out.mkdir()
    (tmp_path / "outside.txt").write_text("keep me\n")
    (out / ".triaudit-report.json").write_text(json.dumps({"files": ["../outside.txt", "/etc/hostname"]}))
    assert cli.main(["report", str(run), "--out", str(out)]) == 0
    assert (tmp_path / "outside.txt").read_text() == "keep me\n"
    assert (out / "report.md").is_file()
    listed = json.loads((out / ".triaudit-report.json").read_text())["files"]
    assert "report.md" in listed and all("/" not in n for n in listed)
    capsys.readouterr()


@pytest.mark.parametrize("command", ["compare", "outliers", "gate"])
@pytest.mark.parametrize("target", ["manifest.json", "summary.md"])
def test_markdown_never_appends_to_a_file_inside_an_input_run(tmp_path, capsys, command, target):
    base, new = _runs(tmp_path)
    before = _tree(new)
    argv = {"compare": [str(base), str(new)], "outliers": [str(new)], "gate": [str(new)]}[command]
    assert cli.main([command, *argv, "--markdown", str(new / target)]) == 2
    err = capsys.readouterr().err
    assert "--markdown" in err and "input" in err, err
    assert _tree(new) == before
    # the run still reads as complete
    assert cli.main(["compare", str(base), str(new)]) in (0, 1)
    assert "incomplete" not in capsys.readouterr().err


@pytest.mark.parametrize(
    ("command", "name", "extra"),
    [("history", "history.csv", []), ("history", "history.png", []), ("export", "bmf.json", ["--format", "bmf"])],
)
def test_history_and_export_never_overwrite_a_users_file(tmp_path, capsys, command, name, extra):
    runs = _runs(tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    (out / name).write_text("the user's own\n")
    args = [str(r) for r in (runs if command == "history" else runs[:1])]
    assert cli.main([command, *args, *extra, "--out", str(out)]) == 2
    assert name in capsys.readouterr().err
    assert (out / name).read_text() == "the user's own\n"
    assert sorted(p.name for p in out.iterdir()) == [name]


def test_history_and_export_replace_what_they_wrote_themselves(tmp_path, capsys):
    runs = _runs(tmp_path)
    out = tmp_path / "hist"
    assert cli.main(["history", *map(str, runs), "--out", str(out)]) == 1  # the synthetic second run is slower
    first = (out / "history.csv").read_text()
    assert cli.main(["history", *map(str, runs), "--out", str(out)]) == 1
    assert (out / "history.csv").read_text() == first
    assert json.loads((out / ".triaudit-history.json").read_text())["files"] == ["history.csv", "history.png"]
    assert cli.main(["export", str(runs[0]), "--format", "bmf", "--out", str(tmp_path / "exp")]) == 0
    assert cli.main(["export", str(runs[0]), "--format", "bmf", "--out", str(tmp_path / "exp")]) == 0
    assert sorted(p.name for p in (tmp_path / "exp").iterdir()) == [".triaudit-export.json", "bmf.json"]
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no staging left
    capsys.readouterr()


@pytest.mark.parametrize("where", ["into", "below"])
@pytest.mark.parametrize("command", ["report", "history", "export"])
def test_an_unwritable_folder_is_exit_2_naming_it(tmp_path, capsys, unwritable, command, where):
    runs = _runs(tmp_path)
    out = unwritable if where == "into" else unwritable / "new"
    argv = {
        "report": ["report", str(runs[0])],
        "history": ["history", *map(str, runs)],
        "export": ["export", str(runs[0]), "--format", "bmf"],
    }[command]
    assert cli.main([*argv, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert str(unwritable) in err and ("not permitted" in err or "permission denied" in err), err
    assert list(unwritable.iterdir()) == []


@pytest.mark.parametrize("where", ["the run", "inside the run", "above the run"])
@pytest.mark.parametrize("command", ["report", "history", "export"])
def test_an_output_folder_is_never_an_input_run_inside_or_above_one(tmp_path, capsys, command, where):
    runs = _runs(tmp_path)
    out = {"the run": runs[1], "inside the run": runs[1] / "rep", "above the run": runs[1].parent}[where]
    before = _tree(tmp_path)
    argv = {
        "report": ["report", str(runs[1])],
        "history": ["history", *map(str, runs)],
        "export": ["export", str(runs[1]), "--format", "bmf"],
    }[command]
    assert cli.main([*argv, "--out", str(out)]) == 2
    assert "--out" in capsys.readouterr().err
    assert _tree(tmp_path) == before and not (runs[1] / "rep").exists()
