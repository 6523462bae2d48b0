//! Tasks (the 2026-07-28 tasks extension) with our client against our server, in process: a
//! call that runs as a task, asks the user half-way (input_required → tasks/update →
//! completed), the raw `tasks/*` requests, cancellation that ends the handler, the -32021
//! answers without the extension, and a task bound to the user who made it.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use serde_json::json;
use tests::stdio::within;
use typed_mcp::client::{ClientError, ProtocolEra, TaskStart};
use typed_mcp::prelude::*;
use typed_mcp::protocol::{TASKS_EXTENSION, TaskStatus};
use typed_mcp::testing::{ElicitationScript, ToolResultExt, connect_in_era};

use crate::support::tasks::{Dropped, completion_notice, poll_until, stoppable};

/// How long a task test waits for a task to reach a state.
const PATIENCE: Duration = Duration::from_secs(10);

/// Deploys `service` after the user confirms, half-way.
///
/// # Arguments
/// * `service` - What to deploy.
#[tool(task = "optional")]
async fn deploy(ctx: Context, service: String) -> Result<String, ElicitError> {
    tokio::time::sleep(Duration::from_millis(20)).await;
    if !ctx.confirm(format!("Deploy {service} to production?")).await? {
        return Ok(format!("{service}: not deployed"));
    }
    tokio::time::sleep(Duration::from_millis(20)).await;
    Ok(format!("{service}: deployed"))
}

/// Indexes, reporting progress, and asks the user before the last step.
#[tool(task = "optional")]
async fn reindex(ctx: Context) -> Result<String, ElicitError> {
    // Past the first poll: the task is handed to the client by then.
    tokio::time::sleep(Duration::from_millis(40)).await;
    assert!(ctx.wants_progress(), "a task shows its progress");
    let _ = ctx.progress(1.0, Some(4.0), None).await;
    let _ = ctx.progress(2.0, Some(4.0), Some("indexing")).await;
    if !ctx.confirm("Swap in the new index?").await? {
        return Ok("kept the old index".into());
    }
    let _ = ctx.progress(3.0, Some(4.0), None).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    Ok("swapped".into())
}

/// Only runs as a task.
#[tool(task = "required")]
async fn batch() -> &'static str {
    tokio::time::sleep(Duration::from_millis(10)).await;
    "batch done"
}

/// Holds the call from becoming a task while it asks, then works on as one.
#[tool(task = "required")]
async fn held(ctx: Context) -> Result<String, ElicitError> {
    let hold = typed_mcp::task::hold_start(&ctx);
    let could_hold = hold.is_some();
    // A first wait: without the hold, the call would become a task here.
    tokio::time::sleep(Duration::from_millis(30)).await;
    let go = ctx.confirm("Start?").await?;
    drop(hold);
    tokio::time::sleep(Duration::from_millis(30)).await;
    // A call that is a task already cannot be held.
    let task_now = typed_mcp::task::hold_start(&ctx).is_none();
    Ok(format!("held: {could_hold}, go: {go}, a task by then: {task_now}"))
}

/// Never a task.
#[tool]
fn quick() -> &'static str {
    "quick"
}

fn server(dropped: Arc<Dropped>) -> Server {
    Server::builder("tasks", "1.0.0")
        .task_poll_interval(Duration::from_millis(20))
        .state_arc(dropped)
        .tools(tools![deploy, reindex, stoppable, batch, quick, held])
        .build()
        .unwrap()
}

async fn client_2026(server: &Server, script: &ElicitationScript) -> typed_mcp::testing::TestClient {
    connect_in_era(server, script, ProtocolEra::Y2026).await
}

