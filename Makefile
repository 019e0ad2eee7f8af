# Every target builds what it needs: a fresh clone needs Python 3.11 and gcc
# (gcc -m32 comes from Debian's gcc-multilib, installed below when root can).
PYTHON ?= python3.11
VENV   := .venv
BIN    := $(VENV)/bin
BUILD  := build/mpy
STAMP  := $(VENV)/.installed-stamp
# The code that runs on the controller (firmware/image/ holds the image's
# build inputs, not modules).
DEVICE_SRC := $(shell find engine_core firmware -name '*.py' -not -path '*/tests/*' -not -path 'firmware/image/*' -not -path 'firmware/fakes/*' 2>/dev/null)

# MicroPython from the pinned source: unpacked under build/ from the
# vendored archive (its sha256 checked), or a git checkout of v1.28.0
# given as MICROPY_DIR=... . mpy-cross, the twin and the unfrozen build all
# come from it, so bytecode and runtime always match (docs/deploy.md).
VENDOR_TGZ  ?= ../shared/vendor/micropython-1.28.0.tar.gz
MICROPY_DIR ?= build/micropython-1.28.0
IMAGE       := build/image
TWIN        := $(IMAGE)/micropython
UNFROZEN    := $(IMAGE)/unfrozen/micropython
MPY_CROSS   := $(MICROPY_DIR)/mpy-cross/build/mpy-cross
MPY         := $(BIN)/micropython
# The board's QEMU variant (make firmware-qemu, docs/deploy.md).
QEMU_IMAGE  := build/firmware-qemu/firmware.bin
# The unix port as the ESP32 has it: 32-bit objects (gcc -m32), none of
# the features whose sources the vendored archive leaves out.
UNIX_MAKE   := $(MAKE) -C $(MICROPY_DIR)/ports/unix VARIANT=standard CC="gcc -m32" LD="gcc -m32" \
               MICROPY_PY_FFI=0 MICROPY_PY_BTREE=0 MICROPY_PY_SSL=0 MICROPY_SSL_MBEDTLS=0

.PHONY: all venv broker browser fleet image tools mpy test test-cpython test-micropython typecheck run bench soak powercuts deploy vboard firmware firmware-qemu qemu test-qemu test-qemu-short test-kit flash clean

all: test

# requirements.lock pins every package, dependencies of dependencies too
# (refresh: `.venv/bin/pip freeze --exclude-editable > requirements.lock`).
$(STAMP): pyproject.toml requirements.lock
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet -c requirements.lock -e '.[test]'
	touch $@

venv: $(STAMP)

$(MICROPY_DIR)/py/mpconfig.h:
	@test -f $(VENDOR_TGZ) || { echo "no $(VENDOR_TGZ): give MICROPY_DIR=<a git checkout of MicroPython v1.28.0>"; exit 2; }
	cd $(dir $(VENDOR_TGZ)) && sha256sum -c --quiet $(notdir $(VENDOR_TGZ)).sha256
	mkdir -p $(dir $(MICROPY_DIR))
	tar xzf $(VENDOR_TGZ) -C $(dir $(MICROPY_DIR))
	touch $@

# gcc -m32 (Debian's gcc-multilib): installed when missing and root can,
# else the one command to run.
$(IMAGE)/.gcc-m32:
	@mkdir -p $(IMAGE)
	@echo 'int main(void){return 0;}' | gcc -m32 -x c - -o $(IMAGE)/m32-probe 2>/dev/null \
	 || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null \
	      && { echo "installing gcc-multilib (gcc -m32)"; apt-get update -qq && apt-get install -y -qq gcc-multilib >/dev/null; } \
	      && echo 'int main(void){return 0;}' | gcc -m32 -x c - -o $(IMAGE)/m32-probe; } \
	 || { echo "make image needs gcc -m32: run  sudo apt-get install gcc-multilib"; exit 2; }
	@rm -f $(IMAGE)/m32-probe
	@touch $@

$(MPY_CROSS): $(MICROPY_DIR)/py/mpconfig.h
	$(MAKE) -C $(MICROPY_DIR)/mpy-cross -j2 >/dev/null
	@touch $@

