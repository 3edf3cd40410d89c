# SPDX-License-Identifier: BSD-2-Clause
"""make bench/board: what it reads of a seed's nextpnr log (an excerpt of a real one, e754aa46 seed 6)."""

from bench.board import critical_paths

# the estimate after placement reports the same clock first; the routed report comes last and counts
LOG = """\
Info: Critical path report for clock '$glbnet$basesoc_crg_clkout0' (posedge -> posedge):
Info:       type curr  total name
Info:   clk-to-q  0.52  0.52 Source basesoc_tester_until_TRELLIS_FF_Q_13.Q
Info:    routing  9.00  9.52 Net basesoc_tester_until[13] (45,23) -> (3,26)
Info:                          Sink basesoc_tester_clear_next_TRELLIS_FF_Q.DI
Info: 0.52 ns logic, 9.00 ns routing

Info: Max frequency for clock          '$glbnet$basesoc_crg_clkout0': 90.28 MHz (FAIL at 125.00 MHz)
Info: Routing..
Info: Critical path report for clock '$glbnet$basesoc_crg_clkout0' (posedge -> posedge):
Info:       type curr  total name
Info:   clk-to-q  0.52  0.52 Source basesoc_tester_until_TRELLIS_FF_Q_13.Q
Info:    routing  2.03  2.56 Net basesoc_tester_until[13] (45,23) -> (36,26)
Info:                          Sink basesoc_tester_clear_next_TRELLIS_FF_Q_DI_LUT4_Z_C_CCU2C_COUT_S0_LUT4_Z.D
Info:                          Defined in:
Info:                               colorlight_5a_75b.v:566.15-566.35
Info:      logic  0.24  2.79 Source basesoc_tester_clear_next_TRELLIS_FF_Q_DI_LUT4_Z_C_CCU2C_COUT_S0_LUT4_Z.F
Info:    routing  0.87  6.32 Net basesoc_tester_clear_next_TRELLIS_FF_Q_DI_LUT4_Z_C_CCU2C_COUT_S0[2] (34,30) -> (34,30)
Info:                          Sink basesoc_tester_clear_next_TRELLIS_FF_Q_DI_LUT4_Z.D
Info:      logic  0.24  7.42 Source basesoc_tester_clear_next_TRELLIS_FF_Q_DI_LUT4_Z.F
Info:    routing  0.13  7.55 Net basesoc_tester_clear_next_TRELLIS_FF_Q_DI (34,30) -> (34,30)
Info:                          Sink basesoc_tester_clear_next_TRELLIS_FF_Q.DI
Info:      setup  0.00  7.55 Source basesoc_tester_clear_next_TRELLIS_FF_Q.DI
Info: 1.71 ns logic, 5.84 ns routing

Info: Critical path report for cross-domain path 'posedge $glbnet$basesoc_crg_clkout0' -> 'posedge $glbnet$basesoc_crg_clkout1':
Info:       type curr  total name
Info:   clk-to-q  0.52  0.52 Source basesoc_tester_edge_time_TRELLIS_FF_Q_10.Q
Info:    routing  4.66  5.18 Net basesoc_tester_edge_time[10] (37,29) -> (37,35)
Info:                          Sink fpgatest_port.counters_inst.snap_mem.0.1_DOA6_LUT4_C_Z.B
Info: 0.52 ns logic, 4.66 ns routing
"""


def test_each_clocks_routed_critical_path():
    assert critical_paths(LOG) == {"$glbnet$basesoc_crg_clkout0": {
        "from": "basesoc_tester_until_TRELLIS_FF_Q_13.Q", "to": "basesoc_tester_clear_next_TRELLIS_FF_Q.DI",
        "logic_ns": 1.71, "routing_ns": 5.84,
        "longest_hop": {"net": "basesoc_tester_until[13]", "ns": 2.03, "from": "(45,23)", "to": "(36,26)"}}}
