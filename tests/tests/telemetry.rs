//! OpenTelemetry by the MCP conventions: span names, kinds and attributes for each method and
//! outcome (table-driven), trace context through `_meta` linking our client's spans to our
//! server's in both eras (a multi-round 2026 call is one client span over every round), and
//! the duration histograms with the conventions' buckets.

use std::collections::{BTreeMap, HashMap};

use opentelemetry::trace::{SpanKind, Status};
use opentelemetry::{KeyValue, Value as OtelValue};
use opentelemetry_sdk::metrics::data::{AggregatedMetrics, MetricData, ResourceMetrics};
use opentelemetry_sdk::metrics::{InMemoryMetricExporter, PeriodicReader, SdkMeterProvider};
use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider, SpanData};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;
use tests::stdio::within;
use typed_mcp::client::{Client, ElicitationModes, ProtocolEra};
use typed_mcp::prelude::*;
use typed_mcp::protocol::ElicitResult;
use typed_mcp::telemetry::{DURATION_BUCKETS, Telemetry};
use typed_mcp::transport::http::HttpConfig;

use crate::support::http::Endpoint;

/// Spans and metrics kept in memory, for one test.
struct Recorder {
    spans: InMemorySpanExporter,
    tracer: SdkTracerProvider,
    metrics: InMemoryMetricExporter,
    meter: SdkMeterProvider,
    /// Whether its telemetry records durations through bound instruments
    /// (`Telemetry::from_sdk`).
    bind: bool,
}

impl Recorder {
    /// A recorder whose telemetry takes the meter provider as any provider (`Telemetry::new`).
    fn new() -> Self {
        let spans = InMemorySpanExporter::default();
        let tracer = SdkTracerProvider::builder().with_simple_exporter(spans.clone()).build();
        let metrics = InMemoryMetricExporter::default();
        let meter = SdkMeterProvider::builder().with_reader(PeriodicReader::builder(metrics.clone()).build()).build();
        Recorder { spans, tracer, metrics, meter, bind: false }
    }

    /// A recorder whose telemetry binds its duration instruments (`Telemetry::from_sdk`).
    fn binding() -> Self {
        Recorder { bind: true, ..Recorder::new() }
    }

    fn telemetry(&self) -> Telemetry {
        let telemetry = if self.bind {
            Telemetry::from_sdk(&self.tracer, &self.meter)
        } else {
            Telemetry::new(&self.tracer, &self.meter as &dyn opentelemetry::metrics::MeterProvider)
        };
        telemetry.propagator(TraceContextPropagator::new())
    }

    fn spans(&self) -> Vec<SpanData> {
        self.spans.get_finished_spans().expect("the finished spans")
    }

    fn metrics(&self) -> Vec<ResourceMetrics> {
        self.meter.force_flush().expect("metrics flushed");
        self.metrics.get_finished_metrics().expect("the finished metrics")
    }
}

fn attributes(span: &SpanData) -> HashMap<String, String> {
    span.attributes.iter().map(|kv| (kv.key.to_string(), kv.value.to_string())).collect()
}

/// Echoes its text.
#[tool]
fn echo(text: String) -> String {
    text
}

/// Always fails.
#[tool]
fn broken() -> Result<String, String> {
    Err("out of order".into())
}

/// Greets someone.
#[prompt]
fn greet(name: String) -> String {
    format!("Hello, {name}!")
}

/// The readme.
#[resource("docs://readme", mime_type = "text/plain")]
fn readme() -> String {
    "Read me.".into()
}

#[derive(Debug, Deserialize, Serialize, JsonSchema, Elicit)]
struct Confirm {
    /// Go ahead?
    ok: bool,
}

/// Asks before doing it.
#[tool]
async fn careful(ctx: Context) -> Result<String, String> {
    match ctx.elicit::<Confirm>("Sure?").await {
        Ok(Elicitation::Accept(c)) if c.ok => Ok("done".into()),
        Ok(_) => Ok("not done".into()),
        Err(e) => Err(e.to_string()),
    }
}

fn server(recorder: &Recorder) -> Server {
    Server::builder("traced", "1.0.0")
        .tools(tools![echo, broken, careful])
        .prompts(prompts![greet])
        .resources(resources![readme])
        .telemetry(recorder.telemetry())
        .build()
        .unwrap()
}

