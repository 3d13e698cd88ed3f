"""A conformant MCP server for the official conformance kit's server scenarios, built with the
SDK's own ``MCPServer`` and served over Streamable HTTP on 127.0.0.1.

The kit (``@modelcontextprotocol/conformance``, pinned in package.json) drives a server by the
tool, resource and prompt names its scenarios expect (``test_simple_text``,
``test://static-text``, ``test_simple_prompt``...): those are the names the SDK's own
conformance "everything" server answers to, and this module answers to the same ones with the
same results, written again here so the proof depends on the SDK's server classes only.
``run_kit.py`` runs the kit against this server bare and through ``harnessweaver mcp``.

    python conformant_server.py --port 8000      # serves http://127.0.0.1:8000/mcp
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import warnings
from typing import Any

import uvicorn
from mcp.server import ServerRequestContext
from mcp.server.mcpserver import Context, MCPServer, RequestStateSecurity
from mcp.server.mcpserver.prompts.base import Prompt, UserMessage
from mcp.server.mcpserver.tools.base import Tool
from mcp.server.streamable_http import EventCallback, EventMessage, EventStore
from mcp.shared.exceptions import MCPError
from mcp.types import (
    MISSING_REQUIRED_CLIENT_CAPABILITY,
    AudioContent,
    Completion,
    CompletionArgument,
    CompletionContext,
    CreateMessageRequest,
    CreateMessageRequestParams,
    CreateMessageResult,
    ElicitRequest,
    ElicitRequestFormParams,
    ElicitResult,
    EmbeddedResource,
    EmptyResult,
    ImageContent,
    InputRequest,
    InputRequiredResult,
    JSONRPCMessage,
    ListRootsRequest,
    ListRootsResult,
    PromptReference,
    ResourceTemplateReference,
    SamplingMessage,
    SetLevelRequestParams,
    SubscribeRequestParams,
    TextContent,
    TextResourceContents,
    UnsubscribeRequestParams,
)
from pydantic import BaseModel, Field

__all__ = ["build_server", "main"]

# The kit exercises the logging capability on purpose (tools-call-with-logging): the SDK's
# warning that it is deprecated as of 2026-07-28 is noise in this server's output.
warnings.filterwarnings("ignore", message=".*logging capability is deprecated.*")

PNG = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5"
    "ErkJggg=="
)
"""A 1x1 PNG: the image the kit's image scenarios expect."""
WAV = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA="
"""An empty WAV: the audio the kit's audio scenario expects."""

NAME_SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
OK_SCHEMA = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}
SCHEMA_2020_12: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {
        "address": {
            "$anchor": "addressDef",
            "type": "object",
            "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
        }
    },
    "properties": {
        "name": {"type": "string"},
        "address": {"$ref": "#/$defs/address"},
        "contactMethod": {"type": "string", "enum": ["phone", "email"]},
        "phone": {"type": "string"},
        "email": {"type": "string"},
    },
    "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
    "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
    "then": {"required": ["phone"]},
    "else": {"required": ["email"]},
    "additionalProperties": False,
}
"""The input schema json-schema-2020-12 expects back from tools/list keyword for keyword."""


class MemoryEvents(EventStore):
    """Events kept in memory so a client can resume an SSE stream (server-sse-polling)."""

    def __init__(self) -> None:
        self._events: list[tuple[str, str, JSONRPCMessage | None]] = []

    async def store_event(self, stream_id: str, message: JSONRPCMessage | None) -> str:
        event_id = str(len(self._events) + 1)
        self._events.append((stream_id, event_id, message))
        return event_id

    async def replay_events_after(
        self, last_event_id: str, send_callback: EventCallback
    ) -> str | None:
        stream = next((s for s, e, _ in self._events if e == last_event_id), None)
        if stream is None:
            return None
        for stream_id, event_id, message in self._events:
            if stream_id == stream and int(event_id) > int(last_event_id) and message is not None:
                await send_callback(EventMessage(message, event_id))
        return stream


class Defaults(BaseModel):
    """SEP-1034: a default for every primitive type."""

    name: str = Field(default="John Doe", description="User name")
    age: int = Field(default=30, description="User age")
    score: float = Field(default=95.5, description="User score")
    status: str = Field(
        default="active",
        description="User status",
        json_schema_extra={"enum": ["active", "inactive", "pending"]},
    )
    verified: bool = Field(default=True, description="Verification status")


