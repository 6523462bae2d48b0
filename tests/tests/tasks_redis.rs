//! Tasks on a shared deployment, with a real Redis (a `redis-server` of each test's own, on a
//! free loopback port, persisting nothing).
//!
//! - `RedisTaskStore` keeps the task store contract, expires its records with the task's
//!   `ttlMs`, and tells a live instance from one whose heartbeat lapsed.
//! - Three `shared` example processes on one `--redis`, behind a round-robin proxy: our
//!   client drives the `deploy` task through input_required → tasks/update → completed while
//!   its requests land on every instance, raw and followed.
//! - Two in-process instances: `tasks/update` and `tasks/cancel` sent to the instance that does
//!   not run the task reach the one that does (the handler gets its answer, or is dropped), and
//!   a `subscriptions/listen` stream on one hears of the changes of a task running on the other.
//! - The instance running a task killed (SIGKILL): the next `tasks/get` elsewhere reports the
//!   task `failed`. A finished task's result outlives a restart of the instance that ran it.

use std::net::Ipv4Addr;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use serde_json::json;
use tests::stdio::within;
use typed_mcp::client::{Client, ElicitationModes, ProtocolEra, TaskStart, elicitation_fn};
use typed_mcp::prelude::*;
use typed_mcp::protocol::{ElicitResult, SubscriptionFilter, TaskStatus};
use typed_mcp::task::{TaskRecord, TaskStore};
use typed_mcp::testing::ToolResultExt;
use typed_mcp::transport::http::HttpConfig;
use typed_mcp_redis::Redis;
use typed_mcp_redis::testing::{RedisServer, RoundRobinProxy, free_port, keys};

use crate::support::backplane::Instance;
use crate::support::tasks::{Dropped, completion_notice, poll_until, stoppable};

#[tokio::test]
async fn the_redis_store_keeps_the_task_store_contract() {
    let server = RedisServer::start();
    let redis = Redis::connect(&server.url()).unwrap().with_prefix("c").unwrap();
    typed_mcp::testing::assert_task_store_contract(&redis.task_store()).await;
    assert!(keys(&server.url(), "c:*").await.is_empty(), "the contract deletes what it made");
}

#[tokio::test]
async fn task_records_expire_in_redis_with_the_task() {
    let server = RedisServer::start();
    let redis = Redis::connect(&server.url()).unwrap().with_prefix("e").unwrap();
    let store = redis.task_store().unbounded_ttl(Duration::from_millis(300));
    store.create(&TaskRecord::new("short".into(), None, Some(300), None)).await.unwrap();
    store.create(&TaskRecord::new("long".into(), None, Some(60_000), None)).await.unwrap();
    store.create(&TaskRecord::new("unbounded".into(), None, None, None)).await.unwrap();
    let mut found = keys(&server.url(), "e:task:*").await;
    found.sort();
    assert_eq!(found, ["e:task:long", "e:task:short", "e:task:unbounded"]);
    // Another connection (another instance) finds what one created.
    let other = Redis::connect(&server.url()).unwrap().with_prefix("e").unwrap().task_store();
    assert!(other.get("short").await.unwrap().is_some());
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(keys(&server.url(), "e:task:*").await, ["e:task:long"], "Redis forgets a task when it expires");
    // A put keeps the record's expiry: it does not live longer for having changed.
    let mut record = TaskRecord::new("kept".into(), None, Some(400), None);
    store.create(&record).await.unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;
    record.status = typed_mcp::protocol::TaskStatus::Completed;
    store.put(&record).await.unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(store.get("kept").await.unwrap().is_none(), "the record expired 400 ms after its creation");
    assert_eq!(keys(&server.url(), "e:task:*").await, ["e:task:long"]);
}

#[tokio::test]
async fn the_redis_store_tells_a_live_instance_from_a_lapsed_one() {
    use typed_mcp::transport::http::SessionRegistry;
    let server = RedisServer::start();
    let redis = Redis::connect(&server.url()).unwrap().with_prefix("h").unwrap();
    let store = redis.task_store();
    assert!(!store.runner_alive("a").await.unwrap(), "an instance never seen is not alive");
    redis
        .sessions()
        .heartbeat("a", "http://a/mcp", Duration::from_millis(300), &[], Duration::from_secs(5))
        .await
        .unwrap();
    assert!(store.runner_alive("a").await.unwrap());
    redis.sessions().claim("s", "a", "{}", Duration::from_secs(60)).await.unwrap();
    // Its lease lapsed (it may be stalled; its sessions may be taken over): its tasks are not
    // failed for that.
    tokio::time::sleep(Duration::from_millis(450)).await;
    assert_eq!(redis.sessions().owner("s").await.unwrap().unwrap().address, None, "its lease lapsed");
    assert!(store.runner_alive("a").await.unwrap(), "alive for a grace after its lease");
    // An instance leaving is gone at once.
    redis.sessions().leave("a").await.unwrap();
    assert!(!store.runner_alive("a").await.unwrap(), "it left");
    // One that stops beating is gone once the grace is over.
    redis
        .sessions()
        .heartbeat("b", "http://b/mcp", Duration::from_millis(300), &[], Duration::from_secs(5))
        .await
        .unwrap();
    tokio::time::sleep(typed_mcp_redis::RUNNER_GRACE + Duration::from_millis(300)).await;
    assert!(!store.runner_alive("b").await.unwrap(), "its heartbeat lapsed, grace included");
}

