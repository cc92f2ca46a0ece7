"""A sweep's output folder, written as runs finish so that Ctrl-C keeps them:

``DIR/spec.toml`` (the spec as given), ``DIR/sweep.json`` (the spec resolved, base inlined),
``DIR/runs/<run_key>.json`` (one record per finished run), ``DIR/timeseries/run_key=<key>/
part-0.parquet`` (when time series are asked for) and ``DIR/results.parquet`` (rebuilt from the
records at the end, also after Ctrl-C).

The folder is created through :func:`aqmlab.output.output_dir` (so a user's folder is never
replaced without ``force``); each record and the table are written atomically and the manifest is
rewritten at the end, so the folder stays an aqmlab result. A folder that already holds a sweep
of the same base scenario is resumed: runs whose record exists are skipped.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from aqmlab.output import (
    OutputError,
    check_output_dir,
    manifest_command,
    output_dir,
    refresh_manifest,
    write_atomic,
)
from aqmlab.sweep.spec import Run, SweepSpec
from aqmlab.sweep.table import records_table

__all__ = ["SweepStore"]

COMMAND = "sweep"


def _is_sweep(folder: Path) -> bool:
    return (
        folder.is_dir()
        and manifest_command(folder) == COMMAND
        and (folder / "sweep.json").is_file()
    )


class SweepStore:
    """The output folder of one sweep (see the module's description)."""

    def __init__(self, folder: Path, resumed: bool):
        self.folder = folder
        self.resumed = resumed

    @property
    def runs_dir(self) -> Path:
        return self.folder / "runs"

    @staticmethod
    def check(out: str | os.PathLike[str], spec: SweepSpec, force: bool = False) -> bool:
        """Check that ``out`` may hold this sweep; True if it resumes an earlier one.

        Raises
        ------
        OutputError
            ``out`` may not be written (see :func:`aqmlab.output.check_output_dir`), or holds a
            sweep of another base scenario (unless ``force``, which starts afresh).
        """
        folder = Path(out)
        if not force and _is_sweep(folder):
            try:
                old = json.loads((folder / "sweep.json").read_text())
            except (OSError, ValueError):
                old = None
            if not isinstance(old, dict) or old.get("base") != spec.base:
                raise OutputError(
                    f"output folder '{os.fspath(out)}' holds a sweep of another base scenario "
                    "(use --force to start afresh)"
                )
            check_output_dir(folder, force=True)  # still a folder we may write in
            return True
        check_output_dir(folder, force)
        return False

    @classmethod
    def open(cls, out: str | os.PathLike[str], spec: SweepSpec, force: bool = False):
        """Create (or resume) the folder for ``spec``; see :meth:`check`."""
        folder = Path(out)
        resumed = cls.check(folder, spec, force)
        if resumed:
            store = cls(folder, True)
            store.runs_dir.mkdir(exist_ok=True)
            store._write_spec(spec)
            return store
        with output_dir(folder, force=force, command=COMMAND) as tmp:
            (tmp / "runs").mkdir()
            cls(tmp, False)._write_spec(spec)
        return cls(folder, False)

    def _write_spec(self, spec: SweepSpec) -> None:
        with write_atomic(self.folder / "spec.toml") as tmp:
            tmp.write_text(spec.text)
        with write_atomic(self.folder / "sweep.json") as tmp:
            tmp.write_text(json.dumps(spec.resolved(), indent=1) + "\n")

    def done(self) -> set[str]:
        """The keys of the runs that have a record."""
        return {p.stem for p in self.runs_dir.glob("*.json") if not p.name.startswith(".")}

    def write(self, record: dict[str, Any], timeseries: bytes | None) -> None:
        """Write one finished run (its time series first, then its record, each atomically)."""
        key = record["run_key"]
        if timeseries is not None:
            part = self.folder / "timeseries" / f"run_key={key}"
            part.mkdir(parents=True, exist_ok=True)
            with write_atomic(part / "part-0.parquet") as tmp:
                tmp.write_bytes(timeseries)
        with write_atomic(self.runs_dir / f"{key}.json") as tmp:
            tmp.write_text(json.dumps(record, default=float) + "\n")

    def read(self, key: str) -> dict[str, Any] | None:
        try:
            return json.loads((self.runs_dir / f"{key}.json").read_text())
        except (OSError, ValueError):
            return None

    def finish(self, spec: SweepSpec, runs: list[Run]):
        """Rebuild ``results.parquet`` from the records of ``runs`` (those that finished, in
        the spec's order) and the manifest; return the table as a pandas DataFrame."""
        import pyarrow.parquet as pq

        records = [r for r in (self.read(run.key) for run in runs) if r is not None]
        table = records_table(records, spec.override_keys)
        with write_atomic(self.folder / "results.parquet") as tmp:
            pq.write_table(table, tmp)
        refresh_manifest(self.folder, COMMAND)
        return table.to_pandas()
