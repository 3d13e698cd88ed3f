"""Tools: typed Python functions the model may call.

``@hw.tool`` derives a tool's JSON Schema from the function's type hints (through a pydantic
model built from its signature) and its description from the docstring. Invoking a tool
validates the model's arguments first: invalid arguments, a raise and an output that cannot
be turned into JSON all become error results the model reads, never a crash of the run. An
output longer than the limit is cut, with a note, and marked ``truncated``.

Error results name exception *types* and pydantic error *codes* only, never an exception's
message: they end up in the journal, which holds no exception message (R9).
"""

from __future__ import annotations

import inspect
import json
import typing
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, ParamSpec, TypeVar, overload

from pydantic import BaseModel, ConfigDict, Field, JsonValue, ValidationError, create_model
from pydantic_core import to_jsonable_python

from ..events import ToolCall, ToolResult, ToolSpec
from .errors import AgentError

__all__ = ["DEFAULT_OUTPUT_LIMIT", "Tool", "bounded", "result_text", "tool", "toolbox"]

P = ParamSpec("P")
R = TypeVar("R")

DEFAULT_OUTPUT_LIMIT = 20_000
"""Characters of tool output the model receives unless a limit is configured."""

_RULE = "tools"
_FIELD_PREFIX = "arg_"  # internal field names; the model sees the parameters' own names


def _bad_tool(function: object, problem: str) -> AgentError:
    name = getattr(function, "__qualname__", repr(function))
    return AgentError("invalid_tool", _RULE, f"invalid tool {name}: {problem} ({_RULE})")


def _check_limit(value: object, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise AgentError(
            "invalid_option",
            _RULE,
            f"invalid {what} {value!r}: an output limit is a whole number of characters > 0 "
            f"({_RULE})",
        )
    return value


def _arguments_model(function: Callable[..., Any], name: str) -> type[BaseModel]:
    """A pydantic model of the function's parameters. Fields carry the parameter names as
    aliases so a parameter may be called ``json`` or ``model_x`` without clashing with
    pydantic's own attributes; extra arguments are refused."""
    hints = typing.get_type_hints(function, include_extras=True)
    fields: dict[str, Any] = {}
    for param in inspect.signature(function).parameters.values():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD, param.POSITIONAL_ONLY):
            raise _bad_tool(
                function,
                f"parameter {param.name!r} is {param.kind.description}: the model passes "
                "arguments by name, so every parameter must be nameable",
            )
        if param.name not in hints:
            raise _bad_tool(
                function,
                f"parameter {param.name!r} has no type annotation: the JSON Schema the model "
                "sees is derived from the annotations",
            )
        default = ... if param.default is param.empty else param.default
        fields[_FIELD_PREFIX + param.name] = (hints[param.name], Field(default, alias=param.name))
    title = "".join(part.capitalize() for part in name.split("_")) + "Arguments"
    config = ConfigDict(extra="forbid", populate_by_name=False)
    return create_model(title, __config__=config, **fields)


def _describe(function: Callable[..., Any]) -> str:
    doc = inspect.getdoc(function) or ""
    return doc.split("\n\n", 1)[0].replace("\n", " ").strip()


def _invalid_arguments(name: str, exc: ValidationError) -> str:
    """Where and which rule, per problem (pydantic's error codes: ``missing``,
    ``int_parsing``...); never the input or the message (R9)."""
    problems = "; ".join(
        f"{'.'.join(map(str, error['loc'])) or '(arguments)'}: {error['type']}"
        for error in exc.errors(include_url=False, include_input=False)
    )
    return f"invalid arguments for tool {name!r}: {problems}"


def result_text(output: JsonValue) -> str:
    """A tool output as the text of a tool message: a string as is, anything else as JSON."""
    return output if isinstance(output, str) else json.dumps(output, ensure_ascii=False)


