//! One session served by every instance of a deployment sharing a Redis (helpers in
//! `support/backplane.rs`):
//!
//! - Three `shared` example processes on one `--redis`, our client through the proxy: a
//!   session opened on one instance is served by all three (each call where it lands), and form
//!   elicitations asked on one instance are answered through the others; the same on a Redis
//!   Cluster and behind Sentinel. Without `--redis` a session is unknown to the other instances
//!   (what is shown served is not served by accident).
//! - Two replicas of one session on instances sharing a bus channel each get the answers to
//!   their own questions, wherever they land.
//! - An answer to a question no instance asked is refused for the client to send again; a
//!   session ended on its owner is gone at once on the instances serving it where requests land.
//! - A URL-mode flow asked on one instance (of the `combined` test server, which serves the
//!   page) is completed by its page on another: the owner's session gets the completion
//!   notification.
//! - A resource updated on one instance reaches a subscriber whose session is on another, and a
//!   2026-era `subscriptions/listen` stream there.
//! - `GET` with `Last-Event-ID`, and `DELETE`, on an instance that does not hold the session.

use crate::support::backplane::{
    Instance, SECRET, in_process, in_process_with, initialize, open_session, post, shared_cluster, started_redis,
    two_instances, user,
};

use std::net::Ipv4Addr;
use std::time::Duration;

use serde_json::json;
use tests::stdio::within;
use typed_mcp::client::{Client, ElicitationModes, ProtocolEra, ServerNotification, elicitation_fn};
use typed_mcp::prelude::*;
use typed_mcp::protocol::ElicitResult;
use typed_mcp::protocol::SubscriptionFilter;
use typed_mcp::testing::ToolResultExt;
use typed_mcp::transport::http::HttpConfig;
use typed_mcp_redis::Redis;
use typed_mcp_redis::testing::{RedisServer, RoundRobinProxy};

#[tokio::test]
async fn three_instances_serve_one_session_and_answer_elicitations_through_each_other() {
    let redis = RedisServer::start();
    three_instances_share_a_session(&redis.url()).await;
}

/// Three `shared` example processes on the Redis of `redis_url` serve one session through a
/// round-robin proxy, elicitations included, and 2026-era requests where they land.
async fn three_instances_share_a_session(redis_url: &str) {
    let instances: Vec<Instance> = (0..3).map(|_| Instance::start("shared", Some(redis_url))).collect();
    let proxy = RoundRobinProxy::start(instances.iter().map(|i| i.base.clone()).collect()).await;
    let url = format!("{}/mcp", proxy.url());
    let client =
        within("connecting", Client::builder("t", "1").elicitation(user("spread")).connect_http(&url)).await.unwrap();
    for _ in 0..4 {
        let created = within("create_project", client.call_tool("create_project", ())).await.unwrap();
        assert_eq!(created.text(), "Created project 'spread'");
    }
    // A session's calls are served where they land, on whichever instance the proxy picks.
    let mut answered_by = std::collections::BTreeSet::new();
    for _ in 0..6 {
        answered_by.insert(within("served_by", client.call_tool("served_by", ())).await.unwrap().text());
    }
    assert_eq!(answered_by.len(), 3, "the session's calls are served where they land: {answered_by:?}");
    // A 2026-07-28 request has no session: it is served where it lands.
    let client_2026 =
        within("connecting", Client::builder("t", "1").protocol_era(ProtocolEra::Y2026).connect_http(&url))
            .await
            .unwrap();
    let mut landed_on = std::collections::BTreeSet::new();
    for _ in 0..30 {
        landed_on.insert(within("served_by", client_2026.call_tool("served_by", ())).await.unwrap().text());
        if landed_on.len() == 3 {
            break;
        }
    }
    assert_eq!(landed_on.len(), 3, "2026-07-28 requests are served where they land: {landed_on:?}");
    within("closing", client_2026.close()).await;
    let served = proxy.served();
    for instance in 0..3 {
        assert!(served.contains(&instance), "instance {instance} served nothing: {served:?}");
    }
    assert!(served.len() >= 10, "each call is a request and an answer at least: {served:?}");
    within("closing", client.close()).await;
}

