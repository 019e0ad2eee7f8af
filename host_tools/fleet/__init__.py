"""The parlour's side of the tables' telemetry (docs/fleet.md): the MQTT
broker the tables publish to (broker.py), a subscriber for the tests
(listen.py), the dashboard's view of every table (model.py) and the
kinds of what it takes (payload.py), the parlour page and its subscriber
(page.py, page.html), `make fleet`'s supervisor (fleet.py, __main__.py;
its tables are host_tools/parlour), the browser test's Chromium
(browser.py), the Debian packages those two install (debian.py) and the
fleet's measurements (measure.py)."""
