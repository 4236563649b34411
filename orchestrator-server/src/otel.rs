//! OTLP trace export (cargo feature `otel`, off by default).
//!
//! The server already opens one `tracing` span per request (`request`, with
//! `request_id`, `method` and `route`); [`OtelTraces::layer`] turns those
//! spans, and any inside them, into OpenTelemetry spans and a batch exporter
//! sends them as OTLP protobuf over HTTP to `<endpoint>/v1/traces`. Whoever
//! installs the `tracing` subscriber (`orch serve --otel-endpoint URL`, or an
//! embedding program) adds the layer next to its log output.
//!
//! Protobuf over HTTP needs no gRPC stack; the exporter runs on its own
//! thread with reqwest's blocking client, so it neither needs nor disturbs
//! the server's runtime. That client's TLS takes the process's rustls
//! provider: install one before [`OtelTraces::new`] for an `https` endpoint
//! (`orch serve` does).

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::{Protocol, SpanExporter, WithExportConfig};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::trace::SdkTracerProvider;
use tracing::Subscriber;
use tracing_subscriber::Layer;
use tracing_subscriber::registry::LookupSpan;

/// What the exporter can fail with when it is set up (a malformed endpoint).
pub use opentelemetry_otlp::ExporterBuildError;

/// The name traces are reported under (`service.name`).
const SERVICE_NAME: &str = "orch";

/// A running OTLP trace exporter. Dropping it flushes what is buffered and
/// stops the exporter, so keep it for the life of the server.
pub struct OtelTraces {
    provider: SdkTracerProvider,
}

impl std::fmt::Debug for OtelTraces {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OtelTraces").finish_non_exhaustive()
    }
}

/// The traces URL of an OTLP/HTTP `endpoint` given as a base, the way
/// `OTEL_EXPORTER_OTLP_ENDPOINT` is: `http://collector:4318` →
/// `http://collector:4318/v1/traces`.
pub fn traces_url(endpoint: &str) -> String {
    format!("{}/v1/traces", endpoint.trim_end_matches('/'))
}

impl OtelTraces {
    /// An exporter sending batches to [`traces_url`]`(endpoint)`.
    pub fn new(endpoint: &str) -> Result<Self, ExporterBuildError> {
        let exporter = SpanExporter::builder()
            .with_http()
            .with_protocol(Protocol::HttpBinary)
            .with_endpoint(traces_url(endpoint))
            .build()?;
        let provider = SdkTracerProvider::builder()
            .with_batch_exporter(exporter)
            .with_resource(Resource::builder().with_service_name(SERVICE_NAME).build())
            .build();
        Ok(Self { provider })
    }

    /// The `tracing` layer feeding this exporter.
    pub fn layer<S>(&self) -> impl Layer<S> + Send + Sync + 'static
    where
        S: Subscriber + for<'span> LookupSpan<'span> + Send + Sync,
    {
        tracing_opentelemetry::layer().with_tracer(self.provider.tracer("orchestrator-server"))
    }

    /// Sends what is buffered now (blocks until the batch is out or failed).
    pub fn flush(&self) {
        if let Err(e) = self.provider.force_flush() {
            tracing::warn!(error = %e, "OTLP trace export failed");
        }
    }
}

impl Drop for OtelTraces {
    fn drop(&mut self) {
        let _ = self.provider.shutdown();
    }
}