#[tokio::test]
async fn a_task_asks_half_way_and_completes_with_our_client() {
    let server = server(Arc::default());
    let script = ElicitationScript::new().accept(json!({"confirm": true}));
    let client = client_2026(&server, &script).await;
    assert!(client.server_capabilities().has_extension(TASKS_EXTENSION), "the extension is advertised");
    let result =
        within("the deploy task", client.call_tool_as_task("deploy", json!({"service": "api"}))).await.unwrap();
    assert_eq!(result.text(), "api: deployed");
    let asked = script.requests();
    assert_eq!(asked.len(), 1, "one question, asked once: the handler is not replayed");
    assert_eq!(asked[0].message(), "Deploy api to production?");
    script.assert_done();
}

#[tokio::test]
async fn a_held_call_asks_in_its_own_round_and_becomes_a_task_once_let_go() {
    let server = server(Arc::default());
    let script = ElicitationScript::new().accept(json!({"confirm": true})).accept(json!({"confirm": true}));
    let client = client_2026(&server, &script).await;
    // The raw start: the question is answered in the call's own round (`input_required`),
    // before the call is a task; a question asked by a task waits in its `inputRequests`.
    let TaskStart::Task(task) = within("the start", client.start_tool_task("held", json!({}))).await.unwrap() else {
        panic!("the call becomes a task once the hold is dropped");
    };
    assert_eq!(script.requests().len(), 1, "asked before the task existed");
    assert_eq!(script.requests()[0].message(), "Start?");
    let done = poll_until(&client, &task.task_id, PATIENCE, |t| t.status.is_terminal()).await;
    assert_eq!(done.status, TaskStatus::Completed);
    assert_eq!(done.result.unwrap()["content"][0]["text"], "held: true, go: true, a task by then: true");

    // Followed by the client: `on_task` is told the task once, after the question.
    let told = Arc::new(std::sync::Mutex::new(Vec::new()));
    let record = told.clone();
    let asked_then = script.clone();
    let call = client.tool("held").as_task().on_task(move |task| {
        record.lock().unwrap().push((task.task_id.clone(), asked_then.requests().len()));
    });
    let result = within("the held call", call.send()).await.unwrap();
    assert_eq!(result.text(), "held: true, go: true, a task by then: true");
    let told = told.lock().unwrap().clone();
    assert_eq!(told.len(), 1, "{told:?}");
    assert_eq!(told[0].1, 2, "the second question was asked before the task was made");
    script.assert_done();
}

