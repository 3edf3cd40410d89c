# SPDX-License-Identifier: BSD-2-Clause
"""The twin's tests drive a Tester over the twin's real transport, from a known state."""

import pytest

from common.switch_state import KNOWN_PATH
from fpgatest.driver import Device
from fpgatest.tester import Tester


def _known_state(link):
    """A Tester on the twin at link, from a known state: default switch on both paths (ab2 a wire), no
    calibration."""
    url, csr = link
    with Device(url, csr) as dev:
        t = Tester(dev)
        for path in t.dut_paths():
            t.dut_set(path, **{**KNOWN_PATH, "enable": path != "ab2"})
        t.set_calibration(0, [0, 0])
        yield t


@pytest.fixture()
def tester(twin_link):
    yield from _known_state(twin_link)


@pytest.fixture()
def drift_tester(drift_twin_link):
    """The same on the full twin whose switch model runs on clocks of its own (boards.twin.DRIFT_PPM)."""
    yield from _known_state(drift_twin_link)
