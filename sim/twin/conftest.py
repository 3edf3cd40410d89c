# SPDX-License-Identifier: BSD-2-Clause
"""The twin's tests drive a Tester over the twin's real transport, from a known state."""

import pytest

from fpgatest.driver import Device
from fpgatest.tester import Tester


@pytest.fixture()
def tester(twin_link):
    url, csr = twin_link
    with Device(url, csr) as dev:
        t = Tester(dev)
        # a known state: default switch on both paths, no calibration, counters clear
        for path in t.dut_paths():
            t.dut_set(path, enable=path != "ab2", latency_ns=1000, per_byte_ns=8, rate_mbps=1000,
                      buffer_bytes=128 * 1024, max_frame=9216, cable_in_ns=0, cable_out_ns=0, cut_through=False,
                      dither=False, cross_mbps=0)
        t.set_calibration(0, [0, 0])
        yield t
