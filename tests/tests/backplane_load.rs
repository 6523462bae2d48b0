//! A shared deployment under load (helpers in `support/backplane.rs`):
//!
//! - 300 sessions over three instances, each eliciting at once, every answer posted to a
//!   random instance: every call gets its own answer, and once the sessions are deleted nothing
//!   of them is left in Redis.
//! - A rolling restart of three instances under continuous load (form elicitations and URL-mode
//!   flows in flight, calls, tasks running), each instance out of the balancer's rotation,
//!   drained and replaced: no client sees an error beyond a retryable `503`, no task fails.
//! - A soak: instances killed at random and replaced, and a Sentinel failover, under load
//!   (`MCP_SOAK_SECS` for a longer run): nothing lost, nothing run twice.

use crate::support::backplane::{RUNS, SoakNode, add, initialize, post, started_redis};

use std::net::Ipv4Addr;
use std::time::{Duration, Instant};

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use tests::stdio::within;
use typed_mcp::client::{Client, ElicitationModes, ProtocolEra, elicitation_fn};
use typed_mcp::prelude::*;
use typed_mcp::protocol::ElicitResult;
use typed_mcp::testing::ToolResultExt;
use typed_mcp::transport::http::{HttpConfig, StreamableHttp};
use typed_mcp_redis::Redis;
use typed_mcp_redis::testing::RoundRobinProxy;

/// What `ask` asks for.
#[derive(Debug, Deserialize, JsonSchema, Elicit)]
struct Reply {
    /// The reply.
    text: String,
}

/// Asks the user for a reply and returns it.
#[tool]
async fn ask(ctx: Context) -> Result<String, String> {
    match ctx.elicit::<Reply>("Your reply?").await {
        Ok(Elicitation::Accept(reply)) => Ok(reply.text),
        other => Err(format!("no reply: {other:?}")),
    }
}

/// A small pseudo-random sequence (xorshift), seeded per test run.
struct Dice(u64);

impl Dice {
    fn roll(&mut self, sides: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        usize::try_from(self.0 % sides as u64).unwrap_or(0)
    }
}

