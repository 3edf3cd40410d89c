# SPDX-License-Identifier: BSD-2-Clause
"""Shared fixtures: a running digital twin for tests that drive it over its real transport (TCP + UARTBone)."""

import contextlib
import sys
from pathlib import Path

import pytest

# the reference models and frame format (sim/models, sim/common) for host tests too, whatever runs first
sys.path.insert(0, str(Path(__file__).resolve().parent / "sim"))

from boards import twin  # noqa: E402


class _SessionTwin:
    """The twins the session's tests share, one running at a time: started by the first test that needs
    it, stopped when a test needs the other variant and after the last test (at the end of the twin's
    work unit, below): a twin left running takes a core."""

    def __init__(self):
        self.stack = None
        self.variant = None
        self.link = None

    def get(self, variant: str, log_dir: Path):
        """variant: "board", "full", or "drift" (the full twin, its model's clocks twin.DRIFT_PPM off)."""
        if self.variant != variant:
            self.stop()
            self.stack = contextlib.ExitStack()
            log = self.stack.enter_context(open(log_dir / f"twin-{variant}.log", "w"))
            self.link = self.stack.enter_context(
                twin.running(log=log, variant="full", dut_ppm=twin.DRIFT_PPM) if variant == "drift"
                else twin.running(log=log, variant=variant))
            self.variant = variant
            POWER_UP[self.link[0]] = _settings(*self.link)
        return self.link

    def stop(self):
        if self.stack:
            self.stack, stack, self.variant, self.link = None, self.stack, None, None
            stack.close()


SESSION_TWIN = _SessionTwin()
TWIN_FIXTURES = {"twin_link", "board_twin_link", "drift_twin_link"}


@pytest.fixture(scope="session")
def _twin_logs(tmp_path_factory):
    yield tmp_path_factory.mktemp("twin")
    SESSION_TWIN.stop()


@pytest.fixture()
def twin_link(_twin_logs):
    """(url, csr.json) of the full twin (boards.twin --full: both directions on both ports, a reflector
    in each), for the tests of what the twin and the host can do."""
    return SESSION_TWIN.get("full", _twin_logs)


@pytest.fixture()
def drift_twin_link(_twin_logs):
    """(url, csr.json) of the full twin whose switch model runs on clocks of its own (twin.DRIFT_PPM), so
    each port receives in a clock of its own frequency, as from a real device."""
    return SESSION_TWIN.get("drift", _twin_logs)


@pytest.fixture()
def board_twin_link(_twin_logs):
    """(url, csr.json) of the default twin: the 5A-75B's build with the interval recorder (port 0
    generating, port 1 receiving), what `fpgatest --url twin` and `make sweep` run."""
    return SESSION_TWIN.get("board", _twin_logs)


@pytest.fixture(scope="module")
def no_session_twin():
    """For a module whose tests start twins of their own (twin.running): the session's twin stopped
    first, as every twin left running takes a core from the builds and twins the module starts (the
    next test that asks for it starts it again, in a second or two)."""
    SESSION_TWIN.stop()


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


# the histogram's configuration words, written back after every test: write-only (no read tells
# what a test left), and bins left over the frames keep stat_hist_busy high while a port bins, so a
# snapshot after them takes more round trips (docs/architecture.md)
HIST_WORDS = ("cfg_hist_base", "cfg_hist_shift", "cfg_hist_log")


@pytest.fixture(autouse=True)
def _twin_as_at_power_up(request):
    """After each test that drove the twin, its settings as at power-up: the twin is shared by the
    session, and a second hop or cross traffic left on would change every later measurement."""
    yield
    if TWIN_FIXTURES & set(request.fixturenames) and SESSION_TWIN.link:
        from fpgatest.driver import Device
        from litex_soc.tester import CFG_DEFAULTS

        url, csr = SESSION_TWIN.link        # the one running is the one the test drove
        with Device(url, csr) as dev:
            now = dev.read_many(list(POWER_UP[url]))
            for name, value in POWER_UP[url].items():
                if now[name] != value:
                    dev.write(name, value)
            for port in range(dev.map.n_ports()):
                for word in HIST_WORDS:
                    dev.write(f"port{port}_{word}", CFG_DEFAULTS.get(word, 0))


# `make test` runs two pytest-xdist workers (pytest.ini: -n 2). A free-running twin takes a core, so
# every test that starts one (sim/twin, host/tests) is in one work unit: one worker, one twin at a
# time. Every other file is a unit of its own (its scenarios share one Verilator build), but for the
# board simulation, whose tests are a build each. The bitstream goes first and the twin's unit
# second, so that the two longest run side by side from the start.
TWIN_UNIT = ("sim/twin/", "host/tests/")
UNIT_PER_TEST = ("sim/board/",)


def work_unit(nodeid: str) -> str:
    path = nodeid.split("::")[0]
    if path.startswith(TWIN_UNIT):
        return "twin"
    return nodeid if path.startswith(UNIT_PER_TEST) else path


@pytest.hookimpl(tryfirst=True)
def pytest_xdist_make_scheduler(config, log):
    from xdist.scheduler import LoadScopeScheduling

    class ByWorkUnit(LoadScopeScheduling):
        """xdist's scope scheduling, a scope being a work unit (xdist's own loadgroup marks do not
        reach its scheduler under pytest 9.2, whose node ids no longer take xdist's suffix)."""

        def _split_scope(self, nodeid: str) -> str:
            return work_unit(nodeid)

    return ByWorkUnit(config, log)


def pytest_collection_modifyitems(config, items):
    strays = [item.nodeid for item in items if TWIN_FIXTURES & set(item.fixturenames)
              and work_unit(item.nodeid) != "twin"]
    if strays:
        raise pytest.UsageError(f"{strays[0]} uses the session's twin outside its work unit (conftest.TWIN_UNIT)")
    bitstream_units = {work_unit(item.nodeid) for item in items if item.get_closest_marker("bitstream")}

    def order(item):
        unit = work_unit(item.nodeid)
        return (0 if unit in bitstream_units else 1 if unit == "twin" else 2,
                not item.get_closest_marker("bitstream"))

    items.sort(key=order)    # stable: a unit's tests keep their order; the scheduler keeps the units'


@pytest.hookimpl(trylast=True)      # after the test's own fixtures are torn down
def pytest_runtest_teardown(item, nextitem):
    if work_unit(item.nodeid) == "twin" and (nextitem is None or work_unit(nextitem.nodeid) != "twin"):
        SESSION_TWIN.stop()         # the last test that may use it on this worker
