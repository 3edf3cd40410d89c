# SPDX-License-Identifier: BSD-2-Clause
"""Build a Verilog toplevel with Verilator and run cocotb scenarios on it, from pytest."""

import os
import re
from pathlib import Path

from cocotb_tools.runner import get_runner

from common.harness import ROOT, rtl_includes, rtl_sources, write_harness

SIM_BUILD = ROOT / "build" / "sim"


def worker_suffix() -> str:
    """Under pytest-xdist each worker builds and runs in its own directories ("-gw0", ...): two
    workers never rebuild a model the other is running or write the same results.xml."""
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    return f"-{worker}" if worker else ""


def run(
    test_module: str,
    toplevel: str,
    build_name: str,
    testcase: str | None = None,
    parameters: dict | None = None,
    extra_env: dict | None = None,
    test_dir: Path | None = None,
) -> None:
    """Build `toplevel` (tb_port = the generated harness, else a module in rtl/) and run scenarios."""
    build_dir = SIM_BUILD / (build_name + worker_suffix())
    sources = list(rtl_sources())
    if toplevel == "tb_port":
        sources.append(write_harness(build_dir))
    run_sources(test_module, toplevel, build_dir, sources, testcase=testcase, parameters=parameters,
                extra_env=extra_env, test_dir=test_dir, build_args=["-Werror-PINMISSING"],
                includes=rtl_includes())


def run_sources(
    test_module: str,
    toplevel: str,
    build_dir: Path,
    sources: list,
    testcase: str | None = None,
    parameters: dict | None = None,
    extra_env: dict | None = None,
    test_dir: Path | None = None,
    build_args: list[str] = (),
    includes: list = (),
) -> None:
    """Build `toplevel` from `sources` (and the include directories `includes`) with Verilator and run
    the cocotb scenarios of `test_module`."""
    waves = os.environ.get("WAVES") == "1"
    runner = get_runner("verilator")
    runner.build(
        sources=sources,
        includes=list(includes),
        hdl_toplevel=toplevel,
        build_dir=build_dir,
        parameters=parameters or {},
        build_args=["-Wno-fatal", "-Wno-WIDTHEXPAND", "-Wno-WIDTHTRUNC", "-O3", *build_args]
        + (["--trace-fst", "--trace-structs"] if waves else []),
        timescale=("1ns", "1ps"),
        waves=waves,
    )
    results = runner.test(
        test_module=test_module,
        hdl_toplevel=toplevel,
        test_filter=None if testcase is None else rf"\.{re.escape(testcase)}(/.*)?$",
        build_dir=build_dir,
        test_dir=test_dir or build_dir,
        extra_env={"PYTHONPATH": os.environ.get("PYTHONPATH", ""), **(extra_env or {})},
        waves=waves,
    )
    _check_results(results)


def _check_results(results_xml) -> None:
    # runner.test raises on failure in cocotb 2.x via get_results; keep an explicit check
    from cocotb_tools.runner import get_results

    num_tests, num_failed = get_results(Path(results_xml))
    assert num_tests > 0, "no cocotb scenario ran"
    assert num_failed == 0, f"{num_failed} of {num_tests} cocotb scenarios failed"
