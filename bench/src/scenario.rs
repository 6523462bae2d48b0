//! The HTTP scenarios: throughput over many sessions, and the memory of idle sessions and of
//! pending elicitations.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use tokio::sync::{Barrier, Semaphore};

use crate::http::{Conn, Incoming};
use crate::process::HttpServer;
use crate::stats::Load;
use crate::wire::{self, Revision, Tool};

fn err(e: impl std::fmt::Display) -> String {
    e.to_string()
}

/// `sessions` sessions, each on its own connection, calling `echo` one call after another until
/// `calls` calls (after `warmup` per session) were answered or `limit` passed.
pub async fn http_echo(
    addr: SocketAddr,
    sessions: usize,
    calls: usize,
    warmup: usize,
    limit: Duration,
) -> Result<Load, String> {
    http_echo_as(addr, None, sessions, calls, warmup, limit).await
}

/// [`http_echo`] with `token` sent as a bearer token on every request.
pub async fn http_echo_as(
    addr: SocketAddr,
    token: Option<String>,
    sessions: usize,
    calls: usize,
    warmup: usize,
    limit: Duration,
) -> Result<Load, String> {
    http_echo_via(addr, None, token.map(|t| format!("Bearer {t}")), None, sessions, calls, warmup, limit).await
}

/// [`http_echo`] with a DPoP-bound `token` and one of `proofs` on every request.
pub async fn http_echo_dpop(
    addr: SocketAddr,
    token: String,
    proofs: Arc<crate::http::Proofs>,
    sessions: usize,
    calls: usize,
    warmup: usize,
    limit: Duration,
) -> Result<Load, String> {
    http_echo_via(addr, None, Some(format!("DPoP {token}")), Some(proofs), sessions, calls, warmup, limit).await
}

/// [`http_echo`] with the sessions opened at `addr` and, when `calls_to` is given, every call
/// (warm-up included) sent to that other instance of a shared deployment, which forwards it.
#[allow(clippy::too_many_arguments)]
pub async fn http_echo_via(
    addr: SocketAddr,
    calls_to: Option<SocketAddr>,
    authorization: Option<String>,
    proofs: Option<Arc<crate::http::Proofs>>,
    sessions: usize,
    calls: usize,
    warmup: usize,
    limit: Duration,
) -> Result<Load, String> {
    let barrier = Arc::new(Barrier::new(sessions + 1));
    let counter = Arc::new(AtomicUsize::new(0));
    let mut tasks = Vec::new();
    for _ in 0..sessions {
        let (barrier, counter) = (barrier.clone(), counter.clone());
        let (authorization, proofs) = (authorization.clone(), proofs.clone());
        tasks.push(tokio::spawn(async move {
            let ready = async {
                let mut conn = Conn::connect(addr).await?;
                conn.authorization = authorization.clone();
                conn.proofs = proofs.clone();
                let session = conn.open_session().await?;
                if let Some(other) = calls_to {
                    conn = Conn::connect(other).await?;
                    conn.authorization = authorization;
                    conn.proofs = proofs;
                }
                let mut frame = String::new();
                for i in 0..warmup {
                    frame.clear();
                    wire::call_request(&mut frame, i as u64 + 1, Tool::Echo);
                    conn.request(Some(&session), &frame).await?;
                }
                Ok::<_, std::io::Error>((conn, session))
            }
            .await;
            // Everyone waits at the barrier, even after a failure, so nobody waits forever.
            barrier.wait().await;
            let (mut conn, session) = ready.map_err(err)?;
            let start = Instant::now();
            let mut latencies = Vec::new();
            let mut frame = String::new();
            let mut id = warmup as u64;
            let mut last = start;
            while counter.fetch_add(1, Ordering::Relaxed) < calls && start.elapsed() < limit {
                id += 1;
                frame.clear();
                wire::call_request(&mut frame, id, Tool::Echo);
                let sent = Instant::now();
                let (_, body) = conn.request(Some(&session), &frame).await.map_err(err)?;
                last = Instant::now();
                let m: Incoming = serde_json::from_str(&body).map_err(err)?;
                if !m.succeeded() {
                    return Err(format!("echo failed: {body}"));
                }
                latencies.push((last - sent).as_nanos() as u64);
            }
            Ok::<_, String>((latencies, last))
        }));
    }
    barrier.wait().await;
    let start = Instant::now();
    let mut load = Load::default();
    let mut end = start;
    for t in tasks {
        let (latencies, last) = t.await.map_err(err)??;
        load.latencies_ns.extend(latencies);
        end = end.max(last);
    }
    load.completed = load.latencies_ns.len();
    load.elapsed = end - start;
    Ok(load)
}