#[tokio::test]
async fn spans_follow_the_conventions_for_each_method_and_outcome() {
    let recorder = Recorder::new();
    let server = server(&recorder);
    let client = within(
        "connecting",
        Client::builder("tracing-client", "1").telemetry(recorder.telemetry()).connect_in_process(&server),
    )
    .await
    .unwrap();
    // (what is sent, the span name, attributes it must carry, error.type if it fails)
    struct Case {
        name: &'static str,
        must: Vec<(&'static str, &'static str)>,
        error: Option<&'static str>,
    }
    client.call_tool("echo", json!({"text": "hi"})).await.unwrap();
    client.call_tool("broken", json!({})).await.unwrap();
    client.call_tool("missing", json!({})).await.unwrap_err();
    client.get_prompt("greet", &[("name", "Ada")]).await.unwrap();
    client.read_resource("docs://readme").await.unwrap();
    client.list_tools(None).await.unwrap();
    let cases = [
        Case {
            name: "tools/call echo",
            must: vec![
                ("mcp.method.name", "tools/call"),
                ("gen_ai.tool.name", "echo"),
                ("gen_ai.operation.name", "execute_tool"),
            ],
            error: None,
        },
        Case {
            name: "tools/call broken",
            must: vec![("gen_ai.tool.name", "broken"), ("gen_ai.operation.name", "execute_tool")],
            error: Some("tool_error"),
        },
        Case { name: "tools/call missing", must: vec![("gen_ai.tool.name", "missing")], error: Some("-32602") },
        Case {
            name: "prompts/get greet",
            must: vec![("mcp.method.name", "prompts/get"), ("gen_ai.prompt.name", "greet")],
            error: None,
        },
        Case {
            name: "resources/read",
            must: vec![("mcp.method.name", "resources/read"), ("mcp.resource.uri", "docs://readme")],
            error: None,
        },
        Case { name: "tools/list", must: vec![("mcp.method.name", "tools/list")], error: None },
    ];
    let spans = recorder.spans();
    for case in &cases {
        let server_span = spans
            .iter()
            .find(|s| s.name == case.name && s.span_kind == SpanKind::Server)
            .unwrap_or_else(|| panic!("no SERVER span `{}` among {:?}", case.name, names(&spans)));
        let client_span = spans
            .iter()
            .find(|s| s.name == case.name && s.span_kind == SpanKind::Client)
            .unwrap_or_else(|| panic!("no CLIENT span `{}` among {:?}", case.name, names(&spans)));
        // Trace context went through `_meta`: the server's span is the client's child.
        assert_eq!(server_span.span_context.trace_id(), client_span.span_context.trace_id(), "{}", case.name);
        assert_eq!(server_span.parent_span_id, client_span.span_context.span_id(), "{}", case.name);
        for span in [server_span, client_span] {
            let a = attributes(span);
            for (key, value) in &case.must {
                assert_eq!(a.get(*key).map(String::as_str), Some(*value), "{} {:?}: {key}", case.name, span.span_kind);
            }
            assert_eq!(a.get("network.transport").map(String::as_str), Some("pipe"), "{}", case.name);
            assert_eq!(a.get("mcp.protocol.version").map(String::as_str), Some("2025-11-25"), "{}", case.name);
            assert_eq!(a.get("error.type").map(String::as_str), case.error, "{} {:?}", case.name, span.span_kind);
            match case.error {
                Some(_) => assert!(matches!(span.status, Status::Error { .. }), "{}: {:?}", case.name, span.status),
                None => assert!(!matches!(span.status, Status::Error { .. }), "{}: {:?}", case.name, span.status),
            }
        }
        let a = attributes(server_span);
        assert!(a.contains_key("jsonrpc.request.id"), "{}", case.name);
        if case.error == Some("-32602") {
            assert_eq!(a.get("rpc.response.status_code").map(String::as_str), Some("-32602"));
        }
        // Arguments and results only when asked for.
        assert!(!a.contains_key("gen_ai.tool.call.arguments") && !a.contains_key("gen_ai.tool.call.result"));
    }
    // The handshake is traced too.
    let initialize = spans.iter().filter(|s| s.name == "initialize").count();
    assert_eq!(initialize, 2, "a client and a server span of `initialize`: {:?}", names(&spans));
    // A URI is not part of a span name (high cardinality).
    assert!(spans.iter().all(|s| !s.name.contains("docs://")));
    client.close().await;
}

fn names(spans: &[SpanData]) -> Vec<String> {
    spans.iter().map(|s| format!("{} ({:?})", s.name, s.span_kind)).collect()
}

#[tokio::test]
async fn a_server_continues_the_trace_in_meta_and_ignores_malformed_context() {
    let recorder = Recorder::new();
    let server = server(&recorder);
    let endpoint = Endpoint::serve(&server, HttpConfig::default()).await;
    let session = endpoint.session(json!({})).await;
    let parent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    let answer = session
        .request("tools/call", json!({"name": "echo", "arguments": {"text": "a"}, "_meta": {"traceparent": parent}}))
        .await;
    assert_eq!(answer["result"]["content"][0]["text"], "a", "{answer}");
    for bad in [json!("00-zz-00f067aa0ba902b7-01"), json!(42), json!("")] {
        let answer = session
            .request("tools/call", json!({"name": "echo", "arguments": {"text": "b"}, "_meta": {"traceparent": bad}}))
            .await;
        assert_eq!(answer["result"]["content"][0]["text"], "b", "a malformed traceparent is ignored: {answer}");
    }
    let spans = recorder.spans();
    let calls: Vec<_> = spans.iter().filter(|s| s.name == "tools/call echo").collect();
    assert_eq!(calls.len(), 4, "{:?}", names(&spans));
    assert_eq!(calls[0].span_context.trace_id().to_string(), "4bf92f3577b34da6a3ce929d0e0e4736");
    assert_eq!(calls[0].parent_span_id.to_string(), "00f067aa0ba902b7");
    for call in &calls[1..] {
        assert_ne!(call.span_context.trace_id().to_string(), "4bf92f3577b34da6a3ce929d0e0e4736");
    }
    let a = attributes(calls[0]);
    assert_eq!(a.get("network.transport").map(String::as_str), Some("tcp"));
    assert!(a.contains_key("mcp.session.id"), "2025-era HTTP requests name their session: {a:?}");
}