class Enums(BaseModel):
    """SEP-1330: the enum shapes an elicitation schema may take."""

    untitledSingle: str = Field(
        description="Simple enum without titles",
        json_schema_extra={"enum": ["active", "inactive", "pending"]},
    )
    titledSingle: str = Field(
        description="Enum with titled options (oneOf)",
        json_schema_extra={
            "oneOf": [
                {"const": "low", "title": "Low Priority"},
                {"const": "medium", "title": "Medium Priority"},
                {"const": "high", "title": "High Priority"},
            ]
        },
    )
    untitledMulti: list[str] = Field(
        description="Multi-select without titles",
        json_schema_extra={"items": {"type": "string", "enum": ["read", "write", "execute"]}},
    )
    titledMulti: list[str] = Field(
        description="Multi-select with titled options",
        json_schema_extra={
            "items": {
                "anyOf": [
                    {"const": "feature", "title": "New Feature"},
                    {"const": "bug", "title": "Bug Fix"},
                    {"const": "docs", "title": "Documentation"},
                ]
            }
        },
    )
    legacyEnum: str = Field(
        description="Legacy enum with enumNames",
        json_schema_extra={
            "enum": ["small", "medium", "large"],
            "enumNames": ["Small Size", "Medium Size", "Large Size"],
        },
    )


class Answer(BaseModel):
    response: str = Field(description="User's response")


def _ask(message: str = "What is your name?") -> ElicitRequest:
    return ElicitRequest(
        params=ElicitRequestFormParams(message=message, requested_schema=NAME_SCHEMA)
    )


def _sample(text: str, max_tokens: int = 100) -> CreateMessageRequest:
    message = SamplingMessage(role="user", content=TextContent(type="text", text=text))
    return CreateMessageRequest(
        params=CreateMessageRequestParams(messages=[message], max_tokens=max_tokens)
    )


def _elicited(answer: object, field: str) -> Any:
    return (
        answer.content.get(field) if isinstance(answer, ElicitResult) and answer.content else None
    )


def _add_content_tools(server: MCPServer) -> None:
    @server.tool()
    def test_simple_text() -> str:
        """Tests simple text content response"""
        return "This is a simple text response for testing."

    @server.tool()
    def test_image_content() -> list[ImageContent]:
        """Tests image content response"""
        return [ImageContent(type="image", data=PNG, mime_type="image/png")]

    @server.tool()
    def test_audio_content() -> list[AudioContent]:
        """Tests audio content response"""
        return [AudioContent(type="audio", data=WAV, mime_type="audio/wav")]

    @server.tool()
    def test_embedded_resource() -> list[EmbeddedResource]:
        """Tests embedded resource content response"""
        text = "This is an embedded resource content."
        return [
            EmbeddedResource(
                type="resource",
                resource=TextResourceContents(
                    uri="test://embedded-resource", mime_type="text/plain", text=text
                ),
            )
        ]

    @server.tool()
    def test_multiple_content_types() -> list[TextContent | ImageContent | EmbeddedResource]:
        """Tests response with multiple content types (text, image, resource)"""
        return [
            TextContent(type="text", text="Multiple content types test:"),
            ImageContent(type="image", data=PNG, mime_type="image/png"),
            EmbeddedResource(
                type="resource",
                resource=TextResourceContents(
                    uri="test://mixed-content-resource",
                    mime_type="application/json",
                    text='{"test": "data", "value": 123}',
                ),
            ),
        ]

    @server.tool()
    def test_error_handling() -> str:
        """Tests error response handling"""
        raise RuntimeError("This tool intentionally returns an error for testing")

    @server.tool()
    def test_x_mcp_header(
        region: str = Field(
            default="<none>",
            description="Mirrored into the Mcp-Param-Region header",
            json_schema_extra={"x-mcp-header": "Region"},
        ),
    ) -> str:
        """Tests SEP-2243 Mcp-Param-* header validation"""
        return f"region={region}"


