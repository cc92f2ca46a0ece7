"""The tables of the emulator's one-change experiments are what their scripts make of the
committed runs.

``validation/emu/RESULTS.md`` states its counts from Markdown tables that scripts print from the
stored runs (``grid-seed*.jsonl``, ``seeds.jsonl``, ``window.jsonl`` ...). A table edited by hand,
or a script changed without its table made again, would leave the report saying something the
data does not. These tests run each script on the committed runs (no emulation, seconds) and
check that its committed table holds exactly what it prints, and that the accounting of the
misses counts what the grid's summary counts.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

EMU = Path(__file__).resolve().parent.parent / "validation" / "emu"


def _run(*args: str) -> str:
    out = subprocess.run(
        [sys.executable, *args], cwd=EMU, capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


@pytest.mark.parametrize(
    ("md", "args"),
    [
        ("retx_counts.md", ["retx_counts.py"]),
        ("explained.md", ["explained.py"]),
        ("seeds.md", ["seeds.py", "--summarise"]),
        ("window.md", ["window.py", "--summarise"]),
    ],
)
def test_committed_table_is_the_scripts_output(md: str, args: list[str]):
    pytest.importorskip("scipy", reason="the tables' tests use scipy.stats")
    printed = _run(*args)
    assert printed, f"{args[0]} printed nothing"
    assert printed in (EMU / md).read_text(), f"{md} is not what {' '.join(args)} prints now"


def test_accounting_covers_every_row_the_grid_summary_misses():
    pytest.importorskip("scipy", reason="the accounting uses scipy.stats")
    summary = (EMU / "grid-summary.md").read_text()
    ok, total = map(int, re.search(r"rows within every bar: (\d+) of (\d+)", summary).groups())
    table = _run("explained.py")
    rows = [ln for ln in table.splitlines() if ln.startswith("| ") and not ln.startswith("| row")]
    assert len(rows) == total - ok
    counted = re.search(r"Rows missing a bar on three seeds: (\d+); every missed bar accounted "
                        r"for: (\d+); open: (\d+)\.", table)  # fmt: skip
    missing, done, still = map(int, counted.groups())
    assert missing == total - ok and done + still == missing
    # a row is open exactly when its last column names a bar
    assert still == sum(not r.rstrip(" |").endswith("none") for r in rows)
    # and the list of open rows is that of --open
    opened = _run("explained.py", "--open")
    assert len(opened.split(",")) == still if still else opened == ""
