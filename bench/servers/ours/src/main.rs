//! The benchmark server, written with typed-mcp: `echo {text}` and `form`, which elicits a
//! three-field form and returns what the user entered.
//!
//! `ours-server` serves stdio; `ours-server --http 0` serves Streamable HTTP on a free loopback
//! port and prints that port as its first line. With `--jwt` too, the endpoint is an OAuth
//! protected resource (`JwtVerifier`): the process publishes a key set on another loopback port,
//! as an issuer would, mints an access token for the endpoint, and prints it after the port on
//! the same line, for the driver to send. With `--dpop FILE N` as well, the endpoint accepts
//! DPoP-bound tokens, the token is bound to the driver's key, and N proofs for it (signed ahead
//! of time, so that the driver measures the server's checks, not its own signing) are written to
//! FILE, one per line. `--otel` turns OpenTelemetry on; `--otel-floor N` only times the
//! OpenTelemetry SDK's own work per request (see `otel_floor`).

use schemars::JsonSchema;
use serde::Deserialize;
use typed_mcp::prelude::*;
use typed_mcp::transport::http::HttpConfig;

/// The form `form` asks for.
#[derive(Debug, Deserialize, JsonSchema, Elicit)]
struct Contact {
    /// Your name.
    name: String,
    /// Your age in years.
    age: u32,
    /// Send me the newsletter.
    subscribe: bool,
}

/// Returns the text it is given.
///
/// # Arguments
/// * `text` - The text to send back.
#[tool]
fn echo(text: String) -> String {
    text
}

/// Asks the user for their contact details and returns them.
#[tool]
async fn form(ctx: Context) -> Result<String, String> {
    let label = "contact"; // bench: edited line
    match ctx.elicit::<Contact>("Please enter your contact details.").await {
        Ok(Elicitation::Accept(c)) => Ok(format!("{label}: {} ({}), newsletter: {}", c.name, c.age, c.subscribe)),
        Ok(Elicitation::Decline | Elicitation::Cancel) => Ok(format!("{label}: none given")),
        Err(e) => Err(e.to_string()),
    }
}

/// The issuer's signing key (P-256), made for the benchmark, and its public half as a JWK.
const KEY: &str = "-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg5pziGwZKa5NDLQt4
h8md4rR5XJ7kpjmnNJ8GCmbwcEOhRANCAASFZm2xouyqEXXsSl6ylQ9toRP8VNLf
Tt5uKonh1EhDApSlhNjWQF7DSIO+ldZ08hgxc1o4D12lub4i5h/MayHr
-----END PRIVATE KEY-----
";
const JWKS: &str = r#"{"keys":[{"kty":"EC","crv":"P-256","alg":"ES256","use":"sig","kid":"bench","x":"hWZtsaLsqhF17EpespUPbaET_FTS307ebiqJ4dRIQwI","y":"lKWE2NZAXsNIg76V1nTyGDFzWjgPXaW5viLmH8xrIes"}]}"#;

/// The driver's DPoP key (P-256), made for the benchmark: the server signs the driver's proofs
/// with it ahead of time (`--dpop FILE N`), so that the driver spends nothing on signing.
const CLIENT_KEY: &str = "-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQggJcFkq8vIlZw6q+u
lU0+9OjDD4PlhsEeLnG4XmrIp92hRANCAARZVFBQ30r4rnBAPBzj2cqqpnv5l87X
qraeDdYOMTluQy84/jXReiJYVp9LOSwgmn6dFPfj7XkmKVdcd4l46Yn8
-----END PRIVATE KEY-----
";
const CLIENT_JWK: &str = r#"{"kty":"EC","crv":"P-256","x":"WVRQUN9K-K5wQDwc49nKqqZ7-ZfO16q2ng3WDjE5bkM","y":"Lzj-NdF6IlhWn0s5LCCafp0U9-PteSYpV1x3iXjpifw"}"#;

/// Writes `count` DPoP proofs (one per line) for `POST url` with `token` to `path`.
fn write_proofs(path: &str, count: usize, url: &str, token: &str) -> Result<(), Box<dyn std::error::Error>> {
    use std::io::Write as _;
    let jwk: jsonwebtoken::jwk::Jwk = serde_json::from_str(CLIENT_JWK)?;
    let mut header = jsonwebtoken::Header::new(jsonwebtoken::Algorithm::ES256);
    header.typ = Some("dpop+jwt".into());
    header.jwk = Some(jwk);
    let key = jsonwebtoken::EncodingKey::from_ec_pem(CLIENT_KEY.as_bytes())?;
    let ath = {
        use base64::Engine as _;
        use sha2::Digest as _;
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(sha2::Sha256::digest(token.as_bytes()))
    };
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH)?.as_secs();
    let mut out = std::io::BufWriter::new(std::fs::File::create(path)?);
    for i in 0..count {
        let claims =
            serde_json::json!({"jti": format!("bench-{i}"), "htm": "POST", "htu": url, "iat": now, "ath": ath});
        writeln!(out, "{}", jsonwebtoken::encode(&header, &claims, &key)?)?;
    }
    out.flush()?;
    Ok(())
}

