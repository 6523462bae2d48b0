//! Limits a Streamable HTTP server on a network needs, with or without tokens: a cap on open
//! sessions (the one idle the longest is closed to make room; `503` when all are busy), a cap
//! per user, a time limit on reading a request, and a flood of 100,000 `initialize` calls
//! against the `quickstart` example that leaves its memory bounded by the cap while a client
//! that uses its session is still served.

use crate::support;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use reqwest::StatusCode;
use serde_json::json;
use support::http::{Endpoint, PROTOCOL, Session, principal_from_header, text_of};
use tests::stdio::{ServerProcess, example_binary};
use typed_mcp::prelude::*;
use typed_mcp::transport::http::HttpConfig;

/// Answers after `ms` milliseconds.
#[tool]
async fn slow(ms: u64) -> String {
    tokio::time::sleep(Duration::from_millis(ms)).await;
    "done".to_owned()
}

fn server() -> Server {
    Server::builder("limits", "1.0.0").tools(tools![slow]).build().unwrap()
}

async fn ping(session: &Session) -> StatusCode {
    let message = json!({"jsonrpc": "2.0", "id": session.next_id(), "method": "ping"});
    session.send(&message).await.status()
}

async fn initialize(endpoint: &Endpoint, user: Option<&str>) -> reqwest::Response {
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": PROTOCOL, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
    let mut post = endpoint.post().body(init.to_string());
    if let Some(user) = user {
        post = post.header("x-user", user);
    }
    post.send().await.expect("POST initialize")
}

#[tokio::test]
async fn at_the_cap_the_session_idle_the_longest_makes_room() {
    let endpoint = Endpoint::serve(&server(), HttpConfig::default().max_sessions(3)).await;
    let first = endpoint.session(json!({})).await;
    let second = endpoint.session(json!({})).await;
    let third = endpoint.session(json!({})).await;
    tokio::time::sleep(Duration::from_millis(20)).await;
    // The first is used again: now the second has been idle the longest.
    assert_eq!(ping(&first).await, StatusCode::OK);
    let fourth = endpoint.session(json!({})).await;
    assert_eq!(endpoint.transport().session_count(), 3);
    assert_eq!(ping(&second).await, StatusCode::NOT_FOUND, "the session idle the longest was closed");
    for s in [&first, &third, &fourth] {
        assert_eq!(ping(s).await, StatusCode::OK);
    }
}

