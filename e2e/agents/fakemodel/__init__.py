"""Scripted fake model servers on 127.0.0.1, one module per vendor API, for driving the real
coding agents in ``nox -s agents`` (no network, no model)."""