def bounded(output: JsonValue, limit: int, *, is_error: bool = False) -> ToolResult:
    """``output`` as a result, cut to ``limit`` characters (with a note saying so)."""
    text = result_text(output)
    if len(text) <= limit:
        return ToolResult(output=output, is_error=is_error)
    note = f"\n[truncated: the output had {len(text)} characters; the limit is {limit}]"
    return ToolResult(output=text[:limit] + note, is_error=is_error, truncated=True)


@dataclass(frozen=True, slots=True)
class Tool(Generic[P, R]):
    """A typed function the model may call. Calling the tool object calls the function."""

    function: Callable[P, R]
    name: str
    description: str
    arguments: type[BaseModel] = field(repr=False)
    max_output_chars: int | None = None

    @property
    def spec(self) -> ToolSpec:
        """The tool as offered to the model: name, description, JSON Schema parameters."""
        schema = self.arguments.model_json_schema(by_alias=True)
        return ToolSpec(name=self.name, description=self.description, parameters=schema)

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R:
        return self.function(*args, **kwargs)

    async def invoke(self, call: ToolCall, *, limit: int = DEFAULT_OUTPUT_LIMIT) -> ToolResult:
        """Validate ``call.arguments``, run the function, bound its output.

        ``max_output_chars``, when the tool sets it, takes the place of ``limit``.
        """
        limit = self.max_output_chars or limit
        try:
            parsed = self.arguments.model_validate(call.arguments)
        except ValidationError as exc:
            return bounded(_invalid_arguments(self.name, exc), limit, is_error=True)
        kwargs = {key.removeprefix(_FIELD_PREFIX): value for key, value in parsed}
        try:
            value: Any = self.function(**kwargs)  # type: ignore[call-arg]
            if inspect.isawaitable(value):
                value = await value
            output: JsonValue = to_jsonable_python(value)
        except Exception as exc:  # the model reads the failure; the run goes on
            failure = f"tool {self.name!r} failed: {type(exc).__name__}"
            return bounded(failure, limit, is_error=True)
        return bounded(output, limit)


@overload
def tool(function: Callable[P, R], /) -> Tool[P, R]: ...
@overload
def tool(
    *,
    name: str | None = None,
    description: str | None = None,
    max_output_chars: int | None = None,
) -> Callable[[Callable[P, R]], Tool[P, R]]: ...
def tool(
    function: Callable[P, R] | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    max_output_chars: int | None = None,
) -> Tool[P, R] | Callable[[Callable[P, R]], Tool[P, R]]:
    """Declare a function (sync or async) as a tool: ``@hw.tool`` or ``@hw.tool(name=...)``.

    Every parameter needs a type annotation (``Annotated[int, Field(description=...)]`` adds
    a description); the first paragraph of the docstring describes the tool. A sync function
    runs on the event loop: make a blocking tool async (or hand it to a worker thread).
    """
    if max_output_chars is not None:
        _check_limit(max_output_chars, "max_output_chars")

    def declare(target: Callable[P, R]) -> Tool[P, R]:
        if not callable(target):
            raise _bad_tool(target, "a tool is a function")
        tool_name = name or str(getattr(target, "__name__", ""))
        if not tool_name.isidentifier():
            raise _bad_tool(target, f"name {tool_name!r} is not an identifier")
        return Tool(
            function=target,
            name=tool_name,
            description=_describe(target) if description is None else description,
            arguments=_arguments_model(target, tool_name),
            max_output_chars=max_output_chars,
        )

    return declare if function is None else declare(function)


def toolbox(tools: Iterable[Tool[Any, Any]]) -> Mapping[str, Tool[Any, Any]]:
    """Tools by name; two tools with one name are an error."""
    found: dict[str, Tool[Any, Any]] = {}
    for item in tools:
        if not isinstance(item, Tool):
            raise AgentError(
                "invalid_tool",
                _RULE,
                f"invalid tool {item!r}: tools are declared with @hw.tool ({_RULE})",
            )
        if item.name in found:
            raise AgentError(
                "duplicate_tool",
                _RULE,
                f"two tools are named {item.name!r}: tool names are unique in a harness ({_RULE})",
            )
        found[item.name] = item
    return found