/// `connections` keep-alive connections, each sending stateless calls of `echo` (no
/// `initialize`, no session) of `revision` one after another until `calls` calls (after
/// `warmup` per connection) were answered or `limit` passed. Every answer must succeed, echo the
/// text, open no session and, in the 2026-07-28 revision, say `resultType: "complete"`.
pub async fn http_stateless(
    addr: SocketAddr,
    revision: Revision,
    connections: usize,
    calls: usize,
    warmup: usize,
    limit: Duration,
) -> Result<Load, String> {
    let barrier = Arc::new(Barrier::new(connections + 1));
    let counter = Arc::new(AtomicUsize::new(0));
    let headers: Arc<str> = revision.echo_headers().into();
    let mut tasks = Vec::new();
    for _ in 0..connections {
        let (barrier, counter, headers) = (barrier.clone(), counter.clone(), headers.clone());
        tasks.push(tokio::spawn(async move {
            let mut frame = String::new();
            let mut streamed = 0;
            let mut call = async |conn: &mut Conn, id: u64, streamed: &mut usize| -> Result<(), String> {
                frame.clear();
                wire::stateless_echo(&mut frame, id, revision);
                let (head, body) = conn.request_with(None, &headers, &frame).await.map_err(err)?;
                if let Some(session) = head.session {
                    return Err(format!("a stateless call was answered with session `{session}`"));
                }
                let m: Incoming = serde_json::from_str(&body).map_err(|e| format!("bad answer {body:?}: {e}"))?;
                if !m.succeeded() || !body.contains(wire::ECHO_TEXT) {
                    return Err(format!("echo failed: {body}"));
                }
                if revision == Revision::Stateless && m.result_type() != Some("complete") {
                    return Err(format!("expected `resultType: \"complete\"`: {body}"));
                }
                *streamed += usize::from(head.sse);
                Ok(())
            };
            let ready = async {
                let mut conn = Conn::connect(addr).await.map_err(err)?;
                for i in 0..warmup {
                    call(&mut conn, i as u64 + 1, &mut streamed).await?;
                }
                Ok::<_, String>(conn)
            }
            .await;
            // Everyone waits at the barrier, even after a failure, so nobody waits forever.
            barrier.wait().await;
            let mut conn = ready?;
            let start = Instant::now();
            let mut latencies = Vec::new();
            let mut id = warmup as u64;
            let mut last = start;
            streamed = 0;
            while counter.fetch_add(1, Ordering::Relaxed) < calls && start.elapsed() < limit {
                if conn.broken {
                    conn = Conn::connect(addr).await.map_err(err)?;
                }
                id += 1;
                let sent = Instant::now();
                call(&mut conn, id, &mut streamed).await?;
                last = Instant::now();
                latencies.push((last - sent).as_nanos() as u64);
            }
            Ok::<_, String>((latencies, last, streamed))
        }));
    }
    barrier.wait().await;
    let start = Instant::now();
    let mut load = Load::default();
    let mut end = start;
    for t in tasks {
        let (latencies, last, streamed) = t.await.map_err(err)??;
        load.latencies_ns.extend(latencies);
        load.streamed += streamed;
        end = end.max(last);
    }
    load.completed = load.latencies_ns.len();
    load.elapsed = end - start;
    Ok(load)
}

/// Opens `count` sessions over `connections` keep-alive connections; returns their ids.
async fn open_sessions(addr: SocketAddr, count: usize, connections: usize) -> Result<Vec<String>, String> {
    let mut tasks = Vec::new();
    for c in 0..connections {
        let n = count / connections + usize::from(c < count % connections);
        tasks.push(tokio::spawn(async move {
            let mut conn = Conn::connect(addr).await?;
            let mut ids = Vec::with_capacity(n);
            for _ in 0..n {
                if conn.broken {
                    conn = Conn::connect(addr).await?;
                }
                ids.push(conn.open_session().await?);
            }
            Ok::<_, std::io::Error>(ids)
        }));
    }
    let mut ids = Vec::with_capacity(count);
    for t in tasks {
        ids.extend(t.await.map_err(err)?.map_err(err)?);
    }
    Ok(ids)
}

/// Lets the server settle (tasks finish, connections close) before its memory is read.
async fn settle() {
    tokio::time::sleep(Duration::from_millis(500)).await;
}

/// What a memory scenario measured.
#[derive(Debug, Clone, Copy)]
pub struct Memory {
    /// RSS before the sessions were opened (after a warm-up), in bytes.
    pub before: u64,
    /// RSS with the sessions (and whatever is pending on them) in place, in bytes.
    pub after: u64,
    /// For pending elicitations held open: how long it took, once every question was pending,
    /// to answer them all at once and receive every call's result.
    pub answered_in: Option<Duration>,
}

/// Warms the server up (a few sessions and calls on a few connections, then closed).
async fn warm_up(addr: SocketAddr) -> Result<(), String> {
    let mut tasks = Vec::new();
    for _ in 0..16 {
        tasks.push(tokio::spawn(async move {
            let mut conn = Conn::connect(addr).await?;
            let session = conn.open_session().await?;
            let mut frame = String::new();
            wire::call_request(&mut frame, 1, Tool::Echo);
            conn.request(Some(&session), &frame).await?;
            Ok::<_, std::io::Error>(())
        }));
    }
    for t in tasks {
        t.await.map_err(err)?.map_err(err)?;
    }
    settle().await;
    Ok(())
}

