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
        POWER_UP[url] = _settings(url, csr)
        yield url, csr
    log.close()


POWER_UP: dict[str, dict[str, int]] = {}     # per twin: its settings before any test


def _settings(url, csr):
    """Every register a test may change on the twin and not put back: the switch model's settings, the
    calibration, the capture taps, the interval recorder (a recorder left running is stopped)."""
    from fpgatest.driver import Device

    with Device(url, csr) as dev:
        names = [n for n in dev.map.registers if (n.startswith("dut_") and "_cfg_" in n) or
                 n in ("capture_enable", "tester_cal_internal", "tester_interval_period", "tester_interval_hist_until")
                 or n.endswith("_cal_cable")]
        return dev.read_many(names)


@pytest.fixture(autouse=True)
def _twin_as_at_power_up(request):
    """After each test that drove the twin, its settings as at power-up: the twin is shared by the
    session, and a second hop or cross traffic left on would change every later measurement."""
    yield
    if "twin_link" in request.fixturenames:
        from fpgatest.driver import Device

        url, csr = request.getfixturevalue("twin_link")
        with Device(url, csr) as dev:
            now = dev.read_many(list(POWER_UP[url]))
            for name, value in POWER_UP[url].items():
                if now[name] != value:
                    dev.write(name, value)
