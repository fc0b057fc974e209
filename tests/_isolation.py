"""Run a Python script where the file system says no: without root's permission override, on a
read-only mount, or on a small full disk (issue 31 items 2 and 3).

Tests often run as root, and root reads and writes through ``chmod``: as root the script runs
under ``setpriv`` without ``CAP_DAC_OVERRIDE`` (so file permissions apply to it), and mounts
(a read-only bind mount, a tiny tmpfs) are made in a private mount namespace (``unshare -m``)
that ends with the script. Where that is impossible the test is skipped, saying why.
"""
from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def shared_dir() -> Path:
    """A fresh directory under /tmp that a process without root's override may enter (pytest's are 0700)."""
    path = Path(tempfile.mkdtemp(prefix="certa-store-"))
    path.chmod(0o755)
    return path


def remove(path: Path) -> None:
    for p in [path, *path.rglob("*")]:
        if p.is_dir():
            p.chmod(0o755)
        elif not p.is_symlink():
            p.chmod(0o644)
    shutil.rmtree(path, ignore_errors=True)


def _unprivileged() -> list[str]:
    if os.geteuid() != 0:
        return []
    if shutil.which("setpriv") is None:
        pytest.skip("running as root without setpriv: file permissions cannot be made to apply")
    return ["setpriv", "--bounding-set=-dac_override,-dac_read_search", "--"]


def run_script(code: str, *args: str, unprivileged: bool = False, read_only_mount: str | None = None,
               tmpfs: tuple[str, str] | None = None, timeout: float = 600) -> subprocess.CompletedProcess:
    """Run ``python -c code args`` (certa from this checkout), as asked; skip if the system cannot."""
    cmd = [sys.executable, "-c", code, *args]
    if unprivileged:
        cmd = _unprivileged() + cmd
    mounts = []
    if read_only_mount:
        d = shlex.quote(read_only_mount)
        mounts.append(f"mount --bind {d} {d} && mount -o remount,bind,ro {d}")
    if tmpfs:
        d, size = tmpfs
        mounts.append(f"mount -t tmpfs -o size={size} tmpfs {shlex.quote(d)}")
    if mounts:
        if os.geteuid() != 0 or shutil.which("unshare") is None:
            pytest.skip("a private mount (read-only or small) needs root and unshare")
        # (the mount is private to the namespace: mounting over /tmp there hides nothing from anyone else)
        probe = subprocess.run(["unshare", "-m", "mount", "-t", "tmpfs", "tmpfs", "/tmp"], check=False,
                               capture_output=True)
        if probe.returncode != 0:
            pytest.skip(f"mounts are not allowed here: {probe.stderr.decode()[-200:]}")
        cmd = ["unshare", "-m", "sh", "-c", " && ".join(mounts) + " && exec " + shlex.join(cmd)]
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + str(ROOT / "tests"), PYTHONWARNINGS="default")
    return subprocess.run(cmd, check=False, capture_output=True, text=True, timeout=timeout, env=env)
