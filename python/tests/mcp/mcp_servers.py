"""Small upstream MCP servers for the proxy's tests, built with the SDK's own server classes.

Run as a program: ``python mcp_servers.py [--record FILE] [--http PORT] [--stateless]``
serves every tool below over stdio (default) or Streamable HTTP on 127.0.0.1:PORT/mcp.
One server holds all of them, so a test picks its peer by the tool it calls:

- ``echo(text)``, ``write_note(text)`` and ``shell(command)``: answer what they got (JSON);
  ``search(query, limit)``: answers the query and limit it got; ``whois(name)``:
  answers a contact line holding an email address and a phone number (for redaction at
  ``tool.after``). Each call's name and arguments, as received, are appended to ``--record``
  (JSON Lines) before answering, so a test sees what the upstream was given, and that a
  refused call never reached it.
- ``fail()``: answers an error result (``isError``), every time.
- ``crash()``: the server process dies mid-call (``os._exit``, no answer ever written).
- ``hang()``: never answers (until the call is cancelled).
- ``big(mib)``: one text content of ``mib`` MiB (50 by default).
- :data:`ODD_NAMES`: tools whose names hold unicode, control characters or 200+ characters,
  each answering its own name. Any other name: an ``isError`` result (:func:`unknown`).
  The low-level ``Server`` is used so that no name is refused
  before it reaches the wire.

The tests import :data:`TOOLS`, :data:`ODD_NAMES` and :func:`command` from here.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any, Final

__all__ = [
    "BIG_MIB",
    "FAILING",
    "HERE",
    "ODD_NAMES",
    "SCRIPT",
    "TOOLS",
    "WHOIS",
    "answer",
    "command",
    "unknown",
]

HERE: Final = Path(__file__).parent
SCRIPT: Final = Path(__file__).resolve()
BIG_MIB: Final = 50
WHOIS: Final = "Ada Lovelace <ada@example.com>, +44 20 7946 0958"
"""What ``whois`` answers: an email and a phone number for ``redact_pii`` to find."""

ODD_NAMES: Final = (
    "r\u00e9sum\u00e9_\U0001f50d_\u691c\u7d22",  # accents, an emoji, CJK
    "tab\there\nnewline\x1bescape",  # control characters
    "n" * 250,  # longer than 200 characters
    "rtl_\u202eevil\u202c_zero\u200bwidth",  # bidi override, zero-width space
)

FAILING: Final = frozenset({"fail"})
"""The tools whose results are errors (``isError``)."""

_TEXT: Final = {"type": "object", "properties": {"text": {"type": "string"}}}
TOOLS: Final[dict[str, tuple[str, dict[str, Any]]]] = {
    "echo": ("Answers the text it is given.", _TEXT),
    "search": (
        "Searches the notes.",
        {
            "type": "object",
            "properties": {"query": {"type": "string"}, "limit": {"type": "integer"}},
            "required": ["query"],
        },
    ),
    "write_note": ("Writes a note.", _TEXT),
    "shell": (
        "Runs a shell command.",
        {"type": "object", "properties": {"command": {"type": "string"}}},
    ),
    "whois": ("Looks a person up.", {"type": "object", "properties": {"name": {"type": "string"}}}),
    "fail": ("Always fails (an isError result).", {"type": "object"}),
    "crash": ("Kills the server mid-call.", {"type": "object"}),
    "hang": ("Never answers.", {"type": "object"}),
    "big": (
        "Answers MiB of text.",
        {"type": "object", "properties": {"mib": {"type": "integer"}}},
    ),
}
"""Each tool's description and input schema, as ``tools/list`` gives them."""


def command(*more: str) -> list[str]:
    """The command line that serves these tools (``more``: the options above)."""
    return [sys.executable, str(SCRIPT), *more]


def answer(name: str, arguments: dict[str, Any]) -> str:
    """The text a tool (other than ``crash`` and ``hang``) answers for ``arguments``."""
    if name == "big":
        return "x" * (int(arguments.get("mib", BIG_MIB)) << 20)
    if name == "whois":
        return WHOIS
    if name == "search":
        return f"results for {arguments.get('query')!s} (limit {arguments.get('limit')})"
    return json.dumps({"tool": name, "arguments": arguments}, ensure_ascii=False)


def unknown(name: str) -> str:
    """The error text of a call of a tool the server does not have (an ``isError`` result)."""
    return f"no tool named {json.dumps(name)}"


def _server(record: Path | None) -> Any:
    import anyio
    import mcp_types as types
    from mcp.server.lowlevel import Server

    listed = [
        types.Tool(name=name, description=description, input_schema=schema)
        for name, (description, schema) in TOOLS.items()
    ] + [
        types.Tool(name=name, description="An odd name.", input_schema={"type": "object"})
        for name in ODD_NAMES
    ]

    async def on_list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=listed)

    def text(value: str) -> types.CallToolResult:
        return types.CallToolResult(content=[types.TextContent(type="text", text=value)])

    async def on_call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        name, arguments = params.name, dict(params.arguments or {})
        if record is not None:
            with record.open("a", encoding="utf-8") as out:
                out.write(json.dumps({"tool": name, "arguments": arguments}) + "\n")
        if name == "crash":
            os._exit(17)
        if name == "hang":
            await anyio.sleep_forever()
        if name not in TOOLS and name not in ODD_NAMES:
            return text(unknown(name)).model_copy(update={"is_error": True})
        if name in FAILING:
            return types.CallToolResult(
                content=text(answer(name, arguments)).content, is_error=True
            )
        return text(answer(name, arguments))

    return Server("hw-test-upstream", on_list_tools=on_list_tools, on_call_tool=on_call_tool)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--record", type=Path)
    parser.add_argument("--http", type=int, help="serve Streamable HTTP on 127.0.0.1:PORT")
    parser.add_argument("--stateless", action="store_true")
    options = parser.parse_args(argv)
    server = _server(options.record)
    if options.http is None:
        import anyio
        from mcp.server.stdio import stdio_server

        async def serve() -> None:
            async with stdio_server() as (read, write):
                await server.run(read, write, server.create_initialization_options())

        anyio.run(serve)
        return
    import uvicorn

    app = server.streamable_http_app(stateless_http=options.stateless)
    uvicorn.run(app, host="127.0.0.1", port=options.http, log_level="warning")


if __name__ == "__main__":
    main()
