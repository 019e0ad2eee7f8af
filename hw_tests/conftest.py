"""Hardware-in-the-loop tests over the link (docs/protocol.md).

Targets:

    pytest hw_tests                              the firmware under MicroPython on
                                                 the virtual table (default)
    pytest hw_tests --port=/dev/ttyACM0          a real controller; the board plays
                                                 the real table: tests that need the
                                                 virtual table skip
    pytest hw_tests --port=DEV --bus=DEV2        a bench: a real controller whose
                                                 hardware bus is the PC's port DEV2,
                                                 where a VirtualTable plays the table
    pytest hw_tests --qemu                       the board's image on the esp32 port
                                                 in QEMU (make qemu) on the virtual
                                                 table; QEMU_SKIPS names what skips

(`--port=DEV` with "=": without a test path, pytest would take a separate DEV
for one before it knows the option.)

Fixtures: `target` (one per test, fresh; `@pytest.mark.table(seed=...,
faults=[...], heap=..., config_path=..., firmware_config_path=..., setup=fn)`
says how to build it) and `make_target(**same)` for tests that need several.
Markers: `needs_table` (the virtual table: fault injection, physical
state), `needs_sim` (the launcher: a config file or heap size for the
firmware, a restart after a power cut).
"""

import faulthandler
import sys

import pytest

from hw_tests.harness import BenchTarget, BoardTarget, QemuTarget, SimTarget

TEST_WALL_S = 120          # last resort: a test stuck longer dumps its stacks and ends the run
QEMU_TEST_WALL_S = 1200    # the same in QEMU, where a whole hand takes minutes


# What `--qemu` cannot run, and why (docs/hardware.md, The firmware in
# QEMU): node id prefixes, each with its reason.
_NO_FLOW = ("sends the link a burst of about 1,000 bytes in one write: QEMU's console is "
            "a UART with no flow control, whose 260-byte stdin ring drops the rest (a "
            "board's USB holds the host back; docs/hardware.md, The console has no flow "
            "control)")
_FLASH_WATCH = ("watches the firmware's files at every tick, each write by its inode and time: "
                "the twin keeps them in a folder, QEMU inside its flash image, where a "
                "write of the same bytes leaves no mark the tests can read")
_TWIN_DICE = ("the dice's statistics over 40 seeded tables, one cycle each, run on the twin "
              "(the same frozen DRBG and dice code): in QEMU, 40 boots and cycles would take "
              "25 minutes; the dealer's key in QEMU is this file's last test")
QEMU_SKIPS = (
    ("hw_tests/test_dice.py::test_dice_faces_cover_one_to_six", _TWIN_DICE),
    ("hw_tests/test_dice.py::test_the_dice_roll_for_the_dealer_who_pressed", _TWIN_DICE),
    ("hw_tests/test_dice.py::test_every_seat_can_be_the_first_dealer", _TWIN_DICE),
    ("hw_tests/test_dice.py::test_a_seed_gives_the_same_first_dealer_and_dice", _TWIN_DICE),
    ("hw_tests/test_link.py::test_a_flood_of_requests_is_answered_in_order", _NO_FLOW),
    ("hw_tests/test_resume.py::test_the_hands_record_follows_the_replay", _FLASH_WATCH),
    ("hw_tests/test_telemetry.py::", "the telemetry needs the board's Wi-Fi: QEMU emulates "
     "none, and the kit's image has none"),
    ("hw_tests/test_parlour_page.py::", "the parlour page's tables publish over Wi-Fi: "
     "none in QEMU"),
)


def qemu_skip(nodeid):
    """Why `--qemu` skips this test, or None."""
    for prefix, reason in QEMU_SKIPS:
        if nodeid.startswith(prefix):
            return reason
    return None


def pytest_addoption(parser):
    group = parser.getgroup("hw_tests", "hardware-in-the-loop tests (hw_tests/)")
    group.addoption("--port", metavar="DEV", default=None,
                    help="a real controller's link (device path or pyserial URL); the "
                         "board plays the real table and tests that need the virtual "
                         "table skip")
    group.addoption("--qemu", action="store_true", default=False,
                    help="the board's image on the esp32 port in QEMU (make qemu) on the "
                         "virtual table")
    group.addoption("--bus", metavar="DEV", default=None,
                    help="with --port: a bench where this PC plays the table: a "
                         "VirtualTable serves the controller's hardware bus on DEV "
                         "(fault injection works)")


