"""A sweep's output folder, written as runs finish so that Ctrl-C and SIGTERM keep them:

``DIR/spec.toml`` (the spec as given), ``DIR/sweep.json`` (the spec resolved, base inlined),
``DIR/runs/<run_key>.json`` (one record per finished run), ``DIR/timeseries/run_key=<key>/
part-0.parquet`` (when time series are asked for) and ``DIR/results.parquet`` (rebuilt from the
records at the end, also after Ctrl-C).

The folder is created through :func:`aqmlab.output.output_dir` (so a user's folder is never
replaced without ``force``); each record and the table are written atomically and the manifest is
rewritten at the end with what aqmlab wrote (never a file a user put there), so the folder stays
an aqmlab result. A folder that already holds a sweep of the same base scenario is resumed: runs
whose record verifies (:meth:`SweepStore.verify`) are skipped, every other run runs again.

A record carries two SHA-256 checksums: ``scenario_sha256`` of the run's normalized scenario
(:func:`aqmlab.sweep.spec.scenario_sha256`) and ``sha256`` of the record's own content (every
other field, as canonical JSON: keys sorted, no spaces), so a truncated, edited or copied record
is found, as is a record of another scenario under the same key.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from aqmlab.output import (
    OutputError,
    check_output_dir,
    manifest_command,
    manifest_files,
    output_dir,
    refresh_manifest,
    write_atomic,
)
from aqmlab.sweep.spec import Run, SweepSpec, run_key, scenario_sha256
from aqmlab.sweep.table import records_table

__all__ = ["SweepStore", "record_sha256", "seal"]

COMMAND = "sweep"
#: The fields every record has (besides ``sha256`` and, with time series, ``timeseries_sha256``).
RECORD_FIELDS = ("run_key", "overrides", "seed", "scenario_sha256", "summary", "error", "wall_s")


def _is_sweep(folder: Path) -> bool:
    """An aqmlab folder written by ``aqmlab sweep`` (whether or not ``sweep.json`` is left)."""
    return folder.is_dir() and not folder.is_symlink() and manifest_command(folder) == COMMAND


def _canonical(data: Any) -> str:
    return json.dumps(data, sort_keys=True, separators=(",", ":"))


def record_sha256(record: dict[str, Any]) -> str:
    """The content checksum of a record: SHA-256 of every field but ``sha256``, as canonical
    JSON (keys sorted, no spaces).

    Parameters
    ----------
    record : dict
        The record.

    Returns
    -------
    str
    """
    body = {k: v for k, v in record.items() if k != "sha256"}
    return hashlib.sha256(_canonical(body).encode()).hexdigest()


def seal(record: dict[str, Any], timeseries: bytes | None = None) -> dict[str, Any]:
    """The record as written: plain JSON data, the time series' checksum when there is one, and
    the content checksum ``sha256`` last.

    Parameters
    ----------
    record : dict
        The record.
    timeseries : bytes, optional
        Its time series' content.

    Returns
    -------
    dict
    """
    body = json.loads(json.dumps(record, default=float))
    body.pop("sha256", None)
    if timeseries is not None:
        body["timeseries_sha256"] = hashlib.sha256(timeseries).hexdigest()
    return {**body, "sha256": record_sha256(body)}


def _why_not(rec: Any, key: str, expected_scenario: str | None) -> str | None:
    """Why ``rec`` (parsed from ``runs/KEY.json``) is not a valid record of run ``key``, or None.
    ``expected_scenario``: the run's scenario checksum (None: not checked)."""
    if not isinstance(rec, dict) or any(f not in rec for f in (*RECORD_FIELDS, "sha256")):
        return "not a run record"
    if rec["sha256"] != record_sha256(rec):
        return "checksum does not match its content (edited?)"
    if rec["run_key"] != key:
        return f"holds the record of run {rec['run_key']} (a copy?)"
    overrides, seed = rec["overrides"], rec["seed"]
    if (
        not isinstance(overrides, dict)
        or isinstance(seed, bool)
        or not isinstance(seed, int)
        or run_key(overrides, seed) != key
    ):
        return "its overrides and seed are not those of its key"
    if expected_scenario is not None and rec["scenario_sha256"] != expected_scenario:
        return "ran another scenario"
    summary, error = rec["summary"], rec["error"]
    if not (
        (isinstance(summary, dict) and error is None)
        or (summary is None and isinstance(error, str) and error)
    ):
        return "has neither a summary nor an error"
    if isinstance(rec["wall_s"], bool) or not isinstance(rec["wall_s"], int | float):
        return "not a run record"
    return None


