"""docs/tutorial.ipynb runs top to bottom in a Jupyter kernel (nbclient), on the tiny
reference, from a folder outside the checkout; and docs/api.md names only functions that
exist."""

import re
from pathlib import Path

import nbformat
from nbclient import NotebookClient

REPO = Path(__file__).resolve().parents[1]
NOTEBOOK = REPO / "docs" / "tutorial.ipynb"


def test_the_tutorial_notebook_runs_and_shows_its_results(tmp_path):
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    assert all(not c.get("outputs") for c in notebook.cells if c.cell_type == "code")
    NotebookClient(notebook, timeout=600, kernel_name="python3",
                   resources={"metadata": {"path": str(tmp_path)}}).execute()  # fmt: skip
    text = "\n".join(o.get("text", "") for c in notebook.cells if c.cell_type == "code"
                     for o in c.outputs)  # fmt: skip
    assert "mean top-k on the test block:" in text and "split:" in text
    assert "sites over" in text and "'alleles': 3" in text
    images = [o for c in notebook.cells if c.cell_type == "code" for o in c.outputs
              if "image/png" in o.get("data", {})]  # fmt: skip
    assert images, "no logo was displayed"


def test_every_function_the_api_page_names_exists():
    import importlib

    names = re.findall(r"`(sparling_genomics(?:\.\w+)+)`", (REPO / "docs" / "api.md").read_text())
    assert len(names) >= 8
    for dotted in names:
        module, _, attr = dotted.rpartition(".")
        try:
            assert hasattr(importlib.import_module(module), attr), dotted
        except ModuleNotFoundError:
            importlib.import_module(dotted)  # a module itself
