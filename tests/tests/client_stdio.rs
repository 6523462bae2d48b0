//! Our client against our example servers started as child processes (stdio): the quickstart
//! tools, the `elicitation` example's forms, the `url_elicitation` example's URL flows (the test
//! plays the user and opens the example's page), and servers that fail to start or exit early.

use std::time::Duration;

use serde_json::json;
use tests::interop::example_binary;
use tests::stdio::within;
use tokio::process::Command;
use typed_mcp::client::{Client, ClientError, ElicitationModes, elicitation_fn};
use typed_mcp::protocol::ElicitResult;
use typed_mcp::testing::{ElicitationScript, ToolResultExt};

fn example(name: &str) -> Command {
    let mut command = Command::new(example_binary(name));
    command.env("RUST_LOG", "warn");
    command
}

#[tokio::test]
async fn quickstart_over_stdio() {
    let client =
        within("connecting", Client::builder("stdio-test", "1").connect_stdio(example("quickstart"))).await.unwrap();
    assert_eq!(client.server_info().name, "quickstart");
    let mut names: Vec<String> = client.list_all_tools().await.unwrap().into_iter().map(|t| t.name).collect();
    names.sort();
    assert_eq!(names, ["add", "echo", "text_stats"]);
    assert_eq!(client.call_tool("add", json!({"a": 2, "b": 40})).await.unwrap().text(), "42");
    let stats = client.call_tool("text_stats", json!({"text": "two words"})).await.unwrap();
    assert!(stats.structured_content.is_some(), "{stats:?}");
    client.ping().await.unwrap();
    // Closing ends the child: its input closes and it exits on its own.
    within("closing", client.close()).await;
    assert!(client.is_closed());
    assert_eq!(client.ping().await, Err(ClientError::Closed));
}

#[tokio::test]
async fn elicitation_example_forms_over_stdio() {
    let details = json!({"projectName": "demo", "framework": "react", "includeTests": false});
    let script = ElicitationScript::new().accept(details).decline();
    let command = example("elicitation");
    let client = Client::builder("stdio-test", "1").elicitation(script.clone()).connect_stdio(command).await.unwrap();
    let created = client.call_tool("create_project", ()).await.unwrap();
    assert_eq!(created.text(), "Created project 'demo' with framework: react");
    let declined = client.call_tool("create_project", ()).await.unwrap();
    assert_eq!(declined.text(), "Project creation cancelled: the user declined.");
    let asked = script.requests();
    assert_eq!(asked.len(), 2);
    assert_eq!(asked[0].message(), "Please provide the project details.");
    script.assert_done();
    client.close().await;
}

#[tokio::test]
async fn url_elicitation_example_over_stdio() {
    // The user: consents, opens the page and presses its button (which completes the flow).
    let user = elicitation_fn(ElicitationModes::ALL, |request| async move {
        let Some(url) = request.as_url() else { return ElicitResult::decline() };
        assert_eq!(url.domain(), Some("127.0.0.1"));
        let page = url.url.clone();
        tokio::spawn(async move {
            let status = crate::support::press_authorize(&page).await;
            assert!(status.is_success(), "{page}: {status}");
        });
        ElicitResult::accept_url()
    });
    let mut command = example("url_elicitation");
    command.args(["--url-port", "0"]);
    let client = Client::builder("stdio-test", "1").elicitation(user).connect_stdio(command).await.unwrap();

    let started = client.call_tool("auth_via_url", ()).await.unwrap();
    assert!(started.text().starts_with("Authorization flow "), "{started:?}");
    let done = within("the -32042 flow", client.call_tool_with_url_elicitation("protected_action", ())).await.unwrap();
    assert_eq!(done.text(), "Protected action completed: you are authorized.");
    client.close().await;
}

#[tokio::test]
async fn servers_that_cannot_start_or_exit_at_once() {
    let missing = Client::builder("stdio-test", "1").connect_stdio(Command::new("/nonexistent/mcp-server")).await;
    assert!(matches!(missing, Err(ClientError::Transport(_))), "{missing:?}");

    let mut exits = Command::new("sh");
    exits.args(["-c", "exit 0"]);
    let quit = within("a server that exits", Client::builder("stdio-test", "1").connect_stdio(exits)).await;
    assert_eq!(quit.unwrap_err(), ClientError::Closed);

    let mut garbage = Command::new("sh");
    garbage.args(["-c", "echo 'this is not JSON'; sleep 2"]);
    let short = Client::builder("stdio-test", "1").request_timeout(Some(Duration::from_millis(500)));
    let confused = within("a server that never answers", short.connect_stdio(garbage)).await;
    assert!(matches!(confused, Err(ClientError::Timeout { .. })), "{confused:?}");
}
