"""The parlour's side of the tables' telemetry: the MQTT broker the
tables publish to (broker.py; docs/fleet.md)."""