#[tokio::test]
async fn when_every_session_is_busy_initialize_is_503_with_retry_after() {
    let endpoint = Endpoint::serve(&server(), HttpConfig::default().max_sessions(1)).await;
    let busy = Arc::new(endpoint.session(json!({})).await);
    let caller = busy.clone();
    let call = tokio::spawn(async move { caller.call("slow", json!({"ms": 800})).await });
    tokio::time::sleep(Duration::from_millis(200)).await;
    let refused = initialize(&endpoint, None).await;
    assert_eq!(refused.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert!(refused.headers().contains_key("retry-after"));
    assert_eq!(text_of(&call.await.unwrap()), "done");
    // Idle again: it makes room.
    assert_eq!(initialize(&endpoint, None).await.status(), StatusCode::OK);
    assert_eq!(ping(&busy).await, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn a_user_at_their_cap_loses_their_own_oldest_session_not_anyone_elses() {
    let config = HttpConfig::default().max_sessions_per_subject(2);
    let endpoint = Endpoint::serve_with(&server(), config, |router| {
        router.layer(axum::middleware::from_fn(principal_from_header))
    })
    .await;
    let bob = endpoint.session_as(json!({}), Some("bob")).await;
    let a1 = endpoint.session_as(json!({}), Some("alice")).await;
    let a2 = endpoint.session_as(json!({}), Some("alice")).await;
    tokio::time::sleep(Duration::from_millis(20)).await;
    let a3 = endpoint.session_as(json!({}), Some("alice")).await;
    assert_eq!(ping(&a1).await, StatusCode::NOT_FOUND);
    for s in [&a2, &a3, &bob] {
        assert_eq!(ping(s).await, StatusCode::OK);
    }
}

#[tokio::test]
async fn half_a_request_does_not_hold_a_connection() {
    let http = server().streamable_http(HttpConfig::default().request_read_timeout(Duration::from_millis(300)));
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0)).await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let serving = tokio::spawn({
        let http = http.clone();
        async move {
            http.serve(listener, async {
                let _ = stopped.await;
            })
            .await
        }
    });
    let outcome = tokio::task::spawn_blocking(move || {
        // Headers never finished: the connection is closed.
        let mut half = TcpStream::connect(("127.0.0.1", port)).unwrap();
        half.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        half.write_all(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n").unwrap();
        let started = Instant::now();
        let mut buf = [0u8; 1024];
        // Read returns (end of stream, or an answer) rather than timing out.
        let closed = half.read(&mut buf).is_ok() && started.elapsed() < Duration::from_secs(4);
        // A body that never arrives: 408.
        let mut slow = TcpStream::connect(("127.0.0.1", port)).unwrap();
        slow.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        slow.write_all(
            b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
              Accept: application/json, text/event-stream\r\nContent-Length: 100\r\n\r\n{\"jsonrpc\"",
        )
        .unwrap();
        let mut answer = String::new();
        let _ = slow.read_to_string(&mut answer);
        (closed, started.elapsed(), answer)
    })
    .await
    .unwrap();
    let (closed, elapsed, answer) = outcome;
    assert!(closed, "the half-sent request's connection stayed open ({elapsed:?})");
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    let _ = stop.send(());
    serving.await.unwrap().unwrap();
}

/// A keep-alive HTTP/1.1 connection sending `initialize` as fast as the server answers (a
/// plain writer and reader, so that the flood costs the test little next to the server).
struct RawConnection {
    stream: tokio::io::BufReader<tokio::net::TcpStream>,
    request: Vec<u8>,
}

impl RawConnection {
    async fn open(port: u16) -> RawConnection {
        let stream = tokio::net::TcpStream::connect(("127.0.0.1", port)).await.expect("connect");
        stream.set_nodelay(true).expect("nodelay");
        let body = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": PROTOCOL, "capabilities": {}, "clientInfo": {"name": "flood", "version": "1"}}})
        .to_string();
        let request = format!(
            "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        );
        RawConnection { stream: tokio::io::BufReader::new(stream), request: request.into_bytes() }
    }

    /// Sends one `initialize`; the response's status, `None` when the connection failed.
    async fn initialize(&mut self) -> Option<u16> {
        use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt};
        self.stream.get_mut().write_all(&self.request).await.ok()?;
        let mut line = String::new();
        self.stream.read_line(&mut line).await.ok()?;
        let status: u16 = line.split_whitespace().nth(1)?.parse().ok()?;
        let mut length = 0usize;
        loop {
            line.clear();
            if self.stream.read_line(&mut line).await.ok()? == 0 {
                return None;
            }
            let header = line.trim_end();
            if header.is_empty() {
                break;
            }
            if let Some((_, value)) =
                header.split_once(':').filter(|(name, _)| name.eq_ignore_ascii_case("content-length"))
            {
                length = value.trim().parse().ok()?;
            }
        }
        let mut body = vec![0u8; length];
        self.stream.read_exact(&mut body).await.ok()?;
        Some(status)
    }
}

/// Resident memory of process `pid`, in KiB.
fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("/proc/<pid>/status (Linux)");
    let line = status.lines().find(|l| l.starts_with("VmRSS:")).expect("VmRSS");
    line.split_whitespace().nth(1).and_then(|v| v.parse().ok()).expect("a number of KiB")
}

/// How many `initialize` calls the flood makes.
const FLOOD: usize = 100_000;
/// How many it keeps in flight at once.
const FLOOD_CONCURRENCY: usize = 16;
/// The most the server's memory may grow through the flood. Its cap (the default, 1,000
/// sessions) takes a few MiB; without it, 20,000 sessions took 120 MiB, so 100,000 would be
/// well over half a GiB.
const GROWTH_BOUND_KIB: u64 = 48 * 1024;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flood_of_initialize_leaves_memory_bounded_and_a_client_served() {
    let port = {
        let l = std::net::TcpListener::bind(("127.0.0.1", 0)).unwrap();
        l.local_addr().unwrap().port()
    };
    let binary = example_binary("quickstart");
    let process = ServerProcess::spawn(&binary, &[("PORT", &port.to_string()), ("RUST_LOG", "warn")]);
    let endpoint = Endpoint::at(port);
    let started = Instant::now();
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(started.elapsed() < Duration::from_secs(30), "quickstart did not listen");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let pid = process.id().expect("quickstart runs");
    let legit = endpoint.session(json!({})).await;
    assert_eq!(text_of(&legit.call("add", json!({"a": 1, "b": 2})).await), "3");
    let before = rss_kib(pid);

    let sent = Arc::new(AtomicUsize::new(0));
    let refused = Arc::new(AtomicUsize::new(0));
    let flooders: Vec<_> = (0..FLOOD_CONCURRENCY)
        .map(|_| {
            let (sent, refused) = (sent.clone(), refused.clone());
            tokio::spawn(async move {
                let mut conn = RawConnection::open(port).await;
                while sent.fetch_add(1, Ordering::Relaxed) < FLOOD {
                    match conn.initialize().await {
                        Some(200) => {}
                        Some(_) => {
                            refused.fetch_add(1, Ordering::Relaxed);
                        }
                        None => {
                            refused.fetch_add(1, Ordering::Relaxed);
                            conn = RawConnection::open(port).await;
                        }
                    }
                }
            })
        })
        .collect();

    // Meanwhile the legitimate client keeps using its session, and a new one joins.
    let mut calls = 0;
    let mut peak = before;
    let mut joined = None;
    while sent.load(Ordering::Relaxed) < FLOOD {
        let result = legit.request("tools/call", json!({"name": "add", "arguments": {"a": calls, "b": 1}})).await;
        assert_eq!(text_of(&result["result"]), (calls + 1).to_string(), "call {calls} during the flood: {result}");
        calls += 1;
        if joined.is_none() && sent.load(Ordering::Relaxed) > FLOOD / 2 {
            let newcomer = endpoint.session(json!({})).await;
            assert_eq!(text_of(&newcomer.call("add", json!({"a": 2, "b": 2})).await), "4");
            joined = Some(newcomer);
        }
        peak = peak.max(rss_kib(pid));
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    for f in flooders {
        f.await.unwrap();
    }
    peak = peak.max(rss_kib(pid));
    let after = rss_kib(pid);
    println!(
        "flood: {FLOOD} initialize in {:?}, {} refused; RSS {before} KiB before, {peak} KiB peak, {after} KiB after; {calls} calls served meanwhile",
        started.elapsed(),
        refused.load(Ordering::Relaxed)
    );
    assert_eq!(refused.load(Ordering::Relaxed), 0, "nothing was busy, so every initialize made room");
    assert!(calls > 0 && joined.is_some());
    assert!(
        peak - before < GROWTH_BOUND_KIB,
        "memory grew by {} KiB through the flood (bound {GROWTH_BOUND_KIB} KiB)",
        peak - before
    );
    assert_eq!(text_of(&legit.call("add", json!({"a": 5, "b": 5})).await), "10");
    drop(process);
}