#[tokio::test]
async fn a_task_goes_through_input_required_and_update_with_the_raw_requests() {
    let server = server(Arc::default());
    let client = client_2026(&server, &ElicitationScript::new()).await;
    let TaskStart::Task(task) = client.start_tool_task("deploy", json!({"service": "db"})).await.unwrap() else {
        panic!("a task-supporting tool called with the extension runs as a task");
    };
    assert_eq!(task.poll_interval_ms, Some(20));
    assert_eq!(task.ttl_ms, Some(3_600_000));
    let id = task.task_id;
    // It exists as soon as its id is known.
    assert_eq!(client.get_task(&id).await.unwrap().task_id, id);

    let waiting = within("the task asking", async {
        loop {
            let task = client.get_task(&id).await.unwrap();
            if task.status == TaskStatus::InputRequired {
                return task;
            }
            assert_eq!(task.status, TaskStatus::Working);
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await;
    let requests = waiting.input_requests.expect("an input_required task lists its questions");
    assert_eq!(requests.keys().collect::<Vec<_>>(), ["input-0"]);
    assert_eq!(requests["input-0"]["method"], "elicitation/create");
    assert_eq!(requests["input-0"]["params"]["message"], "Deploy db to production?");

    let answer = json!({"input-0": {"action": "accept", "content": {"confirm": true}}});
    client.update_task(&id, answer.as_object().unwrap().clone()).await.unwrap();
    let done = poll_until(&client, &id, PATIENCE, |t| t.status.is_terminal()).await;
    assert_eq!(done.status, TaskStatus::Completed);
    assert_eq!(done.result.unwrap()["content"][0]["text"], "db: deployed");
    assert!(done.input_requests.is_none());

    // A finished task takes no more input, and cancelling it changes nothing.
    let err = client.update_task(&id, answer.as_object().unwrap().clone()).await.unwrap_err();
    assert_eq!(err.code(), Some(-32602), "{err}");
    client.cancel_task(&id).await.unwrap();
    assert_eq!(client.get_task(&id).await.unwrap().status, TaskStatus::Completed);
}

#[tokio::test]
async fn cancelling_a_task_ends_its_handler() {
    let dropped = Arc::new(Dropped::default());
    let server = server(dropped.clone());
    let client = client_2026(&server, &ElicitationScript::new()).await;
    let TaskStart::Task(task) = client.start_tool_task("stoppable", json!({})).await.unwrap() else {
        panic!("expected a task");
    };
    assert_eq!(task.status, TaskStatus::Working);
    client.cancel_task(&task.task_id).await.unwrap();
    assert_eq!(client.get_task(&task.task_id).await.unwrap().status, TaskStatus::Cancelled);
    within("the handler being dropped", async {
        while !dropped.0.load(Ordering::SeqCst) {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await;
}

#[tokio::test]
async fn a_call_abandoned_by_its_client_cancels_its_task() {
    let dropped = Arc::new(Dropped::default());
    let server = server(dropped.clone());
    let client = client_2026(&server, &ElicitationScript::new()).await;
    let err = client.tool("stoppable").as_task().timeout(Duration::from_millis(200)).await.unwrap_err();
    assert!(matches!(err, ClientError::Timeout { .. }), "{err}");
    within("the handler being dropped", async {
        while !dropped.0.load(Ordering::SeqCst) {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await;
}

#[tokio::test]
async fn without_the_extension_tasks_are_refused_and_optional_tools_answer_directly() {
    let server = server(Arc::default());
    let script = ElicitationScript::new().accept(json!({"confirm": false}));
    let client = client_2026(&server, &script).await;
    // A plain call does not declare the extension: an optional tool answers as usual (its
    // question is a multi round-trip one), a required one is refused.
    assert_eq!(client.call_tool("deploy", json!({"service": "web"})).await.unwrap().text(), "web: not deployed");
    let err = client.call_tool("batch", json!({})).await.unwrap_err();
    assert_eq!(err.code(), Some(-32021), "{err}");
    let data = err.rpc().unwrap().data.clone().unwrap();
    assert!(data["requiredCapabilities"]["extensions"][TASKS_EXTENSION].is_object(), "{data}");
    // As a task it runs; a tool that never runs as a task answers at once.
    assert_eq!(client.call_tool_as_task("batch", json!({})).await.unwrap().text(), "batch done");
    assert!(
        matches!(client.start_tool_task("quick", json!({})).await.unwrap(), TaskStart::Done(r) if r.text() == "quick")
    );
    // `tasks/*` without the extension: -32021.
    let err = client.request::<_, serde_json::Value>("tasks/get", &json!({"taskId": "x"})).await.unwrap_err();
    assert_eq!(err.code(), Some(-32021), "{err}");
}

#[tokio::test]
async fn a_session_client_gets_minus_32021_from_a_required_task_tool() {
    let server = server(Arc::default());
    let client = connect_in_era(&server, &ElicitationScript::new(), ProtocolEra::Y2025).await;
    let err = client.call_tool("batch", json!({})).await.unwrap_err();
    assert_eq!(err.code(), Some(-32021), "{err}");
    // An optional one runs as an ordinary call.
    assert!(client.call_tool("quick", json!({})).await.is_ok());
    assert!(matches!(client.get_task("x").await, Err(ClientError::WrongEra { .. })));
}

#[tokio::test]
async fn a_task_shows_the_progress_of_its_handler_as_its_status_message() {
    let server = server(Arc::default());
    let client = client_2026(&server, &ElicitationScript::new()).await;
    let TaskStart::Task(task) = client.start_tool_task("reindex", json!({})).await.unwrap() else {
        panic!("expected a task");
    };
    assert_eq!(task.status_message, None, "no progress yet");
    let id = task.task_id;
    let waiting = poll_until(&client, &id, PATIENCE, |t| t.status == TaskStatus::InputRequired).await;
    // The latest report, its message given.
    assert_eq!(waiting.status_message.as_deref(), Some("indexing"));

    let answer = json!({"input-0": {"action": "accept", "content": {"confirm": true}}});
    client.update_task(&id, answer.as_object().unwrap().clone()).await.unwrap();
    // Reported right after the answer was written: held to the end of the poll interval, then
    // written while the handler still works.
    let working = within("the progress after the answer", async {
        loop {
            let task = client.get_task(&id).await.unwrap();
            if task.status_message.as_deref() == Some("3/4") {
                return task;
            }
            assert_eq!(task.status_message.as_deref(), Some("indexing"), "{task:?}");
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await;
    assert_eq!(working.status, TaskStatus::Working);
    let done = poll_until(&client, &id, PATIENCE, |t| t.status.is_terminal()).await;
    assert_eq!(done.status, TaskStatus::Completed);
    assert_eq!(done.result.unwrap()["content"][0]["text"], "swapped");
}

#[tokio::test]
async fn a_subscription_naming_a_task_hears_of_its_changes() {
    use typed_mcp::protocol::SubscriptionFilter;
    let server = server(Arc::default());
    let client = client_2026(&server, &ElicitationScript::new()).await;
    let mut notifications = client.notifications();
    let TaskStart::Task(task) = client.start_tool_task("deploy", json!({"service": "queue"})).await.unwrap() else {
        panic!("expected a task");
    };
    let id = task.task_id;
    let filter = SubscriptionFilter { task_ids: Some(vec![id.clone(), "not-a-task".into()]), ..Default::default() };
    let subscription = within("the acknowledgement", client.listen(filter)).await.unwrap();
    assert_eq!(
        subscription.acknowledged().task_ids.as_deref(),
        Some(&[id.clone()][..]),
        "only known tasks are followed"
    );
    poll_until(&client, &id, PATIENCE, |t| t.status == TaskStatus::InputRequired).await;
    let answer = json!({"input-0": {"action": "accept", "content": {"confirm": true}}});
    client.update_task(&id, answer.as_object().unwrap().clone()).await.unwrap();
    let completed = completion_notice(&mut notifications, &id, "notifications/tasks of the completed task").await;
    assert_eq!(completed["result"]["content"][0]["text"], "queue: deployed", "{completed}");
    assert!(
        completed["_meta"]["io.modelcontextprotocol/subscriptionId"].is_number()
            || completed["_meta"]["io.modelcontextprotocol/subscriptionId"].is_string()
    );
}

#[tokio::test]
async fn a_task_past_its_time_to_live_is_ended_and_forgotten() {
    let dropped = Arc::new(Dropped::default());
    let server = Server::builder("tasks", "1.0.0")
        .task_ttl(Some(Duration::from_secs(1)))
        .state_arc(dropped.clone())
        .tools(tools![stoppable])
        .build()
        .unwrap();
    let client = client_2026(&server, &ElicitationScript::new()).await;
    let TaskStart::Task(task) = client.start_tool_task("stoppable", json!({})).await.unwrap() else {
        panic!("expected a task");
    };
    assert_eq!(task.ttl_ms, Some(1000));
    assert_eq!(client.get_task(&task.task_id).await.unwrap().status, TaskStatus::Working, "alive within its TTL");
    within("the handler being dropped at the end of the TTL", async {
        while !dropped.0.load(Ordering::SeqCst) {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await;
    let err = client.get_task(&task.task_id).await.unwrap_err();
    assert_eq!(err.code(), Some(-32602), "an expired task is unknown: {err}");
}

#[tokio::test]
async fn the_memory_store_keeps_the_task_store_contract() {
    typed_mcp::testing::assert_task_store_contract(&typed_mcp::task::MemoryTaskStore::new()).await;
}
