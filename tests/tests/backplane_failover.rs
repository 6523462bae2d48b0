//! Redis itself going away under a shared deployment (helpers in `support/backplane.rs`):
//!
//! - Redis stopped: a request landing on its session's owner, or on an instance that served the
//!   session before, is still served; one for a session the instance never saw gets `503` at
//!   once; once Redis is back, sessions are served everywhere again.
//! - Redis stopped and restarted (empty) under load: six clients calling continuously through
//!   both of two instances get answers or `503` with a JSON-RPC error, never a hang or another
//!   status; the instances record their sessions again, and soon every call is answered.
//! - A master of a Cluster and the Sentinels' primary killed under load (four sessions, calls
//!   landing on owners and non-owners): every call is answered or refused with `503` and
//!   `Retry-After`, none hangs, none runs twice, and 3 s after the failover nothing is refused.
//! - A bus subscription on a Cluster is made again on the new master of its channel's shard
//!   after the old one was killed.

use crate::support::backplane::{
    RUNS, add_call, count, in_process, initialize, open_session, post, started_redis, two_instances,
};

use std::net::Ipv4Addr;
use std::time::{Duration, Instant};

use serde_json::json;
use tests::stdio::within;
use typed_mcp::prelude::*;
use typed_mcp::transport::http::HttpConfig;
use typed_mcp_redis::Redis;
use typed_mcp_redis::testing::RedisServer;