# The twin: the unix port, 32-bit, with firmware/image/manifest.py frozen in
# (what the virtual table runs). Rebuilt only when an input changes.
$(TWIN): $(MPY_CROSS) $(IMAGE)/.gcc-m32 $(DEVICE_SRC) $(wildcard firmware/image/*.py firmware/image/twin/*.py)
	$(UNIX_MAKE) -j2 BUILD=$(abspath $(IMAGE)/twin-build) PROG=micropython \
	    FROZEN_MANIFEST=$(abspath firmware/image/twin/manifest.py) >$(IMAGE)/twin-build.log 2>&1 \
	    || { tail -n 30 $(IMAGE)/twin-build.log; exit 1; }
	cp $(IMAGE)/twin-build/micropython $@.new && mv -f $@.new $@   # a running twin keeps its file
	@echo "twin: $@ ($$(size $@ | awk 'NR==2 {print $$1}') bytes of code and frozen firmware)"

# The same 32-bit build with none of the firmware frozen, only what it
# takes from micropython-lib (firmware/image/unfrozen/manifest.py): the
# rules and firmware tests, the .py sources and the .mpy files of a
# development deploy run on it, the firmware's code in the heap as on a
# stock board.
$(UNFROZEN): $(MPY_CROSS) $(IMAGE)/.gcc-m32 firmware/image/manifest.py firmware/image/unfrozen/manifest.py
	$(UNIX_MAKE) -j2 BUILD=$(abspath $(IMAGE)/unfrozen-build) PROG=micropython \
	    FROZEN_MANIFEST=$(abspath firmware/image/unfrozen/manifest.py) >$(IMAGE)/unfrozen-build.log 2>&1 \
	    || { tail -n 30 $(IMAGE)/unfrozen-build.log; exit 1; }
	mkdir -p $(dir $@) && cp $(IMAGE)/unfrozen-build/micropython $@.new && mv -f $@.new $@

image: $(TWIN)

# The venv's bin holds the project's MicroPython tools, built from the
# pinned source: `.venv/bin/micropython` (the unfrozen 32-bit build) and
# `.venv/bin/mpy-cross`.
tools: $(MPY) $(BIN)/mpy-cross
$(MPY): $(UNFROZEN) $(STAMP)
	ln -sf $(abspath $(UNFROZEN)) $@
$(BIN)/mpy-cross: $(MPY_CROSS) $(STAMP)
	ln -sf $(abspath $(MPY_CROSS)) $@

# Compile the device code with mpy-cross: a syntax or feature MicroPython
# lacks fails here, before anything runs. The engine and firmware tests
# and the firmware's stand-ins for the hardware (firmware/fakes/) are
# compiled too, so that MicroPython runs the same bytecode the board would;
# the firmware tests read the shipped config.json and tags.txt next to them.
# The firmware's modules take the fault codes compiled in, as the image
# does (firmware/image/inline_faults.py).
mpy: tools
	rm -rf $(BUILD)
	@for f in $(DEVICE_SRC) $$(find engine_core/tests firmware/tests firmware/fakes -name '*.py'); do \
		mkdir -p $(BUILD)/$$(dirname $$f); \
		case $$f in firmware/tests/*|firmware/fakes/*) src=$$f ;; \
		firmware/*) src=$(BUILD)/inlined.py; \
			$(BIN)/python firmware/image/inline_faults.py . $$f $$src || exit 1 ;; \
		*) src=$$f ;; esac; \
		$(BIN)/mpy-cross -s $$f -o $(BUILD)/$${f%.py}.mpy $$src || exit 1; \
	done
	rm -f $(BUILD)/inlined.py
	cp -r engine_core/tests/scenarios $(BUILD)/engine_core/tests/
	cp firmware/config.json firmware/tags.txt $(BUILD)/firmware/
	@echo "mpy-cross: $$(find $(BUILD) -name '*.mpy' | wc -l) modules in $(BUILD)"

# The telemetry's broker (docs/fleet.md): Debian's mosquitto, installed
# when missing and root can, else the one command to run. The tests that
# need it start their own (host_tools/fleet/broker.py).
broker: $(STAMP)
	@$(BIN)/python -m host_tools.fleet.broker --install

# The parlour page's browser test (hw_tests/test_parlour_page.py): Debian's
# chromium and chromium-driver (and fonts-wqy-microhei, for the screenshots
# in Chinese), installed when missing and root can, else
# the one command to run; selenium is given the driver's path (nothing is
# downloaded). Its screenshots go to artifacts/ (git-ignored).
browser: $(STAMP)
	@$(BIN)/python -m host_tools.fleet.browser --install

# On every core (pytest-xdist; JOBS=1 for one process): the tests spend
# most of their time in the twin's ping-pong with the virtual table, one
# core each at most. worksteal: the long ones (the 200-hand soak) do not
# leave a worker idle at the end.
JOBS ?= $(shell nproc)
test-cpython: tools image broker browser
	$(BIN)/python -m pytest -n $(JOBS) --dist worksteal

test-micropython: mpy
	cd $(BUILD) && ../../$(MPY) -m engine_core.tests.mp_runner engine_core/tests firmware/tests

# The device code against MicroPython's own stubs: micropython-esp32-stubs
# (machine, micropython, ...) and its micropython-stdlib-stubs as the
# typeshed, so `time.ticks_ms` is known and CPython-only calls are not.
# Settings: [tool.pyright] in pyproject.toml. Zero errors or it fails.
typecheck: $(STAMP)
	$(BIN)/basedpyright --project pyproject.toml --pythonpath $(BIN)/python --typeshedpath $$($(BIN)/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')

test: mpy typecheck test-cpython test-micropython

# The virtual table with the firmware under MicroPython, playing cycles in a
# live terminal view (Ctrl-C stops); ARGS go to it, e.g.
# make run ARGS="--seed 3 --fault lane_jam:1" or ARGS="--lang zh". The
# rules-core demo of the walls is `.venv/bin/python -m host_tools.view.wallview`.
ARGS ?=
run: tools image
	$(BIN)/python -m host_tools.view.tableview $(ARGS)

# A parlour (docs/fleet.md): the project's broker, TABLES virtual tables
# (each its own firmware on the twin, players, random faults and the
# technician), and the parlour page on http://127.0.0.1:8019/ (another
# port when taken; the URL is printed). Ctrl-C stops everything. SPEED:
# virtual seconds per wall second of each table's clock.
SPEED ?= 2
fleet: TABLES = 12
fleet: tools image broker
	$(BIN)/python -m host_tools.fleet --tables $(TABLES) --speed $(SPEED)

# Every performance figure against its target (docs/performance.md; a
# report: it exits 0 when a figure is over, 1 when a measurement failed);
# MicroPython runs the .mpy tree of `mpy`.
# The esp32 group boots the board's QEMU image, built first where the
# vendored kit is (docs/performance.md, The esp32 port in QEMU).
KIT_HERE := $(wildcard ../shared/vendor/esp-idf-v5.3.1-trimmed.tar.xz)
bench: mpy image broker $(if $(KIT_HERE),$(QEMU_IMAGE))
	$(BIN)/python -m host_tools.bench

# A board (docs/deploy.md): `make firmware` builds the board's image
# (MicroPython with the firmware frozen in, ESP-IDF needed), `make flash`
# writes it; `make deploy`, the development path, installs the firmware as
# .mpy files: compiled, with its integrity manifest, only what changed,
# config, tags and the table's key provisioned, the board restarted.
# KEY: the table's service key file on this PC (by default
# keys/table-<the board's unique id>.key); NEW_KEY=1 replaces a key the
# board holds that is not KEY's (without it the deploy stops and says so).
PORT ?=
FIRMWARE ?=
ERASE ?=
KEY ?=
NEW_KEY ?=
deploy: $(STAMP)
	@test -n "$(PORT)" || { echo "make deploy PORT=/dev/ttyACM0 [KEY=keys/<table>.key] [NEW_KEY=1]"; exit 2; }
	$(BIN)/python -m host_tools.image.deploy --port $(PORT) $(if $(KEY),--key $(KEY)) $(if $(NEW_KEY),--new-key)

# Hand after hand on virtual tables with faults injected and repaired
# (docs/reliability.md): TABLES independent tables at once (seeds SEED,
# SEED+1, ...), each checked in full, their figures summed. A soak hand is
# ~50 s of virtual time (brisk players); three tables keep both cores of a
# 2-core machine busy, each table being two processes that wait on each
# other at every tick. MAX_WALL=S: no new hand after S wall seconds (the
# checks still run; the verdict says how many hands were played).
HANDS ?= 10000
TABLES ?= 3
SEED ?= 1
FUZZ ?= 1000000
MAX_WALL ?=
soak: mpy image
	$(BIN)/python -m host_tools.qa.soak --hands $(HANDS) --tables $(TABLES) --seed $(SEED) --fuzz-frames $(FUZZ) $(if $(MAX_WALL),--max-wall $(MAX_WALL))

# The power cut at CUTS random instants of cycles and hands (WALL_SHARE of
# those in play at a wall-clock instant, wherever the firmware is), each
# reboot checked: nothing persisted corrupt, nothing moving before a
# command, power_lost and the counters coherent (docs/reliability.md).
CUTS ?= 1000
WALL_SHARE ?= 0.2
powercuts: mpy image
	$(BIN)/python -m host_tools.qa.powercuts --cuts $(CUTS) --wall-share $(WALL_SHARE)

# A virtual board to try deploy and the service tools on without a board
# (docs/deploy.md): its REPL for `make deploy`, then the table it runs.
vboard: $(STAMP)
	$(BIN)/python -m host_tools.sim.vboard $(if $(FAULT),--fault $(FAULT))

# The board's image into build/firmware/firmware.bin: ESP-IDF (v5.5.1, its
# export.sh run) and a MicroPython v1.28.0 checkout as MICROPY_DIR, or a
# line saying which is missing (host_tools/image/board_image.py).
# PRODUCTION=1: the production image (secure boot v2, flash encryption in
# release mode: docs/security.md) into build/firmware-production/, signed
# with SIGNING_KEY, a key file that must lie outside the project.
PRODUCTION ?=
SIGNING_KEY ?=
firmware: $(STAMP) $(MICROPY_DIR)/py/mpconfig.h
	@$(BIN)/python -m host_tools.image.board_image build --micropy-dir $(MICROPY_DIR) \
	    $(if $(PRODUCTION),--production) $(if $(SIGNING_KEY),--signing-key $(SIGNING_KEY))

# The board in QEMU (docs/hardware.md, The firmware in QEMU): the board's
# QEMU variant (the same freeze; the link on UART0, the sim HAL on UART1),
# built with the vendored ESP32-S3 kit (ESP_VENDOR, by default
# ../shared/vendor) into build/firmware-qemu/, only when a source changed.
# `make qemu` boots it on a virtual table and prints its link's pty;
# `make test-qemu` runs the hardware-in-the-loop suite on it,
# `make test-qemu-short` the few tests CI runs where the kit is (boot, status, a cycle, a hand).
QEMU_INPUTS := $(DEVICE_SRC) $(wildcard firmware/image/*.py firmware/image/FUZHOU_TABLE_S3/* firmware/image/FUZHOU_TABLE_S3/*/*)
$(QEMU_IMAGE): $(STAMP) $(MPY_CROSS) $(QEMU_INPUTS)
	@$(BIN)/python -m host_tools.image.board_image build --qemu --micropy-dir $(MICROPY_DIR)
	@touch $@
