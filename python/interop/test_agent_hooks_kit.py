"""``nox -s interop``: the AGENT-HOOKS Conformance Test Kit through its own pytest plugin,
``--agent-hooks-harness=harnessweaver.interop.agent_hooks.ctk:HarnessweaverHarness``: one
test per vector of the kit, run by the kit (not collected by the main suite, where the plugin
would fall back to the kit's own reference harness)."""


def test_conformance(agent_hooks_assert: None) -> None:
    """The kit runs the vector and asserts (or skips, naming the missing capability)."""