/// Serves the key set to whoever asks, on a free loopback port; returns its URL.
async fn publish_keys() -> std::io::Result<String> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0)).await?;
    let url = format!("http://{}/jwks", listener.local_addr()?);
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut buf = [0u8; 4096];
                let _ = stream.read(&mut buf).await;
                let response = format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{JWKS}",
                    JWKS.len()
                );
                let _ = stream.write_all(response.as_bytes()).await;
            });
        }
    });
    Ok(url)
}

/// What `--otel` exports to: the SDK's batching processor and periodic reader, with
/// exporters that drop what they are given (the cost measured is the instrumentation's and the
/// SDK's, not a collector's).
#[derive(Debug)]
struct Discard;

impl opentelemetry_sdk::trace::SpanExporter for Discard {
    async fn export(&self, _: Vec<opentelemetry_sdk::trace::SpanData>) -> opentelemetry_sdk::error::OTelSdkResult {
        Ok(())
    }
}

impl opentelemetry_sdk::metrics::exporter::PushMetricExporter for Discard {
    async fn export(
        &self,
        _: &opentelemetry_sdk::metrics::data::ResourceMetrics,
    ) -> opentelemetry_sdk::error::OTelSdkResult {
        Ok(())
    }

    fn force_flush(&self) -> opentelemetry_sdk::error::OTelSdkResult {
        Ok(())
    }

    fn shutdown_with_timeout(&self, _: std::time::Duration) -> opentelemetry_sdk::error::OTelSdkResult {
        Ok(())
    }

    fn temporality(&self) -> opentelemetry_sdk::metrics::Temporality {
        opentelemetry_sdk::metrics::Temporality::Cumulative
    }
}

