//! Streams served where a request lands, on a replica of its session, resumed with
//! `Last-Event-ID` on another instance (helpers in `support/backplane.rs` and `support/http.rs`):
//! three in-process instances sharing a Redis, each with an authentication layer (the `x-user`
//! header as the request's `Principal`). A call posted to an instance that does not own its
//! session runs there; its events carry ids naming that instance, and a client whose stream
//! drops gets every event it missed exactly once, and the answer, from a `GET` on a third
//! instance. Another user's resume with those ids, and malformed or unknown ids, reveal nothing.
//! Once the instance that served the call has left the deployment, its events are replayed
//! from Redis by whichever instance the client reconnects to.

use crate::support::backplane::{SECRET, started_redis};
use crate::support::http::principal_from_header;

use std::net::Ipv4Addr;
use std::time::Duration;

use serde_json::json;
use tests::stdio::within;
use typed_mcp::prelude::*;
use typed_mcp::transport::http::{HttpConfig, StreamableHttp};
use typed_mcp_redis::Redis;
use typed_mcp_redis::testing::RedisServer;

/// Reports three steps of progress, a while apart, then answers.
#[tool]
async fn three_steps(ctx: Context) -> String {
    for step in 1..=3 {
        let _ = ctx.progress(f64::from(step), Some(3.0), None).await;
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    "three steps done".into()
}

/// An instance named `instance`, sharing sessions through `redis`; returns its endpoint's URL
/// and the endpoint.
async fn instance(redis: &Redis, instance: &str) -> (String, StreamableHttp) {
    let server = Server::builder("t", "1").tools(tools![three_steps]).build().unwrap();
    let listener = tokio::net::TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let backplane =
        redis.backplane(url.clone()).instance_id(instance).heartbeat(Duration::from_millis(100)).secret(SECRET);
    let http = server.streamable_http(HttpConfig::default().backplane(backplane));
    let app = http.router_at("/mcp").layer(axum::middleware::from_fn(principal_from_header));
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    (url, http)
}

/// Posts `body` as `user`, in `session` when given.
async fn post(url: &str, user: &str, session: Option<&str>, body: serde_json::Value) -> reqwest::Response {
    let mut request = crate::support::http_client()
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-11-25")
        .header("x-user", user)
        .body(body.to_string());
    if let Some(session) = session {
        request = request.header("mcp-session-id", session);
    }
    within("a POST", request.send()).await.unwrap()
}

/// A session of `user` opened on `url`.
async fn open(url: &str, user: &str) -> String {
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
    let response = post(url, user, None, init).await;
    assert_eq!(response.status(), 200, "{:?}", response.text().await);
    let session = response.headers()["mcp-session-id"].to_str().unwrap().to_owned();
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    assert_eq!(post(url, user, Some(&session), initialized).await.status(), 202);
    session
}

/// A `GET` resuming `session` from `last`, as `user`.
async fn resume(url: &str, user: &str, session: &str, last: &str) -> reqwest::Response {
    let request = crate::support::http_client()
        .get(url)
        .header("accept", "text/event-stream")
        .header("mcp-protocol-version", "2025-11-25")
        .header("mcp-session-id", session)
        .header("x-user", user)
        .header("last-event-id", last);
    within("a GET", request.send()).await.unwrap()
}

/// Three instances and a stream dropped: see [`a_dropped_replica_stream`].
struct Dropped {
    _redis: RedisServer,
    /// The instances' URLs, `a`, `b`, `c`.
    urls: [String; 3],
    /// Their endpoints, in the same order.
    endpoints: [StreamableHttp; 3],
    /// Alice's session.
    session: String,
    /// The id of the one event read of the stream.
    last: String,
    /// What was read of it.
    seen: String,
}

/// Three instances `a`, `b`, `c`; alice's session opened on `a`, and a call of hers posted to
/// `b` (served there, on a replica) whose stream is dropped after its first event.
async fn a_dropped_replica_stream() -> Dropped {
    let (redis_server, redis) = started_redis();
    let [(a, a_http), (b, b_http), (c, c_http)] =
        [instance(&redis, "a").await, instance(&redis, "b").await, instance(&redis, "c").await];
    let urls = [a, b, c];
    let session = open(&urls[0], "alice").await;
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "three_steps", "arguments": {}, "_meta": {"progressToken": "p"}}});
    let mut response = post(&urls[1], "alice", Some(&session), call).await;
    assert_eq!(response.status(), 200);
    let mut seen = String::new();
    let last = loop {
        let chunk = within("the first event", response.chunk()).await.unwrap();
        let chunk = chunk.unwrap_or_else(|| panic!("the stream ended before an event with an id: {seen}"));
        seen.push_str(&String::from_utf8_lossy(&chunk));
        if let Some(line) = seen.lines().find(|l| l.starts_with("id: ")).filter(|_| seen.contains("\n\n")) {
            break line.trim_start_matches("id: ").to_owned();
        }
    };
    drop(response);
    Dropped { _redis: redis_server, urls, endpoints: [a_http, b_http, c_http], session, last, seen }
}