#[tokio::test]
async fn a_multi_round_call_of_the_2026_era_is_one_trace() {
    let recorder = Recorder::new();
    let server = server(&recorder);
    let endpoint = Endpoint::serve(&server, HttpConfig::default()).await;
    let answering = typed_mcp::client::elicitation_fn(ElicitationModes::FORM, |_| async move {
        ElicitResult::accept(json!({"ok": true}).as_object().unwrap().clone())
    });
    let client = within(
        "connecting",
        Client::builder("rounds", "1")
            .protocol_era(ProtocolEra::Y2026)
            .elicitation(answering)
            .telemetry(recorder.telemetry())
            .connect_http(&endpoint.url),
    )
    .await
    .unwrap();
    let result = client.call_tool("careful", json!({})).await.unwrap();
    assert_eq!(result.content[0].as_text(), Some("done"));
    let spans = recorder.spans();
    let client_spans: Vec<_> =
        spans.iter().filter(|s| s.name == "tools/call careful" && s.span_kind == SpanKind::Client).collect();
    let server_spans: Vec<_> =
        spans.iter().filter(|s| s.name == "tools/call careful" && s.span_kind == SpanKind::Server).collect();
    assert_eq!(client_spans.len(), 1, "the call is one client span: {:?}", names(&spans));
    assert_eq!(server_spans.len(), 2, "two rounds, two server spans: {:?}", names(&spans));
    for round in &server_spans {
        assert_eq!(round.parent_span_id, client_spans[0].span_context.span_id());
        assert_eq!(round.span_context.trace_id(), client_spans[0].span_context.trace_id());
        let a = attributes(round);
        assert_eq!(a.get("mcp.protocol.version").map(String::as_str), Some("2026-07-28"));
        assert!(!a.contains_key("mcp.session.id"), "the 2026 era has no sessions");
    }
    let a = attributes(client_spans[0]);
    assert_eq!(a.get("server.address").map(String::as_str), Some("127.0.0.1"));
    assert_eq!(a.get("network.transport").map(String::as_str), Some("tcp"));
    client.close().await;
}

#[tokio::test]
async fn arguments_and_results_are_recorded_only_when_asked() {
    let recorder = Recorder::new();
    let telemetry = recorder.telemetry().record_tool_arguments(true).record_tool_results(true);
    let server = Server::builder("traced", "1").tools(tools![echo]).telemetry(telemetry).build().unwrap();
    let client = typed_mcp::testing::connect(&server).await;
    client.call_tool("echo", json!({"text": "secret"})).await.unwrap();
    let spans = recorder.spans();
    let a = attributes(spans.iter().find(|s| s.name == "tools/call echo").expect("the call's span"));
    assert!(a["gen_ai.tool.call.arguments"].contains("secret"), "{a:?}");
    assert!(a["gen_ai.tool.call.result"].contains("secret"), "{a:?}");
}

