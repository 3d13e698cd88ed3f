"""``--otel``: the proxy's trace as OpenTelemetry spans (the run loop's ``OTelExporter``).

``console`` prints each span as JSON to stderr (stdout is the MCP channel of a stdio proxy);
``otlp`` sends them with the OTLP/HTTP exporter, configured by the standard
``OTEL_EXPORTER_OTLP_*`` variables (``pip install opentelemetry-exporter-otlp-proto-http``).
Each call answered is a ``harnessweaver.run`` span of the session's run id (``exit_reason``
``tool_call``), its hook points and middleware inside, as docs/telemetry.md describes; with
``OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental`` in the proxy's environment, the
GenAI spans instead (an ``invoke_agent`` span per call, its ``execute_tool <tool>`` inside, each
decision an event). The tracer provider is the proxy's own; the global one is never set.
"""

from __future__ import annotations

import sys
from typing import Any

__all__ = ["KINDS", "Telemetry", "TelemetryError"]

KINDS = ("console", "otlp")


class TelemetryError(Exception):
    """``--otel`` cannot be served: what is missing, and how to install it."""


class Telemetry:
    """The tracer provider of ``--otel KIND`` and the exporter the gate is given."""

    def __init__(self, kind: str) -> None:
        try:
            from opentelemetry.sdk.trace import TracerProvider
            from opentelemetry.sdk.trace.export import (
                BatchSpanProcessor,
                ConsoleSpanExporter,
                SimpleSpanProcessor,
            )

            from ..agent.otel import OTelExporter
        except ModuleNotFoundError as exc:
            raise TelemetryError(
                f"--otel needs the OpenTelemetry SDK ({exc.name} is not installed): "
                "the `otel` extra (from a clone: pip install '.[otel]')"
            ) from None
        self.provider = TracerProvider()
        if kind == "console":
            self.provider.add_span_processor(
                SimpleSpanProcessor(ConsoleSpanExporter(out=sys.stderr))
            )
        else:
            try:
                from opentelemetry.exporter.otlp.proto.http.trace_exporter import (  # type: ignore[import-not-found]
                    OTLPSpanExporter,
                )
            except ModuleNotFoundError:
                raise TelemetryError(
                    "--otel otlp needs the OTLP exporter: "
                    "pip install opentelemetry-exporter-otlp-proto-http"
                ) from None
            self.provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        self.exporters: list[Any] = [OTelExporter(self.provider)]

    def close(self) -> None:
        """Every span sent, then the provider shut down."""
        self.provider.force_flush()
        self.provider.shutdown()
