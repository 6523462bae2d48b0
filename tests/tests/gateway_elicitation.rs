//! Elicitation across eras through the gateway, every combination, with our own servers and
//! client: a form asked by an upstream of either era (2025-11-25 `elicitation/create`, or a
//! 2026-07-28 `input_required` result) reaches a client of either era the way its era asks
//! (`elicitation/create` in a session, `input_required` in the 2026 era), and the answer goes
//! back to the waiting upstream call, once per question, whatever the rounds.

use std::sync::{Arc, Mutex};

use serde_json::json;
use tests::gateway::toml_string;
use tests::stdio::within;
use typed_mcp::client::{Client, ElicitationHandler, ElicitationModes, ElicitationRequest, ProtocolEra};
use typed_mcp::protocol::ElicitResult;
use typed_mcp::testing::ToolResultExt;
use typed_mcp_gateway::{Config, Gateway};

use crate::support::listening::Listening;
use crate::support::servers::{COMBINED, CONFORMANCE};

/// The user: fills in every form it knows, records each question.
#[derive(Clone, Default)]
struct User {
    asked: Arc<Mutex<Vec<String>>>,
}

impl User {
    fn asked(&self) -> Vec<String> {
        self.asked.lock().unwrap().clone()
    }
}

impl ElicitationHandler for User {
    fn modes(&self) -> ElicitationModes {
        ElicitationModes::FORM
    }

    async fn elicit(&self, request: ElicitationRequest) -> ElicitResult {
        self.asked.lock().unwrap().push(request.message().to_owned());
        let Some(form) = request.as_form() else { return ElicitResult::decline() };
        let mut content = form.defaults();
        for (field, value) in [
            ("projectName", json!("gw")),
            ("framework", json!("vue")),
            ("proceed", json!(true)),
            ("name", json!("Ada")),
            ("color", json!("blue")),
            ("username", json!("ada")),
            ("email", json!("ada@example.com")),
        ] {
            if form.fields().any(|f| f == field) {
                content.insert(field.into(), value);
            }
        }
        form.accept(content).unwrap_or_else(|_| ElicitResult::cancel())
    }
}

async fn client(era: ProtocolEra, server: &typed_mcp::Server, user: &User) -> Client {
    Client::builder("gateway-test", "1")
        .protocol_era(era)
        .elicitation(user.clone())
        .connect_in_process(server)
        .await
        .unwrap()
}

const ERAS: [ProtocolEra; 2] = [ProtocolEra::Y2025, ProtocolEra::Y2026];

#[tokio::test]
async fn a_form_of_a_stdio_upstream_of_either_era_reaches_a_client_of_either_era() {
    let text = format!(
        "[[upstream]]\nname = \"old\"\ncommand = [{bin}]\nera = \"2025-11-25\"\n\n\
         [[upstream]]\nname = \"new\"\ncommand = [{bin}]\nera = \"2026-07-28\"\n",
        bin = toml_string(COMBINED)
    );
    let gateway = Gateway::from_config(Config::parse(&text, "test.toml").unwrap()).unwrap();
    let server = within("gateway start", gateway.start(gateway.server_builder())).await.unwrap();
    for era in ERAS {
        for upstream in ["old", "new"] {
            let user = User::default();
            let client = client(era, &server, &user).await;
            let what = format!("{upstream} upstream, {era:?} client");
            let created = within(&what, client.call_tool(&format!("{upstream}_create_project"), ())).await;
            assert_eq!(created.unwrap().text(), "Created project 'gw' with framework: vue", "{what}");
            assert_eq!(user.asked(), ["Please provide the project details."], "{what}: asked once");
            let tool = format!("{upstream}_process_data");
            let long = client.call_tool(&tool, json!({"data": "x".repeat(150)}));
            assert_eq!(within(&what, long).await.unwrap().text(), "Processed 150 characters", "{what}");
            assert_eq!(user.asked().len(), 2, "{what}: {:?}", user.asked());
            client.close().await;
        }
    }
    gateway.shutdown().await;
}

/// A gateway in front of the conformance server over HTTP, spoken to in `era` (`auto` or a
/// revision).
async fn conformance_gateway(http: &Listening, era: &str) -> (Gateway, typed_mcp::Server) {
    let text = format!("[[upstream]]\nname = \"conf\"\nurl = \"{}\"\nera = \"{era}\"\n", http.url);
    let gateway = Gateway::from_config(Config::parse(&text, "test.toml").unwrap()).unwrap();
    let server = within("gateway start", gateway.start(gateway.server_builder())).await.unwrap();
    (gateway, server)
}

#[tokio::test]
async fn questions_asked_one_after_the_other_cross_the_gateway_in_every_combination() {
    let http = Listening::start(CONFORMANCE.as_ref(), "conformance", &[]);
    for upstream_era in ["2025-11-25", "2026-07-28"] {
        let (gateway, server) = conformance_gateway(&http, upstream_era).await;
        for era in ERAS {
            let what = format!("{upstream_era} upstream, {era:?} client");
            let user = User::default();
            let client = client(era, &server, &user).await;
            let call = client.call_tool("conf_test_input_required_result_multi_round", ());
            assert_eq!(within(&what, call).await.unwrap().text(), "Ada likes blue", "{what}");
            assert_eq!(
                user.asked(),
                ["Step 1: What is your name?", "Step 2: What is your favorite color?"],
                "{what}: each question asked once"
            );
            let call = client.call_tool("conf_test_elicitation", json!({"message": "Who are you?"}));
            let text = within(&what, call).await.unwrap().text();
            assert!(text.starts_with("User response: action=accept"), "{what}: {text}");
            assert!(text.contains("ada@example.com"), "{what}: {text}");
            client.close().await;
        }
        gateway.shutdown().await;
    }
}