/// `--otel-floor N`: what the OpenTelemetry SDK alone costs per request, with nothing of ours
/// around it: N times, a `SERVER` span with the attributes our server gives an echo call, ended
/// at once, and a histogram record with the attributes of its duration, through the same
/// providers as `--otel`. Prints the nanoseconds per request of the span, of the histogram
/// record, and of both (each timed on its own, on one thread, after a warm-up).
fn otel_floor(count: u32) {
    use opentelemetry::trace::{SpanKind, TraceContextExt, Tracer, TracerProvider};
    use opentelemetry::{KeyValue, metrics::MeterProvider};
    let traces = opentelemetry_sdk::trace::SdkTracerProvider::builder().with_batch_exporter(Discard).build();
    let meters = opentelemetry_sdk::metrics::SdkMeterProvider::builder().with_periodic_exporter(Discard).build();
    let tracer = traces.tracer("floor");
    let histogram = meters.meter("floor").f64_histogram("mcp.server.operation.duration").build();
    let shared = || {
        vec![
            KeyValue::new("mcp.method.name", "tools/call"),
            KeyValue::new("gen_ai.tool.name", "echo"),
            KeyValue::new("gen_ai.operation.name", "execute_tool"),
            KeyValue::new("mcp.protocol.version", "2025-11-25"),
            KeyValue::new("network.transport", "pipe"),
        ]
    };
    let span = |i: u32| {
        let mut attributes = shared();
        attributes.push(KeyValue::new("jsonrpc.request.id", i64::from(i)));
        let parent = opentelemetry::Context::current();
        let span = tracer
            .span_builder("tools/call echo")
            .with_kind(SpanKind::Server)
            .with_attributes(attributes)
            .start_with_context(&tracer, &parent);
        let cx = parent.with_span(span);
        cx.span().end();
    };
    let record = |i: u32| histogram.record(f64::from(i % 100) * 1e-6, &shared());
    let time = |f: &dyn Fn(u32)| {
        for i in 0..count / 10 {
            f(i);
        }
        let start = std::time::Instant::now();
        for i in 0..count {
            f(i);
        }
        start.elapsed().as_nanos() as f64 / f64::from(count)
    };
    let spans = time(&span);
    let records = time(&record);
    let both = time(&|i| {
        span(i);
        record(i);
    });
    println!("{spans:.0} {records:.0} {both:.0}");
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let Some(count) = args.iter().position(|a| a == "--otel-floor").and_then(|i| args.get(i + 1)) {
        otel_floor(count.parse()?);
        return Ok(());
    }
    let mut builder = Server::builder("bench-ours", "0.0.0").tools(tools![echo, form]);
    // `--otel`: spans and metrics of every request (see `Discard`).
    let _providers = if args.iter().any(|a| a == "--otel") {
        let mut traces = opentelemetry_sdk::trace::SdkTracerProvider::builder().with_batch_exporter(Discard);
        // `--otel-ratio R`: traces sampled at the ratio R (the SDK's `TraceIdRatioBased`, as
        // `OTEL_TRACES_SAMPLER=parentbased_traceidratio` sets it up); metrics still record
        // every request.
        if let Some(ratio) = args.iter().position(|a| a == "--otel-ratio").and_then(|i| args.get(i + 1)) {
            let ratio = Box::new(opentelemetry_sdk::trace::Sampler::TraceIdRatioBased(ratio.parse()?));
            traces = traces.with_sampler(opentelemetry_sdk::trace::Sampler::ParentBased(ratio));
        }
        let traces = traces.build();
        let meters = opentelemetry_sdk::metrics::SdkMeterProvider::builder().with_periodic_exporter(Discard).build();
        // `--otel-any-provider`: the meter provider taken as any `MeterProvider`, so durations
        // are recorded with their attributes (no bound instruments).
        let telemetry = if args.iter().any(|a| a == "--otel-any-provider") {
            typed_mcp::telemetry::Telemetry::new(&traces, &meters as &dyn opentelemetry::metrics::MeterProvider)
        } else {
            typed_mcp::telemetry::Telemetry::from_sdk(&traces, &meters)
        }
        .propagator(opentelemetry_sdk::propagation::TraceContextPropagator::new());
        builder = builder.telemetry(telemetry);
        Some((traces, meters))
    } else {
        None
    };
    // `--rate-limit`: every request through a rate limiter whose limit is never reached.
    if args.iter().any(|a| a == "--rate-limit") {
        let limit = typed_mcp::middleware::RateLimit::new(u32::MAX, std::time::Duration::from_secs(1)).burst(u32::MAX);
        builder = builder.middleware(limit);
    }
    let server = builder.build()?;
    let jwt = args.iter().any(|a| a == "--jwt");
    // `--dpop FILE N`: the token is DPoP-bound, and N proofs for it are written to FILE.
    let dpop = args.iter().position(|a| a == "--dpop").map(|i| (args.get(i + 1), args.get(i + 2)));
    let port = args.iter().position(|a| a == "--http").and_then(|i| args.get(i + 1));
    match port {
        Some(port) => {
            let listener = tokio::net::TcpListener::bind(("127.0.0.1", port.parse::<u16>()?)).await?;
            let address = listener.local_addr()?;
            // The scenarios open more sessions than the default cap (1,000, sized for a small
            // server) allows; the other servers have no cap, so neither does this one here.
            let mut config = HttpConfig::default().max_sessions(1 << 20);
            if jwt {
                let issuer = "https://issuer.bench";
                let resource = format!("http://{address}/mcp");
                let verifier = typed_mcp::auth::JwtVerifier::new(issuer).jwks_uri(publish_keys().await?);
                // Every session of the driver is the same user, with the one token printed here.
                let mut authorization = typed_mcp::auth::Authorization::new(verifier).resource(&resource);
                if dpop.is_some() {
                    authorization =
                        authorization.dpop(typed_mcp::auth::Dpop::new().max_age(std::time::Duration::from_secs(600)));
                }
                config = config.authorization(authorization).max_sessions_per_subject(1000);
                let mut header = jsonwebtoken::Header::new(jsonwebtoken::Algorithm::ES256);
                header.kid = Some("bench".into());
                header.typ = Some("at+jwt".into());
                let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH)?.as_secs();
                let mut claims = serde_json::json!({"iss": issuer, "aud": resource, "sub": "bench", "exp": now + 3600,
                                                "iat": now, "scope": "echo", "client_id": "bench"});
                if dpop.is_some() {
                    let jwk: jsonwebtoken::jwk::Jwk = serde_json::from_str(CLIENT_JWK)?;
                    claims["cnf"] =
                        serde_json::json!({"jkt": jwk.thumbprint(jsonwebtoken::jwk::ThumbprintHash::SHA256)});
                }
                let key = jsonwebtoken::EncodingKey::from_ec_pem(KEY.as_bytes())?;
                let token = jsonwebtoken::encode(&header, &claims, &key)?;
                if let Some((file, count)) = dpop {
                    let (Some(file), Some(count)) = (file, count.and_then(|c| c.parse::<usize>().ok())) else {
                        return Err("--dpop FILE N".into());
                    };
                    write_proofs(file, count, &resource, &token)?;
                }
                println!("{} {token}", address.port());
            } else {
                println!("{}", address.port());
            }
            if let Some(url) = args.iter().position(|a| a == "--redis").and_then(|i| args.get(i + 1)) {
                let redis = typed_mcp_redis::Redis::connect(url)?;
                let mut backplane = redis.backplane(format!("http://{address}/mcp"));
                // `--on-owner TOOL`: that tool runs on its session's owner, so that a call
                // landing elsewhere is forwarded there.
                if let Some(tool) = args.iter().position(|a| a == "--on-owner").and_then(|i| args.get(i + 1)) {
                    backplane = backplane.on_owner(tool.clone());
                }
                config = config.backplane(backplane);
            }
            server.streamable_http(config).serve(listener, std::future::pending()).await?;
        }
        None if args.iter().all(|a| {
            ["--otel", "--otel-any-provider", "--rate-limit", "--otel-ratio"].contains(&a.as_str())
                || a.parse::<f64>().is_ok()
        }) =>
        {
            server.serve_stdio().await?
        }
        None => {
            return Err(
                "usage: ours-server [--otel [--otel-ratio R] [--otel-any-provider]] [--rate-limit] [--http PORT [--jwt [--dpop FILE N]] [--redis URL [--on-owner TOOL]]] | --otel-floor N".into(),
            );
        }
    }
    Ok(())
}
