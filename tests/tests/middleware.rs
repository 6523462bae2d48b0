//! Middleware on every transport and in both eras (a refusal answers without running the
//! handler; what a middleware sees of the request), the rate limiter under a burst from many
//! callers, and what handlers take from the request: `_meta`, headers (never the
//! `Authorization` token), extensions set by an HTTP layer, identity, extractors of their own.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::json;
use tests::stdio::within;
use typed_mcp::client::{Client, ClientError, ProtocolEra};
use typed_mcp::handler::{Extension, Extract, FromContext, Headers, Meta};
use typed_mcp::middleware::{self, Incoming, Next, RATE_LIMITED, RateLimit, RateLimitKey};
use typed_mcp::prelude::*;
use typed_mcp::protocol::Method;
use typed_mcp::testing::ToolResultExt;
use typed_mcp::transport::http::HttpConfig;

use crate::support::http::{Endpoint, Reply, Session, principal_from_header};

static SECRET_RUNS: AtomicUsize = AtomicUsize::new(0);

/// Must never run for anyone.
#[tool]
fn secret() -> String {
    SECRET_RUNS.fetch_add(1, Ordering::SeqCst);
    "the secret".into()
}

/// Echoes its text.
#[tool]
fn echo(text: String) -> String {
    text
}

/// What the request carried.
#[tool]
fn show(meta: Meta, headers: Headers, ctx: Context) -> String {
    format!(
        "tenant={:?} header={:?} authorization={} remote={}",
        meta.get_str("com.example/tenant"),
        headers.get("x-team").and_then(|v| v.to_str().ok()),
        headers.contains_key("authorization"),
        ctx.http().and_then(|h| h.remote_address()).is_some(),
    )
}