/// A user who confirms every deployment.
fn confirming() -> impl typed_mcp::client::ElicitationHandler {
    elicitation_fn(ElicitationModes::FORM, |request| async move {
        request.as_form().map_or_else(ElicitResult::decline, |form| {
            let mut content = form.defaults();
            content.insert("confirm".into(), json!(true));
            form.accept(content).unwrap_or_else(|_| ElicitResult::cancel())
        })
    })
}

async fn client_2026(url: &str) -> Client {
    let builder = Client::builder("t", "1").protocol_era(ProtocolEra::Y2026).elicitation(confirming());
    within("connecting", builder.connect_http(url)).await.unwrap()
}

async fn start_deploy(client: &Client, service: &str) -> String {
    match client.start_tool_task("deploy", json!({"service": service})).await.unwrap() {
        TaskStart::Task(task) => task.task_id,
        TaskStart::Done(_) => panic!("deploy runs as a task for a client that supports tasks"),
    }
}

#[tokio::test]
async fn a_task_asks_and_completes_across_three_instances_sharing_redis() {
    let redis = RedisServer::start();
    let instances: Vec<Instance> = (0..3).map(|_| Instance::start("shared", Some(&redis.url()))).collect();
    let proxy = RoundRobinProxy::start(instances.iter().map(|i| i.base.clone()).collect()).await;
    let client = client_2026(&format!("{}/mcp", proxy.url())).await;

    // Raw: every request goes to the next instance, so the polls, the update and the handler's
    // instance differ.
    let before = proxy.served().len();
    let id = start_deploy(&client, "api").await;
    let waiting = poll_until(&client, &id, Duration::from_secs(10), |t| t.status == TaskStatus::InputRequired).await;
    let asked = waiting.input_requests.expect("an input_required task lists its questions");
    assert_eq!(asked["deploy"]["params"]["message"], "api is built. Deploy it to production?");
    // Whichever instance the update lands on, it reaches the waiting handler at once.
    let answer = json!({"deploy": {"action": "accept", "content": {"confirm": true}}});
    client.update_task(&id, answer.as_object().unwrap().clone()).await.unwrap();
    assert_ne!(client.get_task(&id).await.unwrap().status, TaskStatus::InputRequired, "the answer was delivered");
    let done = poll_until(&client, &id, Duration::from_secs(10), |t| t.status.is_terminal()).await;
    assert_eq!(done.status, TaskStatus::Completed, "{done:?}");
    assert_eq!(done.result.unwrap()["content"][0]["text"], "Deployed api to production.");
    let served = &proxy.served()[before..];
    for instance in 0..3 {
        assert!(served.contains(&instance), "instance {instance} served none of the task's requests: {served:?}");
    }
    assert!(keys(&redis.url(), &format!("mcp:task:{id}")).await.len() == 1, "the task's record is in Redis");

    // Followed by the client: polled, asked, answered, completed, over the three instances.
    let deployed = within("deploy", client.call_tool_as_task("deploy", json!({"service": "web"}))).await.unwrap();
    assert_eq!(deployed.text(), "Deployed web to production.");
    within("closing", client.close()).await;
}

#[tokio::test]
async fn a_task_whose_instance_died_is_failed_and_a_finished_one_outlives_a_restart() {
    let redis = RedisServer::start();
    let port = free_port();
    let mut runner = Instance::start_on(port, "shared", Some(&redis.url()), &[]);
    let other = Instance::start("shared", Some(&redis.url()));
    let on_runner = client_2026(&runner.url()).await;
    let elsewhere = client_2026(&other.url()).await;

    // A finished task.
    let finished = start_deploy(&on_runner, "db").await;
    poll_until(&on_runner, &finished, Duration::from_secs(10), |t| t.status == TaskStatus::InputRequired).await;
    let answer = json!({"deploy": {"action": "accept", "content": {"confirm": true}}});
    on_runner.update_task(&finished, answer.as_object().unwrap().clone()).await.unwrap();
    poll_until(&elsewhere, &finished, Duration::from_secs(10), |t| t.status == TaskStatus::Completed).await;
    // A task left waiting for its user.
    let orphan = start_deploy(&on_runner, "cache").await;
    poll_until(&elsewhere, &orphan, Duration::from_secs(10), |t| t.status == TaskStatus::InputRequired).await;

    runner.kill();
    // Within the lease (three heartbeats of 2 s), the task is still `input_required`; once it
    // lapsed, it failed.
    let failed =
        poll_until(&elsewhere, &orphan, Duration::from_secs(15), |t| t.status != TaskStatus::InputRequired).await;
    assert_eq!(failed.status, TaskStatus::Failed, "{failed:?}");
    let error = failed.error.expect("a failed task says why");
    assert!(error.message.contains("stopped before the task finished"), "{error:?}");
    let err = elsewhere.update_task(&orphan, answer.as_object().unwrap().clone()).await.unwrap_err();
    assert_eq!(err.code(), Some(-32602), "a failed task takes no more input: {err}");

    // The instance comes back (a new process on the same port): the finished task's result is
    // still there, on it and elsewhere.
    let restarted = Instance::start_on(port, "shared", Some(&redis.url()), &[]);
    let again = client_2026(&restarted.url()).await;
    for client in [&again, &elsewhere] {
        let task = client.get_task(&finished).await.unwrap();
        assert_eq!(task.status, TaskStatus::Completed);
        assert_eq!(task.result.unwrap()["content"][0]["text"], "Deployed db to production.");
    }
    drop(on_runner);
    within("closing", again.close()).await;
    within("closing", elsewhere.close()).await;
}