def _add_session_tools(server: MCPServer) -> None:
    """Tools that talk back to the client during the call: logging, progress, sampling,
    elicitation, a closed SSE stream."""

    @server.tool()
    async def test_tool_with_logging(ctx: Context) -> str:
        """Tests tool that emits log messages during execution"""
        for line in ("Tool execution started", "Tool processing data", "Tool execution completed"):
            await ctx.info(line)
            await asyncio.sleep(0.05)
        return "Tool with logging executed successfully"

    @server.tool()
    async def test_tool_with_progress(ctx: Context) -> str:
        """Tests tool that reports progress notifications"""
        for step in (0, 50, 100):
            await ctx.report_progress(step, 100, f"Completed step {step} of 100")
            await asyncio.sleep(0.05)
        meta = ctx.request_context.meta if ctx.request_context else None
        return str(meta.get("progress_token") if meta else 0)

    @server.tool()
    async def test_sampling(prompt: str, ctx: Context) -> str:
        """Tests server-initiated sampling (LLM completion request)"""
        message = SamplingMessage(role="user", content=TextContent(type="text", text=prompt))
        result = await ctx.session.create_message(
            messages=[message], max_tokens=100, related_request_id=ctx.request_id
        )
        text = result.content.text if result.content.type == "text" else "No response"
        return f"LLM response: {text}"

    @server.tool()
    async def test_elicitation(message: str, ctx: Context) -> str:
        """Tests server-initiated elicitation (user input request)"""
        result = await ctx.elicit(message=message, schema=Answer)
        content = result.data.model_dump_json() if result.action == "accept" else "{}"
        return f"User response: action={result.action}, content={content}"

    @server.tool()
    async def test_elicitation_sep1034_defaults(ctx: Context) -> str:
        """Tests elicitation with default values for all primitive types (SEP-1034)"""
        result = await ctx.elicit(message="Please provide user information", schema=Defaults)
        content = result.data.model_dump_json() if result.action == "accept" else "{}"
        return f"Elicitation result: action={result.action}, content={content}"

    @server.tool()
    async def test_elicitation_sep1330_enums(ctx: Context) -> str:
        """Tests elicitation with enum schema variations per SEP-1330"""
        message = "Please select values using different enum schema types"
        result = await ctx.elicit(message=message, schema=Enums)
        content = result.data.model_dump_json() if result.action == "accept" else "{}"
        return f"Elicitation completed: action={result.action}, content={content}"

    @server.tool()
    async def test_missing_capability(ctx: Context) -> str:
        """Tests that a missing client capability is a JSON-RPC error naming it"""
        capabilities = ctx.session.client_capabilities
        if capabilities is None or capabilities.sampling is None:
            raise MCPError(
                code=MISSING_REQUIRED_CLIENT_CAPABILITY,
                message="This tool requires the client 'sampling' capability",
                data={"requiredCapabilities": {"sampling": {}}},
            )
        return "Client declared sampling capability; proceeding."

    @server.tool()
    async def test_reconnection(ctx: Context) -> str:
        """Tests SSE polling by closing stream mid-call (SEP-1699)"""
        await ctx.info("Before disconnect")
        await ctx.close_sse_stream()
        await asyncio.sleep(0.2)
        await ctx.info("After reconnect")
        return "Reconnection test completed"


def _add_list_change_tools(server: MCPServer) -> None:
    """Tools that change the tool or prompt list and say so to the clients listening
    (subscriptions/listen, SEP-2575: server-stateless checks which notifications arrive)."""

    def dynamic() -> str:
        """Added and removed again by test_trigger_tool_change."""
        return "dynamic"

    @server.tool()
    async def test_trigger_tool_change(ctx: Context) -> str:
        """Mutates the tool list and announces it to subscriptions/listen streams (SEP-2575)"""
        server.add_tool(dynamic, name="test_dynamic_tool")
        server.remove_tool("test_dynamic_tool")
        await ctx.notify_tools_changed()
        return "tool list changed"

    @server.tool()
    async def test_trigger_prompt_change(ctx: Context) -> str:
        """Mutates the prompt list and announces it to subscriptions/listen streams (SEP-2575)"""
        prompt = Prompt.from_function(dynamic, name="test_dynamic_prompt", description="dynamic")
        server.add_prompt(prompt)
        server.remove_prompt("test_dynamic_prompt")
        await ctx.notify_prompts_changed()
        return "prompt list changed"


