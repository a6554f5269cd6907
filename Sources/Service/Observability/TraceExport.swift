import Observability
import Primitives

/// Trace export from the OpenTelemetry settings: on when an OTLP endpoint is configured (and
/// neither `OTEL_SDK_DISABLED` nor `OTEL_TRACES_EXPORTER=none` says otherwise); off, nothing
/// is recorded and nothing is spent.
enum TraceExport {
    static func settings(_ c: Configuration) -> SpanExporter.Settings? {
        guard !c.otelSDKDisabled, c.otelTracesExporter == "otlp" else { return nil }
        // The signal-specific URL is used as it is; the base one gets the signal's path.
        let url: String
        if let traces = c.otelTracesEndpoint {
            url = traces
        } else if let base = c.otelEndpoint {
            url = (base.hasSuffix("/") ? String(base.dropLast()) : base) + "/v1/traces"
        } else {
            return nil
        }
        var resource: [(String, Span.Value)] = c.otelResourceAttributes.filter { $0.key != "service.name" }.map { ($0.key, .string($0.value)) }
        let named = c.otelResourceAttributes.last { $0.key == "service.name" }?.value
        // OTEL_SERVICE_NAME wins over a service.name in OTEL_RESOURCE_ATTRIBUTES.
        let serviceName = c.otelServiceName != "feedproxy" ? c.otelServiceName : named ?? c.otelServiceName
        resource.insert(("service.name", .string(serviceName)), at: 0)
        resource += [
            ("service.version", .string(Configuration.version)), ("telemetry.sdk.name", .string("feedproxy")),
            ("telemetry.sdk.language", .string("swift")), ("telemetry.sdk.version", .string(Configuration.version)),
        ]
        return SpanExporter.Settings(
            url: url, headers: c.otelHeaders.map { ($0.key, $0.value) }, gzip: c.otelCompression == "gzip", timeoutMs: c.otelTimeoutMs,
            exportTimeoutMs: c.otelBSPExportTimeoutMs, scheduleDelayMs: c.otelBSPScheduleDelayMs, maxQueue: c.otelBSPMaxQueueSize,
            maxBatch: min(c.otelBSPMaxExportBatchSize, c.otelBSPMaxQueueSize),
            sampler: TraceSampler(name: c.otelTracesSampler, argument: c.otelTracesSamplerArg) ?? TraceSampler(followsParent: true, ratio: 1),
            resource: resource, version: Configuration.version)
    }
}
