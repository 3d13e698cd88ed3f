"""An MCP client that reaches server.py through the harnessweaver proxy (quick start, step 6).

It starts ``harnessweaver mcp --spec harness.yaml -- python server.py`` where it would start
the server itself, as Claude Code, Codex or Cursor would, then calls both tools.
"""

import sys

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.types import TextContent

proxy = StdioServerParameters(
    command="harnessweaver",
    args=["mcp", "--spec", "harness.yaml", "--", sys.executable, "server.py"],
)


async def main() -> None:
    async with Client(proxy) as client:
        for name, arguments in [
            ("word_count", {"text": "one policy, every agent"}),
            ("run_shell", {"command": "rm -rf build"}),
        ]:
            result = await client.call_tool(name, arguments)
            text = " ".join(c.text for c in result.content if isinstance(c, TextContent))
            print(f"{name}: error={result.is_error} {text}")


anyio.run(main)