#[derive(Clone)]
struct Team(&'static str);

/// Reads what the HTTP layer put in the request.
#[tool]
fn team(assigned: Extension<Team>) -> String {
    assigned.0.0.into()
}

struct Tenant(String);

impl FromContext for Tenant {
    fn from_context(ctx: &Context) -> Result<Self, ErrorObject> {
        ctx.meta()
            .get_str("com.example/tenant")
            .map(Tenant)
            .ok_or_else(|| ErrorObject::invalid_params("`_meta` must name `com.example/tenant`"))
    }
}

/// The tenant, from an extractor of the application's.
#[tool]
fn tenant(who: Extract<Tenant>) -> String {
    who.0.0.clone()
}

/// A prompt that reads `_meta` too.
#[prompt]
fn hello(meta: Meta) -> String {
    format!("hello {}", meta.get_str("com.example/tenant").unwrap_or_default())
}

/// Refuses `secret`, counts what passes, and records what it saw.
fn guarded(seen: Arc<std::sync::Mutex<Vec<String>>>) -> Server {
    let guard = middleware::from_fn(move |request: Incoming, next: Next| {
        let seen = seen.clone();
        async move {
            seen.lock().unwrap().push(format!(
                "{} {} {:?}",
                request.method(),
                request.target().unwrap_or("-"),
                request.meta().get_str("com.example/tenant")
            ));
            if request.target() == Some("secret") {
                return Err(ErrorObject::new(-32003, "forbidden: `secret` is not for you"));
            }
            next.run().await
        }
    });
    Server::builder("guarded", "1")
        .tools(tools![secret, echo, show, team, tenant])
        .prompts(prompts![hello])
        .middleware(guard)
        .build()
        .unwrap()
}

fn denied(outcome: Result<CallToolResult, ClientError>) {
    match outcome {
        Err(ClientError::Rpc(e)) => assert_eq!((e.code, e.message.contains("forbidden")), (-32003, true), "{e:?}"),
        other => panic!("expected the middleware's refusal, got {other:?}"),
    }
}

async fn drive(client: &Client, seen: &std::sync::Mutex<Vec<String>>) {
    let before = SECRET_RUNS.load(Ordering::SeqCst);
    denied(client.call_tool("secret", json!({})).await);
    assert_eq!(SECRET_RUNS.load(Ordering::SeqCst), before, "a refused request never reaches its handler");
    assert_eq!(client.call_tool("echo", json!({"text": "passes"})).await.unwrap().text(), "passes");
    let log = seen.lock().unwrap().clone();
    assert!(log.iter().any(|l| l == "tools/call secret None"), "{log:?}");
    assert!(log.iter().any(|l| l == "tools/call echo None"), "{log:?}");
}

/// A `guarded` server, what its middleware saw, and a client of `era` connected in process.
async fn guarded_in_process(era: ProtocolEra) -> (Arc<std::sync::Mutex<Vec<String>>>, Server, Client) {
    let seen = Arc::default();
    let server = guarded(Arc::clone(&seen));
    let client =
        within("connecting", Client::builder("mw", "1").protocol_era(era).connect_in_process(&server)).await.unwrap();
    (seen, server, client)
}

#[tokio::test]
async fn middleware_refuses_and_passes_on_stdio_in_both_eras() {
    for era in [ProtocolEra::Y2025, ProtocolEra::Y2026] {
        let (seen, _server, client) = guarded_in_process(era).await;
        drive(&client, &seen).await;
        client.close().await;
    }
}

/// Parameters that cannot be read (a tool name that is not a string) are invalid parameters in
/// both eras; in a session they pass through the middleware first, with no target.
#[tokio::test]
async fn unreadable_parameters_are_invalid_params_in_both_eras() {
    for era in [ProtocolEra::Y2025, ProtocolEra::Y2026] {
        let (seen, _server, client) = guarded_in_process(era).await;
        let outcome = client.request::<_, serde_json::Value>("tools/call", &json!({"name": 5})).await;
        match outcome {
            Err(ClientError::Rpc(e)) => assert_eq!(e.code, -32602, "{era:?}: {e:?}"),
            other => panic!("{era:?}: expected invalid params, got {other:?}"),
        }
        let log = seen.lock().unwrap().clone();
        if era == ProtocolEra::Y2025 {
            assert!(log.iter().any(|l| l == "tools/call - None"), "{era:?}: {log:?}");
        }
        // And the client goes on.
        assert_eq!(client.call_tool("echo", json!({"text": "still"})).await.unwrap().text(), "still");
        client.close().await;
    }
}

#[tokio::test]
async fn middleware_refuses_and_passes_over_http_in_both_eras() {
    for era in [ProtocolEra::Y2025, ProtocolEra::Y2026] {
        let seen = Arc::default();
        let server = guarded(Arc::clone(&seen));
        let endpoint = Endpoint::serve(&server, HttpConfig::default()).await;
        let client = within("connecting", Client::builder("mw", "1").protocol_era(era).connect_http(&endpoint.url))
            .await
            .unwrap();
        drive(&client, &seen).await;
        client.close().await;
    }
}

#[tokio::test]
async fn handlers_read_meta_headers_and_extensions_but_never_the_token() {
    let seen = Arc::default();
    let server = guarded(Arc::clone(&seen));
    let endpoint =
        Endpoint::serve_with(&server, HttpConfig::default(), |router| router.layer(axum::Extension(Team("blue"))))
            .await;
    let session = endpoint.session(json!({})).await;
    let meta = json!({"com.example/tenant": "acme"});
    let call = |name: &'static str, meta: serde_json::Value| {
        let session = &session;
        async move {
            let builder = session.post(
                json!({"jsonrpc": "2.0", "id": session.next_id(), "method": "tools/call",
                       "params": {"name": name, "arguments": {}, "_meta": meta}})
                .to_string(),
            );
            let response =
                builder.header("x-team", "red").header("authorization", "Bearer do-not-leak").send().await.unwrap();
            let body: serde_json::Value = serde_json::from_str(&response.text().await.unwrap()).unwrap();
            body
        }
    };
    let shown = call("show", meta.clone()).await;
    assert_eq!(
        shown["result"]["content"][0]["text"],
        "tenant=Some(\"acme\") header=Some(\"red\") authorization=false remote=false",
        "{shown}"
    );
    let team = call("team", json!({})).await;
    assert_eq!(team["result"]["content"][0]["text"], "blue", "{team}");
    let tenant = call("tenant", meta.clone()).await;
    assert_eq!(tenant["result"]["content"][0]["text"], "acme", "{tenant}");
    // An extractor that fails answers the call with its error (a tool error, as invalid
    // arguments are); the handler does not run.
    let missing = call("tenant", json!({})).await;
    assert_eq!(missing["result"]["isError"], true, "{missing}");
    assert_eq!(missing["result"]["content"][0]["text"], "`_meta` must name `com.example/tenant`", "{missing}");
    assert!(seen.lock().unwrap().iter().any(|l| l == "tools/call show Some(\"acme\")"));
    // Prompts take the same extractors.
    let prompt = session.request("prompts/get", json!({"name": "hello", "arguments": {}, "_meta": meta})).await;
    assert_eq!(prompt["result"]["messages"][0]["content"]["text"], "hello acme", "{prompt}");
}

