"""Framing and messages shared by the controller and the host (one codec)."""
