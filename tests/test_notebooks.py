"""The example notebooks (``examples/*.ipynb``) hold no outputs and run headless without error.

Each notebook is executed from its first cell to its last with nbclient in a fresh kernel
(about a minute for the three on two cores); its own ``assert`` cells check what it shows, and
this test checks that every notebook renders at least one HTML table (a result object's
``_repr_html_`` or a DataFrame).
"""

from __future__ import annotations

from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
NOTEBOOKS = sorted(EXAMPLES.glob("*.ipynb"))

nbformat = pytest.importorskip("nbformat", reason="needs the dev extra: pip install -e .[dev]")


def test_three_notebooks_exist():
    assert [p.name for p in NOTEBOOKS] == [
        "aqm-comparison.ipynb",
        "pi-design.ipynb",
        "sweep-report.ipynb",
    ]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_no_outputs_stored(path):
    nb = nbformat.read(path, as_version=4)
    for i, cell in enumerate(nb.cells):
        if cell.cell_type == "code":
            assert cell.outputs == [], f"{path.name}: cell {i} has stored outputs"
            assert cell.execution_count is None, f"{path.name}: cell {i} has an execution count"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_runs(path, tmp_path):
    nbclient = pytest.importorskip("nbclient", reason="needs the dev extra: pip install -e .[dev]")
    pytest.importorskip("ipykernel", reason="needs the dev extra: pip install -e .[dev]")
    nb = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(
        nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    )
    client.execute()
    html = [
        out["data"]["text/html"]
        for cell in nb.cells
        if cell.cell_type == "code"
        for out in cell.outputs
        if "data" in out and "text/html" in out["data"]
    ]
    assert any("<table" in h for h in html), f"{path.name}: no HTML table rendered"
    errors = [
        o for c in nb.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"
    ]
    assert not errors