def _add_input_required_tools(server: MCPServer) -> None:
    """The 2026-07-28 multi-round-trip flow (InputRequiredResult, SEP-2322)."""

    @server.tool()
    async def test_input_required_result_elicitation(ctx: Context) -> str | InputRequiredResult:
        """Tests InputRequiredResult with a single elicitation request"""
        responses = ctx.input_responses
        if responses and "user_name" in responses:
            return f"Hello, {_elicited(responses['user_name'], 'name') or 'stranger'}!"
        return InputRequiredResult(input_requests={"user_name": _ask()})

    @server.tool()
    async def test_input_required_result_sampling(ctx: Context) -> str | InputRequiredResult:
        """Tests InputRequiredResult with a single sampling request"""
        responses = ctx.input_responses
        if responses and "capital_question" in responses:
            answer = responses["capital_question"]
            ok = isinstance(answer, CreateMessageResult) and answer.content.type == "text"
            return f"Model said: {answer.content.text if ok else '?'}"  # type: ignore[union-attr]
        question = _sample("What is the capital of France?")
        return InputRequiredResult(input_requests={"capital_question": question})

    @server.tool()
    async def test_input_required_result_list_roots(ctx: Context) -> str | InputRequiredResult:
        """Tests InputRequiredResult with a single roots/list request"""
        responses = ctx.input_responses
        if responses and "client_roots" in responses:
            answer = responses["client_roots"]
            count = len(answer.roots) if isinstance(answer, ListRootsResult) else 0
            return f"Client exposed {count} root(s)."
        return InputRequiredResult(input_requests={"client_roots": ListRootsRequest()})

    @server.tool()
    async def test_input_required_result_request_state(ctx: Context) -> str | InputRequiredResult:
        """Tests requestState round-tripping in the InputRequiredResult flow"""
        responses = ctx.input_responses
        if responses and "confirm" in responses and ctx.request_state == "request-state-nonce":
            return "state-ok: confirmation received"
        confirm = ElicitRequest(
            params=ElicitRequestFormParams(message="Please confirm", requested_schema=OK_SCHEMA)
        )
        return InputRequiredResult(
            input_requests={"confirm": confirm}, request_state="request-state-nonce"
        )

    @server.tool()
    async def test_input_required_result_multiple_inputs(ctx: Context) -> str | InputRequiredResult:
        """Tests InputRequiredResult carrying elicitation, sampling and roots requests together"""
        responses = ctx.input_responses
        if responses and {"user_name", "greeting", "client_roots"} <= responses.keys():
            return "All inputs received."
        requests: dict[str, InputRequest] = {
            "user_name": _ask(),
            "greeting": _sample("Generate a greeting", 50),
            "client_roots": ListRootsRequest(),
        }
        return InputRequiredResult(input_requests=requests, request_state="multiple-inputs")

    @server.tool()
    async def test_input_required_result_multi_round(ctx: Context) -> str | InputRequiredResult:
        """Tests a three-round InputRequiredResult flow with evolving requestState"""
        state = json.loads(ctx.request_state) if ctx.request_state else {"round": 0}
        responses = ctx.input_responses or {}
        if state["round"] == 1 and "step1" in responses:
            color = {
                "type": "object",
                "properties": {"color": {"type": "string"}},
                "required": ["color"],
            }
            step2 = ElicitRequest(
                params=ElicitRequestFormParams(
                    message="Step 2: What is your favorite color?", requested_schema=color
                )
            )
            name = _elicited(responses["step1"], "name")
            return InputRequiredResult(
                input_requests={"step2": step2},
                request_state=json.dumps({"round": 2, "name": name}),
            )
        if state["round"] == 2 and "step2" in responses:
            return f"{state.get('name')} likes {_elicited(responses['step2'], 'color')}."
        return InputRequiredResult(
            input_requests={"step1": _ask("Step 1: What is your name?")},
            request_state=json.dumps({"round": 1}),
        )

    @server.tool()
    async def test_input_required_result_tampered_state(ctx: Context) -> str | InputRequiredResult:
        """Tests that the server rejects a tampered requestState echo (the SDK's boundary does)"""
        if ctx.request_state is None:
            confirm = ElicitRequest(
                params=ElicitRequestFormParams(message="Please confirm", requested_schema=OK_SCHEMA)
            )
            return InputRequiredResult(input_requests={"confirm": confirm}, request_state="round-1")
        return f"state-ok: {ctx.request_state}"

    @server.tool()
    async def test_input_required_result_capabilities(ctx: Context) -> InputRequiredResult:
        """Tests that inputRequests only include methods the client declared support for"""
        caps = ctx.client_capabilities
        requests: dict[str, InputRequest] = {}
        if caps is None or caps.sampling is not None:
            requests["sample"] = _sample("Say hello", 50)
        if caps is None or caps.elicitation is not None:
            requests["ask"] = _ask()
        return InputRequiredResult(input_requests=requests, request_state="capability-gated")