/// The server's RSS before and after `sessions` sessions were opened and left idle (their
/// connections closed).
pub async fn idle_sessions(server: &HttpServer, sessions: usize) -> Result<Memory, String> {
    warm_up(server.addr).await?;
    let before = server.rss()?;
    let ids = open_sessions(server.addr, sessions, 16).await?;
    if ids.len() != sessions {
        return Err(format!("opened {} sessions of {sessions}", ids.len()));
    }
    settle().await;
    Ok(Memory { before, after: server.rss()?, answered_in: None })
}

/// The server's RSS with `per_session` calls of `form` waiting for the user on each of
/// `sessions` sessions. Each call is POSTed on its own connection and read until the
/// `elicitation/create` arrives. With `hold`, every POST's SSE stream then stays open, as a
/// client keeps it while its user fills in the form: the figure includes the server's cost of
/// one open connection per call. Then every question is answered at once, and each call must
/// return its own result with the answer given, on its own stream; the time that took is
/// measured. Without `hold`, the client closes the streams (as it may: the calls go on, and a
/// client can resume with `Last-Event-ID`), and what is left is the cost of the pending calls
/// themselves.
pub async fn pending_elicitations(
    server: &HttpServer,
    sessions: usize,
    per_session: usize,
    hold: bool,
) -> Result<Memory, String> {
    warm_up(server.addr).await?;
    let before = server.rss()?;
    let ids = open_sessions(server.addr, sessions, 16).await?;
    let addr = server.addr;
    let gate = Arc::new(Semaphore::new(64));
    let mut tasks = Vec::with_capacity(sessions * per_session);
    for session in ids {
        let session: Arc<str> = session.into();
        for i in 0..per_session {
            let (gate, session) = (gate.clone(), session.clone());
            tasks.push(tokio::spawn(async move {
                let _permit = gate.acquire().await.map_err(err)?;
                let mut conn = Conn::connect(addr).await.map_err(|e| format!("connecting to call `form`: {e}"))?;
                let mut frame = String::new();
                wire::call_request(&mut frame, i as u64 + 1, Tool::Form);
                let (method, id) = conn
                    .call_until_request(&session, &frame)
                    .await
                    .map_err(|e| format!("calling `form` until it asks: {e}"))?;
                if method != "elicitation/create" {
                    return Err(format!("expected elicitation/create, got {method}"));
                }
                Ok::<_, String>(hold.then_some(Pending { conn, session, id }))
            }));
        }
    }
    let mut held = Vec::with_capacity(tasks.len());
    for t in tasks {
        held.extend(t.await.map_err(err)??);
    }
    settle().await;
    let after = server.rss()?;
    let answered_in = if hold { Some(answer_all(addr, held).await?) } else { None };
    Ok(Memory { before, after, answered_in })
}

/// A call waiting for the user: its stream, its session, and the id of the server's question.
struct Pending {
    conn: Conn,
    session: Arc<str>,
    id: String,
}

/// Answers every pending question at once and reads each call's result from its stream:
/// every one must succeed and carry the answer given. The answers are POSTed by 256 workers,
/// each on one kept-alive connection (ten thousand fresh connections, on top of those the
/// scenarios already opened, would run loopback out of ports). Returns the time from the first
/// answer to the last result.
async fn answer_all(addr: SocketAddr, pending: Vec<Pending>) -> Result<Duration, String> {
    const WORKERS: usize = 256;
    let count = pending.len();
    let mut shares: Vec<Vec<Pending>> = (0..WORKERS).map(|_| Vec::new()).collect();
    for (i, p) in pending.into_iter().enumerate() {
        shares[i % WORKERS].push(p);
    }
    let started = Instant::now();
    let mut tasks = Vec::with_capacity(WORKERS);
    for share in shares.into_iter().filter(|s| !s.is_empty()) {
        tasks.push(tokio::spawn(async move {
            let mut conn = Conn::connect(addr).await.map_err(|e| format!("connecting to answer: {e}"))?;
            for p in &share {
                if conn.broken {
                    conn = Conn::connect(addr).await.map_err(|e| format!("connecting to answer: {e}"))?;
                }
                let answer = format!(r#"{{"jsonrpc":"2.0","id":{},"result":{}}}"#, p.id, wire::FORM_ANSWER);
                conn.send(&p.session, &answer).await.map_err(|e| format!("sending an answer: {e}"))?;
            }
            let mut returned = 0;
            for mut p in share {
                let response = p
                    .conn
                    .response_on_stream()
                    .await
                    .map_err(|e| format!("reading a call's result after its answer: {e}"))?;
                let m: Incoming = serde_json::from_str(&response).map_err(err)?;
                if !m.succeeded() || !response.contains(wire::FORM_RESULT) {
                    return Err(format!("a pending call ended with {response}"));
                }
                returned += 1;
            }
            Ok::<_, String>(returned)
        }));
    }
    let mut returned = 0;
    for t in tasks {
        returned += t.await.map_err(err)??;
    }
    if returned != count {
        return Err(format!("{returned} of {count} pending calls returned"));
    }
    Ok(started.elapsed())
}
