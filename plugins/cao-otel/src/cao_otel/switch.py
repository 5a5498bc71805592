"""Whether telemetry is on, and the exporters it then uses.

Off unless asked for, as upstream: ``OTEL_SDK_DISABLED=false`` switches it on (upstream's switch, so a
user's setting carries over). The OTLP/HTTP exporters then read the standard variables themselves:
``OTEL_EXPORTER_OTLP_ENDPOINT`` (default ``http://localhost:4318``), ``OTEL_EXPORTER_OTLP_HEADERS``,
``OTEL_SERVICE_NAME`` (default here: ``cao``), ``OTEL_RESOURCE_ATTRIBUTES``, ``OTEL_BSP_*`` and
``OTEL_METRIC_EXPORT_INTERVAL``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

SWITCH = "OTEL_SDK_DISABLED"


def switched_on(env: Mapping[str, str]) -> bool:
    """True only when ``OTEL_SDK_DISABLED`` is ``false`` (any case, surrounding blanks ignored)."""
    return env.get(SWITCH, "").strip().lower() == "false"


def providers_from_env(env: Mapping[str, str]) -> tuple[Any, Any]:
    """A tracer provider and a meter provider exporting over OTLP/HTTP, configured by ``env``'s
    standard variables (read by the SDK from the process environment)."""
    from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    attributes = {} if env.get("OTEL_SERVICE_NAME") else {"service.name": "cao"}
    resource = Resource.create(attributes)
    tracer_provider = TracerProvider(resource=resource)
    tracer_provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    meter_provider = MeterProvider(resource=resource,
                                   metric_readers=[PeriodicExportingMetricReader(OTLPMetricExporter())])
    return tracer_provider, meter_provider