#[tokio::test]
async fn the_four_duration_histograms_are_recorded_in_seconds_with_the_conventions_buckets() {
    let recorder = Recorder::new();
    let server = server(&recorder);
    let client =
        Client::builder("measured", "1").telemetry(recorder.telemetry()).connect_in_process(&server).await.unwrap();
    client.call_tool("echo", json!({"text": "x"})).await.unwrap();
    client.call_tool("broken", json!({})).await.unwrap();
    client.close().await;
    // The server sees its session end once the client is gone.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    let mut found: HashMap<String, Vec<Vec<KeyValue>>> = HashMap::new();
    while std::time::Instant::now() < deadline {
        found.clear();
        for resource in recorder.metrics() {
            for scope in resource.scope_metrics() {
                for metric in scope.metrics() {
                    assert_eq!(metric.unit(), "s", "{}", metric.name());
                    if let AggregatedMetrics::F64(MetricData::Histogram(h)) = metric.data() {
                        for point in h.data_points() {
                            assert_eq!(point.bounds().collect::<Vec<_>>(), DURATION_BUCKETS.to_vec());
                            found
                                .entry(metric.name().to_owned())
                                .or_default()
                                .push(point.attributes().cloned().collect());
                        }
                    }
                }
            }
        }
        if found.len() == 4 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    let names: Vec<_> = found.keys().cloned().collect();
    for name in [
        "mcp.server.operation.duration",
        "mcp.client.operation.duration",
        "mcp.server.session.duration",
        "mcp.client.session.duration",
    ] {
        assert!(found.contains_key(name), "{name} missing among {names:?}");
    }
    let has = |points: &Vec<Vec<KeyValue>>, key: &str, value: &str| {
        points
            .iter()
            .any(|p| p.iter().any(|kv| kv.key.as_str() == key && kv.value == OtelValue::from(value.to_owned())))
    };
    let server_ops = &found["mcp.server.operation.duration"];
    assert!(has(server_ops, "gen_ai.tool.name", "echo"));
    assert!(has(server_ops, "error.type", "tool_error"));
    assert!(has(&found["mcp.server.session.duration"], "network.transport", "pipe"));
}

/// The operation durations a recorder holds: how many in each attribute set (`key=value`,
/// sorted), by histogram.
fn operation_counts(recorder: &Recorder) -> BTreeMap<(String, Vec<String>), u64> {
    let mut found = BTreeMap::new();
    // Each export holds every set so far (cumulative): the last one is all of them.
    let exports = recorder.metrics();
    let last = exports.last().expect("one export at least");
    for scope in last.scope_metrics() {
        for metric in scope.metrics() {
            if !metric.name().ends_with(".operation.duration") {
                continue;
            }
            let AggregatedMetrics::F64(MetricData::Histogram(h)) = metric.data() else {
                panic!("{} is not a histogram of f64", metric.name());
            };
            for point in h.data_points() {
                let mut set: Vec<String> = point.attributes().map(|kv| format!("{}={}", kv.key, kv.value)).collect();
                set.sort();
                *found.entry((metric.name().to_owned(), set)).or_default() += point.count();
            }
        }
    }
    found
}

/// Durations recorded through bound instruments (`Telemetry::from_sdk`, one instrument per
/// attribute set) are the ones recorded with their attributes (`Telemetry::new`): the same
/// sets with the same counts, on the server and the client, for successes, tool errors,
/// JSON-RPC errors, prompts and resources (whose URI keeps them unbound).
#[tokio::test]
async fn durations_through_bound_instruments_are_the_ones_recorded_with_their_attributes() {
    async fn run(recorder: &Recorder) {
        let server = server(recorder);
        let client = within(
            "connecting",
            Client::builder("measured", "1").telemetry(recorder.telemetry()).connect_in_process(&server),
        )
        .await
        .unwrap();
        for _ in 0..3 {
            client.call_tool("echo", json!({"text": "x"})).await.unwrap();
        }
        for _ in 0..2 {
            client.call_tool("broken", json!({})).await.unwrap();
        }
        client.call_tool("missing", json!({})).await.unwrap_err();
        client.get_prompt("greet", &[("name", "Ada")]).await.unwrap();
        client.read_resource("docs://readme").await.unwrap();
        client.read_resource("docs://readme").await.unwrap();
        client.list_tools(None).await.unwrap();
        client.close().await;
    }
    let (unbound, bound) = (Recorder::new(), Recorder::binding());
    run(&unbound).await;
    run(&bound).await;
    let (unbound, bound) = (operation_counts(&unbound), operation_counts(&bound));
    assert_eq!(bound, unbound);
    let count = |histogram: &str, with: &[&str]| -> u64 {
        bound
            .iter()
            .filter(|((name, set), _)| name == histogram && with.iter().all(|w| set.iter().any(|a| a == w)))
            .map(|(_, n)| n)
            .sum()
    };
    for side in ["mcp.server.operation.duration", "mcp.client.operation.duration"] {
        assert_eq!(count(side, &["gen_ai.tool.name=echo"]), 3, "{side}: {bound:#?}");
        assert_eq!(count(side, &["gen_ai.tool.name=broken", "error.type=tool_error"]), 2, "{side}: {bound:#?}");
        assert_eq!(count(side, &["gen_ai.tool.name=missing", "error.type=-32602"]), 1, "{side}: {bound:#?}");
        assert_eq!(count(side, &["gen_ai.prompt.name=greet"]), 1, "{side}: {bound:#?}");
        assert_eq!(count(side, &["mcp.resource.uri=docs://readme"]), 2, "{side}: {bound:#?}");
        assert_eq!(count(side, &["mcp.method.name=tools/list"]), 1, "{side}: {bound:#?}");
    }
}

/// What an OTLP/HTTP collector received: the path and body of each export.
type Received = std::sync::Arc<std::sync::Mutex<Vec<(String, Vec<u8>)>>>;

/// A stand-in OTLP/HTTP collector: accepts every export and keeps it.
async fn collector() -> (String, Received, tokio::sync::oneshot::Sender<()>) {
    let received: Received = Default::default();
    let keep = received.clone();
    let app = axum::Router::new().fallback(move |request: axum::extract::Request| {
        let keep = keep.clone();
        async move {
            let path = request.uri().path().to_owned();
            let body = axum::body::to_bytes(request.into_body(), 16 << 20).await.unwrap_or_default();
            keep.lock().unwrap().push((path, body.to_vec()));
            axum::http::StatusCode::OK
        }
    });
    let (url, stop) = crate::support::http::serve_router(app).await;
    (url.trim_end_matches("/mcp").to_owned(), received, stop)
}

/// Waits until `arrived` is true, or ten seconds have passed (the caller's assertions then say
/// what is missing).
async fn within_ten_seconds(arrived: impl Fn() -> bool) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while std::time::Instant::now() < deadline && !arrived() {
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

/// What the stand-in collector received from the `quickstart` example run with `env` (besides
/// the endpoint and a batch delay longer than the test) for one `echo` call and the end of its
/// stdin, once the histogram arrived (or 10 s passed): a test of `key` in the bodies sent to
/// `path`.
async fn export_one_call(env: &[(&str, &str)]) -> impl Fn(&str, &str) -> bool {
    export_one_call_of(tokio::process::Command::new(tests::interop::example_binary("quickstart")), env).await
}

/// The same as [`export_one_call`] for the stdio server `command` (which has an `echo` tool).
async fn export_one_call_of(mut command: tokio::process::Command, env: &[(&str, &str)]) -> impl Fn(&str, &str) -> bool {
    let (endpoint, received, stop) = collector().await;
    command
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", &endpoint)
        // Longer than the test: only the flush at exit can deliver them.
        .env("OTEL_BSP_SCHEDULE_DELAY", "600000")
        .env("OTEL_METRIC_EXPORT_INTERVAL", "600000")
        .env_remove("PORT");
    for (key, value) in env {
        command.env(key, value);
    }
    let client = within("connecting", Client::builder("otlp", "1").connect_stdio(command)).await.unwrap();
    client.call_tool("echo", json!({"text": "exported"})).await.unwrap();
    assert!(received.lock().unwrap().is_empty(), "nothing is sent before the batch is due");
    // End of stdin: the program stops and flushes.
    client.close().await;
    let contains = move |path: &str, needle: &str| {
        let _collector = &stop;
        received
            .lock()
            .unwrap()
            .iter()
            .any(|(p, body)| p == path && body.windows(needle.len()).any(|w| w == needle.as_bytes()))
    };
    within_ten_seconds(|| contains("/v1/metrics", "mcp.server.operation.duration")).await;
    // Spans are flushed before metrics at exit; a moment more for any that are late.
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    contains
}

#[tokio::test]
async fn the_examples_export_over_otlp_when_the_standard_variables_say_so_and_flush_on_exit() {
    let contains = export_one_call(&[("OTEL_SERVICE_NAME", "quickstart-under-test")]).await;
    within_ten_seconds(|| contains("/v1/traces", "tools/call echo")).await;
    assert!(contains("/v1/traces", "tools/call echo"), "the span reached the collector");
    assert!(contains("/v1/traces", "quickstart-under-test"), "OTEL_SERVICE_NAME names the service");
    assert!(contains("/v1/metrics", "mcp.server.operation.duration"), "the histogram reached the collector");
}

#[tokio::test]
async fn the_standard_sampler_variables_thin_the_traces_and_the_histograms_still_count_every_call() {
    let contains =
        export_one_call(&[("OTEL_TRACES_SAMPLER", "parentbased_traceidratio"), ("OTEL_TRACES_SAMPLER_ARG", "0")]).await;
    assert!(contains("/v1/metrics", "mcp.server.operation.duration"), "the histogram reached the collector");
    assert!(!contains("/v1/traces", "tools/call echo"), "a ratio of 0 samples no trace");
}

/// The `mcp-gateway` program in front of the `quickstart` example (mounted without a prefix)
/// exports its own spans and metrics over OTLP, under its own service name, and flushes them
/// when it stops; the upstream, told the same collector, exports under its name.
#[tokio::test]
async fn the_gateway_program_exports_over_otlp_when_the_standard_variables_say_so() {
    let config = tests::gateway::write_config(
        "otlp",
        &format!(
            "[[upstream]]\nname = \"quick\"\nprefix = \"\"\ncommand = [{}]\nenv = {{ OTEL_SERVICE_NAME = \"upstream-under-test\" }}\n",
            tests::gateway::toml_string(&tests::interop::example_binary("quickstart").display().to_string()),
        ),
    );
    let mut command = tokio::process::Command::new(tests::gateway::gateway_binary());
    command.arg("--config").arg(&config);
    let contains = export_one_call_of(command, &[("OTEL_SERVICE_NAME", "gateway-under-test")]).await;
    within_ten_seconds(|| {
        contains("/v1/traces", "gateway-under-test") && contains("/v1/traces", "upstream-under-test")
    })
    .await;
    assert!(contains("/v1/traces", "gateway-under-test"), "the gateway's spans reached the collector");
    assert!(contains("/v1/traces", "upstream-under-test"), "the upstream's spans reached the collector");
    assert!(contains("/v1/metrics", "mcp.client.operation.duration"), "the gateway's client histogram");
}

/// A call through the gateway is one trace: our client's `CLIENT` span, the gateway's `SERVER`
/// span under it, the gateway's `CLIENT` span of the request upstream under that, and the
/// upstream's `SERVER` span under the hop, in either era of the client.
#[tokio::test]
async fn a_call_through_the_gateway_is_one_trace() {
    let (c, g, u) = (Recorder::new(), Recorder::new(), Recorder::new());
    let upstream = Endpoint::serve(&server(&u), HttpConfig::default()).await;
    let config = typed_mcp_gateway::Config::parse(
        &format!("[[upstream]]\nname = \"up\"\nurl = \"{}\"\n", upstream.url),
        "gateway.toml",
    )
    .unwrap();
    let gateway = typed_mcp_gateway::Gateway::from_config(config).unwrap().telemetry(g.telemetry());
    let front = within("the gateway starts", gateway.start(gateway.server_builder())).await.unwrap();
    for era in [ProtocolEra::Y2025, ProtocolEra::Y2026] {
        let client = Client::builder("traced-client", "1")
            .protocol_era(era)
            .telemetry(c.telemetry())
            .connect_in_process(&front)
            .await
            .unwrap();
        let result = within("a call", client.call_tool("up_echo", json!({"text": "through"}))).await.unwrap();
        assert_eq!(result.content[0].as_text(), Some("through"));
        client.close().await;
    }
    let one = |recorder: &Recorder, name: &str, kind: SpanKind| -> Vec<SpanData> {
        recorder.spans().into_iter().filter(|s| s.name == name && s.span_kind == kind).collect()
    };
    let calls = one(&c, "tools/call up_echo", SpanKind::Client);
    assert_eq!(calls.len(), 2, "{:?}", names(&c.spans()));
    let fronts = one(&g, "tools/call up_echo", SpanKind::Server);
    let hops = one(&g, "tools/call echo", SpanKind::Client);
    let served = one(&u, "tools/call echo", SpanKind::Server);
    for call in &calls {
        let trace = call.span_context.trace_id();
        let child_of = |spans: &[SpanData], parent: &SpanData| -> SpanData {
            let children: Vec<_> = spans.iter().filter(|s| s.parent_span_id == parent.span_context.span_id()).collect();
            assert_eq!(children.len(), 1, "one child of {} ({:?})", parent.name, parent.span_kind);
            assert_eq!(children[0].span_context.trace_id(), trace, "in the same trace");
            children[0].clone()
        };
        let front = child_of(&fronts, call);
        let hop = child_of(&hops, &front);
        child_of(&served, &hop);
    }
    gateway.shutdown().await;
}

/// The trace and span its background work saw (see `slow_job`).
static TASK_SAW: std::sync::Mutex<Option<(String, String)>> = std::sync::Mutex::new(None);

/// Works a while, as a task when the client asks.
#[tool(task = "optional")]
async fn slow_job() -> String {
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    let cx = opentelemetry::Context::current();
    let span = opentelemetry::trace::TraceContextExt::span(&cx);
    let context = span.span_context();
    *TASK_SAW.lock().unwrap() = Some((context.trace_id().to_string(), context.span_id().to_string()));
    "done".into()
}

#[tokio::test]
async fn a_task_and_the_requests_that_follow_it_are_one_trace() {
    let recorder = Recorder::new();
    let server = Server::builder("tasks", "1").tools(tools![slow_job]).telemetry(recorder.telemetry()).build().unwrap();
    let client = within(
        "connecting",
        Client::builder("tasks", "1")
            .protocol_era(ProtocolEra::Y2026)
            .telemetry(recorder.telemetry())
            .connect_in_process(&server),
    )
    .await
    .unwrap();
    let result = within("the task", client.call_tool_as_task("slow_job", json!({}))).await.unwrap();
    assert_eq!(result.content[0].as_text(), Some("done"));
    let spans = recorder.spans();
    let whole = spans
        .iter()
        .find(|s| s.name == "tools/call slow_job (task)" && s.span_kind == SpanKind::Internal)
        .unwrap_or_else(|| panic!("no span over the whole task among {:?}", names(&spans)));
    let trace = whole.span_context.trace_id();
    let call = spans.iter().find(|s| s.name == "tools/call slow_job" && s.span_kind == SpanKind::Client).unwrap();
    let served = spans.iter().find(|s| s.name == "tools/call slow_job" && s.span_kind == SpanKind::Server).unwrap();
    let polls: Vec<_> = spans.iter().filter(|s| s.name == "tasks/get" && s.span_kind == SpanKind::Client).collect();
    assert!(!polls.is_empty(), "the client polled the task: {:?}", names(&spans));
    assert_eq!(call.parent_span_id, whole.span_context.span_id());
    assert_eq!(served.parent_span_id, call.span_context.span_id());
    for poll in &polls {
        assert_eq!((poll.span_context.trace_id(), poll.parent_span_id), (trace, whole.span_context.span_id()));
    }
    for server_poll in spans.iter().filter(|s| s.name == "tasks/get" && s.span_kind == SpanKind::Server) {
        assert_eq!(server_poll.span_context.trace_id(), trace, "the server's polls are in the trace too");
    }
    // The work that went on after the call was answered ran in the call's trace, under its span.
    let (saw_trace, saw_span) = TASK_SAW.lock().unwrap().clone().expect("the task ran");
    assert_eq!(saw_trace, trace.to_string());
    assert_eq!(saw_span, served.span_context.span_id().to_string());
    client.close().await;
}

/// Echoes `text` back, on the session's owner (`Backplane::on_owner`): a call landing elsewhere
/// is forwarded there.
#[tool]
fn stamp(text: String) -> String {
    text
}

/// An instance of a shared deployment, in process, with its own telemetry; `stamp` runs on
/// the session's owner.
async fn instance(redis: &typed_mcp_redis::Redis, recorder: &Recorder) -> (String, tokio::task::JoinHandle<()>) {
    let server =
        Server::builder("shared", "1").tools(tools![echo, stamp]).telemetry(recorder.telemetry()).build().unwrap();
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0)).await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let backplane =
        redis.backplane(format!("{base}/mcp")).heartbeat(std::time::Duration::from_millis(200)).on_owner("stamp");
    let http = server.streamable_http(HttpConfig::default().backplane(backplane));
    let task = tokio::spawn(async move {
        let _ = http.serve(listener, std::future::pending()).await;
    });
    (base, task)
}

