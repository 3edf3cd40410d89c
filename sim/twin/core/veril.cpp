// SPDX-License-Identifier: BSD-2-Clause
// The twin's glue between LiteX's simulator core (sim.c) and the Verilated model, in place of LiteX's veril.cpp.

/*
 * LiteX's glue opens a VCD trace whether or not one is asked for, and flushes it (a mutex) after
 * every time step. The twin has no trace (its wires are captured as pcapng by gmii_capture, when
 * asked), so this glue has none.
 */

#include <stdint.h>

#include "Vsim.h"
#include "verilated.h"

static uint64_t main_time = 0;

extern "C" void litex_sim_init_cmdargs(int argc, char *argv[])
{
    Verilated::commandArgs(argc, argv);
}

extern "C" void litex_sim_eval(void *vsim, uint64_t time_ps)
{
    static_cast<Vsim *>(vsim)->eval();
    main_time = time_ps;
}

// called by the sim_init.cpp LiteX generates; the twin does not trace
extern "C" void litex_sim_init_tracer(void *, long, long) {}
extern "C" void litex_sim_tracer_dump() {}

extern "C" int litex_sim_got_finish()
{
    return Verilated::gotFinish();
}

double sc_time_stamp() { return main_time; }
