"""The conformance kit: the corpus driver, its matchers and the Python testee.

This package's ``__init__`` imports nothing, on purpose: the testee runs as
``python -m harnessweaver.conformance.testee`` and must not pay for the driver, and the
driver (``harnessweaver conformance``) judges implementations without loading one.
"""