#[tokio::test]
async fn a_call_through_a_shared_deployment_is_one_trace_whichever_instance_it_lands_on() {
    let redis_server = typed_mcp_redis::testing::RedisServer::start();
    let redis = typed_mcp_redis::Redis::connect(&redis_server.url()).unwrap();
    let (a, b, c) = (Recorder::new(), Recorder::new(), Recorder::new());
    let (base_a, task_a) = instance(&redis, &a).await;
    let (base_b, task_b) = instance(&redis, &b).await;
    // Requests alternate between the instances: half land where the session is not.
    let proxy = typed_mcp_redis::testing::RoundRobinProxy::start(vec![base_a, base_b]).await;
    let client = within(
        "connecting",
        Client::builder("spread", "1").telemetry(c.telemetry()).connect_http(&format!("{}/mcp", proxy.url())),
    )
    .await
    .unwrap();
    for n in 0..4 {
        let text = format!("call {n}");
        let result = within("a call", client.call_tool("echo", json!({"text": text}))).await.unwrap();
        assert_eq!(result.content[0].as_text(), Some(text.as_str()));
    }
    let calls: Vec<_> =
        c.spans().into_iter().filter(|s| s.name == "tools/call echo" && s.span_kind == SpanKind::Client).collect();
    assert_eq!(calls.len(), 4);
    let served: Vec<_> = a
        .spans()
        .into_iter()
        .chain(b.spans())
        .filter(|s| s.name == "tools/call echo" && s.span_kind == SpanKind::Server)
        .collect();
    // Each call was served once, wherever, as the child of the client's span: no orphans.
    assert_eq!(served.len(), 4, "one server span per call");
    for call in &calls {
        let children: Vec<_> = served.iter().filter(|s| s.parent_span_id == call.span_context.span_id()).collect();
        assert_eq!(children.len(), 1, "the call's server span");
        assert_eq!(children[0].span_context.trace_id(), call.span_context.trace_id());
    }

    // A call that must run on the owner, landing on the other instance, is forwarded: that
    // instance has the SERVER span of what it received, under it the CLIENT span of the hop,
    // and the owner's SERVER span is the hop's child. One trace, no orphans.
    for n in 0..4 {
        let text = format!("stamp {n}");
        let result = within("a call", client.call_tool("stamp", json!({"text": text}))).await.unwrap();
        assert_eq!(result.content[0].as_text(), Some(text.as_str()));
    }
    let named = |recorder: &Recorder, kind: SpanKind| -> Vec<SpanData> {
        recorder.spans().into_iter().filter(|s| s.name == "tools/call stamp" && s.span_kind == kind).collect()
    };
    let calls = named(&c, SpanKind::Client);
    assert_eq!(calls.len(), 4);
    let mut forwarded = 0;
    for call in &calls {
        let trace = call.span_context.trace_id();
        // Where the call landed: the one SERVER span under the client's.
        let landed: Vec<(SpanData, &Recorder, &Recorder)> = [(&a, &b), (&b, &a)]
            .into_iter()
            .flat_map(|(here, other)| named(here, SpanKind::Server).into_iter().map(move |s| (s, here, other)))
            .filter(|(s, ..)| s.parent_span_id == call.span_context.span_id())
            .collect();
        assert_eq!(landed.len(), 1, "the call's server span, where it landed");
        let (landed, here, other) = &landed[0];
        assert_eq!(landed.span_context.trace_id(), trace);
        let hops: Vec<_> = named(here, SpanKind::Client)
            .into_iter()
            .filter(|h| h.parent_span_id == landed.span_context.span_id())
            .collect();
        match hops.as_slice() {
            // Landed on the owner: served there.
            [] => {}
            [hop] => {
                forwarded += 1;
                assert_eq!(hop.span_context.trace_id(), trace);
                let hop_attributes = attributes(hop);
                assert_eq!(hop_attributes.get("mcp.method.name").map(String::as_str), Some("tools/call"));
                assert_eq!(hop_attributes.get("server.address").map(String::as_str), Some("127.0.0.1"));
                let owner: Vec<_> = named(other, SpanKind::Server)
                    .into_iter()
                    .filter(|s| s.parent_span_id == hop.span_context.span_id())
                    .collect();
                assert_eq!(owner.len(), 1, "the owner's server span is the hop's child");
                assert_eq!(owner[0].span_context.trace_id(), trace);
            }
            more => panic!("one hop per forwarded call, not {}", more.len()),
        }
    }
    assert!(forwarded >= 1, "the balancer alternates: some calls landed on the instance not owning the session");
    // Every span of the calls, on either instance, belongs to a client's call.
    let all = named(&a, SpanKind::Server).len() + named(&b, SpanKind::Server).len();
    assert_eq!(all, 4 + forwarded, "one server span per call, and one more per forwarded call");
    client.close().await;
    task_a.abort();
    task_b.abort();
}

