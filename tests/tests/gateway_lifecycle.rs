//! The upstreams' lifecycle behind the gateway: a lazy upstream starts on the first request;
//! a stdio upstream that dies is started again, and the call it was serving ends with an error
//! that says so; an HTTP upstream that forgot the session (404) gets a new one; an upstream
//! that is slow, or never starts, stalls no other.

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use tests::gateway::toml_string;
use tests::stdio::within;
use tokio::sync::Notify;
use typed_mcp::client::{Client, ElicitationHandler, ElicitationModes, ElicitationRequest, ProtocolEra};
use typed_mcp::protocol::ElicitResult;
use typed_mcp::testing::ToolResultExt;
use typed_mcp_gateway::{Config, Gateway};

use crate::support::servers::{COMBINED, CONFORMANCE};

async fn gateway(text: &str) -> (Gateway, typed_mcp::Server) {
    let gateway = Gateway::from_config(Config::parse(text, "test.toml").unwrap()).unwrap();
    let server = within("gateway start", gateway.start(gateway.server_builder())).await.unwrap();
    (gateway, server)
}

/// A user who is asked and does not answer until released (the question stays open until
/// the call ends), then declines.
#[derive(Clone, Default)]
struct Away {
    asked: Arc<Notify>,
    release: Arc<Notify>,
}

impl ElicitationHandler for Away {
    fn modes(&self) -> ElicitationModes {
        ElicitationModes::FORM
    }

    async fn elicit(&self, _request: ElicitationRequest) -> ElicitResult {
        self.asked.notify_one();
        self.release.notified().await;
        ElicitResult::decline()
    }
}

async fn connect(server: &typed_mcp::Server, era: ProtocolEra, away: &Away) -> Client {
    Client::builder("gateway-test", "1")
        .protocol_era(era)
        .elicitation(away.clone())
        .connect_in_process(server)
        .await
        .unwrap()
}

#[tokio::test]
async fn a_lazy_upstream_starts_on_the_first_request() {
    let text = format!("[[upstream]]\nname = \"ex\"\ncommand = [{}]\nstart = \"lazy\"\n", toml_string(COMBINED));
    let (gateway, server) = gateway(&text).await;
    assert!(!gateway.upstreams()[0].is_connected(), "not started with the gateway");
    for era in [ProtocolEra::Y2026, ProtocolEra::Y2025] {
        let client = connect(&server, era, &Away::default()).await;
        let names: Vec<String> = client.list_all_tools().await.unwrap().into_iter().map(|t| t.name).collect();
        assert!(names.contains(&"ex_create_project".to_owned()), "{era:?}: {names:?}");
        assert!(gateway.upstreams()[0].is_connected());
        client.close().await;
    }
    gateway.shutdown().await;
}

#[tokio::test]
async fn a_stdio_upstream_that_dies_is_started_again_and_its_call_in_flight_fails_clearly() {
    let pid_file = std::env::temp_dir().join(format!("gateway-upstream-{:016x}.pid", getrandom::u64().unwrap()));
    let script = format!("echo $$ > '{}'; exec '{COMBINED}'", pid_file.display());
    let text = format!("[[upstream]]\nname = \"ex\"\ncommand = [\"sh\", \"-c\", {}]\n", toml_string(&script));
    let (gateway, server) = gateway(&text).await;
    let first_pid = std::fs::read_to_string(&pid_file).unwrap().trim().to_owned();
    for era in [ProtocolEra::Y2025, ProtocolEra::Y2026] {
        let away = Away::default();
        let client = connect(&server, era, &away).await;
        let asked = away.asked.notified();
        let call = tokio::spawn({
            let client = client.clone();
            async move { client.call_tool("ex_create_project", ()).await }
        });
        within("the question", asked).await;
        let pid = std::fs::read_to_string(&pid_file).unwrap().trim().to_owned();
        let killed = tokio::process::Command::new("kill").args(["-9", &pid]).status().await.unwrap();
        assert!(killed.success());
        if era == ProtocolEra::Y2026 {
            // The 2026-era client learns how the call ended on its retry, once its user answered.
            tokio::time::sleep(Duration::from_millis(200)).await;
            away.release.notify_one();
        }
        let outcome = within("the call in flight", call).await.unwrap();
        let message = match outcome {
            Err(e) => e.to_string(),
            Ok(result) => result.text(),
        };
        assert!(message.contains("upstream `ex` closed its connection during the call"), "{era:?}: {message}");
        // Started again (after a short pause): a call succeeds on the new process.
        let again = async {
            loop {
                match client.call_tool("ex_create_project_from", json!({"projectName": "back"})).await {
                    Ok(result) => return result.text(),
                    Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,
                }
            }
        };
        assert_eq!(within("restart", again).await, "Created project 'back' with framework: none");
        let new_pid = std::fs::read_to_string(&pid_file).unwrap().trim().to_owned();
        assert_ne!(new_pid, pid, "a new process");
        client.close().await;
    }
    assert_ne!(first_pid, std::fs::read_to_string(&pid_file).unwrap().trim());
    gateway.shutdown().await;
    let _ = std::fs::remove_file(pid_file);
}