#[tokio::test]
async fn the_rate_limiter_holds_each_callers_limit_under_a_burst_and_spares_the_others() {
    const LIMIT: u32 = 5;
    let key = RateLimitKey::Custom(Arc::new(|request: &Incoming| request.meta().get_str("com.example/user")));
    let limit = RateLimit::new(LIMIT, Duration::from_secs(3600)).key(key).only_methods([Method::ToolsCall]);
    let server = Server::builder("limited", "1").tools(tools![echo]).middleware(limit).build().unwrap();
    let endpoint = Endpoint::serve(&server, HttpConfig::default()).await;
    // Eight callers, each bursting 12 calls at once over its own session.
    let mut callers = Vec::new();
    for user in 0..8 {
        let session = endpoint.session(json!({})).await;
        callers.push(tokio::spawn(async move {
            let calls = (0..12).map(|_| {
                session.request(
                    "tools/call",
                    json!({"name": "echo", "arguments": {"text": "x"}, "_meta": {"com.example/user": format!("u{user}")}}),
                )
            });
            futures_util::future::join_all(calls).await
        }));
    }
    for caller in callers {
        let answers = caller.await.unwrap();
        let ok = answers.iter().filter(|a| a.get("result").is_some()).count();
        let limited: Vec<_> = answers.iter().filter(|a| a["error"]["code"] == RATE_LIMITED).collect();
        assert_eq!((ok, limited.len()), (LIMIT as usize, 12 - LIMIT as usize), "{answers:?}");
        let retry = limited[0]["error"]["data"]["retryAfterMs"].as_u64().unwrap();
        assert!(retry > 0 && retry <= 3_600_000, "{retry}");
        assert!(limited[0]["error"]["message"].as_str().unwrap().contains("rate limit"));
    }
    // Lists are not counted; a caller without the key is not limited.
    let session = endpoint.session(json!({})).await;
    for _ in 0..20 {
        assert!(session.request("tools/list", json!({})).await.get("result").is_some());
        assert_eq!(session.call("echo", json!({"text": "free"})).await["content"][0]["text"], "free");
    }
}

/// Calls `echo` once in `session`; the answer.
async fn echo_once(session: &Session) -> serde_json::Value {
    session.request("tools/call", json!({"name": "echo", "arguments": {"text": "x"}})).await
}

