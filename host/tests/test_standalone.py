# SPDX-License-Identifier: BSD-2-Clause
"""The host package on its own: built as a wheel, installed into a fresh venv with no checkout on its
path, it reaches a running twin through its URL and the csr.json it is given."""

import os
import shutil
import site
import subprocess
import sys
from pathlib import Path

HOST = Path(__file__).resolve().parents[1]


def test_installed_package_reaches_a_running_twin(twin_link, tmp_path):
    url, csr = twin_link
    # built from a copy: setuptools writes its egg-info and build/ beside the sources
    source = tmp_path / "host"
    shutil.copytree(HOST, source, ignore=shutil.ignore_patterns("tests", "build", "*.egg-info", "__pycache__"))
    wheels = tmp_path / "wheels"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w",
                    str(wheels), str(source)], check=True, capture_output=True, timeout=300)
    # nothing of the checkout on the path (pip would find the package there and install nothing)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "FPGATEST_ROOT")}
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, capture_output=True, timeout=300, env=env)
    py = venv / "bin" / "python"
    subprocess.run([str(py), "-m", "pip", "install", "-q", "--no-index", "--no-deps",
                    *map(str, wheels.glob("fpgatest-*.whl"))], check=True, capture_output=True, timeout=300, env=env)
    # its dependencies (declared in host/pyproject.toml) from this venv's site-packages, offline; this
    # venv's own fpgatest is an editable install that a path added this way does not activate
    purelib = Path(subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                                  check=True, capture_output=True, text=True).stdout.strip())
    (purelib / "deps.pth").write_text("\n".join(site.getsitepackages()) + "\n")
    work = tmp_path / "elsewhere"
    work.mkdir()

    def fpgatest(*args):
        return subprocess.run([str(venv / "bin" / "fpgatest"), *args], cwd=work, env=env, capture_output=True,
                              text=True, timeout=120)

    where = subprocess.run([str(py), "-c", "import fpgatest; print(fpgatest.__file__)"], cwd=work, env=env,
                           capture_output=True, text=True)
    assert where.stdout.startswith(str(venv)), where.stderr
    check = subprocess.run([str(py), "-m", "pip", "check"], cwd=work, env=env, capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr

    run = fpgatest("info", "--url", url, "--csr", str(csr))
    assert run.returncode == 0, run.stderr
    assert f"target      {url}" in run.stdout and "(matches the gateware)" in run.stdout
    # no checkout: no default map, no twin to start; one line each
    for args, message in ((["info", "--url", url], "--csr: which register map?"),
                          (["info"], "--url twin: no fpgatest checkout to start the twin from")):
        run = fpgatest(*args)
        assert run.returncode == 2 and run.stderr.count("\n") == 1, run.stderr
        assert run.stderr.startswith(f"fpgatest: error: {message}"), run.stderr