#[tokio::test]
async fn without_a_backplane_another_instance_does_not_know_the_session() {
    // The same three processes as above without `--redis`: a session opened on one is unknown
    // to the others (what the backplane tests show served is not served by accident). Each
    // instance is addressed directly, so the outcome does not depend on how a client's
    // concurrent requests happen to be spread.
    let instances: Vec<Instance> = (0..3).map(|_| Instance::start("shared", None)).collect();
    let urls: Vec<String> = instances.iter().map(|i| format!("{}/mcp", i.base)).collect();
    let session = open_session(&urls[0]).await;
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
    for url in &urls[1..] {
        let (status, _, body) = post(url, Some(&session), list.clone()).await;
        assert_eq!(status, 404, "{url} served a session it never opened: {body}");
    }
    let (status, _, body) = post(&urls[0], Some(&session), list).await;
    assert_eq!(status, 200, "the instance that opened the session serves it: {body}");
    assert!(body.contains("create_project"), "{body}");
}

#[tokio::test]
async fn an_answer_no_instance_hears_is_refused_for_the_client_to_send_it_again() {
    let (_redis_server, redis) = started_redis();
    let (a, _a_http, a_task) = in_process_with(&redis, Duration::from_secs(10), HttpConfig::default()).await;
    let (_, session, _) = post(&a, None, initialize()).await;
    let session = session.expect("a session id");
    // The answer to a question the instance `nobody` asked (how the ids of questions asked on
    // a replica read): no such instance listens.
    let id = "nobody-1";
    let answer = json!({"jsonrpc": "2.0", "id": id, "result": {"action": "decline"}});
    let http = crate::support::http_client();
    let response = http
        .post(&a)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-11-25")
        .header("mcp-session-id", &session)
        .body(answer.to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 503, "an answer nobody heard is refused, not dropped");
    assert_eq!(response.headers().get("retry-after").and_then(|v| v.to_str().ok()), Some("1"));
    a_task.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_ended_on_its_owner_is_gone_at_once_on_the_instances_serving_it_where_requests_land() {
    let (_redis_server, redis) = started_redis();
    let beat = Duration::from_secs(10);
    let [(a, _a_http, a_task), (b, _b_http, b_task)] = two_instances(&redis, beat).await;
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
    for round in 0..10 {
        let (_, session, _) = post(&a, None, initialize()).await;
        let session = session.expect("a session id");
        // B serves the session's requests where they land, on a replica of it.
        let (status, _, body) = post(&b, Some(&session), list.clone()).await;
        assert_eq!(status, 200, "{body}");
        let ended = crate::support::http_client()
            .delete(&a)
            .header("mcp-protocol-version", "2025-11-25")
            .header("mcp-session-id", &session)
            .send()
            .await
            .unwrap();
        assert_eq!(ended.status(), 200);
        // The very next request, on B, finds it gone.
        let (status, _, body) = post(&b, Some(&session), list.clone()).await;
        assert_eq!(status, 404, "round {round}: B still served the ended session: {body}");
    }
    a_task.abort();
    b_task.abort();
}

/// Waits for a notification `wanted` accepts.
async fn expect_notification(
    events: &mut tokio::sync::broadcast::Receiver<ServerNotification>,
    what: &str,
    wanted: impl Fn(&ServerNotification) -> bool,
) {
    within(what, async {
        loop {
            match events.recv().await {
                Ok(n) if wanted(&n) => return,
                Ok(_) | Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {}
                Err(e) => panic!("no more notifications while waiting for {what}: {e}"),
            }
        }
    })
    .await;
}

#[tokio::test]
async fn a_url_flow_asked_on_one_instance_completes_from_another_instances_page() {
    let redis = RedisServer::start();
    let instances: Vec<Instance> = (0..3).map(|_| Instance::start("combined", Some(&redis.url()))).collect();
    let proxy = RoundRobinProxy::start(instances.iter().map(|i| i.base.clone()).collect()).await;
    let (pages, mut page) = tokio::sync::mpsc::unbounded_channel();
    let user = elicitation_fn(ElicitationModes::URL, move |request| {
        let pages = pages.clone();
        async move {
            if let Some(url) = request.as_url() {
                let _ = pages.send(url.url.clone());
            }
            ElicitResult::accept_url()
        }
    });
    let url = format!("{}/mcp", proxy.url());
    let client = within("connecting", Client::builder("t", "1").elicitation(user).connect_http(&url)).await.unwrap();
    let mut events = client.notifications();
    let started = within("auth_via_url", client.call_tool("auth_via_url", ())).await.unwrap();
    assert!(started.text().starts_with("Authorization flow "), "{}", started.text());
    let page = within("the page's URL", page.recv()).await.unwrap();
    let mut address = reqwest::Url::parse(&page).unwrap();
    let owner = address.port().unwrap();
    let elsewhere = instances.iter().map(|i| i.page_port).find(|p| *p != owner).unwrap();
    address.set_port(Some(elsewhere)).unwrap();
    let id = address.query_pairs().find(|(k, _)| k == "id").map(|(_, v)| v.into_owned()).unwrap();
    let status = crate::support::press_authorize(address.as_str()).await;
    assert_eq!(status, reqwest::StatusCode::OK, "the page on another instance completes the flow");
    expect_notification(
        &mut events,
        "the completion notification",
        |n| matches!(n, ServerNotification::ElicitationComplete { elicitation_id } if *elicitation_id == id),
    )
    .await;
    // Completed once, wherever it is asked again.
    let again = within("the page again", reqwest::get(address.as_str())).await.unwrap();
    assert_eq!(again.status(), reqwest::StatusCode::CONFLICT, "the flow is done, on every instance");
    within("closing", client.close()).await;
}

#[tokio::test]
async fn a_resource_updated_on_one_instance_reaches_a_subscriber_on_another() {
    let (_redis_server, redis) = started_redis();
    let (a, a_task) = notes_instance(&redis).await;
    let (b, b_task) = notes_instance(&redis).await;
    let subscriber = within("connecting to A", Client::builder("t", "1").connect_http(&a)).await.unwrap();
    let mut events = subscriber.notifications();
    within("subscribing", subscriber.subscribe_resource("notes://shared")).await.unwrap();
    let writer = within("connecting to B", Client::builder("t", "1").connect_http(&b)).await.unwrap();
    let written =
        within("write_note", writer.call_tool("write_note", json!({"name": "shared", "text": "hi"}))).await.unwrap();
    assert_eq!(written.text(), "saved `shared`");
    expect_notification(
        &mut events,
        "the update from B",
        |n| matches!(n, ServerNotification::ResourceUpdated { uri } if uri == "notes://shared"),
    )
    .await;
    // A 2026-era subscription (`subscriptions/listen`) on A hears it too.
    let listener =
        within("a 2026-era client on A", Client::builder("t", "1").protocol_era(ProtocolEra::Y2026).connect_http(&a))
            .await
            .unwrap();
    let filter =
        SubscriptionFilter { resource_subscriptions: Some(vec!["notes://later".into()]), ..Default::default() };
    let mut heard = listener.notifications();
    let subscription = within("the acknowledgement", listener.listen(filter)).await.unwrap();
    within("write_note", writer.call_tool("write_note", json!({"name": "later", "text": "hi"}))).await.unwrap();
    expect_notification(
        &mut heard,
        "the update from B on a listen stream on A",
        |n| matches!(n, ServerNotification::ResourceUpdated { uri } if uri == "notes://later"),
    )
    .await;
    subscription.end().await;
    within("closing", listener.close()).await;
    within("closing", subscriber.close()).await;
    within("closing", writer.close()).await;
    a_task.abort();
    b_task.abort();
}

/// Announces that note `name` changed (the notes themselves are kept nowhere: only the
/// announcements cross instances).
///
/// # Arguments
/// * `name` - The note.
/// * `text` - Its new text.
#[tool]
async fn write_note(ctx: Context, name: String, text: String) -> String {
    let _ = text;
    ctx.server_handle().notify_resource_updated(&format!("notes://{name}")).await;
    format!("saved `{name}`")
}

/// A note (its text is its name).
#[resource("notes://{name}", name = "note", mime_type = "text/plain")]
fn note(name: String) -> Option<String> {
    Some(name)
}

/// An in-process notes server (resource subscriptions, `write_note`) on a loopback port,
/// sharing sessions through `redis`; returns its URL and its serving task.
async fn notes_instance(redis: &Redis) -> (String, tokio::task::JoinHandle<()>) {
    let server = Server::builder("notes", "1")
        .tools(tools![write_note])
        .resources(resources![note])
        .resource_subscriptions()
        .build()
        .unwrap();
    let listener = tokio::net::TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let http = server.streamable_http(HttpConfig::default().backplane(redis.backplane(url.clone())));
    let task = tokio::spawn(async move {
        let _ = http.serve(listener, std::future::pending()).await;
    });
    (url, task)
}

#[tokio::test]
async fn a_stream_resumes_and_a_session_ends_through_another_instance() {
    let (_redis_server, redis) = started_redis();
    let (a, _a_http, a_task) = in_process(&redis).await;
    let (b, _b_http, b_task) = in_process(&redis).await;
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
    let (status, session, _) = post(&a, None, init).await;
    assert_eq!(status, 200);
    let session = session.expect("a session id");
    let http = crate::support::http_client();
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "steps", "arguments": {}, "_meta": {"progressToken": "p"}}});
    let mut response = within(
        "the call",
        http.post(&a)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2025-11-25")
            .header("mcp-session-id", &session)
            .body(call.to_string())
            .send(),
    )
    .await
    .unwrap();
    // Read up to the first event's id, then drop the connection.
    let mut seen = String::new();
    let last = loop {
        let chunk = within("the first event", response.chunk()).await.unwrap().expect("an event before the end");
        seen.push_str(&String::from_utf8_lossy(&chunk));
        let first_id = seen.lines().find(|l| l.starts_with("id: ")).filter(|_| seen.contains("\n\n"));
        if let Some(line) = first_id {
            break line.trim_start_matches("id: ").to_owned();
        }
    };
    assert!(seen.contains(r#""progress":1"#), "{seen}");
    drop(response);
    let resumed = within(
        "resuming on B",
        http.get(&b)
            .header("accept", "text/event-stream")
            .header("mcp-protocol-version", "2025-11-25")
            .header("mcp-session-id", &session)
            .header("last-event-id", &last)
            .send(),
    )
    .await
    .unwrap();
    assert_eq!(resumed.status(), 200);
    let rest = within("the rest of the stream", resumed.text()).await.unwrap();
    assert!(rest.contains(r#""progress":2"#) && rest.contains("steps done"), "{rest}");
    assert!(!rest.contains(r#""progress":1"#), "what the client saw is not sent again: {rest}");

    let ended = within(
        "DELETE on B",
        http.delete(&b).header("mcp-protocol-version", "2025-11-25").header("mcp-session-id", &session).send(),
    )
    .await
    .unwrap();
    assert_eq!(ended.status(), 200);
    let (status, _, _) = post(&a, Some(&session), json!({"jsonrpc": "2.0", "id": 3, "method": "ping"})).await;
    assert_eq!(status, 404, "the session ended on its owner");
    let (status, _, _) = post(&b, Some(&session), json!({"jsonrpc": "2.0", "id": 4, "method": "ping"})).await;
    assert_eq!(status, 404, "on every instance");
    a_task.abort();
    b_task.abort();
}

#[tokio::test]
async fn three_instances_share_a_session_on_a_cluster() {
    let cluster = shared_cluster();
    three_instances_share_a_session(&cluster.url()).await;
}

#[tokio::test]
async fn three_instances_share_a_session_behind_sentinel() {
    let sentinel = typed_mcp_redis::testing::RedisSentinel::start();
    three_instances_share_a_session(&sentinel.url()).await;
}

/// What `ask_name` asks for.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema, Elicit)]
struct Name {
    /// A name.
    name: String,
}

/// Asks the user for a name and returns it.
#[tool]
async fn ask_name(ctx: Context) -> Result<String, String> {
    match ctx.elicit::<Name>("Your name?").await {
        Ok(Elicitation::Accept(answer)) => Ok(answer.name),
        other => Err(format!("no name: {other:?}")),
    }
}

/// An in-process instance named `instance` (a random id when `None`) serving `ask_name`.
async fn asking_instance(redis: &Redis, instance: Option<&str>) -> (String, tokio::task::JoinHandle<()>) {
    let server = Server::builder("t", "1").tools(tools![ask_name]).build().unwrap();
    let listener = tokio::net::TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let mut backplane = redis.backplane(url.clone()).heartbeat(Duration::from_millis(200)).secret(SECRET);
    if let Some(instance) = instance {
        backplane = backplane.instance_id(instance);
    }
    let http = server.streamable_http(HttpConfig::default().backplane(backplane));
    let task = tokio::spawn(async move {
        let _ = http.serve(listener, std::future::pending()).await;
    });
    (url, task)
}

/// A 2025-era session opened at `url` by a client that answers forms; its id.
async fn open_asked_session(url: &str) -> String {
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {"elicitation": {"form": {}}},
        "clientInfo": {"name": "t", "version": "1"}}});
    let (status, session, body) = post(url, None, init).await;
    assert_eq!(status, 200, "{body}");
    session.expect("a session id")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_replicas_sharing_a_bus_channel_each_get_the_answers_to_their_own_questions() {
    let (_redis_server, redis) = started_redis();
    // A owns the session; B and C serve it where requests land. B's and C's ids share one tag
    // (one bus channel, checked by a unit test of the crate): only the full id in a question's
    // id tells their questions, and the answers, apart.
    let (a, a_task) = asking_instance(&redis, None).await;
    let (b, b_task) = asking_instance(&redis, Some("instance-559")).await;
    let (c, c_task) = asking_instance(&redis, Some("instance-14222")).await;
    let session = open_asked_session(&a).await;
    let on_b = crate::support::http::Session::join(&b, &session, None);
    let on_c = on_b.at(&c);
    // A call on each replica; each asks its question on the call's stream.
    let (_, mut call_b) = on_b.start("tools/call", json!({"name": "ask_name", "arguments": {}})).await;
    let (_, mut call_c) = on_c.start("tools/call", json!({"name": "ask_name", "arguments": {}})).await;
    let question_b = call_b.message().await;
    let question_c = call_c.message().await;
    assert_eq!(question_b["method"], "elicitation/create", "{question_b}");
    assert_eq!(question_c["method"], "elicitation/create", "{question_c}");
    let id_b = question_b["id"].as_str().unwrap_or_else(|| panic!("a replica's question id is a string: {question_b}"));
    let id_c = question_c["id"].as_str().unwrap_or_else(|| panic!("a replica's question id is a string: {question_c}"));
    assert!(id_b.starts_with("instance-559-"), "B's question names B: {id_b}");
    assert!(id_c.starts_with("instance-14222-"), "C's question names C: {id_c}");
    // Each answer lands elsewhere: B's on C, C's on B (over the bus, on the shared channel),
    // then a second round through the owner.
    let accept = |name: &str| json!({"action": "accept", "content": {"name": name}});
    on_c.answer(&question_b, accept("for B")).await;
    on_b.answer(&question_c, accept("for C")).await;
    let done_b = call_b.message().await;
    let done_c = call_c.message().await;
    assert_eq!(crate::support::http::text_of(&done_b["result"]), "for B", "{done_b}");
    assert_eq!(crate::support::http::text_of(&done_c["result"]), "for C", "{done_c}");
    let on_a = on_b.at(&a);
    let (_, mut call_b) = on_b.start("tools/call", json!({"name": "ask_name", "arguments": {}})).await;
    let (_, mut call_c) = on_c.start("tools/call", json!({"name": "ask_name", "arguments": {}})).await;
    let (question_b, question_c) = (call_b.message().await, call_c.message().await);
    assert_ne!(question_b["id"], question_c["id"]);
    on_a.answer(&question_c, accept("C again")).await;
    on_a.answer(&question_b, accept("B again")).await;
    assert_eq!(crate::support::http::text_of(&call_c.message().await["result"]), "C again");
    assert_eq!(crate::support::http::text_of(&call_b.message().await["result"]), "B again");
    a_task.abort();
    b_task.abort();
    c_task.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_question_asked_on_a_replica_dropped_meanwhile_still_gets_its_answer() {
    let (_redis_server, redis) = started_redis();
    let (a, a_task) = asking_instance(&redis, None).await;
    let (b, b_task) = asking_instance(&redis, Some("asker")).await;
    let session = open_asked_session(&a).await;
    let on_b = crate::support::http::Session::join(&b, &session, None);
    let on_a = on_b.at(&a);
    let (_, mut call) = on_b.start("tools/call", json!({"name": "ask_name", "arguments": {}})).await;
    let question = call.message().await;
    assert_eq!(question["method"], "elicitation/create", "{question}");
    // While the question waits, the session's recorded state changes on its owner, which tells
    // the replicas to start again from it: B drops its replica, whose call still runs.
    let level = json!({"jsonrpc": "2.0", "id": 9, "method": "logging/setLevel", "params": {"level": "error"}});
    let (status, _, body) = post(&a, Some(&session), level).await;
    assert_eq!(status, 200, "{body}");
    tokio::time::sleep(Duration::from_millis(300)).await;
    // The answer, wherever it lands, still reaches the question.
    on_a.answer(&question, json!({"action": "accept", "content": {"name": "still asked"}})).await;
    let done = within("the call's answer", call.message()).await;
    assert_eq!(crate::support::http::text_of(&done["result"]), "still asked", "{done}");
    a_task.abort();
    b_task.abort();
}