/// Every span of the OTLP/JSON exports `received` holds: (name, kind, trace id, span id,
/// parent span id), ids in hex as OTLP/JSON writes them.
fn exported_spans(received: &Received) -> Vec<(String, i64, String, String, String)> {
    let mut spans = Vec::new();
    for (path, body) in received.lock().unwrap().iter().filter(|(p, _)| p == "/v1/traces") {
        let export: serde_json::Value =
            serde_json::from_slice(body).unwrap_or_else(|e| panic!("{path}: not OTLP/JSON ({e})"));
        for resource in export["resourceSpans"].as_array().into_iter().flatten() {
            for scope in resource["scopeSpans"].as_array().into_iter().flatten() {
                for span in scope["spans"].as_array().into_iter().flatten() {
                    let text = |key: &str| span[key].as_str().unwrap_or_default().to_owned();
                    spans.push((
                        text("name"),
                        span["kind"].as_i64().unwrap_or(0),
                        text("traceId"),
                        text("spanId"),
                        text("parentSpanId"),
                    ));
                }
            }
        }
    }
    spans
}

#[tokio::test]
async fn the_python_clients_span_is_the_parent_of_ours_in_both_eras() {
    let (python, version) = tests::interop::require_python_package("opentelemetry-sdk");
    println!("opentelemetry-sdk {version}");
    let (endpoint, received, _stop) = collector().await;
    let server = tests::interop::example_binary("quickstart");
    let mut command = std::process::Command::new(&python);
    command
        .arg("otel_client.py")
        .arg(&server)
        .current_dir(tests::interop::interop_dir())
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", &endpoint)
        .env("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json")
        .env("OTEL_SERVICE_NAME", "quickstart")
        .env_remove("PORT");
    let run = tokio::task::spawn_blocking(move || {
        tests::interop::run_with_deadline(&mut command, std::time::Duration::from_secs(120))
    })
    .await
    .unwrap();
    assert!(run.success(), "the Python client failed: {}", run.describe());
    let python_spans: Vec<serde_json::Value> =
        serde_json::from_str(run.stdout.trim().lines().last().unwrap_or_default())
            .unwrap_or_else(|e| panic!("the Python client printed no spans ({e}): {}", run.describe()));
    let sent: Vec<_> =
        python_spans.iter().filter(|s| s["kind"] == "CLIENT" && s["name"] == "MCP send tools/call echo").collect();
    assert_eq!(sent.len(), 2, "one call per era: {python_spans:?}");
    // Each server process flushed its spans when its stdin closed.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let ours = loop {
        let ours: Vec<_> =
            exported_spans(&received).into_iter().filter(|s| s.0 == "tools/call echo" && s.1 == 2).collect();
        if ours.len() >= 2 || std::time::Instant::now() > deadline {
            break ours;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    };
    assert_eq!(ours.len(), 2, "our server exported one SERVER span per call: {ours:?}");
    for call in sent {
        let (trace, span) = (call["trace_id"].as_str().unwrap(), call["span_id"].as_str().unwrap());
        assert!(
            ours.iter().any(|s| s.2 == trace && s.4 == span),
            "no server span of ours under the Python client's span {trace}/{span}: {ours:?}"
        );
    }
}