class SweepStore:
    """The output folder of one sweep (see the module's description).

    ``trusted`` maps the keys of runs whose record was verified (or written by this store) to
    their scenario checksums; :meth:`finish` builds the table from those records only.

    Parameters
    ----------
    folder : Path
        The sweep's folder.
    resumed : bool
        It holds an earlier run of this sweep.
    trusted : dict, optional
        Run key to scenario checksum of the verified records.
    """

    def __init__(self, folder: Path, resumed: bool, trusted: dict[str, str] | None = None):
        self.folder = folder
        self.resumed = resumed
        self.trusted: dict[str, str] = dict(trusted or {})
        #: paths (relative to the folder) written by this store: they go into the manifest
        self.written: set[str] = set()

    @property
    def runs_dir(self) -> Path:
        """The folder of the run records, ``out/runs``."""
        return self.folder / "runs"

    @staticmethod
    def check(out: str | os.PathLike[str], spec: SweepSpec, force: bool = False) -> bool:
        """Check that ``out`` may hold this sweep; True if it resumes an earlier one.

        A folder written by ``aqmlab sweep`` is resumed unless its ``sweep.json`` names another
        base scenario; without a readable ``sweep.json`` the records alone say which runs are
        done (their scenario checksums).

        Parameters
        ----------
        out : path-like
            The folder.
        spec : SweepSpec
            The sweep.
        force : bool
            Start afresh.

        Returns
        -------
        bool

        Raises
        ------
        OutputError
            ``out`` may not be written (see :func:`aqmlab.output.check_output_dir`), holds a
            sweep of another base scenario, or its ``runs`` is not a folder we may write in
            (unless ``force``, which starts afresh).
        """
        folder = Path(out)
        if force or not _is_sweep(folder):
            check_output_dir(folder, force)
            return False
        old = _read_json(folder / "sweep.json")
        if isinstance(old, dict) and "base" in old and old["base"] != spec.base:
            raise OutputError(
                f"output folder '{os.fspath(out)}' holds a sweep of another base scenario "
                "(use --force to start afresh)"
            )
        check_output_dir(folder, force=True)  # still a folder we may write in
        runs = folder / "runs"
        if runs.is_symlink() or (runs.exists() and not runs.is_dir()):
            raise OutputError(
                f"output folder '{os.fspath(out)}': 'runs' is not a folder "
                "(use --force to start afresh)"
            )
        for p in (folder, runs):
            if p.is_dir() and not os.access(p, os.W_OK | os.X_OK):
                raise OutputError(f"output folder '{os.fspath(out)}': cannot write in '{p}'")
        return True

    @staticmethod
    def sweep_json_missing(out: str | os.PathLike[str]) -> bool:
        """True if ``out`` is a sweep folder whose ``sweep.json`` is gone or unreadable.

        Parameters
        ----------
        out : path-like
            The folder.

        Returns
        -------
        bool
        """
        folder = Path(out)
        return _is_sweep(folder) and not isinstance(_read_json(folder / "sweep.json"), dict)

    @classmethod
    def open(
        cls,
        out: str | os.PathLike[str],
        spec: SweepSpec,
        force: bool = False,
        trusted: dict[str, str] | None = None,
    ):
        """Create (or resume) the folder for ``spec``; see :meth:`check`. ``trusted``: the
        verified records of a resumed folder (:meth:`verify`).

        Parameters
        ----------
        out : path-like
            The folder.
        spec : SweepSpec
            The sweep.
        force : bool
            Start afresh.
        trusted : dict, optional
            The verified records of a resumed folder.

        Returns
        -------
        SweepStore
        """
        folder = Path(out)
        resumed = cls.check(folder, spec, force)
        if resumed:
            store = cls(folder, True, trusted)
            if not store.runs_dir.is_dir():
                store.runs_dir.mkdir()
                store.written.add("runs/")
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
        self.written |= {"spec.toml", "sweep.json"}

    def _load(self, key: str) -> tuple[dict[str, Any] | None, str | None]:
        """``(record, None)`` if ``runs/KEY.json`` parses, ``(None, why)`` if it does not,
        ``(None, None)`` if there is none."""
        path = self.runs_dir / f"{key}.json"
        if not path.exists() and not path.is_symlink():
            return None, None
        try:
            return json.loads(path.read_text()), None
        except (OSError, UnicodeDecodeError) as e:
            return None, f"unreadable ({getattr(e, 'strerror', None) or e})"
        except ValueError:
            return None, "not JSON (truncated?)"

    def verify(
        self, spec: SweepSpec, runs: list[Run]
    ) -> tuple[dict[str, str], list[tuple[str, str]]]:
        """Check the record of every run that has one against ``spec``.

        Parameters
        ----------
        spec : SweepSpec
            The sweep.
        runs : list of Run
            Its runs.

        Returns
        -------
        trusted : dict
            run key -> scenario checksum of each run whose record verifies: it parses, its
            content checksum matches, it is the record of this run (key, overrides and seed),
            of this run's scenario (``scenario_sha256``), with a summary or an error.
        rejected : list of (str, str)
            ``(runs/KEY.json, why)`` of each record that does not verify: that run runs again.
        """
        trusted: dict[str, str] = {}
        rejected: list[tuple[str, str]] = []
        for run in runs:
            rec, why = self._load(run.key)
            if rec is None and why is None:
                continue
            expected = scenario_sha256(spec.scenario_data(run.overrides, run.seed))
            if why is None:
                why = _why_not(rec, run.key, expected)
            if why is None:
                trusted[run.key] = expected
            else:
                rejected.append((f"runs/{run.key}.json", why))
        return trusted, rejected

    def write(self, record: dict[str, Any], timeseries: bytes | None) -> None:
        """Write one finished run (its time series first, then its record, each atomically).

        Parameters
        ----------
        record : dict
            The run's record.
        timeseries : bytes or None
            Its ``timeseries.parquet`` content.
        """
        key = record["run_key"]
        sealed = seal(record, timeseries)
        if timeseries is not None:
            part = self.folder / "timeseries" / f"run_key={key}"
            part.mkdir(parents=True, exist_ok=True)
            with write_atomic(part / "part-0.parquet") as tmp:
                tmp.write_bytes(timeseries)
            self.written.add(f"timeseries/run_key={key}/part-0.parquet")
        if sealed.get("scenario_toml"):
            # the run's normalized scenario, to rerun it with `aqmlab run` (written for the
            # user; resuming reads only the checksummed record, which holds the same text)
            with write_atomic(self.runs_dir / f"{key}.toml") as tmp:
                tmp.write_text(sealed["scenario_toml"])
            self.written.add(f"runs/{key}.toml")
        with write_atomic(self.runs_dir / f"{key}.json") as tmp:
            tmp.write_text(json.dumps(sealed) + "\n")
        self.written.add(f"runs/{key}.json")
        self.trusted[key] = sealed["scenario_sha256"]

    def read(self, key: str) -> dict[str, Any] | None:
        """The record of run ``key`` if it is trusted and still verifies, else None.

        Parameters
        ----------
        key : str
            The run key.

        Returns
        -------
        dict or None
        """
        if key not in self.trusted:
            return None
        rec, _ = self._load(key)
        if rec is None or _why_not(rec, key, self.trusted[key]) is not None:
            return None
        return rec

    def _adopt(self, key: str) -> None:
        """List a verified record (and its time series, if its checksum matches) among what
        aqmlab wrote: it may be missing from the manifest after the process was killed."""
        self.written.add(f"runs/{key}.json")
        rec, _ = self._load(key)
        want = rec.get("timeseries_sha256") if isinstance(rec, dict) else None
        part = self.folder / "timeseries" / f"run_key={key}" / "part-0.parquet"
        if want and part.is_file() and not part.is_symlink():
            try:
                ok = hashlib.sha256(part.read_bytes()).hexdigest() == want
            except OSError:
                ok = False
            if ok:
                self.written.add(f"timeseries/run_key={key}/part-0.parquet")

    def finish(self, spec: SweepSpec, runs: list[Run]):
        """Rebuild ``results.parquet`` from the verified records of ``runs`` (those that
        finished, in the spec's order) and the manifest; return the table as a pandas
        DataFrame.

        Parameters
        ----------
        spec : SweepSpec
            The sweep.
        runs : list of Run
            Its runs, in order.

        Returns
        -------
        pandas.DataFrame
        """
        import pyarrow.parquet as pq

        listed = manifest_files(self.folder)
        records = []
        for run in runs:
            rec = self.read(run.key)
            if rec is None:
                continue
            records.append(rec)
            name = f"runs/{run.key}.json"
            if name not in listed and name not in self.written:
                self._adopt(run.key)
        table = records_table(records, spec.override_keys)
        with write_atomic(self.folder / "results.parquet") as tmp:
            pq.write_table(table, tmp)
        self.written.add("results.parquet")
        refresh_manifest(self.folder, COMMAND, self.written)
        return table.to_pandas()


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None
