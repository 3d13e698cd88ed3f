"""Adapters: the bus inside the agent frameworks people already run (issue 14).

One module per framework, each importing its framework only when used, so the core package
keeps no dependency on any of them: install the extra (``harnessweaver[langchain]``,
``harnessweaver[openai-agents]``) for the adapter you use. Where a framework cannot express
an outcome, an adapter takes the safer one and ``docs/integrations.md`` says so.
"""
