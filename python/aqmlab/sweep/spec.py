"""Sweep specifications: a base scenario, seeds, and ``[grid]`` / ``[zip]`` overrides.

A spec is TOML (``docs/sweep.md``)::

    base = "../demo.toml"        # a scenario file, relative to the spec; or an inline [base] table
    seeds = [1, 2, 3, 4]
    timeseries = false           # keep each run's time series (DIR/timeseries/)

    [grid]                       # cartesian product
    "aqm.type" = ["codel", "pie"]

    [zip]                        # parallel lists, all of one length
    "dumbbell.rate" = ["10Mbps", "20Mbps"]
    "dumbbell.buffer" = [100, 200]

Overrides are keyed by scenario path and applied by :func:`aqmlab.scenario.set_key`, the code
behind ``aqmlab run --set``; every combination is validated by the scenario schema when the spec
is loaded, so a bad value is reported before anything runs. Errors are
:class:`~aqmlab.scenario.ScenarioError` (a ``ValueError``) with one line naming the key and value.

Examples
--------
>>> spec = load_spec({"base": {"duration": "2s", "dumbbell": {"rate": "10Mbps"},
...                            "flows": [{"count": 2}]},
...                   "seeds": [1, 2], "grid": {"aqm.type": ["codel", "pie"]}})
>>> len(spec.runs()), spec.override_keys
(4, ['aqm.type'])
>>> spec.runs()[0].overrides, spec.runs()[0].seed
({'aqm.type': 'codel'}, 1)
"""

from __future__ import annotations

import copy
import hashlib
import itertools
import json
import math
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aqmlab.scenario import Scenario, ScenarioError, _path, _plain, _resolve_files, set_key

__all__ = [
    "SweepSpec",
    "Run",
    "load_spec",
    "check_runs",
    "run_key",
    "scenario_sha256",
    "RESERVED_COLUMNS",
]

#: Keys a spec may have at its top level.
SPEC_KEYS = ("base", "seeds", "grid", "zip", "timeseries", "name", "labels")
#: Columns of results.parquet that an override key may not take.
RESERVED_COLUMNS = ("run_key", "seed", "error", "wall_s")


def run_key(overrides: Mapping[str, Any], seed: int) -> str:
    """The stable key of one run: 16 hex digits of the SHA-256 of its overrides and seed.

    >>> run_key({"aqm.type": "codel"}, 1) == run_key({"aqm.type": "codel"}, 1)
    True
    >>> run_key({"aqm.type": "codel"}, 1) != run_key({"aqm.type": "codel"}, 2)
    True

    Parameters
    ----------
    overrides : mapping
        The run's overrides.
    seed : int
        The run's seed.

    Returns
    -------
    str
    """
    doc = json.dumps({"overrides": dict(overrides), "seed": int(seed)}, sort_keys=True)
    return hashlib.sha256(doc.encode()).hexdigest()[:16]


def _canonical(data: Any) -> str:
    return json.dumps(data, sort_keys=True, separators=(",", ":"))


def scenario_sha256(scenario: Scenario | Mapping[str, Any]) -> str:
    """SHA-256 (hex) of a scenario as the schema normalizes it (every default filled in, every
    quantity in SI base units; canonical JSON): two documents that describe the same run, e.g.
    ``"10Mbps"`` and ``"10000kbps"``, have the same checksum. A run record carries it.

    >>> a = scenario_sha256({"dumbbell": {"rate": "10Mbps"}, "flows": [{"count": 1}]})
    >>> a == scenario_sha256({"dumbbell": {"rate": "10000kbps"}, "flows": [{"count": 1}]})
    True

    Parameters
    ----------
    scenario : Scenario or mapping
        The scenario.

    Returns
    -------
    str
    """
    sc = scenario if isinstance(scenario, Scenario) else Scenario(scenario)
    return hashlib.sha256(_canonical(sc.normalized).encode()).hexdigest()