def pytest_configure(config):
    config.addinivalue_line("markers", "needs_table: needs the virtual table (fault injection, "
                            "physical state); skipped on a real board without --bus")
    config.addinivalue_line("markers", "needs_sim: needs the firmware under MicroPython "
                            "(a config file or heap size for it, its restart after a power cut)")
    config.addinivalue_line("markers", "table(**kwargs): how the `target` fixture builds the "
                            "virtual table (seed, faults, heap, config_path, ...)")
    if config.getoption("--bus") and not config.getoption("--port"):
        raise pytest.UsageError("--bus DEV needs --port DEV (the controller's link)")


def _mode(config):
    if config.getoption("--qemu"):
        return "qemu"
    if config.getoption("--port") is None:
        return "sim"
    return "bench" if config.getoption("--bus") else "board"


def pytest_collection_modifyitems(config, items):
    mode = _mode(config)
    for item in items:
        reason = qemu_skip(item.nodeid) if mode == "qemu" else None
        if reason is not None:
            item.add_marker(pytest.mark.skip(reason="QEMU: " + reason))
        if mode == "board" and item.get_closest_marker("needs_table"):
            item.add_marker(pytest.mark.skip(
                reason="needs the virtual table (fault injection or physical state): "
                       "a real board plays the real table; use --bus DEV for a bench"))
        if mode not in ("sim", "qemu") and item.get_closest_marker("needs_sim"):
            item.add_marker(pytest.mark.skip(
                reason="needs the firmware under MicroPython (its config file, heap or "
                       "restart is set by the launcher), not a board on --port"))


@pytest.fixture
def hw_mode(request):
    return _mode(request.config)


@pytest.fixture
def make_target(request):
    """make_target(seed=1, faults=(), heap=None, config_path=None,
    firmware_config_path=None, setup=None) -> a connected Target, closed at
    the end of the test. On a real board only the defaults make sense."""
    config = request.config
    mode = _mode(config)
    made = []
    request.node._hw_targets = made

    def make(seed=1, faults=(), heap=None, config_path=None, firmware_config_path=None,
             setup=None):
        if mode == "sim":
            t = SimTarget(seed=seed, faults=faults, heap=heap, config_path=config_path,
                          firmware_config_path=firmware_config_path, setup=setup)
        elif mode == "qemu":
            # `heap` is the twin's budget (the unix port's heap is set per
            # run); the esp32 port runs in its own, as a board does, and
            # `make bench` reports its figures.
            t = QemuTarget(seed=seed, faults=faults, config_path=config_path,
                           firmware_config_path=firmware_config_path, setup=setup)
        elif mode == "bench":
            if heap or config_path or firmware_config_path:
                pytest.skip("heap and config files are set by the launcher (sim only)")
            t = BenchTarget(config.getoption("--port"), config.getoption("--bus"),
                            seed=seed, faults=faults, setup=setup)
        else:
            if faults or setup or heap or config_path or firmware_config_path:
                pytest.skip("fault injection and table setup need the virtual table")
            t = BoardTarget(config.getoption("--port"))
        made.append(t)
        return t

    make.sim = mode in ("sim", "qemu")  # the launcher is ours: heap and config files
    yield make
    for t in made:
        t.close()


@pytest.fixture
def target(make_target, request):
    """A fresh target with the test's `table` marker settings."""
    marker = request.node.get_closest_marker("table")
    return make_target(**(marker.kwargs if marker else {}))


@pytest.fixture(autouse=True)
def _wall_guard(request):
    """Every wait has its own guard; this one catches anything else (a
    join, a blocking read): after TEST_WALL_S the stacks are dumped and the
    run ends rather than hang."""
    if _mode(request.config) not in ("sim", "qemu"):
        yield
        return
    wall = QEMU_TEST_WALL_S if _mode(request.config) == "qemu" else TEST_WALL_S
    faulthandler.dump_traceback_later(wall, exit=True, file=sys.stderr)
    try:
        yield
    finally:
        faulthandler.cancel_dump_traceback_later()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """A failed test shows what its targets saw: link events and counters,
    the virtual table's log and counters, the firmware's output."""
    outcome = yield
    report = outcome.get_result()
    if report.when == "call" and report.failed:
        for i, t in enumerate(getattr(item, "_hw_targets", ())):
            try:
                report.sections.append(("hw target %d" % i, t.diagnostics()))
            except Exception as e:       # diagnostics must not hide the failure
                report.sections.append(("hw target %d" % i, "no diagnostics: %r" % e))