/// Asserts that `resumed`, the resumption of [`a_dropped_replica_stream`]'s stream, is 200
/// with every event alice missed exactly once, each with an id naming `b`.
async fn assert_the_rest(resumed: reqwest::Response) {
    let status = resumed.status();
    let rest = within("the rest of the stream", resumed.text()).await.unwrap();
    assert_eq!(status, 200, "{rest}");
    assert!(!rest.contains(r#""progress":1"#), "what the client saw is not sent again: {rest}");
    for missed in [r#""progress":2"#, r#""progress":3"#, "three steps done"] {
        assert_eq!(rest.matches(missed).count(), 1, "{missed} exactly once: {rest}");
    }
    // Every event of the resumed stream carries an id naming the instance that served it.
    let ids: Vec<&str> = rest.lines().filter_map(|l| l.strip_prefix("id: ")).collect();
    assert_eq!(ids.len(), 3, "{rest}");
    assert!(ids.iter().all(|id| id.ends_with("@b")), "{ids:?}");
}

#[tokio::test]
async fn a_stream_served_on_a_replica_resumes_on_another_instance() {
    let Dropped { _redis, urls, session, last, seen, .. } = a_dropped_replica_stream().await;
    assert!(last.ends_with("@b"), "the event id names the instance that served the call: {last}");
    assert!(seen.contains(r#""progress":1"#) && !seen.contains(r#""progress":2"#), "{seen}");
    assert_the_rest(resume(&urls[2], "alice", &session, &last).await).await;
}

#[tokio::test]
async fn a_stream_served_on_a_replica_resumes_after_that_instance_left() {
    let Dropped { _redis, urls, endpoints, session, last, .. } = a_dropped_replica_stream().await;
    // The call ends on `b` while nobody listens; then `b` leaves (a rolling restart).
    tokio::time::sleep(Duration::from_millis(1_200)).await;
    within("b drains", endpoints[1].drain(Duration::from_secs(5))).await;
    let bobs = open(&urls[0], "bob").await;
    for (url, names) in [(&urls[2], &session), (&urls[2], &bobs), (&urls[0], &bobs)] {
        let refused = resume(url, "bob", names, &last).await;
        assert_eq!(refused.status(), 404, "bob resuming alice's stream on {url}");
        let body = within("the refusal", refused.text()).await.unwrap();
        assert!(!body.contains("progress") && !body.contains("three steps"), "{body}");
    }
    // Replayed from Redis on `c`, by an instance that never saw them.
    assert_the_rest(resume(&urls[2], "alice", &session, &last).await).await;
    // And on the owner `a`.
    assert_the_rest(resume(&urls[0], "alice", &session, &last).await).await;
    // A stream of the session's GET, or an event nobody kept, is still refused.
    let (position, _) = last.split_once('@').unwrap();
    let (stream, _) = position.split_once('-').unwrap();
    for id in ["0-1@b".to_owned(), format!("{}-1@b", stream.parse::<u64>().unwrap() + 7), format!("{stream}-x@b")] {
        let refused = resume(&urls[2], "alice", &session, &id).await;
        let expected = if id.contains("-x@") { 400 } else { 404 };
        assert_eq!(refused.status(), expected, "Last-Event-ID {id:?}");
    }
    // Once the session ended, its events are no one's.
    let deleted = crate::support::http_client()
        .delete(&urls[0])
        .header("mcp-protocol-version", "2025-11-25")
        .header("mcp-session-id", &session)
        .header("x-user", "alice")
        .send()
        .await
        .unwrap();
    assert!(deleted.status().is_success());
    assert_eq!(resume(&urls[2], "alice", &session, &last).await.status(), 404);
}

#[tokio::test]
async fn another_users_resume_of_a_replica_stream_reveals_nothing() {
    let Dropped { _redis, urls, session, last, .. } = a_dropped_replica_stream().await;
    let bobs = open(&urls[0], "bob").await;
    for (url, bob_names) in [(&urls[2], &session), (&urls[2], &bobs), (&urls[1], &session), (&urls[1], &bobs)] {
        let refused = resume(url, "bob", bob_names, &last).await;
        assert_eq!(refused.status(), 404, "bob resuming alice's stream on {url}");
        let body = within("the refusal", refused.text()).await.unwrap();
        assert!(!body.contains("progress") && !body.contains("three steps"), "{body}");
    }
    // The events were there to be had: alice gets them.
    let resumed = resume(&urls[2], "alice", &session, &last).await;
    assert_eq!(resumed.status(), 200);
    let rest = within("alice's stream", resumed.text()).await.unwrap();
    assert!(rest.contains("three steps done"), "{rest}");
}

#[tokio::test]
async fn a_malformed_or_unknown_replica_event_id_is_refused() {
    let Dropped { _redis, urls, session, last, .. } = a_dropped_replica_stream().await;
    let (position, keeper) = last.split_once('@').unwrap();
    let (stream, _) = position.split_once('-').unwrap();
    let cases = [
        (format!("{stream}-x@{keeper}"), 400),
        (format!("{position}@b/../a"), 400),
        (format!("{position}@"), 400),
        (format!("{position}@nobody"), 404),
        // The session's GET stream is the owner's, never a replica's.
        (format!("0-1@{keeper}"), 404),
        (format!("{}-1@{keeper}", stream.parse::<u64>().unwrap() + 7), 404),
    ];
    for (id, status) in cases {
        for url in [&urls[2], &urls[1]] {
            let refused = resume(url, "alice", &session, &id).await;
            assert_eq!(refused.status(), status, "Last-Event-ID {id:?} on {url}");
            let body = within("the refusal", refused.text()).await.unwrap();
            assert!(!body.contains("progress") && !body.contains("three steps"), "{body}");
        }
    }
    let resumed = resume(&urls[0], "alice", &session, &last).await;
    assert_eq!(resumed.status(), 200, "the well-formed id resumes, even on the owner");
    let rest = within("the stream", resumed.text()).await.unwrap();
    assert!(rest.contains("three steps done"), "{rest}");
}
