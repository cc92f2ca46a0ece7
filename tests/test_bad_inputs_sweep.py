"""Bad input to ``aqmlab sweep`` that used to be accepted, hang or end in a traceback: specs that
would mislead (a value given twice, two names of one value, two keys for one setting), sweeps
beyond ``--max-runs``/``--max-time`` or the memory, ``--workers`` beyond 4 x the cores, a
``--dask`` address that is no Dask scheduler, a sweep folder whose ``runs`` is a file; and an AQM
given twice in an AQM list (``demo``, ``rfc7928``, ``paqman evaluate``). Each one: exit status
2, one line naming the key and value, no traceback, nothing of the user's touched
(:func:`badinput.assert_bad_input`)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from badinput import assert_bad_input  # noqa: E402

SWEEP_OK = """seeds = [1, 2]
[base]
duration = "1s"
[base.dumbbell]
rate = "10Mbps"
[[base.flows]]
count = 2
[grid]
"aqm.type" = ["codel", "pie"]
"""


def _grid(key: str, values: list[str]) -> str:
    return f'"{key}" = [{", ".join(values)}]\n'


BIG_GRID = SWEEP_OK.replace("seeds = [1, 2]", "seeds = [1]").replace(
    '"aqm.type" = ["codel", "pie"]\n',
    '"aqm.type" = ["codel"]\n'
    + _grid("aqm.target", [f'"{i}ms"' for i in range(1, 102)])
    + _grid("flows.0.count", [str(i) for i in range(1, 101)]),
)

ROWS = [
    (
        "grid value twice",
        SWEEP_OK.replace('["codel", "pie"]', '["codel", "pie", "codel"]'),
        [],
        ['grid."aqm.type" = ["codel", "pie", "codel"]', '"codel" is given twice'],
    ),
    (
        "grid alias of another value",
        SWEEP_OK.replace('["codel", "pie"]', '["fifo", "droptail"]'),
        [],
        ['grid."aqm.type" = "fifo" and "droptail"', "give the same scenario"],
    ),
    (
        "grid one rate in two units",
        SWEEP_OK + _grid("dumbbell.rate", ['"10Mbps"', '"10000000bps"']),
        [],
        ['grid."dumbbell.rate" = "10Mbps" and "10000000bps"', "give the same scenario"],
    ),
    (
        "zip rows twice",
        SWEEP_OK + '[zip]\n"dumbbell.rate" = ["1Mbps", "1Mbps"]\n"dumbbell.buffer" = [10, 10]\n',
        [],
        ['zip."dumbbell.rate" = ["1Mbps", "1Mbps"]', "positions 0 and 1 are the same run"],
    ),
    (
        "one key spelled twice",
        SWEEP_OK + '"flows.0.count" = [1, 2]\n[zip]\n"flows[0].count" = [3]\n',
        [],
        ['zip."flows[0].count"', 'the same scenario key as grid."flows.0.count"'],
    ),
    (
        "a table and a key inside it",
        SWEEP_OK + '[zip]\n"aqm" = [{type = "red"}]\n',
        [],
        ['zip."aqm"', 'overlaps grid."aqm.type"'],
    ),
    (
        "more runs than the default max-runs",
        BIG_GRID,
        [],
        [
            "--max-runs = 10000",
            "10100 runs (grid 1 x 101 x 100, 1 seed)",
            "of memory per run",
            "CPU",
        ],
    ),
    ("max-runs", SWEEP_OK, ["--max-runs", "3"], ["--max-runs = 3", "has 4 runs"]),
    ("max-runs 0", SWEEP_OK, ["--max-runs", "0"], ["--max-runs = 0", ">= 1"]),
    (
        "max-time",
        SWEEP_OK.replace('"1s"', '"100s"'),
        ["--max-time", "10ms"],
        ["--max-time = 10ms", "would take about", "4 runs", "of memory per run"],
    ),
    ("max-time without unit", SWEEP_OK, ["--max-time", "5"], ["--max-time = 5", "unit"]),
    ("max-time negative", SWEEP_OK, ["--max-time", "-1h"], ["--max-time = -1h", "> 0"]),
    ("workers 1000", SWEEP_OK, ["--workers", "1000"], ["--workers = 1000", "cores"]),
    (
        "workers 1000 on dask local",
        SWEEP_OK,
        ["--dask", "local", "--workers", "1000"],
        ["--workers = 1000", "cores"],
    ),
]


@pytest.mark.parametrize("name, spec, extra, needles", ROWS, ids=[r[0] for r in ROWS])
def test_sweep_bad_input(tmp_path, name, spec, extra, needles):
    (tmp_path / "sweep.toml").write_text(spec)
    t0 = time.monotonic()
    assert_bad_input(["sweep", "{tmp}/sweep.toml", "--out", "{tmp}/res", *extra], needles, tmp_path)
    assert time.monotonic() - t0 < 30, "refused before anything ran"


def test_workers_beyond_the_memory_are_refused(tmp_path):
    from aqmlab.sweep import budget

    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    workers = 4 * cores  # the most --workers allows
    flows = 900_000  # about 6.9 GiB each, as the core estimates (8 KiB per flow)
    need = workers * (flows * 8 * 1024 + budget.WORKER_BYTES)
    avail = budget.available_memory()
    if avail is None or avail >= need:
        pytest.skip(f"this machine has {avail} bytes available, more than {need} (or unknown)")
    (tmp_path / "sweep.toml").write_text(SWEEP_OK.replace("count = 2", f"count = {flows}"))
    assert_bad_input(
        ["sweep", "{tmp}/sweep.toml", "--out", "{tmp}/res", "--workers", str(workers)],
        [f"--workers = {workers}", "of memory", "is available"],
        tmp_path,
    )


def test_a_sweep_folder_whose_runs_is_a_file_is_refused(tmp_path):
    from aqmlab import sweep

    (tmp_path / "sweep.toml").write_text(SWEEP_OK)
    sweep.run(tmp_path / "sweep.toml", tmp_path / "res", workers=1)
    for p in (tmp_path / "res" / "runs").iterdir():
        p.unlink()
    (tmp_path / "res" / "runs").rmdir()
    (tmp_path / "res" / "runs").write_text("not a folder\n")
    assert_bad_input(
        ["sweep", "{tmp}/sweep.toml", "--out", "{tmp}/res"],
        ["output folder", "res", "'runs' is not a folder"],
        tmp_path,
    )


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_dask_address_of_an_http_server_is_one_line_within_10_s(tmp_path):
    port = _free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1"],
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.05)
        (tmp_path / "sweep.toml").write_text(SWEEP_OK)
        t0 = time.monotonic()
        line = assert_bad_input(
            [
                "sweep",
                "{tmp}/sweep.toml",
                "--out",
                "{tmp}/res",
                "--dask",
                f"tcp://127.0.0.1:{port}",
            ],
            [f"--dask = 'tcp://127.0.0.1:{port}'", "not a Dask scheduler"],
            tmp_path,
        )
        assert time.monotonic() - t0 < 10, line
    finally:
        server.kill()
        server.wait()


def test_dask_address_of_a_silent_port_is_one_line_within_10_s(tmp_path):
    with socket.socket() as s:  # accepts connections (the kernel does) and never says a word
        s.bind(("127.0.0.1", 0))
        s.listen(8)
        port = s.getsockname()[1]
        (tmp_path / "sweep.toml").write_text(SWEEP_OK)
        t0 = time.monotonic()
        line = assert_bad_input(
            ["sweep", "{tmp}/sweep.toml", "--out", "{tmp}/res", "--dask", f"127.0.0.1:{port}"],
            [f"--dask = '127.0.0.1:{port}'", "not a Dask scheduler", "no handshake"],
            tmp_path,
        )
        assert time.monotonic() - t0 < 10, line


AQM_LIST_ROWS = [
    (
        ["demo", "--aqms", "fifo,droptail", "--out", "{tmp}/d"],
        ["--aqms = 'fifo,droptail'", "'fifo' and 'droptail' are the same AQM"],
    ),
    (["demo", "--aqms", "codel,codel", "--out", "{tmp}/d"], ["--aqms = 'codel,codel'", "twice"]),
    (
        ["demo", "--aqms", "CoDel,codel", "--out", "{tmp}/d"],
        ["--aqms = 'CoDel,codel'", "the same AQM (codel)"],
    ),
    (
        ["rfc7928", "--quick", "--aqms", "pie,fifo,taildrop", "--out", "{tmp}/r"],
        ["--aqms = 'pie,fifo,taildrop'", "'fifo' and 'taildrop' are the same AQM (droptail)"],
    ),
]


@pytest.mark.parametrize(
    "args, needles", AQM_LIST_ROWS, ids=[" ".join(a[:3]) for a, _ in AQM_LIST_ROWS]
)
def test_an_aqm_given_twice_is_refused(tmp_path, args, needles):
    assert_bad_input(args, needles, tmp_path)


def test_paqman_evaluate_refuses_an_aqm_given_twice(tmp_path):
    import json

    from aqmlab.mdp import negligible_rtt_model, solve

    doc = solve(negligible_rtt_model(833.3, 0.005, buffer=10, grid=4)).to_dict()
    (tmp_path / "good.json").write_text(json.dumps(doc))
    assert_bad_input(
        ["paqman", "evaluate", "{tmp}/good.json", "--compare", "codel,codel", "--out", "ev"],
        ["--compare = codel,codel", "'codel' is given twice"],
        tmp_path,
    )
