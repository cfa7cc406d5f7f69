"""Adding a run to its results store right after a command wrote it (`run`, `run --all-gpus`,
`import`, `soak`), and `slurm collect`'s adding of a fleet job's runs. The run is the record and it
is already whole in its folder: when the store cannot be written (DuckDB or pyarrow missing on a
bare GPU machine, a full disk), that is said in one line with the command that adds it later, and
the command's outcome is what the run's was."""

from __future__ import annotations

from pathlib import Path


def add_after_writing(results: Path, run_dir: Path | None, say) -> None:
    """Adds `run_dir` (written under `results`) to the store that indexes it, made there if none does."""
    if run_dir is None or not Path(run_dir).is_dir():
        return
    from triaudit.store.engine import missing

    why = missing()
    if why:
        say(f"results store: not updated ({why}); `triaudit store update {results}` adds this run later")
        return
    from triaudit.results.gbench import LoadError
    from triaudit.store.ingest import add_run
    from triaudit.store.layout import store_for_writing

    store = store_for_writing(Path(results))
    try:
        add_run(store, Path(run_dir))
    except (LoadError, OSError) as exc:  # the run is written; only its index entry is not
        say(f"results store: {run_dir} not added ({exc}); `triaudit store update {results}` adds it later")
    except Exception as exc:  # the engine's own errors (pyarrow, DuckDB): the run stands, said with its type
        say(
            f"results store: {run_dir} not added ({type(exc).__name__}: {exc}); "
            f"`triaudit store update {results}` adds it later"
        )


def add_job(job_dir: Path, say) -> None:
    """Adds a fleet job's runs (its nodes wrote them, often without the store's libraries) and merges
    its nights: after it, gate, outliers and floors derive read the job from the store."""
    from triaudit.store.engine import missing

    why = missing()
    if why:
        say(f"results store: not updated ({why})")
        return
    from triaudit.store.compact import update

    try:
        got = update(Path(job_dir))
    except Exception as exc:  # OSError, or the engine's own (pyarrow, DuckDB): the job's runs stand
        say(
            f"results store: not updated ({type(exc).__name__}: {exc}); "
            f"`triaudit store update {job_dir}` adds the job's runs later"
        )
        return
    for p in got["problems"]:
        say(f"results store: {p}")


def prepare(results: Path) -> None:
    """A fleet's store made before its job runs (`slurm submit`), so that every node adds its run to
    the one store above its job folder; nothing where the store's libraries are missing here."""
    from triaudit.store.engine import missing

    if missing():
        return
    from triaudit.store.ingest import ensure_store
    from triaudit.store.layout import store_for_writing

    ensure_store(store_for_writing(Path(results)))