#[tokio::test]
async fn a_slow_upstream_or_one_that_never_starts_stalls_no_other() {
    let text = format!(
        "[[upstream]]\nname = \"a\"\ncommand = [{bin}]\n\n[[upstream]]\nname = \"b\"\ncommand = [{bin}]\n\n\
         [[upstream]]\nname = \"gone\"\ncommand = [\"/nonexistent/mcp-server\"]\n",
        bin = toml_string(COMBINED)
    );
    let (gateway, server) = gateway(&text).await;
    assert!(!gateway.upstreams()[2].is_connected(), "an upstream that cannot start is left out");
    let away = Away::default();
    let stuck = connect(&server, ProtocolEra::Y2025, &away).await;
    let asked = away.asked.notified();
    let slow = tokio::spawn({
        let stuck = stuck.clone();
        async move { stuck.call_tool("a_create_project", ()).await }
    });
    within("the question", asked).await;
    let other = connect(&server, ProtocolEra::Y2025, &Away::default()).await;
    for tool in ["b_create_project_from", "a_create_project_from"] {
        let result =
            tokio::time::timeout(Duration::from_secs(5), other.call_tool(tool, json!({"projectName": "free"})));
        let text = result.await.unwrap_or_else(|_| panic!("{tool} waited on the slow call")).unwrap().text();
        assert_eq!(text, "Created project 'free' with framework: none");
    }
    assert!(!slow.is_finished());
    slow.abort();
    stuck.close().await;
    other.close().await;
    gateway.shutdown().await;
}

/// Starts the conformance server on `port`; returns it once it accepts connections.
async fn conformance_on(port: u16) -> tokio::process::Child {
    let child = tokio::process::Command::new(CONFORMANCE)
        .args(["--port", &port.to_string()])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let ready = async {
        while tokio::net::TcpStream::connect(("127.0.0.1", port)).await.is_err() {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    };
    within("the conformance server", ready).await;
    child
}

#[tokio::test]
async fn an_http_upstream_that_forgot_the_session_gets_a_new_one() {
    let port = typed_mcp_redis::testing::free_port();
    let mut upstream = conformance_on(port).await;
    let text = format!("[[upstream]]\nname = \"conf\"\nurl = \"http://127.0.0.1:{port}/mcp\"\nera = \"2025-11-25\"\n");
    let (gateway, server) = gateway(&text).await;
    let client = Client::builder("gateway-test", "1").connect_in_process(&server).await.unwrap();
    let call = || client.call_tool("conf_test_simple_text", ());
    assert_eq!(within("call", call()).await.unwrap().text(), "This is a simple text response for testing.");
    // The upstream restarts: the session the gateway holds is unknown to the new process (404).
    upstream.kill().await.unwrap();
    let _upstream = conformance_on(port).await;
    let again = within("call after the restart", call()).await;
    assert_eq!(again.unwrap().text(), "This is a simple text response for testing.");
    client.close().await;
    gateway.shutdown().await;
}
