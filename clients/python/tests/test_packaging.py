"""The package builds as a wheel holding the client, its types marker and the adapters."""

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import cairn_client

HERE = Path(__file__).resolve().parents[1]


def test_a_wheel_builds_with_every_module(tmp_path):
    pytest.importorskip("setuptools", reason="SKIPPED: setuptools is needed to build the wheel")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation",
                    "-w", str(tmp_path), str(HERE)], check=True, capture_output=True, text=True)
    [wheel] = tmp_path.glob("cairn_client-*.whl")
    assert wheel.name.startswith(f"cairn_client-{cairn_client.__version__}-")
    names = set(zipfile.ZipFile(wheel).namelist())
    for module in ("__init__", "client", "_api", "_core", "types", "errors", "langgraph", "langchain", "llama_index"):
        assert f"cairn_client/{module}.py" in names
    assert "cairn_client/py.typed" in names
    meta = next(n for n in names if n.endswith("METADATA"))
    text = zipfile.ZipFile(wheel).read(meta).decode()
    assert "Requires-Dist: httpx" in text and "Provides-Extra: langgraph" in text