#[tokio::test]
async fn the_default_rate_limit_key_survives_new_sessions_and_sees_through_the_proxy() {
    const LIMIT: u32 = 3;
    let spent = |answer: &serde_json::Value| answer["error"]["code"] == RATE_LIMITED;
    // Anonymous callers: a new session is not a new bucket. (Served by the transport's own
    // server, which gives each request the address it came from.)
    let limit = RateLimit::new(LIMIT, Duration::from_secs(3600)).only_methods([Method::ToolsCall]);
    let server = Server::builder("limited", "1").tools(tools![echo]).middleware(limit).build().unwrap();
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0)).await.unwrap();
    let endpoint = Endpoint::at(listener.local_addr().unwrap().port());
    let http = server.streamable_http(HttpConfig::default());
    let serving = tokio::spawn(async move { http.serve(listener, std::future::pending()).await });
    let first = endpoint.session(json!({})).await;
    for _ in 0..LIMIT {
        assert!(echo_once(&first).await.get("result").is_some());
    }
    assert!(spent(&echo_once(&first).await));
    let second = endpoint.session(json!({})).await;
    assert!(spent(&echo_once(&second).await), "a new session reset the limit");
    serving.abort();

    // Authenticated callers: one bucket per principal, whatever the session.
    let limit = RateLimit::new(LIMIT, Duration::from_secs(3600)).only_methods([Method::ToolsCall]);
    let server = Server::builder("limited", "1").tools(tools![echo]).middleware(limit).build().unwrap();
    let endpoint = Endpoint::serve_with(&server, HttpConfig::default(), |router| {
        router.layer(axum::middleware::from_fn(principal_from_header))
    })
    .await;
    let alice = endpoint.session_as(json!({}), Some("alice")).await;
    for _ in 0..LIMIT {
        assert!(echo_once(&alice).await.get("result").is_some());
    }
    let alice_again = endpoint.session_as(json!({}), Some("alice")).await;
    assert!(spent(&echo_once(&alice_again).await), "alice's new session reset her limit");
    // Bob comes from the same address: his own bucket.
    let bob = endpoint.session_as(json!({}), Some("bob")).await;
    assert!(echo_once(&bob).await.get("result").is_some());

    // Behind a proxy that appends the client's address: one bucket per client, not one for
    // everyone behind the proxy; what a client wrote before the proxy's value is ignored.
    let limit = RateLimit::new(LIMIT, Duration::from_secs(3600))
        .only_methods([Method::ToolsCall])
        .client_address_header(axum::http::HeaderName::from_static("x-forwarded-for"));
    let server = Server::builder("limited", "1").tools(tools![echo]).middleware(limit).build().unwrap();
    let endpoint = Endpoint::serve(&server, HttpConfig::default()).await;
    let session = endpoint.session(json!({})).await;
    let from = |client: &'static str, forged: &'static str| {
        let session = &session;
        async move {
            let body = json!({"jsonrpc": "2.0", "id": session.next_id(), "method": "tools/call",
                              "params": {"name": "echo", "arguments": {"text": "x"}}});
            let response = session
                .post(body.to_string())
                .header("x-forwarded-for", format!("{forged}, {client}"))
                .send()
                .await
                .unwrap();
            Reply::new(response).await.message().await
        }
    };
    for i in 0..LIMIT {
        let forged = ["198.51.100.1", "198.51.100.2", "198.51.100.3"][i as usize];
        assert!(from("203.0.113.7", forged).await.get("result").is_some());
    }
    assert!(spent(&from("203.0.113.7", "198.51.100.9").await));
    let other = from("203.0.113.8", "198.51.100.9").await;
    assert!(other.get("result").is_some(), "{other}");
}

#[tokio::test]
async fn the_audited_example_audits_every_request_and_limits_each_caller() {
    let log = std::env::temp_dir().join(format!("audit-{}-{}.jsonl", std::process::id(), line!()));
    let _ = std::fs::remove_file(&log);
    let mut command = tokio::process::Command::new(tests::interop::example_binary("audited"));
    command.args(["--audit-log", log.to_str().unwrap(), "--rate", "3"]).env_remove("PORT");
    let client = within("connecting", Client::builder("auditor", "1").connect_stdio(command)).await.unwrap();
    for n in 0..3 {
        assert_eq!(client.call_tool("echo", json!({"text": format!("{n}")})).await.unwrap().text(), format!("{n}"));
    }
    match client.call_tool("echo", json!({"text": "one too many"})).await {
        Err(ClientError::Rpc(e)) => assert_eq!(e.code, RATE_LIMITED, "{e:?}"),
        other => panic!("the fourth call in a minute is refused, got {other:?}"),
    }
    client.list_tools(None).await.unwrap();
    client.close().await;
    let text = std::fs::read_to_string(&log).expect("the audit log");
    let lines: Vec<serde_json::Value> = text.lines().map(|l| serde_json::from_str(l).expect("a JSON line")).collect();
    let count = |method: &str, target: Option<&str>, outcome: &str| {
        lines
            .iter()
            .filter(|l| l["method"] == method && l["target"].as_str() == target && l["outcome"] == outcome)
            .count()
    };
    assert_eq!(count("tools/call", Some("echo"), "ok"), 3, "{text}");
    assert_eq!(count("tools/call", Some("echo"), &RATE_LIMITED.to_string()), 1, "{text}");
    assert_eq!(count("tools/list", None, "ok"), 1, "{text}");
    assert!(lines.iter().all(|l| l["ms"].as_f64().is_some() && l["time"].as_u64().is_some()), "{text}");
    let _ = std::fs::remove_file(&log);
}
