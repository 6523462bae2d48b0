//! A session's owner going away, and another instance taking the session over (helpers in
//! `support/backplane.rs`):
//!
//! - An instance shutting down hands its sessions over at once (no waiting for its lease); a
//!   draining one hands over its idle sessions while it finishes the rest.
//! - An owner whose runtime is busy for longer than a lease keeps its sessions; one stuck past
//!   the stall limit stops beating, and resumes after.
//! - An owner killed without leaving (its connections refused) is taken over by the first
//!   request needing it, with no `503` first; a session taken over counts against the new
//!   owner's `max_sessions`. An owner that hangs (a `shared` process stopped with SIGSTOP, which
//!   still accepts connections) is taken over once its one-second lease lapsed, while calls go on
//!   being served where they land; resumed, it ends its copy of the session and leaves it to
//!   the new owner.
//! - The owner of a session killed (SIGKILL) while a call waits on its user: the call ends
//!   with an error the client receives, and once the owner's heartbeat lapsed another instance
//!   takes the session over from its state in Redis and serves it, elicitations included.
//! - The owner of a session SIGKILLed, a `GET` stream resumed with `Last-Event-ID` on another
//!   instance gets what the client missed (from Redis), then the session's new events.

use crate::support::backplane::{
    Instance, SoakNode, add, add_call, assert_owned_by, hold, in_process_with, initialize, open_get_stream,
    open_session, post, set_level, started_redis, two_instances,
};
use crate::support::registry::{Hooked, Hooks};

use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::json;
use tests::stdio::within;
use typed_mcp::client::{Client, ElicitationModes, elicitation_fn};
use typed_mcp::prelude::*;
use typed_mcp::protocol::ElicitResult;
use typed_mcp::testing::ToolResultExt;
use typed_mcp::transport::http::{HttpConfig, SessionRegistry};
use typed_mcp_redis::testing::{RedisServer, RoundRobinProxy};