/// Says which span it runs in (see `otel_server.py`).
#[derive(Deserialize)]
struct PythonSpan {
    trace_id: String,
    parent: Option<String>,
}

#[tokio::test]
async fn our_clients_span_is_the_parent_of_the_python_servers() {
    let (python, _) = tests::interop::require_python_package("opentelemetry-sdk");
    let recorder = Recorder::new();
    let mut command = tokio::process::Command::new(&python);
    command.arg("otel_server.py").current_dir(tests::interop::interop_dir());
    let client =
        within("connecting", Client::builder("ours", "1").telemetry(recorder.telemetry()).connect_stdio(command))
            .await
            .unwrap();
    let result = within("trace_here", client.call_tool("trace_here", json!({}))).await.unwrap();
    let seen: PythonSpan = serde_json::from_str(result.content[0].as_text().unwrap()).unwrap();
    client.close().await;
    let spans = recorder.spans();
    let ours = spans
        .iter()
        .find(|s| s.name == "tools/call trace_here" && s.span_kind == SpanKind::Client)
        .unwrap_or_else(|| panic!("no client span: {:?}", names(&spans)));
    assert_eq!(seen.trace_id, ours.span_context.trace_id().to_string());
    assert_eq!(seen.parent.as_deref(), Some(ours.span_context.span_id().to_string().as_str()));
}
