"""The suite's root conftest.py: the plugin that gives every test the ``emit_benchmark`` fixture.

Keep this file to the one line: a conftest that also imported ``harnessweaver.testing`` would
import it before pytest registers it as a plugin (pytest then warns that it cannot rewrite it).
"""

pytest_plugins = ["harnessweaver.testing"]