/// One session's run: initialize, a call that elicits, the answer, the result, DELETE, each at
/// the instance `at` picks.
async fn one_session(urls: &[String], at: [usize; 4], n: usize) {
    let http = crate::support::http_client();
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {"elicitation": {"form": {}}},
        "clientInfo": {"name": "load", "version": "1"}}});
    let (status, session, body) = post(&urls[at[0]], None, init).await;
    assert_eq!(status, 200, "{body}");
    let session = session.expect("a session id");
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "ask", "arguments": {}}});
    let mut response = http
        .post(&urls[at[1]])
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-11-25")
        .header("mcp-session-id", &session)
        .body(call.to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let mut text = String::new();
    let mut answered = false;
    loop {
        let Some(chunk) = response.chunk().await.unwrap() else { break };
        text.push_str(&String::from_utf8_lossy(&chunk));
        if !answered && text.contains("elicitation/create") && text.contains("\n\n") {
            let data = text.lines().find(|l| l.starts_with("data: ") && l.contains("elicitation/create")).unwrap();
            let question: serde_json::Value = serde_json::from_str(data.trim_start_matches("data: ")).unwrap();
            let answer = json!({"jsonrpc": "2.0", "id": question["id"],
                "result": {"action": "accept", "content": {"text": format!("reply {n}")}}});
            let (status, _, body) = post(&urls[at[2]], Some(&session), answer).await;
            assert_eq!(status, 202, "{body}");
            answered = true;
        }
    }
    assert!(answered, "session {n} was never asked: {text}");
    assert!(text.contains(&format!(r#""text":"reply {n}""#)), "session {n} got another answer: {text}");
    let ended = http
        .delete(&urls[at[3]])
        .header("mcp-protocol-version", "2025-11-25")
        .header("mcp-session-id", &session)
        .send()
        .await
        .unwrap();
    assert_eq!(ended.status(), 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_hundred_sessions_over_three_instances_each_get_their_own_answer() {
    let (redis_server, redis) = started_redis();
    let mut urls = Vec::new();
    let mut tasks = Vec::new();
    for _ in 0..3 {
        let server = Server::builder("t", "1").tools(tools![ask]).build().unwrap();
        let listener = tokio::net::TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await.unwrap();
        let url = format!("http://{}/mcp", listener.local_addr().unwrap());
        let http = server.streamable_http(HttpConfig::default().backplane(redis.backplane(url.clone())));
        tasks.push(tokio::spawn(async move {
            let _ = http.serve(listener, std::future::pending()).await;
        }));
        urls.push(url);
    }
    let urls = std::sync::Arc::new(urls);
    let seed = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos() as u64 | 1;
    let mut dice = Dice(seed);
    let sessions: Vec<_> = (0..300)
        .map(|n| {
            let at = [dice.roll(3), dice.roll(3), dice.roll(3), dice.roll(3)];
            let urls = urls.clone();
            tokio::spawn(async move { one_session(&urls, at, n).await })
        })
        .collect();
    let all = futures_util::future::join_all(sessions);
    for outcome in tokio::time::timeout(Duration::from_secs(60), all).await.expect("300 sessions within 60 s") {
        outcome.unwrap_or_else(|e| panic!("a session failed (seed {seed}): {e}"));
    }
    // Releasing a deleted session's records runs in the background: give it a moment.
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let mut left = typed_mcp_redis::testing::keys(&redis_server.url(), "mcp:s*").await;
        left.extend(typed_mcp_redis::testing::keys(&redis_server.url(), "mcp:events:*").await);
        if left.is_empty() {
            break;
        }
        assert!(Instant::now() < deadline, "left in Redis after every session was deleted: {left:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    for task in tasks {
        task.abort();
    }
}

/// Brews for a moment, as a task when the client wants one.
#[tool(task = "optional")]
async fn brew(kind: String) -> String {
    tokio::time::sleep(Duration::from_millis(300)).await;
    format!("brewed {kind}")
}

/// The URL-mode flows of the instance serving a call (set once its server is built).
#[derive(Default)]
struct Flows(std::sync::OnceLock<typed_mcp::server::UrlElicitations>);

/// Asks the user to visit a page (URL mode), and waits until the visit completed the flow.
#[tool]
async fn visit(ctx: Context, flows: State<Flows>) -> Result<String, String> {
    let id = ctx.new_url_elicitation_id();
    match ctx.elicit_url_with_id(&id, format!("https://pages.test/visit?id={id}"), "Visit the page.").await {
        Ok(Elicitation::Accept(_)) => {}
        other => return Err(format!("the visit was not accepted: {other:?}")),
    }
    let flows = flows.0.0.get().ok_or("no flows")?;
    let deadline = Instant::now() + Duration::from_secs(20);
    while Instant::now() < deadline {
        if flows.state(&id).await == Some(typed_mcp::server::UrlFlowState::Completed) {
            return Ok("visited".into());
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    Err(format!("flow {id} was never completed"))
}

/// An in-process instance for the rolling restart: `add`, `ask` (a form elicitation), `visit`
/// (a URL-mode flow) and `brew` (a task), tasks in Redis, and a shutdown grace long enough for
/// any of them; with its URL-mode flows, where a page completes them.
async fn rolling_instance(
    redis: &Redis,
) -> (String, StreamableHttp, tokio::task::JoinHandle<()>, typed_mcp::server::UrlElicitations) {
    let flows = std::sync::Arc::new(Flows::default());
    let server = Server::builder("t", "1")
        .tools(tools![add, ask, visit, brew])
        .state_arc(flows.clone())
        .task_store(redis.task_store())
        .build()
        .unwrap();
    let _ = flows.0.set(server.url_elicitations().clone());
    let listener = tokio::net::TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await.unwrap();
    let address = listener.local_addr().unwrap();
    let url = format!("http://{address}/mcp");
    let backplane = redis.backplane(url.clone()).heartbeat(Duration::from_millis(200));
    let config = HttpConfig::default().backplane(backplane).shutdown_grace(Duration::from_secs(10));
    let http = server.streamable_http(config);
    let serving = http.clone();
    let task = tokio::spawn(async move {
        let _ = serving.serve(listener, std::future::pending()).await;
    });
    (format!("http://{address}"), http, task, server.url_elicitations().clone())
}

/// What the clients of the rolling restart saw.
#[derive(Default, Debug)]
struct Seen {
    answered: usize,
    /// `503` with `Retry-After`, retried.
    retried: usize,
    errors: Vec<String>,
    /// URL-mode flows completed (counted in `answered` too).
    visits: usize,
}

/// Calls `call` until it is answered, retrying what is documented as retryable (`503`), at most
/// five times; anything else is an error.
async fn until_answered<F, Fut>(seen: &std::sync::Mutex<Seen>, expected: &str, mut call: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<String, String>>,
{
    for _ in 0..5 {
        match tokio::time::timeout(Duration::from_secs(15), call()).await {
            Ok(Ok(text)) if text == expected => {
                seen.lock().unwrap().answered += 1;
                return;
            }
            Ok(Err(e)) if e.contains("503") => {
                seen.lock().unwrap().retried += 1;
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
            Ok(other) => {
                seen.lock().unwrap().errors.push(format!("{other:?}"));
                return;
            }
            Err(_) => {
                seen.lock().unwrap().errors.push(format!("no answer within 15 s (expected {expected})"));
                return;
            }
        }
    }
    seen.lock().unwrap().errors.push(format!("still 503 after five tries (expected {expected})"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rolling_restart_of_three_instances_under_load_is_invisible_to_clients() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    let (_redis_server, redis) = started_redis();
    let mut instances = Vec::new();
    for _ in 0..3 {
        instances.push(rolling_instance(&redis).await);
    }
    let proxy = RoundRobinProxy::start(instances.iter().map(|(base, ..)| base.clone()).collect()).await;
    // The page of the URL-mode flows, as served by whichever instance in rotation the balancer
    // picks: it completes each flow a moment after its user opened it.
    let pages: Arc<std::sync::Mutex<Vec<Option<typed_mcp::server::UrlElicitations>>>> =
        Arc::new(std::sync::Mutex::new(instances.iter().map(|(.., flows)| Some(flows.clone())).collect()));
    let (opened, mut visits) = tokio::sync::mpsc::unbounded_channel::<String>();
    let page_failures = Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
    let page = {
        let (pages, seen) = (pages.clone(), page_failures.clone());
        tokio::spawn(async move {
            let mut turn = 0usize;
            while let Some(id) = visits.recv().await {
                tokio::time::sleep(Duration::from_millis(100)).await;
                // The balancer's next instance in rotation; a page that fails is reloaded.
                let mut done = false;
                for _ in 0..10 {
                    let flows = {
                        let pages = pages.lock().unwrap();
                        let live: Vec<_> = pages.iter().flatten().cloned().collect();
                        turn += 1;
                        live[turn % live.len()].clone()
                    };
                    match flows.complete(&id).await {
                        Ok(_) => {
                            done = true;
                            break;
                        }
                        Err(e) => {
                            seen.lock().unwrap().push(format!("{e}"));
                            tokio::time::sleep(Duration::from_millis(200)).await;
                        }
                    }
                }
                assert!(done, "the page never completed flow {id}");
            }
        })
    };
    let url = format!("{}/mcp", proxy.url());
    let seen = Arc::new(std::sync::Mutex::new(Seen::default()));
    let stop = Arc::new(AtomicBool::new(false));
    let replying = || {
        elicitation_fn(ElicitationModes::FORM, |request| async move {
            request.as_form().map_or_else(ElicitResult::decline, |form| {
                form.accept(json!({"text": "fine"}).as_object().unwrap().clone())
                    .unwrap_or_else(|_| ElicitResult::cancel())
            })
        })
    };
    // Two 2025-era sessions asking forms and adding, and a 2026-era client running tasks, all
    // through the balancer, continuously.
    let mut load = Vec::new();
    for c in 0..2u32 {
        let client =
            within("connecting", Client::builder("t", "1").elicitation(replying()).connect_http(&url)).await.unwrap();
        let (seen, stop) = (seen.clone(), stop.clone());
        load.push(tokio::spawn(async move {
            let mut n = 0u32;
            while !stop.load(Ordering::Relaxed) {
                n += 1;
                until_answered(&seen, "fine", || async {
                    client.call_tool("ask", ()).await.map(|r| r.text()).map_err(|e| e.to_string())
                })
                .await;
                let sum = (c * 1000 + n + 2).to_string();
                until_answered(&seen, &sum, || async {
                    client
                        .call_tool("add", json!({"a": 2, "b": c * 1000 + n}))
                        .await
                        .map(|r| r.text())
                        .map_err(|e| e.to_string())
                })
                .await;
            }
            within("closing", client.close()).await;
        }));
    }
    // A 2025-era session whose user is sent to pages (URL mode), one flow after the other.
    let visitor = {
        let opened = opened.clone();
        elicitation_fn(ElicitationModes::URL, move |request| {
            let opened = opened.clone();
            async move {
                match request.as_url() {
                    Some(url) => {
                        let _ = opened.send(url.elicitation_id.clone());
                        ElicitResult::accept_url()
                    }
                    None => ElicitResult::decline(),
                }
            }
        })
    };
    let visiting =
        within("connecting", Client::builder("t", "1").elicitation(visitor).connect_http(&url)).await.unwrap();
    {
        let (seen, stop) = (seen.clone(), stop.clone());
        load.push(tokio::spawn(async move {
            while !stop.load(Ordering::Relaxed) {
                until_answered(&seen, "visited", || async {
                    visiting.call_tool("visit", ()).await.map(|r| r.text()).map_err(|e| e.to_string())
                })
                .await;
                seen.lock().unwrap().visits += 1;
            }
            within("closing", visiting.close()).await;
        }));
    }
    let tasks = within("connecting", Client::builder("t", "1").protocol_era(ProtocolEra::Y2026).connect_http(&url))
        .await
        .unwrap();
    {
        let (seen, stop) = (seen.clone(), stop.clone());
        load.push(tokio::spawn(async move {
            while !stop.load(Ordering::Relaxed) {
                until_answered(&seen, "brewed tea", || async {
                    tasks
                        .call_tool_as_task("brew", json!({"kind": "tea"}))
                        .await
                        .map(|r| r.text())
                        .map_err(|e| e.to_string())
                })
                .await;
            }
        }));
    }
    tokio::time::sleep(Duration::from_millis(800)).await;
    // One instance after the other: out of the balancer's rotation, drained, replaced.
    for (i, slot) in instances.iter_mut().enumerate() {
        proxy.set_backend(i, None);
        pages.lock().unwrap()[i] = None;
        let (_, http, task, _) = std::mem::replace(slot, rolling_instance(&redis).await);
        let started = Instant::now();
        within("draining", http.drain(Duration::from_secs(10))).await;
        within("the listener closing", task).await.unwrap();
        println!("instance {i} drained in {:?}", started.elapsed());
        proxy.set_backend(i, Some(slot.0.clone()));
        pages.lock().unwrap()[i] = Some(slot.3.clone());
        tokio::time::sleep(Duration::from_millis(600)).await;
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    stop.store(true, Ordering::Relaxed);
    for client in load {
        within("a client finishing", client).await.unwrap();
    }
    drop(opened);
    within("the page finishing", page).await.unwrap();
    let seen = seen.lock().unwrap();
    println!(
        "rolling restart: {} answered ({} URL-mode flows), {} retried on 503, {} errors",
        seen.answered,
        seen.visits,
        seen.retried,
        seen.errors.len()
    );
    assert!(seen.errors.is_empty(), "clients saw errors beyond retryable ones: {:?}", seen.errors);
    assert!(seen.answered > 20, "the load was too light to tell: {seen:?}");
    assert!(seen.visits >= 5, "too few URL-mode flows to tell: {seen:?}");
    // A page that failed (and was reloaded) is the page's trouble, not the client's: printed.
    println!("rolling restart: the page failed {:?}", page_failures.lock().unwrap());
    for (_, _, task, _) in instances {
        task.abort();
    }
}

/// What the soak's calls got.
#[derive(Debug, Default)]
struct Soak {
    calls: u32,
    answered: u32,
    /// `503` with `Retry-After`: sent again, under the same number.
    retried: u32,
    /// Cut off by the death of the instance serving them (the balancer's `502`, or the JSON-RPC
    /// error saying the instance stopped): not sent again, as they may have run.
    cut: u32,
    /// Neither answered nor refused within 10 s.
    lost: Vec<u32>,
    /// Anything else.
    wrong: Vec<String>,
}

/// Instances killed and restarted at random and a Sentinel failover, under continuous load, for
/// `MCP_SOAK_SECS` seconds (8 by default; the guide gives the last long run): every call gets
/// an answer, a retryable `503`, or the error of its instance's death; none is lost, none runs
/// twice.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn soak_with_instances_killed_and_a_redis_failover_loses_and_duplicates_nothing() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    let seconds: u64 = std::env::var("MCP_SOAK_SECS").ok().and_then(|s| s.parse().ok()).unwrap_or(8);
    let base_n = 3_000_000u32;
    let mut sentinel = typed_mcp_redis::testing::RedisSentinel::start();
    let redis_url = sentinel.url();
    let mut nodes: Vec<SoakNode> = (0..3).map(|_| SoakNode::start(&redis_url)).collect();
    let proxy = RoundRobinProxy::start(nodes.iter().map(|n| n.base.clone()).collect()).await;
    let url = format!("{}/mcp", proxy.url());
    let stop = Arc::new(AtomicBool::new(false));
    let soak = Arc::new(std::sync::Mutex::new(Soak::default()));
    let mut clients = Vec::new();
    for c in 0..4u32 {
        let (url, stop, soak) = (url.clone(), stop.clone(), soak.clone());
        clients.push(tokio::spawn(async move {
            let http = crate::support::http_client();
            let mut session = None;
            let mut k = 0u32;
            while !stop.load(Ordering::Relaxed) {
                let Some(id) = session.clone() else {
                    match tokio::time::timeout(Duration::from_secs(10), post(&url, None, initialize())).await {
                        Ok((200, Some(id), _)) => session = Some(id),
                        _ => tokio::time::sleep(Duration::from_millis(100)).await,
                    }
                    continue;
                };
                k += 1;
                let n = base_n + c * 100_000 + k;
                soak.lock().unwrap().calls += 1;
                loop {
                    let call = json!({"jsonrpc": "2.0", "id": k, "method": "tools/call",
                        "params": {"name": "count", "arguments": {"n": n}}});
                    let request = http
                        .post(&url)
                        .header("content-type", "application/json")
                        .header("accept", "application/json, text/event-stream")
                        .header("mcp-protocol-version", "2025-11-25")
                        .header("mcp-session-id", &id)
                        .body(call.to_string());
                    let outcome = tokio::time::timeout(Duration::from_secs(10), async {
                        let response = request.send().await?;
                        let retry = response.headers().contains_key("retry-after");
                        Ok::<_, reqwest::Error>((response.status().as_u16(), retry, response.text().await?))
                    })
                    .await;
                    let retry = matches!(outcome, Ok(Ok((503, true, _))));
                    {
                        let mut s = soak.lock().unwrap();
                        match outcome {
                            Ok(Ok((200, _, body))) if body.contains(&format!("ran {n}")) => s.answered += 1,
                            Ok(Ok((503, true, _))) => s.retried += 1,
                            Ok(Ok((502, _, _))) => s.cut += 1,
                            Ok(Ok((200, _, body))) if body.contains("instance running this request stopped") => {
                                s.cut += 1;
                            }
                            // The session's id is unknown after all: a new one.
                            Ok(Ok((404, _, _))) => {
                                s.wrong.push(format!("call {n}: the session was lost"));
                                session = None;
                            }
                            Ok(Ok((status, _, body))) => s.wrong.push(format!("call {n}: {status} {body}")),
                            Ok(Err(e)) => s.wrong.push(format!("call {n}: {e}")),
                            Err(_) => s.lost.push(n),
                        }
                    }
                    if !retry {
                        break;
                    }
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            }
        }));
    }
    // The chaos: every second or so an instance is killed and, a moment later, replaced; half
    // way, the Sentinels' primary is killed.
    let mut dice = Dice(u64::from(std::process::id()) | 1);
    let started = Instant::now();
    let mut failed_over = false;
    let mut kills = 0;
    while started.elapsed() < Duration::from_secs(seconds) {
        tokio::time::sleep(Duration::from_millis(700)).await;
        let victim = dice.roll(3);
        nodes[victim].kill();
        kills += 1;
        tokio::time::sleep(Duration::from_millis(300)).await;
        let fresh = tokio::task::block_in_place(|| SoakNode::start(&redis_url));
        proxy.set_backend(victim, Some(fresh.base.clone()));
        nodes[victim] = fresh;
        if !failed_over && started.elapsed() >= Duration::from_secs(seconds / 2) {
            failed_over = true;
            let took = tokio::task::block_in_place(|| sentinel.kill_primary());
            println!("soak: the Redis primary killed, a replica promoted after {took:?}");
        }
    }
    tokio::time::sleep(Duration::from_secs(2)).await;
    stop.store(true, Ordering::Relaxed);
    for client in clients {
        within("a soak client finishing", client).await.unwrap();
    }
    let soak = std::mem::take(&mut *soak.lock().unwrap());
    let runs = RUNS.lock().unwrap();
    let ran: Vec<(u32, u32)> =
        runs.iter().filter(|(n, _)| (base_n..base_n + 1_000_000).contains(*n)).map(|(n, r)| (*n, *r)).collect();
    let duplicated: Vec<_> = ran.iter().filter(|(_, r)| *r > 1).collect();
    println!(
        "soak of {seconds} s, {kills} instances killed, one Redis failover: {} calls, {} answered, {} retried on 503, \
         {} cut by a kill, {} lost, {} ran twice, {} other errors",
        soak.calls,
        soak.answered,
        soak.retried,
        soak.cut,
        soak.lost.len(),
        duplicated.len(),
        soak.wrong.len()
    );
    assert!(failed_over, "the soak was too short for its Redis failover");
    assert!(soak.lost.is_empty(), "calls neither answered nor refused: {:?}", soak.lost);
    assert!(duplicated.is_empty(), "calls ran twice: {duplicated:?}");
    assert!(soak.wrong.is_empty(), "unexpected outcomes: {:?}", soak.wrong);
    assert!(u32::try_from(ran.len()).unwrap() >= soak.answered, "an answered call did not run");
    assert!(soak.answered > 50, "too few calls answered to tell: {soak:?}");
}
