"""Starts a real `cairn serve` on a free loopback port with a fresh data directory."""

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

ADMIN = "py-test-admin-key-0123456789abcdef"
ROOT = Path(__file__).resolve().parents[3]
SPEC = ROOT / "crates" / "cairn-server" / "openapi.json"


def cairn_bin() -> str:
    explicit = os.environ.get("CAIRN_BIN")
    if explicit:
        return explicit
    target = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
    path = target / "release" / "cairn"
    if not path.exists():
        pytest.skip(f"SKIPPED: no cairn binary at {path}: run `cargo build --release` or set CAIRN_BIN")
    return str(path)


@pytest.fixture(scope="session")
def server():
    binary = cairn_bin()
    data = tempfile.mkdtemp(prefix="cairn-py-")
    env = dict(os.environ, CAIRN_ADMIN_KEY=ADMIN)
    proc = subprocess.Popen(
        [binary, "--dir", data, "serve", "--bind", "127.0.0.1:0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        text=True,
    )
    line = proc.stdout.readline().strip()
    prefix = "cairn serve: listening on "
    if not line.startswith(prefix):
        err = proc.stderr.read()
        proc.wait()
        shutil.rmtree(data, ignore_errors=True)
        if "embedding model" in err:
            pytest.skip(f"SKIPPED: embedding model not installed: {err.strip()}")
        raise RuntimeError(f"cairn serve failed: {err}")
    url = line[len(prefix):]

    def make_key(*spaces: str, read_only: bool = False) -> str:
        args = [binary, "--dir", data, "keys", "create"]
        for s in spaces:
            args += ["--space", s]
        if read_only:
            args.append("--read-only")
        out = subprocess.run(args, check=True, capture_output=True, text=True)
        return out.stdout.strip()

    yield {"url": url, "admin": ADMIN, "make_key": make_key}
    proc.terminate()
    try:
        proc.wait(timeout=30)
    finally:
        shutil.rmtree(data, ignore_errors=True)


@pytest.fixture()
def admin(server):
    from cairn_client import Cairn

    with Cairn(server["url"], api_key=server["admin"]) as c:
        yield c


@pytest.fixture()
def idempotent_server(server):
    """The server, where it implements idempotency keys (its spec documents the
    `Idempotency-Key` header); the tests of replays skip on an older server."""
    if "Idempotency-Key" not in SPEC.read_text():
        pytest.skip("SKIPPED: this server's openapi.json does not document Idempotency-Key yet")
    return server


@pytest.fixture()
def anyio_backend():
    return "asyncio"