firmware-qemu: $(QEMU_IMAGE)
qemu: $(QEMU_IMAGE)
	$(BIN)/python -m host_tools.sim.qemu --seed $(SEED)
# On every core, as test-cpython: a QEMU and its virtual table keep about
# one host core busy (docs/hardware.md, How long the suite takes in QEMU).
test-qemu: $(QEMU_IMAGE) tools
	$(BIN)/python -m pytest hw_tests --qemu -n $(JOBS) --dist worksteal
QEMU_SHORT := hw_tests/test_status.py hw_tests/test_cycle.py::test_a_cycle_over_the_link \
              "hw_tests/test_hand.py::test_the_controller_follows_the_hand_as_the_replay_does[0]"
test-qemu-short: $(QEMU_IMAGE) tools
	$(BIN)/python -m pytest $(QEMU_SHORT) --qemu
# make firmware and make firmware PRODUCTION=1 (a throwaway signing key) with
# the kit, as a table maker types them, checked, and the esp32 HAL run in
# QEMU through mpremote (host_tools/kit_tests/).
test-kit: $(QEMU_IMAGE)
	$(BIN)/python -m pytest host_tools/kit_tests

# The image at 0x0 (FIRMWARE=<.bin>: another one). The filesystem after the
# app keeps config, tags, key and counters; ERASE=1 erases the whole flash
# and writes a filesystem of CONFIG, TAGS (firmware/'s by default) and the
# table's key from KEY (required; made there if missing) with the image. KEY
# goes along when given without ERASE too, so that the tool can say it is
# unused. PRODUCTION=1: the production image and its partition table, on a
# new board, so with ERASE=1 only (docs/security.md, Provisioning).
CONFIG ?=
TAGS ?=
flash: $(STAMP)
	@$(BIN)/python -m host_tools.image.board_image flash $(if $(PORT),--port $(PORT)) \
	    $(if $(FIRMWARE),--bin $(FIRMWARE)) $(if $(ERASE),--erase) \
	    $(if $(KEY),--key $(KEY)) $(if $(PRODUCTION),--production) \
	    $(if $(CONFIG),--config $(CONFIG)) $(if $(TAGS),--tags $(TAGS))

clean:
	rm -rf $(VENV) build .pytest_cache .hypothesis
