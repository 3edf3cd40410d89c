# SPDX-License-Identifier: BSD-2-Clause
"""The switch model's path as the twin tests set it before they measure through it (the fixtures in
sim/twin/conftest.py, the host tests' own set-ups): a plain gigabit store-and-forward switch, the
model's power-up defaults (litex_soc/dut_model.py MODEL_DEFAULTS) in the host's units. Named once, so
a test that computes an expected latency from these settings reads them from where they are set."""

PATH_NS = 1000          # processing, from the frame's last byte in
PER_BYTE_NS = 8         # store-and-forward: one byte time at 1 Gb/s per byte of the frame
RATE_MBPS = 1000        # egress rate

KNOWN_PATH = dict(enable=True, latency_ns=PATH_NS, per_byte_ns=PER_BYTE_NS, rate_mbps=RATE_MBPS,
                  buffer_bytes=128 * 1024, max_frame=9216, cable_in_ns=0, cable_out_ns=0, cut_through=False,
                  dither=False, cross_mbps=0)


def store_and_forward_ns(size: int) -> float:
    """One frame of `size` bytes through an empty known path, in ns, before the tester's tick rounds it."""
    return PATH_NS + PER_BYTE_NS * size