@dataclass(frozen=True)
class Run:
    """One run of a sweep: its key, the overrides (spec order) and the seed.

    Attributes
    ----------
    key : str
        The run key (:func:`run_key`).
    overrides : dict
        Override key to value, in the spec's order.
    seed : int
        The seed.
    """

    key: str
    overrides: dict[str, Any]
    seed: int


@dataclass
class SweepSpec:
    """A validated sweep specification.

    Attributes
    ----------
    base : dict
        The base scenario document (file names inside it resolved).
    seeds : list of int
        Seeds, each run for every combination of overrides.
    grid, zip : dict
        Override key -> list of values (cartesian product; parallel lists).
    timeseries : bool
        Keep each run's time series.
    name : str
        A label (the spec file's stem by default).
    labels : dict
        How figures name the axes and values (``[labels]``, :mod:`aqmlab.sweep.labels`).
    text : str
        The spec as given (TOML), copied to ``DIR/spec.toml``.
    label : str
        How messages name the spec (its file name).
    costs : list of (float, float)
        Estimated memory (bytes) and CPU seconds of each combination, as :func:`load_spec`
        found them while validating (:mod:`aqmlab.sweep.budget`).
    """

    base: dict[str, Any]
    seeds: list[int]
    grid: dict[str, list[Any]] = field(default_factory=dict)
    zip: dict[str, list[Any]] = field(default_factory=dict)
    timeseries: bool = False
    name: str = "sweep"
    labels: dict[str, dict[str, Any]] = field(default_factory=dict)
    text: str = ""
    label: str = "sweep spec"
    #: (estimated memory bytes, estimated CPU seconds) of each combination, as load_spec
    #: found them while validating (:mod:`aqmlab.sweep.budget`)
    costs: list[tuple[float, float]] = field(default_factory=list, repr=False, compare=False)

    @property
    def override_keys(self) -> list[str]:
        """The override keys, grid first, in spec order (the columns of results.parquet)."""
        return [*self.grid, *self.zip]

    def combinations(self) -> list[dict[str, Any]]:
        """Every combination of overrides: the grid's product for each position of the zip.

        Returns
        -------
        list of dict
        """
        zip_rows = [
            dict(zip(self.zip, vals, strict=True)) for vals in zip(*self.zip.values(), strict=True)
        ]
        grid_rows = [
            dict(zip(self.grid, vals, strict=True))
            for vals in itertools.product(*self.grid.values())
        ]
        return [{**g, **z} for g in grid_rows for z in (zip_rows or [{}])]

    def combination_count(self) -> int:
        """How many combinations :meth:`combinations` gives (without building them).

        Returns
        -------
        int
        """
        zip_len = len(next(iter(self.zip.values()))) if self.zip else 1
        return math.prod(len(v) for v in self.grid.values()) * zip_len

    def combination(self, i: int) -> dict[str, Any]:
        """The ``i``-th of :meth:`combinations` (without building the others).

        Parameters
        ----------
        i : int
            Its position.

        Returns
        -------
        dict
        """
        zip_len = len(next(iter(self.zip.values()))) if self.zip else 1
        g, z = divmod(i, zip_len)
        picked: dict[str, Any] = {}
        for k in reversed(self.grid):  # the last grid key varies fastest, as in the product
            g, j = divmod(g, len(self.grid[k]))
            picked[k] = self.grid[k][j]
        out = {k: picked[k] for k in self.grid}
        out.update({k: v[z] for k, v in self.zip.items()})
        return out

    def runs(self) -> list[Run]:
        """Every run, in a fixed order: combinations, then seeds.

        Returns
        -------
        list of Run
        """
        return [Run(run_key(c, s), c, s) for c in self.combinations() for s in self.seeds]

    def scenario_data(self, overrides: Mapping[str, Any], seed: int) -> dict[str, Any]:
        """The scenario document of one run (a fresh copy of the base with the overrides).

        Parameters
        ----------
        overrides : mapping
            The run's overrides.
        seed : int
            The run's seed.

        Returns
        -------
        dict
        """
        return resolve(self.base, overrides, seed)

    def resolved(self) -> dict[str, Any]:
        """The spec as data with the base inlined (``DIR/sweep.json``).

        Returns
        -------
        dict
        """
        out = {
            "name": self.name,
            "base": self.base,
            "seeds": self.seeds,
            "grid": self.grid,
            "zip": self.zip,
            "timeseries": self.timeseries,
        }
        if self.labels:
            out["labels"] = self.labels
        return out


