# SPDX-License-Identifier: BSD-2-Clause
"""Shared fixtures: a running digital twin for tests that drive it over its real transport (TCP + UARTBone)."""

import sys
from pathlib import Path

import pytest

# the reference models and frame format (sim/models, sim/common) for host tests too, whatever runs first
sys.path.insert(0, str(Path(__file__).resolve().parent / "sim"))

from boards import twin  # noqa: E402


@pytest.fixture(scope="session")
def twin_link(tmp_path_factory):
    log = open(tmp_path_factory.mktemp("twin") / "twin.log", "w")
    with twin.running(log=log) as (url, csr):
        yield url, csr
    log.close()
