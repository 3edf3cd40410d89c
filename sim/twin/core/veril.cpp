// SPDX-License-Identifier: BSD-2-Clause
// The twin's glue between LiteX's simulator core (sim.c) and the Verilated model, in place of LiteX's veril.cpp.

/*
 * LiteX's glue opens a VCD trace whether or not one is asked for, and flushes it (a mutex) after
 * every time step. The twin has no trace (its wires are captured as pcapng by gmii_capture, when
 * asked), so this glue has none.
 *
 * Vsim::eval() also empties Verilator's deleter (of class objects) and its queue of messages from
 * other threads after every time step: a mutex taken and released each time, 3 to 4 % of the default
 * twin's time. The twin's model has no class objects and runs in one thread (Verilator's default
 * --threads 1), so after the first step, which also initialises the model, the glue calls the step's
 * evaluation itself.
 */

#include <stdint.h>

#include "Vsim.h"
#include "Vsim___024root.h"
#include "verilated.h"

// the evaluation Vsim::eval() calls (Vsim.cpp, generated)
void Vsim___024root___eval(Vsim___024root *vlSelf);

static uint64_t main_time = 0;

extern "C" void litex_sim_init_cmdargs(int argc, char *argv[])
{
    Verilated::commandArgs(argc, argv);
}

extern "C" void litex_sim_eval(void *vsim, uint64_t time_ps)
{
    static bool initialised = false;
    Vsim *model = static_cast<Vsim *>(vsim);
    if (initialised) {
        Vsim___024root___eval(model->rootp);
    } else {
        model->eval();
        initialised = true;
    }
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