def resolve(base: Mapping[str, Any], overrides: Mapping[str, Any], seed: int) -> dict[str, Any]:
    """A copy of ``base`` with ``overrides`` applied (:func:`aqmlab.scenario.set_key`) and
    ``seed`` set."""
    data = copy.deepcopy(dict(base))
    for k, v in overrides.items():
        set_key(data, k, copy.deepcopy(v))
    data["seed"] = seed
    return data


def _fail(msg: str) -> None:
    raise ScenarioError(msg)


def _read_toml(path: Path, what: str) -> tuple[dict[str, Any], str]:
    try:
        text = path.read_text()
    except (OSError, UnicodeDecodeError) as e:
        reason = getattr(e, "strerror", None) or str(e)
        _fail(f"{what} '{path}': {reason}")
    try:
        return tomllib.loads(text), text
    except tomllib.TOMLDecodeError as e:
        _fail(f"{what} '{path}': malformed TOML: {e}")
    raise AssertionError  # unreachable


def _value_list(section: str, key: str, values: Any) -> list[Any]:
    where = f'{section}."{key}"'
    if not isinstance(values, list):
        _fail(f"{where} = {json.dumps(_plain(values, where))}: must be a list of values")
    if not values:
        _fail(f"{where} = []: give at least one value")
    out = [_plain(v, f"{where}[{i}]") for i, v in enumerate(values)]
    if section == "grid":  # in a zip list a value may repeat (the other lists tell the rows apart)
        seen: set[str] = set()
        for v in out:
            if _canonical(v) in seen:
                _fail(
                    f"{where} = {json.dumps(out)}: {json.dumps(v)} is given twice (every run "
                    "would count twice)"
                )
            seen.add(_canonical(v))
    return out


def _check_paths(grid: Mapping[str, Any], zipped: Mapping[str, Any]) -> None:
    """Refuse two override keys that name one scenario value, or a value inside the other's
    table (``flows.0.count`` and ``flows[0].count``; ``aqm`` and ``aqm.type``): one of them
    would overwrite the other in every run."""
    seen: list[tuple[str, list[str | int]]] = []
    for section, table in (("grid", grid), ("zip", zipped)):
        for key in table:
            where = f'{section}."{key}"'
            path = _path(key, where)
            for other, opath in seen:
                n = min(len(path), len(opath))
                if path[:n] == opath[:n]:
                    same = "the same scenario key as" if len(path) == len(opath) else "overlaps"
                    _fail(f"{where}: {same} {other}; give each key once")
            seen.append((where, path))


def _duplicate_runs(spec: SweepSpec, combos: list[dict[str, Any]], i: int, j: int) -> str:
    """The message for combinations ``i`` < ``j`` that give one scenario."""
    a, b = combos[i], combos[j]
    differ = [k for k in a if _canonical(a[k]) != _canonical(b[k])]
    if differ:
        where = ", ".join(
            f'{"grid" if k in spec.grid else "zip"}."{k}" = {json.dumps(a[k])} and '
            f"{json.dumps(b[k])}"
            for k in differ
        )
        return f"{where}: give the same scenario (every run would count twice)"
    # equal values everywhere: two positions of the zip lists are the same row
    n = len(next(iter(spec.zip.values())))
    rows = [tuple(_canonical(v[p]) for v in spec.zip.values()) for p in range(n)]
    p = next(p for p in range(n) if rows[p] in rows[:p])
    q = rows.index(rows[p])
    shown = ", ".join(f'zip."{k}" = {json.dumps(v)}' for k, v in spec.zip.items())
    return f"{shown}: positions {q} and {p} are the same run (every run would count twice)"


