"""Interoperation with other hook contracts.

``harnessweaver.interop.agent_hooks``: AGENT-HOOKS-0.1 (``agent-hooks-sdk``, the ``agent-hooks``
extra); see docs/interop-agent-hooks.md.
"""
