"""A first middleware: refuse a shell command that deletes recursively (quick start, step 2)."""

import anyio

import harnessweaver as hw


@hw.middleware(hooks=["tool.before"], fail_mode="closed")
async def no_recursive_delete(event: hw.ToolCallEvent, env: hw.Envelope) -> hw.Outcome | None:
    command = event.call.arguments.get("command", "")
    if isinstance(command, str) and command.startswith("rm -r"):
        return hw.Block(reason="recursive deletes need a person", code="no_rm")
    return None


bus = hw.HookBus()
bus.register(no_recursive_delete)


async def main() -> None:
    for command in ["ls build", "rm -rf build"]:
        call = hw.ToolCall(name="run_shell", arguments={"command": command})
        event = hw.ToolCallEvent(step=1, tool=hw.ToolSpec(name="run_shell"), call=call)
        result = await bus.emit("tool.before", event, hw.RunContext())
        print(f"{command}: {result.outcome!r}")


anyio.run(main)