def _add_resources_and_prompts(server: MCPServer) -> None:
    @server.resource("test://static-text")
    def static_text() -> str:
        """A static text resource for testing"""
        return "This is the content of the static text resource."

    @server.resource("test://static-binary")
    def static_binary() -> bytes:
        """A static binary resource (image) for testing"""
        return base64.b64decode(PNG)

    @server.resource("test://template/{id}/data")
    def template(id: str) -> str:
        """A resource template with parameter substitution"""
        return json.dumps({"id": id, "templateTest": True, "data": f"Data for ID: {id}"})

    @server.resource("test://watched-resource")
    def watched() -> str:
        """A resource that can be subscribed to for updates"""
        return "Watched resource content"

    @server.prompt()
    def test_simple_prompt() -> list[UserMessage]:
        """A simple prompt without arguments"""
        text = "This is a simple prompt for testing."
        return [UserMessage(role="user", content=TextContent(type="text", text=text))]

    @server.prompt()
    def test_prompt_with_arguments(arg1: str, arg2: str) -> list[UserMessage]:
        """A prompt with required arguments"""
        text = f"Prompt with arguments: arg1='{arg1}', arg2='{arg2}'"
        return [UserMessage(role="user", content=TextContent(type="text", text=text))]

    @server.prompt()
    def test_prompt_with_embedded_resource(resourceUri: str) -> list[UserMessage]:
        """A prompt that includes an embedded resource"""
        embedded = TextResourceContents(
            uri=resourceUri, mime_type="text/plain", text="Embedded resource content for testing."
        )
        text = "Please process the embedded resource above."
        return [
            UserMessage(role="user", content=EmbeddedResource(type="resource", resource=embedded)),
            UserMessage(role="user", content=TextContent(type="text", text=text)),
        ]

    @server.prompt()
    def test_prompt_with_image() -> list[UserMessage]:
        """A prompt that includes image content"""
        text = "Please analyze the image above."
        return [
            UserMessage(
                role="user", content=ImageContent(type="image", data=PNG, mime_type="image/png")
            ),
            UserMessage(role="user", content=TextContent(type="text", text=text)),
        ]

    @server.prompt()
    async def test_input_required_result_prompt(
        ctx: Context,
    ) -> list[UserMessage] | InputRequiredResult:
        """Tests InputRequiredResult from prompts/get (SEP-2322 non-tool request)"""
        responses = ctx.input_responses
        if responses and "user_context" in responses:
            text = _elicited(responses["user_context"], "context") or "?"
            said = f"Use the following context: {text}"
            return [UserMessage(role="user", content=TextContent(type="text", text=said))]
        schema = {
            "type": "object",
            "properties": {"context": {"type": "string"}},
            "required": ["context"],
        }
        message = "What context should the prompt use?"
        ask = ElicitRequest(
            params=ElicitRequestFormParams(message=message, requested_schema=schema)
        )
        return InputRequiredResult(input_requests={"user_context": ask})

    @server.completion()  # type: ignore[no-untyped-call, untyped-decorator]  # the SDK's is untyped
    async def complete(
        ref: PromptReference | ResourceTemplateReference,
        argument: CompletionArgument,
        context: CompletionContext | None,
    ) -> Completion:
        return Completion(values=[], total=0, has_more=False)


async def _set_level(ctx: ServerRequestContext, params: SetLevelRequestParams) -> EmptyResult:
    return EmptyResult()


async def _subscribe(ctx: ServerRequestContext, params: SubscribeRequestParams) -> EmptyResult:
    return EmptyResult()


async def _unsubscribe(ctx: ServerRequestContext, params: UnsubscribeRequestParams) -> EmptyResult:
    return EmptyResult()


def build_server() -> MCPServer:
    """The server with every tool, resource and prompt the kit's scenarios call."""
    schema_tool = Tool.from_function(
        lambda: "json_schema_2020_12_tool",
        name="json_schema_2020_12_tool",
        description="Tests JSON Schema 2020-12 keyword preservation in tools/list",
    )
    # The kit compares the advertised schema keyword for keyword: set it as written.
    schema_tool = schema_tool.model_copy(update={"parameters": SCHEMA_2020_12})
    server = MCPServer(
        name="harnessweaver-conformant-upstream",
        version="0.1.0",
        tools=[schema_tool],
        # A fixed test key (at least 32 bytes) for the request state the 2026-07-28
        # InputRequiredResult scenarios echo back; it guards nothing here.
        request_state_security=RequestStateSecurity(
            keys=[b"harnessweaver-e2e-request-state-key-0"]
        ),
    )
    _add_content_tools(server)
    _add_session_tools(server)
    _add_list_change_tools(server)
    _add_input_required_tools(server)
    _add_resources_and_prompts(server)
    # The SDK's MCPServer has no decorator for these three requests; the low-level server
    # it wraps takes handlers for them.
    lowlevel = server._lowlevel_server
    lowlevel.add_request_handler("logging/setLevel", SetLevelRequestParams, _set_level)
    lowlevel.add_request_handler("resources/subscribe", SubscribeRequestParams, _subscribe)
    lowlevel.add_request_handler("resources/unsubscribe", UnsubscribeRequestParams, _unsubscribe)
    return server


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, required=True)
    args = parser.parse_args()
    # retry_interval: the SSE polling scenario expects the server to name one (100 ms).
    app = build_server().streamable_http_app(event_store=MemoryEvents(), retry_interval=100)
    uvicorn.run(app, host="127.0.0.1", port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
