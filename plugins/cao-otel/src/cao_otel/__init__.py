"""cao-otel: OpenTelemetry traces and metrics of a cao team, exported over OTLP when switched on."""