#[tokio::test]
async fn with_redis_down_the_owner_serves_and_the_others_refuse_at_once() {
    let (mut redis_server, redis) = started_redis();
    let (a, _a_http, a_task) = in_process(&redis).await;
    let (b, _b_http, b_task) = in_process(&redis).await;
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
    let (status, session, _) = post(&a, None, init.clone()).await;
    assert_eq!(status, 200);
    let session = session.expect("a session id");
    let (status, unseen, _) = post(&a, None, init.clone()).await;
    assert_eq!(status, 200);
    let unseen = unseen.expect("a session id");
    let call = |id: u32| json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "add", "arguments": {"a": 2, "b": id}}});
    let (status, _, body) = post(&b, Some(&session), call(2)).await;
    assert_eq!(status, 200, "served by B: {body}");
    assert!(body.contains(r#""text":"4""#), "{body}");

    redis_server.kill();
    let (status, _, body) = post(&a, Some(&session), call(3)).await;
    assert_eq!(status, 200, "the owner needs no Redis: {body}");
    assert!(body.contains(r#""text":"5""#), "{body}");
    // B serves the session it served before from what it read then; one it never saw needs
    // Redis.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let (status, _, body) = post(&b, Some(&session), call(6)).await;
    assert_eq!(status, 200, "B needs no Redis for a session it serves: {body}");
    assert!(body.contains(r#""text":"8""#), "{body}");
    let started = Instant::now();
    let (status, _, body) = post(&b, Some(&unseen), call(4)).await;
    assert_eq!(status, 503, "{body}");
    assert!(started.elapsed() < Duration::from_secs(5), "refused after {:?}", started.elapsed());
    let (status, _, _) = post(&a, None, init.clone()).await;
    assert_eq!(status, 503, "a new session cannot be recorded");

    let _back = RedisServer::start_on(redis_server.port());
    // Nothing was persisted, so the Redis that came back knows no session: a new one, recorded
    // once the connection is made again, is served across instances.
    let deadline = Instant::now() + Duration::from_secs(10);
    let fresh = loop {
        let (status, session, _) = post(&a, None, init.clone()).await;
        if status == 200 {
            break session.expect("a session id");
        }
        assert!(Instant::now() < deadline, "no reconnection to Redis within 10 s");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let (status, _, body) = post(&b, Some(&fresh), call(5)).await;
    assert_eq!(status, 200, "{body}");
    assert!(body.contains(r#""text":"7""#), "{body}");
    a_task.abort();
    b_task.abort();
}

/// How one call went while Redis was stopped and restarted.
#[derive(Debug, Clone, PartialEq)]
enum Outcome {
    Answered,
    /// `503` with a JSON-RPC error saying why.
    Refused,
    /// Anything else: a wrong answer, another status, no answer in time.
    Wrong(String),
}

/// Calls `add` in `session` at `url`, within 10 s.
async fn call_once(http: &reqwest::Client, url: &str, session: &str, id: u32) -> Outcome {
    let request = http
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-11-25")
        .header("mcp-session-id", session)
        .body(add_call(id).to_string());
    let answered = tokio::time::timeout(Duration::from_secs(10), async {
        let response = request.send().await?;
        let status = response.status().as_u16();
        Ok::<_, reqwest::Error>((status, response.text().await?))
    });
    match answered.await {
        Err(_) => Outcome::Wrong(format!("no answer within 10 s from {url}")),
        Ok(Err(e)) => Outcome::Wrong(format!("{url}: {e}")),
        Ok(Ok((200, body))) if body.contains(&format!(r#""text":"{}""#, id + 2)) => Outcome::Answered,
        Ok(Ok((503, body))) if body.contains(r#""error""#) && body.contains("retry") => Outcome::Refused,
        Ok(Ok((status, body))) => Outcome::Wrong(format!("{status} from {url}: {body}")),
    }
}

/// Opens a session at `url`, within 10 s.
async fn open_once(url: &str) -> Outcome {
    match tokio::time::timeout(Duration::from_secs(10), post(url, None, initialize())).await {
        Err(_) => Outcome::Wrong(format!("no answer within 10 s from {url}")),
        Ok((200, Some(_), _)) => Outcome::Answered,
        Ok((503, _, body)) if body.contains(r#""error""#) && body.contains("retry") => Outcome::Refused,
        Ok((status, _, body)) => Outcome::Wrong(format!("{status} from {url}: {body}")),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_stopped_and_restarted_under_load_is_no_outage() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
    let (mut redis_server, redis) = started_redis();
    let beat = Duration::from_millis(200);
    let [(a, _a_http, a_task), (b, _b_http, b_task)] = two_instances(&redis, beat).await;
    let urls = Arc::new([a, b]);
    let mut sessions = Vec::new();
    for i in 0..4 {
        sessions.push(open_session(&urls[i % 2]).await);
    }
    let sessions = Arc::new(sessions);
    // Six clients call continuously, each request to either instance, in each session.
    let stop = Arc::new(AtomicBool::new(false));
    let ids = Arc::new(AtomicU32::new(10));
    let clients: Vec<_> = (0..6)
        .map(|c| {
            let (urls, sessions, stop, ids) = (urls.clone(), sessions.clone(), stop.clone(), ids.clone());
            tokio::spawn(async move {
                let http = crate::support::http_client();
                let mut outcomes = Vec::new();
                let mut n = c;
                while !stop.load(Ordering::Relaxed) {
                    let id = ids.fetch_add(1, Ordering::Relaxed);
                    let started = Instant::now();
                    // Every fifth operation opens a session (which needs Redis to record it).
                    let outcome = if n % 5 == 4 {
                        open_once(&urls[(n / 4) % 2]).await
                    } else {
                        call_once(&http, &urls[(n / 4) % 2], &sessions[n % 4], id).await
                    };
                    outcomes.push((started, outcome));
                    n += 1;
                    tokio::time::sleep(Duration::from_millis(10)).await;
                }
                outcomes
            })
        })
        .collect();
    tokio::time::sleep(Duration::from_secs(1)).await;
    redis_server.kill();
    let killed = Instant::now();
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let _back = RedisServer::start_on(redis_server.port());
    let restarted = Instant::now();
    // Back in full: every session answered through both instances, and new sessions open.
    let deadline = Instant::now() + Duration::from_secs(15);
    let http = crate::support::http_client();
    let mut id = 1_000_000;
    let recovered = loop {
        let mut all = true;
        for session in sessions.iter() {
            for url in urls.iter() {
                id += 1;
                all &= call_once(&http, url, session, id).await == Outcome::Answered;
            }
        }
        if all && post(&urls[0], None, initialize()).await.0 == 200 {
            break Instant::now();
        }
        assert!(Instant::now() < deadline, "not back within 15 s of Redis's restart");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    tokio::time::sleep(Duration::from_secs(1)).await;
    stop.store(true, Ordering::Relaxed);
    let mut counts = [0usize; 2];
    for client in clients {
        let outcomes = within("a client finishing", client).await.expect("no client panicked");
        for (started, outcome) in outcomes {
            match outcome {
                Outcome::Answered => counts[0] += 1,
                Outcome::Refused if started < recovered => counts[1] += 1,
                Outcome::Refused => panic!("refused after the service was back in full"),
                Outcome::Wrong(what) => panic!(
                    "a call neither answered nor clearly refused, {:?} after the kill: {what}",
                    started.checked_duration_since(killed)
                ),
            }
        }
    }
    println!(
        "{} calls answered, {} refused with 503; back in full {:?} after Redis restarted",
        counts[0],
        counts[1],
        recovered - restarted
    );
    assert!(counts[0] > 0, "nothing was answered");
    assert!(counts[1] > 0, "nothing needed Redis while it was down: the test did not test the outage");
    a_task.abort();
    b_task.abort();
}

/// What the calls during a failover got.
#[derive(Debug, Default)]
struct Tally {
    answered: u32,
    retryable: u32,
    wrong: Vec<String>,
}

/// Two in-process instances on `url`; four sessions, each called in a loop through both
/// instances in turn (half the calls land on a non-owner), while `failover` runs. Every call
/// must end within 10 s with its answer or a `503` with `Retry-After`, no handler may run
/// twice, and once Redis settled every call is answered again.
async fn calls_survive(url: &str, base: u32, failover: impl std::future::Future<Output = ()>) -> Tally {
    let redis = Redis::connect(url).unwrap();
    let mut urls = Vec::new();
    let mut serving = Vec::new();
    for _ in 0..2 {
        let server = Server::builder("t", "1").tools(tools![count]).build().unwrap();
        let listener = tokio::net::TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await.unwrap();
        let address = format!("http://{}/mcp", listener.local_addr().unwrap());
        let http = server.streamable_http(
            HttpConfig::default().backplane(redis.backplane(address.clone()).heartbeat(Duration::from_millis(200))),
        );
        serving.push(tokio::spawn(async move {
            let _ = http.serve(listener, std::future::pending()).await;
        }));
        urls.push(address);
    }
    let mut sessions = Vec::new();
    for i in 0..4 {
        sessions.push(open_session(&urls[i % 2]).await);
    }
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let tally = std::sync::Arc::new(std::sync::Mutex::new(Tally::default()));
    let mut clients = Vec::new();
    for (c, session) in sessions.into_iter().enumerate() {
        let (urls, stop, tally) = (urls.clone(), stop.clone(), tally.clone());
        clients.push(tokio::spawn(async move {
            let http = crate::support::http_client();
            let mut k = 0u32;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                k += 1;
                let n = base + u32::try_from(c).unwrap() * 100_000 + k;
                let call = json!({"jsonrpc": "2.0", "id": k, "method": "tools/call",
                    "params": {"name": "count", "arguments": {"n": n}}});
                let request = http
                    .post(&urls[usize::try_from(k).unwrap() % 2])
                    .header("content-type", "application/json")
                    .header("accept", "application/json, text/event-stream")
                    .header("mcp-protocol-version", "2025-11-25")
                    .header("mcp-session-id", &session)
                    .body(call.to_string());
                let outcome = tokio::time::timeout(Duration::from_secs(10), async {
                    let response = request.send().await?;
                    let retry_after = response.headers().contains_key("retry-after");
                    Ok::<_, reqwest::Error>((response.status().as_u16(), retry_after, response.text().await?))
                })
                .await;
                let refused = matches!(outcome, Ok(Ok((503, true, _))));
                {
                    let mut t = tally.lock().unwrap();
                    match outcome {
                        Ok(Ok((200, _, body))) if body.contains(&format!("ran {n}")) => t.answered += 1,
                        Ok(Ok((503, true, _))) => t.retryable += 1,
                        Ok(Ok((status, _, body))) => t.wrong.push(format!("call {n}: {status} {body}")),
                        Ok(Err(e)) => t.wrong.push(format!("call {n}: {e}")),
                        Err(_) => t.wrong.push(format!("call {n}: no answer within 10 s")),
                    }
                }
                if refused {
                    // As a client honouring `Retry-After` would, a little sooner.
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            }
        }));
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    failover.await;
    // Settled: every call is answered again.
    let settled = tally.lock().unwrap().answered;
    tokio::time::sleep(Duration::from_secs(3)).await;
    let before = tally.lock().unwrap().retryable;
    tokio::time::sleep(Duration::from_secs(2)).await;
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    for c in clients {
        c.await.unwrap();
    }
    for s in serving {
        s.abort();
    }
    let tally = std::mem::take(&mut *tally.lock().unwrap());
    assert!(tally.wrong.is_empty(), "calls neither answered nor refused as retryable: {:?}", tally.wrong);
    assert!(tally.answered > settled, "no call was answered after the failover: {tally:?}");
    assert_eq!(tally.retryable, before, "calls were still refused 3 s after the failover: {tally:?}");
    let runs = RUNS.lock().unwrap();
    let twice: Vec<_> = runs.iter().filter(|(n, r)| **n >= base && **n < base + 1_000_000 && **r > 1).collect();
    assert!(twice.is_empty(), "calls ran twice: {twice:?}");
    tally
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_during_a_cluster_master_failover_get_an_answer_or_a_retryable_error() {
    // A cluster of its own: one of its masters is killed.
    let mut cluster = typed_mcp_redis::testing::RedisCluster::start();
    let url = cluster.url();
    let masters = cluster.masters();
    let victim = masters[0];
    let cluster_ref = &mut cluster;
    let tally = calls_survive(&url, 1_000_000, async move {
        let started = Instant::now();
        cluster_ref.kill(victim);
        tokio::task::block_in_place(|| cluster_ref.wait_healthy());
        eprintln!("cluster failover: a master killed, its replica serving after {:?}", started.elapsed());
    })
    .await;
    eprintln!("cluster failover under load: {tally:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_during_a_sentinel_failover_get_an_answer_or_a_retryable_error() {
    let mut sentinel = typed_mcp_redis::testing::RedisSentinel::start();
    let url = sentinel.url();
    let sentinel_ref = &mut sentinel;
    let tally = calls_survive(&url, 2_000_000, async move {
        let took = tokio::task::block_in_place(|| sentinel_ref.kill_primary());
        eprintln!("sentinel failover: the primary killed, the replica promoted after {took:?}");
    })
    .await;
    eprintln!("sentinel failover under load: {tally:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bus_subscription_follows_its_channel_through_a_cluster_master_failover() {
    use typed_mcp::transport::http::MessageBus;
    let mut cluster = typed_mcp_redis::testing::RedisCluster::start();
    let connect = || Redis::connect(&cluster.url()).unwrap().with_prefix("f").unwrap();
    let (sender, mut received) = tokio::sync::mpsc::unbounded_channel();
    let stop = tokio_util::sync::CancellationToken::new();
    connect().bus().subscribe("instance:x".into(), Box::new(move |m| drop(sender.send(m))), stop.clone());
    let speaker = connect().bus();
    assert!(hears(&speaker, &mut received, "before").await, "the subscriber never heard its channel");
    // The master serving the channel's shard is killed; its replica takes the shard over.
    let master = cluster.master_of("f:bus:instance:x");
    cluster.kill(master);
    tokio::task::block_in_place(|| cluster.wait_healthy());
    assert!(hears(&speaker, &mut received, "after").await, "the subscription was lost with the master that served it");
    stop.cancel();
}

/// Whether `received` gets `what` within 10 s, `speaker` publishing it again and again (a
/// subscription takes a moment).
async fn hears(
    speaker: &typed_mcp_redis::RedisBus,
    received: &mut tokio::sync::mpsc::UnboundedReceiver<String>,
    what: &str,
) -> bool {
    use typed_mcp::transport::http::MessageBus;
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let _ = speaker.publish("instance:x", what.into()).await;
        if let Ok(Some(m)) = tokio::time::timeout(Duration::from_millis(200), received.recv()).await
            && m == what
        {
            return true;
        }
        if Instant::now() > deadline {
            return false;
        }
    }
}