#[tokio::test]
async fn an_instance_shutting_down_hands_its_sessions_over_at_once() {
    let (_redis_server, redis) = started_redis();
    // A lease of 30 s: a takeover within it cannot be the lease lapsing.
    let beat = Duration::from_secs(10);
    let [(a, a_http, a_task), (b, _b_http, b_task)] = two_instances(&redis, beat).await;
    let (status, session, _) = post(&a, None, initialize()).await;
    assert_eq!(status, 200);
    let session = session.expect("a session id");
    let (status, _, body) = post(&b, Some(&session), add_call(2)).await;
    assert_eq!((status, body.contains(r#""text":"4""#)), (200, true), "forwarded to A: {body}");

    within("A shutting down", a_http.close_all()).await;
    within("A's listener closing", a_task).await.unwrap();
    let left = Instant::now();
    let (status, _, body) = post(&b, Some(&session), add_call(3)).await;
    assert_eq!(status, 200, "B serves the session's calls where they land: {body}");
    assert!(body.contains(r#""text":"5""#), "{body}");
    // What only the owner does (here, changing the session's record) makes B take it over.
    let level = set_level(4);
    let (status, _, body) = post(&b, Some(&session), level).await;
    assert_eq!(status, 200, "B takes the session over at the first request for its owner: {body}");
    assert!(left.elapsed() < Duration::from_secs(10), "taken over after {:?}, not at once", left.elapsed());
    assert_owned_by(&redis, &session, &b, "B owns the session now").await;
    b_task.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_draining_owner_hands_its_idle_sessions_over_while_it_finishes_the_rest() {
    let (_redis_server, redis) = started_redis();
    // A lease of 30 s: a takeover within it cannot be the lease lapsing.
    let beat = Duration::from_secs(10);
    let [(a, a_http, a_task), (b, _b_http, b_task)] = two_instances(&redis, beat).await;
    let (_, idle, _) = post(&a, None, initialize()).await;
    let (_, busy, _) = post(&a, None, initialize()).await;
    let (idle, busy) = (idle.expect("a session id"), busy.expect("a session id"));
    // The busy session's call holds A for two seconds.
    let holding = {
        let (a, busy) = (a.clone(), busy.clone());
        let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "hold", "arguments": {"ms": 2000}}});
        tokio::spawn(async move { post(&a, Some(&busy), call).await })
    };
    let started = Instant::now();
    while a_http.busy() == 0 {
        assert!(started.elapsed() < Duration::from_secs(5), "the held call never started on A");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let draining = {
        let a_http = a_http.clone();
        tokio::spawn(async move { a_http.drain(Duration::from_secs(20)).await })
    };
    while a_http.is_ready() {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    // What only the owner does, for the idle session, reaches B: B forwards it to A, which
    // hands the session back instead of serving it, and B takes it over and serves it.
    let level = set_level(3);
    let (status, _, body) = post(&b, Some(&idle), level).await;
    assert_eq!(status, 200, "served by B, with no 503 on the way: {body}");
    let owner = redis.sessions().owner(&idle).await.unwrap().expect("still recorded");
    assert_eq!(owner.address.as_deref(), Some(b.as_str()), "B owns the idle session now");
    assert!(!draining.is_finished(), "A still drains: the held call runs");
    assert_eq!(a_http.session_count(), 1, "A keeps only the busy session");
    // The held call finishes on A, answered, and the drain ends right after it.
    let (status, _, body) = within("the held call", holding).await.unwrap();
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("held 2000 ms"), "{body}");
    within("A draining", draining).await.unwrap();
    assert!(started.elapsed() < Duration::from_secs(10), "drained after {:?}", started.elapsed());
    within("A's listener closing", a_task).await.unwrap();
    // The busy session, left when A closed, is B's at its next request.
    let (status, _, body) = post(&b, Some(&busy), add_call(4)).await;
    assert_eq!((status, body.contains(r#""text":"6""#)), (200, true), "{body}");
    b_task.abort();
}

/// Blocks the thread it runs on for `ms` milliseconds, as a handler doing blocking work on the
/// runtime would: a runtime with one worker then runs nothing else meanwhile.
#[tool]
async fn block(ms: u64) -> String {
    std::thread::sleep(Duration::from_millis(ms));
    format!("blocked {ms} ms")
}

/// An instance with `add` and `block`, the default heartbeat (a lease of one second), on a
/// runtime with one worker; and its endpoint.
fn one_worker_instance(redis_url: &str) -> (SoakNode, String) {
    let node = SoakNode::start_with(redis_url, typed_mcp::transport::http::DEFAULT_HEARTBEAT, || {
        Server::builder("t", "1").tools(tools![add, block]).build().unwrap()
    });
    let mcp = format!("{}/mcp", node.base);
    (node, mcp)
}

/// Calls `block` for `held` in `session` at `url`, in a task of its own.
fn call_block(url: &str, session: &str, held: Duration) -> tokio::task::JoinHandle<(u16, Option<String>, String)> {
    let (url, session) = (url.to_owned(), session.to_owned());
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "block", "arguments": {"ms": held.as_millis() as u64}}});
    tokio::spawn(async move { post(&url, Some(&session), call).await })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_owner_whose_runtime_is_busy_for_longer_than_a_lease_keeps_its_sessions() {
    let (redis_server, redis) = started_redis();
    // A: the default heartbeat (a lease of one second), on a runtime with one worker.
    let (_a, a_mcp) = one_worker_instance(&redis_server.url());
    let (b, _b_http, b_task) =
        in_process_with(&redis, typed_mcp::transport::http::DEFAULT_HEARTBEAT, HttpConfig::default()).await;
    let session = open_session(&a_mcp).await;
    // A's only worker is held for two and a half leases.
    let blocking = call_block(&a_mcp, &session, Duration::from_millis(2500));
    tokio::time::sleep(Duration::from_millis(300)).await;
    // What only the owner does goes through B meanwhile: B waits for A, whose lease holds (its
    // beats go on, on a thread of their own), rather than taking the session over.
    let level = set_level(3);
    let (status, _, body) = post(&b, Some(&session), level).await;
    assert_eq!(status, 200, "served by A once its worker was free: {body}");
    let (status, _, body) = within("the blocking call", blocking).await.unwrap();
    assert_eq!((status, body.contains("blocked 2500 ms")), (200, true), "{body}");
    assert_owned_by(&redis, &session, &a_mcp, "A still owns the session").await;
    b_task.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_owner_whose_runtime_is_stuck_stops_beating_after_the_stall_limit_and_resumes_after() {
    use typed_mcp::transport::http::RUNTIME_STALL_LIMIT;
    let (redis_server, redis) = started_redis();
    let (_a, a_mcp) = one_worker_instance(&redis_server.url());
    let session = open_session(&a_mcp).await;
    // A's only worker is held for the stall limit and three seconds more.
    let held = RUNTIME_STALL_LIMIT + Duration::from_secs(3);
    let blocking = call_block(&a_mcp, &session, held);
    let started = Instant::now();
    let lapsed = loop {
        let owner = redis.sessions().owner(&session).await.unwrap().expect("still recorded");
        if owner.address.is_none() {
            break started.elapsed();
        }
        assert!(started.elapsed() < held, "A's lease never lapsed while its runtime was stuck");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    // Beats went on for the stall limit (less the renewals' own period), then stopped: the lease
    // (a second) lapsed after that.
    assert!(lapsed >= RUNTIME_STALL_LIMIT - Duration::from_millis(500), "lapsed after {lapsed:?}, before the limit");
    let (status, _, body) = within("the blocking call", blocking).await.unwrap();
    assert_eq!(status, 200, "{body}");
    // The runtime runs again: A beats again, and records again the session nobody took.
    let resumed = Instant::now();
    loop {
        let owner = redis.sessions().owner(&session).await.unwrap().expect("still recorded");
        if owner.address.as_deref() == Some(a_mcp.as_str()) {
            break;
        }
        assert!(resumed.elapsed() < Duration::from_secs(3), "A did not announce itself again: {owner:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let (status, _, body) = post(&a_mcp, Some(&session), add_call(3)).await;
    assert_eq!((status, body.contains(r#""text":"5""#)), (200, true), "A serves its session again: {body}");
}

#[tokio::test]
async fn an_owner_whose_connection_is_refused_is_taken_over_at_once_whatever_its_lease() {
    let (_redis_server, redis) = started_redis();
    // A lease of 30 s, which A keeps: it is killed without leaving the registry.
    let beat = Duration::from_secs(10);
    let [(a, _a_http, a_task), (b, _b_http, b_task)] = two_instances(&redis, beat).await;
    let (status, session, _) = post(&a, None, initialize()).await;
    assert_eq!(status, 200);
    let session = session.expect("a session id");
    a_task.abort();
    let _ = a_task.await;
    let killed = Instant::now();
    let level = set_level(2);
    let (status, _, body) = post(&b, Some(&session), level).await;
    assert_eq!(status, 200, "the first request for the owner takes the session over, no 503 first: {body}");
    assert!(killed.elapsed() < Duration::from_secs(2), "taken over after {:?}", killed.elapsed());
    assert_owned_by(&redis, &session, &b, "B owns the session now").await;
    let (status, _, body) = post(&b, Some(&session), add_call(5)).await;
    assert_eq!((status, body.contains(r#""text":"7""#)), (200, true), "{body}");
    b_task.abort();
}

/// Sends `signal` (`-STOP`, `-CONT`) to the process of `instance`.
fn signal(instance: &Instance, signal: &str) {
    let status = Command::new("kill").args([signal, &instance.child.id().to_string()]).status().expect("kill runs");
    assert!(status.success(), "kill {signal} failed");
}

/// Resumes a stopped instance when dropped (a failed test must not leave it stopped: its
/// `Drop` kills it, which a stopped process obeys too, but resuming first is tidier).
struct Resume<'a>(&'a Instance);

impl Drop for Resume<'_> {
    fn drop(&mut self) {
        let _ = Command::new("kill").args(["-CONT", &self.0.child.id().to_string()]).status();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hung_owner_is_taken_over_within_a_second_and_ends_its_copy_once_resumed() {
    let (redis_server, redis) = started_redis();
    // Two `shared` processes with the default heartbeat (a lease of one second).
    let a = Instance::start("shared", Some(&redis_server.url()));
    let b = Instance::start("shared", Some(&redis_server.url()));
    let (a_mcp, b_mcp) = (format!("{}/mcp", a.base), format!("{}/mcp", b.base));
    let session = open_session(&a_mcp).await;
    let level =
        |id: u32| json!({"jsonrpc": "2.0", "id": id, "method": "logging/setLevel", "params": {"level": "error"}});
    let served_by = |id: u32| json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "served_by", "arguments": {}}});
    // `logging/setLevel` runs on the owner: through B it takes a hop to A.
    let (status, _, body) = post(&b_mcp, Some(&session), level(2)).await;
    assert_eq!(status, 200, "forwarded to A: {body}");
    let (status, _, body) = post(&b_mcp, Some(&session), served_by(3)).await;
    assert!(status == 200 && body.contains(&b.base), "a call is served where it lands: {body}");
    // The client's GET stream, held by the owner.
    let mut stream = open_get_stream(&a_mcp, &session).await;
    assert_eq!(stream.status(), 200);

    // A hangs: its kernel still accepts connections, but it answers nothing and renews nothing.
    signal(&a, "-STOP");
    let resume = Resume(&a);
    let stopped = Instant::now();
    // Meanwhile, calls through B go on being served where they land.
    let calls = {
        let b_mcp = b_mcp.clone();
        let session = session.clone();
        tokio::spawn(async move {
            let mut answered = 0;
            for id in 100..120 {
                let call = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "served_by", "arguments": {}}});
                let (status, _, body) = post(&b_mcp, Some(&session), call).await;
                assert_eq!(status, 200, "a call through B while A hangs: {body}");
                assert!(body.contains("Served by"), "{body}");
                answered += 1;
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            answered
        })
    };
    // What must run on the owner, retried as a client does on `503` (after `Retry-After`).
    let mut refused = 0;
    let mut id = 10;
    let gap = loop {
        id += 1;
        let (status, _, body) = post(&b_mcp, Some(&session), level(id)).await;
        match status {
            200 => break stopped.elapsed(),
            503 => {
                refused += 1;
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
            other => panic!("a request for the hung owner got {other}: {body}"),
        }
        assert!(stopped.elapsed() < Duration::from_secs(10), "never taken over");
    };
    println!("a hung owner's session served again {gap:?} after it stopped, after {refused} 503");
    assert!(refused <= 1, "{refused} refusals before the takeover");
    assert!(gap < Duration::from_millis(1500), "served again only {gap:?} after the owner hung");
    assert_owned_by(&redis, &session, &b_mcp, "B owns the session now").await;
    assert_eq!(within("the calls through B", calls).await.unwrap(), 20);

    // A resumes: at its first beat it finds its lease lapsed and the session another's, and
    // ends its copy (the GET stream it held closes); it does not take the session back.
    drop(resume);
    let ended = within("A's GET stream closing after it resumed", async {
        while stream.chunk().await.map(|c| c.is_some()).unwrap_or(false) {}
    });
    ended.await;
    assert_owned_by(&redis, &session, &b_mcp, "B still owns the session").await;
    // The session is whole, through either instance.
    let (status, _, body) = post(&a_mcp, Some(&session), level(50)).await;
    assert_eq!(status, 200, "through A, forwarded to B now: {body}");
    let (status, _, body) = post(&a_mcp, Some(&session), served_by(51)).await;
    assert!(status == 200 && body.contains(&a.base), "{body}");
    let (status, _, body) = post(&b_mcp, Some(&session), served_by(52)).await;
    assert!(status == 200 && body.contains(&b.base), "{body}");
    let reopened = open_get_stream(&a_mcp, &session).await;
    assert_eq!(reopened.status(), 200, "the GET stream opens again, through A, on B");
}

#[tokio::test]
async fn a_session_taken_over_counts_against_the_new_owners_session_cap() {
    let (_redis_server, redis) = started_redis();
    let beat = Duration::from_secs(10);
    let (a, a_http, a_task) = in_process_with(&redis, beat, HttpConfig::default()).await;
    let (b, b_http, b_task) = in_process_with(&redis, beat, HttpConfig::default().max_sessions(1)).await;
    let (status, on_b, _) = post(&b, None, initialize()).await;
    assert_eq!(status, 200);
    let on_b = on_b.expect("a session id");
    let (status, on_a, _) = post(&a, None, initialize()).await;
    assert_eq!(status, 200);
    let on_a = on_a.expect("a session id");
    assert_eq!(b_http.session_count(), 1);

    within("A shutting down", a_http.close_all()).await;
    within("A's listener closing", a_task).await.unwrap();
    let (status, _, body) = post(&b, Some(&on_a), add_call(2)).await;
    assert_eq!(status, 200, "taken over: {body}");
    assert_eq!(b_http.session_count(), 1, "B holds one session at most: the idle one made room");
    let (status, _, _) = post(&b, Some(&on_b), json!({"jsonrpc": "2.0", "id": 3, "method": "ping"})).await;
    assert_eq!(status, 404, "B's idle session was closed to make room");
    let (status, _, body) = post(&b, Some(&on_a), add_call(4)).await;
    assert_eq!((status, body.contains(r#""text":"6""#)), (200, true), "{body}");
    b_task.abort();
}

#[tokio::test]
async fn when_the_owner_is_killed_its_call_fails_and_another_instance_takes_the_session_over() {
    let redis = RedisServer::start();
    let mut instances: Vec<Instance> = (0..3).map(|_| Instance::start("shared", Some(&redis.url()))).collect();
    let proxy = RoundRobinProxy::start(instances.iter().map(|i| i.base.clone()).collect()).await;
    // The first question is held until the owner is dead; later ones are answered at once.
    let (asked, mut question) = tokio::sync::mpsc::unbounded_channel::<()>();
    let held = std::sync::Arc::new(tokio::sync::Mutex::new(true));
    let user = elicitation_fn(ElicitationModes::FORM, move |request| {
        let (asked, held) = (asked.clone(), held.clone());
        async move {
            let hold = std::mem::replace(&mut *held.lock().await, false);
            if hold {
                let _ = asked.send(());
                std::future::pending::<()>().await;
            }
            request.as_form().map_or_else(ElicitResult::decline, |form| {
                let mut content = form.defaults();
                content.insert("projectName".into(), json!("after"));
                form.accept(content).unwrap_or_else(|_| ElicitResult::cancel())
            })
        }
    });
    let url = format!("{}/mcp", proxy.url());
    let client = within("connecting", Client::builder("t", "1").elicitation(user).connect_http(&url)).await.unwrap();
    let owner = proxy.served()[0];
    let call = {
        let client = client.clone();
        tokio::spawn(async move { client.call_tool("create_project", ()).await })
    };
    within("the question", question.recv()).await.unwrap();
    let killed = &mut instances[owner];
    let _ = killed.child.kill();
    let _ = killed.child.wait();
    let failed = within("the call on the killed instance", call).await.unwrap();
    assert!(failed.is_err(), "the killed instance's call must end with an error: {failed:?}");

    // The heartbeat lapses (6 s by default); then any instance takes the session over.
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        match tokio::time::timeout(Duration::from_secs(5), client.call_tool("served_by", ())).await {
            Ok(Ok(done)) => {
                assert!(done.text().starts_with("Served by http://127.0.0.1:"), "{}", done.text());
                break;
            }
            other => assert!(Instant::now() < deadline, "the session was not taken over: {other:?}"),
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    // The client's capabilities came along: the new owner can ask it questions.
    let created = within("create_project after the takeover", client.call_tool("create_project", ())).await.unwrap();
    assert_eq!(created.text(), "Created project 'after'");
    within("closing", client.close()).await;
}

/// Reads `response` (an SSE stream) until `done` accepts what arrived so far; returns it.
async fn read_until(response: &mut reqwest::Response, what: &str, done: impl Fn(&str) -> bool) -> String {
    let mut seen = String::new();
    within(what, async {
        while !done(&seen) {
            let chunk = response.chunk().await.unwrap().unwrap_or_else(|| panic!("the stream ended: {seen}"));
            seen.push_str(&String::from_utf8_lossy(&chunk));
        }
    })
    .await;
    seen
}

/// The ids and `data:` lines of the complete SSE events in `text`.
fn events_of(text: &str) -> Vec<(Option<String>, String)> {
    text.split("\n\n")
        .filter(|block| block.contains("data: "))
        .map(|block| {
            let id = block.lines().find_map(|l| l.strip_prefix("id: ")).map(str::to_owned);
            let data = block.lines().filter_map(|l| l.strip_prefix("data: ")).collect::<Vec<_>>().join("\n");
            (id, data)
        })
        .collect()
}

#[tokio::test]
async fn a_stream_resumes_on_another_instance_after_its_owner_was_killed() {
    let redis = RedisServer::start();
    let mut a = Instance::start("backplane-notes", Some(&redis.url()));
    let b = Instance::start("backplane-notes", Some(&redis.url()));
    let (a_url, b_url) = (format!("{}/mcp", a.base), format!("{}/mcp", b.base));
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
    let (status, session, _) = post(&a_url, None, init).await;
    assert_eq!(status, 200);
    let session = session.expect("a session id");
    let (status, _, _) =
        post(&a_url, Some(&session), json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await;
    assert_eq!(status, 202);
    let subscribe =
        json!({"jsonrpc": "2.0", "id": 2, "method": "resources/subscribe", "params": {"uri": "notes://kept"}});
    assert_eq!(post(&a_url, Some(&session), subscribe).await.0, 200);
    let http = crate::support::http_client();
    let get = |url: &str, last: Option<&str>| {
        let mut request = http
            .get(url)
            .header("accept", "text/event-stream")
            .header("mcp-protocol-version", "2025-11-25")
            .header("mcp-session-id", &session);
        if let Some(last) = last {
            request = request.header("last-event-id", last);
        }
        request.send()
    };
    let write = |id: u32, text: &str| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "write_note", "arguments": {"name": "kept", "text": text}}})
    };
    // The session's GET stream on A sees the first update; then the client goes away.
    let mut stream = within("the GET stream on A", get(&a_url, None)).await.unwrap();
    assert_eq!(stream.status(), 200);
    assert_eq!(post(&a_url, Some(&session), write(3, "one")).await.0, 200);
    let seen = read_until(&mut stream, "the first update", |t| !events_of(t).is_empty()).await;
    let (last, first) = events_of(&seen).remove(0);
    let last = last.expect("events carry ids");
    assert!(first.contains("notifications/resources/updated"), "{first}");
    drop(stream);
    // Two more updates the client misses; once Redis holds them, A dies.
    assert_eq!(post(&a_url, Some(&session), write(4, "two")).await.0, 200);
    assert_eq!(post(&a_url, Some(&session), write(5, "three")).await.0, 200);
    let key = format!("mcp:events:{{{session}}}");
    let deadline = Instant::now() + Duration::from_secs(5);
    while typed_mcp_redis::testing::query::<i64>(&redis.url(), &["LLEN", &key]).await < 3 {
        assert!(Instant::now() < deadline, "the events did not reach Redis");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let _ = a.child.kill();
    let _ = a.child.wait();

    // B takes the session over once A's lease lapses (503 until then), and replays what the
    // client missed from Redis.
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut resumed = loop {
        let response = within("resuming on B", get(&b_url, Some(&last))).await.unwrap();
        if response.status() == 200 {
            break response;
        }
        assert_eq!(response.status(), 503, "refused only while A's lease runs");
        assert!(Instant::now() < deadline, "the session was not taken over");
        tokio::time::sleep(Duration::from_millis(250)).await;
    };
    let replayed = read_until(&mut resumed, "the missed updates", |t| events_of(t).len() >= 2).await;
    let replayed = events_of(&replayed);
    let (stream, seq) = last.split_once('-').unwrap();
    let next = |n: u64| format!("{stream}-{}", seq.parse::<u64>().unwrap() + n);
    assert_eq!(replayed[0].0.as_deref(), Some(next(1).as_str()), "{replayed:?}");
    assert_eq!(replayed[1].0.as_deref(), Some(next(2).as_str()), "{replayed:?}");
    assert!(replayed.iter().all(|(_, data)| data.contains("notifications/resources/updated")), "{replayed:?}");
    // The resumed stream is the session's live stream on its new owner: the subscription came
    // along, and new events get ids the client has not seen.
    assert_eq!(post(&b_url, Some(&session), write(6, "four")).await.0, 200);
    let more = read_until(&mut resumed, "an update after the takeover", |t| !events_of(t).is_empty()).await;
    let (id, data) = events_of(&more).remove(0);
    assert!(data.contains("notifications/resources/updated"), "{data}");
    let id = id.expect("an id");
    assert!(![last.clone(), next(1), next(2)].contains(&id), "a new id, not one the client saw: {id}");
    // Resuming from the new event replays nothing twice.
    drop(resumed);
    let mut again = within("resuming again", get(&b_url, Some(&id))).await.unwrap();
    assert_eq!(again.status(), 200);
    assert_eq!(post(&b_url, Some(&session), write(7, "five")).await.0, 200);
    let after = read_until(&mut again, "the next update", |t| !events_of(t).is_empty()).await;
    assert_eq!(events_of(&after).len(), 1, "{after}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_opened_before_its_instances_first_beat_is_not_taken_for_an_orphan() {
    let (_redis_server, redis) = started_redis();
    // A's first beat reaches the store 1.5 s after A starts serving; until then the store has
    // no address for A. B is an ordinary instance.
    let listener = tokio::net::TcpListener::bind((std::net::Ipv4Addr::LOCALHOST, 0)).await.unwrap();
    let a = format!("http://{}/mcp", listener.local_addr().unwrap());
    let registry =
        Hooked::new(redis.sessions(), Hooks { first_beat_late: Some(Duration::from_millis(1500)), ..Hooks::default() });
    let backplane = typed_mcp::transport::http::Backplane::new(std::sync::Arc::new(registry), a.clone())
        .bus(std::sync::Arc::new(redis.bus()))
        .heartbeat(Duration::from_millis(100))
        .secret(crate::support::backplane::SECRET);
    let server = Server::builder("t", "1").tools(tools![add]).build().unwrap();
    let a_http = server.streamable_http(HttpConfig::default().backplane(backplane));
    let serving = a_http.clone();
    let a_task = tokio::spawn(async move {
        let _ = serving.serve(listener, std::future::pending()).await;
    });
    let (b, _b_http, b_task) = in_process_with(&redis, Duration::from_millis(100), HttpConfig::default()).await;

    // A session opened on A at once: recorded only once the store knows where A is.
    let session = open_session(&a).await;
    assert_owned_by(&redis, &session, &a, "the owner of a new session is announced").await;
    // Requests landing on B (one served there, one for the owner) leave the session to A:
    // before, B took the session over from A, alive, and both served it as its owner.
    let (status, _, body) = post(&b, Some(&session), add_call(2)).await;
    assert!(status == 200 && body.contains(r#""text":"4""#), "{status}: {body}");
    let (status, _, body) = post(&b, Some(&session), set_level(3)).await;
    assert_eq!(status, 200, "{body}");
    assert_owned_by(&redis, &session, &a, "A, alive, keeps its session").await;
    a_task.abort();
    b_task.abort();
}

/// An in-process instance named `id` on `redis`, beating every `heartbeat`, its registry
/// `registry`: its URL and endpoint.
async fn named_instance(
    redis: &typed_mcp_redis::Redis,
    id: &str,
    heartbeat: Duration,
    registry: Hooked,
) -> (String, typed_mcp::transport::http::StreamableHttp) {
    let listener = tokio::net::TcpListener::bind((std::net::Ipv4Addr::LOCALHOST, 0)).await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let backplane = typed_mcp::transport::http::Backplane::new(std::sync::Arc::new(registry), url.clone())
        .bus(std::sync::Arc::new(redis.bus()))
        .instance_id(id)
        .heartbeat(heartbeat)
        .secret(crate::support::backplane::SECRET);
    let server = Server::builder("t", "1").tools(tools![add, hold, progress_then_hold]).build().unwrap();
    let http = server.streamable_http(HttpConfig::default().backplane(backplane));
    let serving = http.clone();
    tokio::spawn(async move {
        let _ = serving.serve(listener, std::future::pending()).await;
    });
    (url, http)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_the_store_was_out_of_reach_a_lapsed_owner_is_waited_for_not_taken_over() {
    let (redis_server, redis) = started_redis();
    let (owner, owner_http) =
        named_instance(&redis, "owner", Duration::from_millis(400), Hooked::new(redis.sessions(), Hooks::default()))
            .await;
    let registry = Hooked::new(redis.sessions(), Hooks::default());
    let hooks = registry.hooks.clone();
    let (other, _other_http) = named_instance(&redis, "other", Duration::from_millis(100), registry).await;
    let session = open_session(&owner).await;
    // The store was out of reach for longer than a lease: the other instance finds its own
    // announcement lapsed when it reaches the store again, and so is the owner's, which its
    // next beat (within 400 ms) renews.
    hooks.lapse_next_beat.store(true, std::sync::atomic::Ordering::SeqCst);
    while hooks.lapse_next_beat.load(std::sync::atomic::Ordering::SeqCst) {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let deleted = Command::new("redis-cli")
        .args(["-u", &redis_server.url(), "DEL", "mcp:instance:owner"])
        .output()
        .expect("redis-cli runs (install redis-tools, or Debian's redis-server package, which brings it)");
    assert_eq!(String::from_utf8_lossy(&deleted.stdout).trim(), "1", "the owner's announcement was there to lapse");
    // What only the owner serves lands on the other instance: it waits for the owner to
    // announce itself again, and forwards it there, instead of taking a live owner's session.
    let (status, _, body) = within("setLevel on the other instance", post(&other, Some(&session), set_level(2))).await;
    assert_eq!(status, 200, "{body}");
    assert_owned_by(&redis, &session, &owner, "a live owner keeps its session").await;
    assert_eq!(owner_http.session_count(), 1);
}

/// Reports progress once (its answer then streams as SSE), then holds its instance busy for
/// five seconds.
#[tool]
async fn progress_then_hold(ctx: Context) -> String {
    let _ = ctx.progress(1.0, Some(2.0), None).await;
    tokio::time::sleep(Duration::from_secs(5)).await;
    "held".into()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_cut_short_by_its_session_moving_elsewhere_ends_with_an_error() {
    let (_redis_server, redis) = started_redis();
    let (owner, owner_http) =
        named_instance(&redis, "owner", Duration::from_millis(100), Hooked::new(redis.sessions(), Hooks::default()))
            .await;
    let session = open_session(&owner).await;
    let call = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
        "params": {"name": "progress_then_hold", "arguments": {}, "_meta": {"progressToken": "p"}}});
    let running = tokio::spawn({
        let (owner, session) = (owner.clone(), session.clone());
        async move { post(&owner, Some(&session), call).await }
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    // The instance leaves the deployment: its sessions live on elsewhere, what runs here ends.
    within("close_all", owner_http.close_all()).await;
    let (status, _, body) = within("the cut request's answer", running).await.unwrap();
    assert_eq!(status, 200);
    assert!(
        body.contains(r#""id":7"#) && body.contains("moved to another instance"),
        "no answer to the cut request: {body}"
    );
}