#[tokio::test]
async fn a_client_that_cannot_answer_forms_gets_the_upstream_s_answer_to_a_cancel() {
    let text = format!("[[upstream]]\nname = \"old\"\ncommand = [{}]\nera = \"2025-11-25\"\n", toml_string(COMBINED));
    let gateway = Gateway::from_config(Config::parse(&text, "test.toml").unwrap()).unwrap();
    let server = within("gateway start", gateway.start(gateway.server_builder())).await.unwrap();
    for era in ERAS {
        let client = Client::builder("no-forms", "1").protocol_era(era).connect_in_process(&server).await.unwrap();
        let result = within("call", client.call_tool("old_create_project", ())).await;
        // The upstream asked; the gateway could not ask this client, and told the upstream the
        // question was cancelled: the upstream's own answer to a cancel comes back.
        let text = result.map(|r| r.text()).unwrap_or_else(|e| e.to_string());
        assert!(!text.contains("Created project"), "{era:?}: {text}");
        client.close().await;
    }
    gateway.shutdown().await;
}

/// A user who consents to every URL and does what the page asks (presses its button), which
/// completes the flow on the upstream.
#[derive(Clone, Default)]
struct Visitor {
    asked: Arc<Mutex<Vec<String>>>,
}

impl ElicitationHandler for Visitor {
    fn modes(&self) -> ElicitationModes {
        ElicitationModes::ALL
    }

    async fn elicit(&self, request: ElicitationRequest) -> ElicitResult {
        self.asked.lock().unwrap().push(request.message().to_owned());
        let Some(url) = request.as_url() else { return ElicitResult::decline() };
        let page = url.url.clone();
        tokio::spawn(async move {
            let status = crate::support::press_authorize(&page).await;
            assert!(status.is_success(), "{page}: {status}");
        });
        ElicitResult::accept_url()
    }
}

/// One gateway in front of one `elicitation` server of `era`, mounted as `ex`.
async fn one_upstream(era: &str) -> (Gateway, typed_mcp::Server) {
    let text = format!("[[upstream]]\nname = \"ex\"\ncommand = [{}]\nera = \"{era}\"\n", toml_string(COMBINED));
    let gateway = Gateway::from_config(Config::parse(&text, "test.toml").unwrap()).unwrap();
    let server = within("gateway start", gateway.start(gateway.server_builder())).await.unwrap();
    (gateway, server)
}

#[tokio::test]
async fn a_url_flow_required_with_32042_is_completed_and_the_call_retried_in_every_combination() {
    for upstream_era in ["2025-11-25", "2026-07-28"] {
        for era in ERAS {
            let what = format!("{upstream_era} upstream, {era:?} client");
            let (gateway, server) = one_upstream(upstream_era).await;
            let visitor = Visitor::default();
            let client = Client::builder("gateway-test", "1")
                .protocol_era(era)
                .elicitation(visitor.clone())
                .connect_in_process(&server)
                .await
                .unwrap();
            if upstream_era == "2025-11-25" && era == ProtocolEra::Y2025 {
                // The upstream's -32042 reaches the client as it is.
                let error = within(&what, client.call_tool("ex_protected_action", ())).await.unwrap_err();
                assert_eq!(error.code(), Some(-32042), "{what}: {error}");
            }
            // The client completes the flow and retries; in a session it waits for
            // `notifications/elicitation/complete`, which the gateway passes on.
            let done = within(&what, client.call_tool_with_url_elicitation("ex_protected_action", ())).await;
            assert_eq!(done.unwrap().text(), "Protected action completed: you are authorized.", "{what}");
            let asked = visitor.asked.lock().unwrap().clone();
            assert!(
                asked.iter().all(|m| m == "Authorize the example app before using this action."),
                "{what}: {asked:?}"
            );
            assert!(!asked.is_empty(), "{what}: the user was asked");
            client.close().await;
            gateway.shutdown().await;
        }
    }
}

#[tokio::test]
async fn a_url_mode_elicitation_reaches_a_client_of_either_era() {
    for upstream_era in ["2025-11-25", "2026-07-28"] {
        let (gateway, server) = one_upstream(upstream_era).await;
        for era in ERAS {
            let what = format!("{upstream_era} upstream, {era:?} client");
            let visitor = Visitor::default();
            let client = Client::builder("gateway-test", "1")
                .protocol_era(era)
                .elicitation(visitor.clone())
                .connect_in_process(&server)
                .await
                .unwrap();
            let started = within(&what, client.call_tool("ex_auth_via_url", ())).await.unwrap().text();
            assert!(started.starts_with("Authorization flow "), "{what}: {started}");
            assert_eq!(*visitor.asked.lock().unwrap(), ["Authorize the example app to act for you."], "{what}");
            client.close().await;
        }
        gateway.shutdown().await;
    }
}