/// Asks for a confirmation, then says what it heard.
#[tool(task = "optional")]
async fn ask(ctx: Context) -> Result<String, ElicitError> {
    tokio::time::sleep(Duration::from_millis(10)).await;
    let yes = ctx.confirm("Go on?").key("go").await?;
    Ok(format!("confirmed: {yes}"))
}

/// An in-process instance sharing sessions and tasks through `redis`.
async fn in_process(redis: &Redis, dropped: Arc<Dropped>) -> (String, tokio::task::JoinHandle<()>) {
    let server = Server::builder("t", "1")
        .task_store(redis.task_store())
        .task_poll_interval(Duration::from_millis(20))
        .state_arc(dropped)
        .tools(tools![stoppable, ask])
        .build()
        .unwrap();
    let listener = tokio::net::TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let backplane = redis.backplane(url.clone()).heartbeat(Duration::from_millis(100));
    let http = server.streamable_http(HttpConfig::default().backplane(backplane));
    let task = tokio::spawn(async move {
        let _ = http.serve(listener, std::future::pending()).await;
    });
    (url, task)
}

#[tokio::test]
async fn update_and_cancel_on_another_instance_reach_the_running_handler() {
    let server = RedisServer::start();
    let redis = Redis::connect(&server.url()).unwrap();
    let dropped_a = Arc::new(Dropped::default());
    let dropped_b = Arc::new(Dropped::default());
    let (a, a_task) = in_process(&redis, dropped_a.clone()).await;
    let (b, b_task) = in_process(&redis, dropped_b.clone()).await;
    let on_a = client_2026(&a).await;
    let on_b = client_2026(&b).await;

    // Asked on A, answered through B, where a subscription hears of the task's changes.
    let mut notifications = on_b.notifications();
    let TaskStart::Task(task) = on_a.start_tool_task("ask", json!({})).await.unwrap() else { panic!("a task") };
    let id = task.task_id;
    let filter = SubscriptionFilter { task_ids: Some(vec![id.clone()]), ..Default::default() };
    let subscription = within("the acknowledgement", on_b.listen(filter)).await.unwrap();
    assert_eq!(subscription.acknowledged().task_ids.as_deref(), Some(&[id.clone()][..]), "B knows A's task");
    poll_until(&on_b, &id, Duration::from_secs(10), |t| t.status == TaskStatus::InputRequired).await;
    let answer = json!({"go": {"action": "accept", "content": {"confirm": true}}});
    on_b.update_task(&id, answer.as_object().unwrap().clone()).await.unwrap();
    let done = poll_until(&on_b, &id, Duration::from_secs(10), |t| t.status.is_terminal()).await;
    assert_eq!(done.result.unwrap()["content"][0]["text"], "confirmed: true");
    let heard = completion_notice(&mut notifications, &id, "notifications/tasks on B of the task completed on A").await;
    assert_eq!(heard["result"]["content"][0]["text"], "confirmed: true", "{heard}");
    drop(subscription);
    // A wrong answer sent through B is judged by A, which knows what the question was.
    let TaskStart::Task(task) = on_a.start_tool_task("ask", json!({})).await.unwrap() else { panic!("a task") };
    poll_until(&on_b, &task.task_id, Duration::from_secs(10), |t| t.status == TaskStatus::InputRequired).await;
    let wrong = json!({"go": {"action": "maybe"}});
    let err = on_b.update_task(&task.task_id, wrong.as_object().unwrap().clone()).await.unwrap_err();
    assert_eq!(err.code(), Some(-32602), "{err}");
    assert_eq!(on_a.get_task(&task.task_id).await.unwrap().status, TaskStatus::InputRequired);

    // Started on A, cancelled through B: A's handler is dropped.
    let TaskStart::Task(task) = on_a.start_tool_task("stoppable", json!({})).await.unwrap() else { panic!("a task") };
    on_b.cancel_task(&task.task_id).await.unwrap();
    assert_eq!(on_b.get_task(&task.task_id).await.unwrap().status, TaskStatus::Cancelled);
    within("A's handler being dropped", async {
        while !dropped_a.0.load(Ordering::SeqCst) {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await;
    assert!(!dropped_b.0.load(Ordering::SeqCst), "the handler ran on A only");
    a_task.abort();
    b_task.abort();
}