def _overrides(doc: Mapping[str, Any], section: str) -> dict[str, list[Any]]:
    table = doc.get(section, {})
    if not isinstance(table, Mapping):
        _fail(f"{section} = {table!r}: must be a table of key = [values]")
    out: dict[str, list[Any]] = {}
    for key, values in table.items():
        if not str(key).strip():
            _fail(f'{section}."" = {values!r}: give a scenario key, e.g. "aqm.type"')
        if key in RESERVED_COLUMNS:
            hint = " (use seeds = [...])" if key == "seed" else ""
            _fail(f'{section}."{key}": not an override key{hint}')
        out[str(key)] = _value_list(section, str(key), values)
    return out


def check_runs(spec: SweepSpec, max_runs: int | None) -> None:
    """Refuse a spec of more than ``max_runs`` runs (``--max-runs``), with its cost estimated
    from a sample of its combinations, before any run is built.

    Parameters
    ----------
    spec : SweepSpec
        The sweep.
    max_runs : int or None
        The limit (None: none).

    Raises
    ------
    ScenarioError
        ``--max-runs = N: ...``, or ``max_runs`` is not a whole number >= 1.
    """
    if max_runs is None:
        return
    if isinstance(max_runs, bool) or not isinstance(max_runs, int) or max_runs < 1:
        _fail(f"--max-runs = {max_runs!r}: must be a whole number >= 1")
    combos = spec.combination_count()
    runs = combos * len(spec.seeds)
    if runs <= max_runs:
        return
    from aqmlab.sweep.budget import estimate, fmt_bytes, fmt_seconds

    parts = []
    if spec.grid:
        parts.append("grid " + " x ".join(str(len(v)) for v in spec.grid.values()))
    if spec.zip:
        parts.append(f"zip {len(next(iter(spec.zip.values())))}")
    parts.append(f"{len(spec.seeds)} seed" + ("s" if len(spec.seeds) != 1 else ""))
    try:
        est = estimate(spec, 1, sample=100)
        cost = (
            f"; about {fmt_bytes(est.memory_bytes)} of memory per run and "
            f"{fmt_seconds(est.cpu_seconds)} of CPU time in all (a rough estimate)"
        )
    except ScenarioError:
        cost = ""
    _fail(
        f"--max-runs = {max_runs}: {spec.label} has {runs} runs ({', '.join(parts)}){cost}; "
        "raise --max-runs to run them all"
    )


def load_spec(
    spec: str | Path | Mapping[str, Any],
    name: str | None = None,
    max_runs: int | None = None,
) -> SweepSpec:
    """Read and validate a sweep spec: a TOML file or the same data as a dict.

    ``max_runs``: refuse a spec of more runs (:func:`check_runs`) before its combinations are
    built. Every combination of overrides is applied to the base and validated by the scenario
    schema, so a spec that loads runs (a run may still fail while it is built or simulated, e.g. an
    unroutable flow; such a run is recorded with its error).

    Parameters
    ----------
    spec : path or mapping
        A TOML file or the same data.
    name : str, optional
        A label (default: the file's stem).
    max_runs : int, optional
        Refuse a spec of more runs.

    Returns
    -------
    SweepSpec

    Raises
    ------
    ScenarioError
        One line naming the key and the value: an unknown spec key, an empty or non-list value
        list, a value given twice in a ``[grid]`` list, ``[zip]`` lists of unequal length, a
        key both in ``[grid]`` and ``[zip]`` (or two keys naming one value, or one inside the
        other), a bad seed, a base scenario that cannot be read, a combination the schema
        refuses, or two combinations that give the same scenario (``fifo`` and ``droptail``).
    """
    if isinstance(spec, SweepSpec):
        return spec
    folder = Path.cwd()
    if isinstance(spec, str | Path):
        path = Path(spec)
        doc, text = _read_toml(path, "sweep spec")
        folder = path.parent
        label = path.name
        name = name or path.stem
    elif isinstance(spec, Mapping):
        doc = copy.deepcopy(dict(spec))
        label = "sweep spec"
        from aqmlab.toml import to_toml

        text = to_toml(_plain(doc, ""))
    else:
        _fail(f"spec = {spec!r}: give a TOML file or a dict")
    unknown = [k for k in doc if k not in SPEC_KEYS]
    if unknown:
        k = unknown[0]
        _fail(
            f"{k} = {json.dumps(_plain(doc[k], k))}: unknown sweep key (known: {', '.join(SPEC_KEYS)})"
        )

    base = doc.get("base")
    if base is None:
        _fail('base: missing; give a scenario file (base = "file.toml") or a [base] table')
    if isinstance(base, str):
        base_path = (folder / base) if not Path(base).is_absolute() else Path(base)
        base_doc, _ = _read_toml(base_path, "base scenario")
        _resolve_files(base_doc, base_path.parent)
    elif isinstance(base, Mapping):
        base_doc = copy.deepcopy(dict(base))
        _resolve_files(base_doc, folder)
    else:
        _fail(f"base = {base!r}: give a scenario file name or a table")
    base_doc = _plain(base_doc, "base")
    try:
        base_sc = Scenario(base_doc)
    except ScenarioError as e:
        _fail(f"base: {e}")

    seeds = doc.get("seeds", [base_sc.seed])
    if not isinstance(seeds, list):
        _fail(f"seeds = {seeds!r}: must be a list of whole numbers >= 0, e.g. [1, 2, 3]")
    if not seeds:
        _fail("seeds = []: give at least one seed")
    for i, s in enumerate(seeds):
        if isinstance(s, bool) or not isinstance(s, int) or not 0 <= s < 2**63:
            _fail(f"seeds[{i}] = {s!r}: must be a whole number >= 0")
    dup = next((s for i, s in enumerate(seeds) if s in seeds[:i]), None)
    if dup is not None:
        _fail(f"seeds = {seeds}: seed {dup} is given twice")

    timeseries = doc.get("timeseries", False)
    if not isinstance(timeseries, bool):
        _fail(f"timeseries = {timeseries!r}: must be true or false")
    sweep_name = doc.get("name", name or "sweep")
    if not isinstance(sweep_name, str) or not sweep_name.strip():
        _fail(f"name = {sweep_name!r}: must be a non-empty string")

    grid = _overrides(doc, "grid")
    zipped = _overrides(doc, "zip")
    both = [k for k in grid if k in zipped]
    if both:
        _fail(f'zip."{both[0]}": also in [grid]; give each key once')
    _check_paths(grid, zipped)
    lengths = {k: len(v) for k, v in zipped.items()}
    if len(set(lengths.values())) > 1:
        first = next(iter(lengths))
        other = next(k for k in lengths if lengths[k] != lengths[first])
        _fail(
            f'zip."{other}" = {json.dumps(zipped[other])}: {lengths[other]} values, but '
            f'zip."{first}" has {lengths[first]} (zip lists must be of equal length)'
        )

    from aqmlab.sweep.labels import parse_labels

    try:
        labels = parse_labels(doc.get("labels"), {**grid, **zipped})
    except ValueError as e:
        _fail(str(e))
    out = SweepSpec(
        base=base_doc,
        seeds=list(seeds),
        grid=grid,
        zip=zipped,
        timeseries=timeseries,
        name=sweep_name,
        labels=labels,
        text=text,
        label=label,
    )
    check_runs(out, max_runs)
    from aqmlab.sweep.budget import run_seconds

    combos = out.combinations()
    seen: dict[str, int] = {}
    for i, combo in enumerate(combos):
        try:
            sc = Scenario(resolve(base_doc, combo, seeds[0]))
        except ScenarioError as e:
            shown = ", ".join(f"{k} = {json.dumps(v)}" for k, v in combo.items())
            _fail(f"{label}: {e} (in the run with {shown})" if shown else f"{label}: {e}")
        # two combinations that describe one scenario (a value given twice, an alias such as
        # fifo for droptail, one rate in two units) would each count every run twice
        norm = sc.normalized
        norm.pop("name", None)
        h = _canonical(norm)
        if h in seen:
            _fail(f"{label}: {_duplicate_runs(out, combos, seen[h], i)}")
        seen[h] = i
        out.costs.append((sc.memory_bytes, run_seconds(sc)))
    return out
