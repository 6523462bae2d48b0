//! The gateway relays its upstreams' tools, prompts and resources, each upstream's tools and
//! prompts under its prefix, to clients of both eras; the `mcp-gateway` program serves a
//! configuration file over stdio and Streamable HTTP. The upstreams are our own servers: the
//! `elicitation` server (`src/bin/combined.rs`) over stdio, the conformance server
//! (`src/bin/conformance.rs`) over HTTP.

use serde_json::json;
use tests::gateway::{gateway_binary, toml_string, write_config};
use tests::stdio::within;
use typed_mcp::client::{Client, ProtocolEra};
use typed_mcp::testing::ToolResultExt;
use typed_mcp_gateway::{Config, Gateway, GatewayError};

use crate::support::listening::Listening;
use crate::support::servers::{COMBINED, CONFORMANCE};

/// A configuration with our `elicitation` server (`src/bin/combined.rs`) over stdio as
/// upstream `ex`, plus `extra`.
fn stdio_config(extra: &str) -> Config {
    let text = format!("[[upstream]]\nname = \"ex\"\ncommand = [{}]\n{extra}", toml_string(COMBINED));
    Config::parse(&text, "test.toml").unwrap()
}

async fn client_in(era: ProtocolEra, server: &typed_mcp::Server) -> Client {
    Client::builder("gateway-test", "1").protocol_era(era).connect_in_process(server).await.unwrap()
}

#[tokio::test]
async fn a_stdio_and_an_http_upstream_are_relayed_under_their_prefixes_in_both_eras() {
    let http = Listening::start(CONFORMANCE.as_ref(), "conformance", &[]);
    let gateway =
        Gateway::from_config(stdio_config(&format!("\n[[upstream]]\nname = \"conf\"\nurl = \"{}\"\n", http.url)))
            .unwrap();
    let server = within("gateway start", gateway.start(gateway.server_builder())).await.unwrap();
    assert!(gateway.upstreams().iter().all(|u| u.is_connected()));
    for era in [ProtocolEra::Y2025, ProtocolEra::Y2026] {
        let client = client_in(era, &server).await;
        assert_eq!(client.era(), era);
        let tools = client.list_all_tools().await.unwrap();
        let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
        assert!(names.contains(&"ex_create_project_from"), "{names:?}");
        assert!(names.contains(&"conf_test_simple_text"), "{names:?}");
        assert!(names.iter().all(|n| n.starts_with("ex_") || n.starts_with("conf_")), "{names:?}");
        let simple = tools.iter().find(|t| t.name == "conf_test_simple_text").unwrap();
        assert_eq!(simple.annotations.as_ref().and_then(|a| a.read_only_hint), Some(true), "annotations relayed");

        let result = within("call", client.call_tool("conf_test_simple_text", ())).await.unwrap();
        assert_eq!(result.text(), "This is a simple text response for testing.");
        let created = client.call_tool("ex_create_project_from", json!({"projectName": "gw", "framework": "vue"}));
        assert_eq!(within("call", created).await.unwrap().text(), "Created project 'gw' with framework: vue");

        let prompts = client.list_all_prompts().await.unwrap();
        assert!(prompts.iter().any(|p| p.name == "conf_test_prompt_with_arguments"), "{prompts:?}");
        let prompt = client.get_prompt("conf_test_prompt_with_arguments", &[("arg1", "one"), ("arg2", "two")]).await;
        let text = serde_json::to_string(&prompt.unwrap()).unwrap();
        assert!(text.contains("one") && text.contains("two"), "{text}");

        let resources = client.list_all_resources().await.unwrap();
        let first = resources.first().expect("the conformance server has resources");
        let read = client.read_resource(&first.uri).await.unwrap();
        assert!(!read.contents.is_empty(), "{read:?}");
        let templates = client.list_all_resource_templates().await.unwrap();
        assert!(!templates.is_empty(), "templates relayed");
        client.close().await;
    }
    gateway.shutdown().await;
}

#[tokio::test]
async fn the_allow_and_deny_lists_leave_tools_out() {
    let both = "[[upstream]]\nname = \"ex\"\ncommand = [\"x\"]\nallow = [\"a\"]\ndeny = [\"a\"]\n";
    let error = Config::parse(both, "test.toml").unwrap_err().to_string();
    assert_eq!(error, "test.toml:1:1: upstream `ex`: tool `a` is both allowed and denied");
    let gateway = Gateway::from_config(stdio_config("allow = [\"create_project\", \"process_data\"]\n")).unwrap();
    let server = within("gateway start", gateway.start(gateway.server_builder())).await.unwrap();
    let client = client_in(ProtocolEra::Y2025, &server).await;
    let names: Vec<String> = client.list_all_tools().await.unwrap().into_iter().map(|t| t.name).collect();
    assert_eq!(names, ["ex_create_project", "ex_process_data"]);
    let refused = client.call_tool("ex_deploy", ()).await.unwrap_err();
    assert!(refused.to_string().contains("ex_deploy"), "{refused}");
    client.close().await;
    gateway.shutdown().await;
}

#[tokio::test]
async fn two_upstreams_offering_one_name_are_refused_at_start() {
    let config = stdio_config(&format!(
        "prefix = \"\"\n\n[[upstream]]\nname = \"again\"\ncommand = [{}]\nprefix = \"\"\n",
        toml_string(COMBINED)
    ));
    let gateway = Gateway::from_config(config).unwrap();
    let error = within("gateway start", gateway.start(gateway.server_builder())).await.unwrap_err();
    match &error {
        GatewayError::Clash { first, second, .. } => assert_eq!((first.as_str(), second.as_str()), ("ex", "again")),
        other => panic!("expected a clash, got {other}"),
    }
    assert!(error.to_string().contains("give one a prefix"), "{error}");
    gateway.shutdown().await;
}

#[tokio::test]
async fn the_program_serves_stdio() {
    let path = write_config("stdio", &format!("[[upstream]]\nname = \"ex\"\ncommand = [{}]\n", toml_string(COMBINED)));
    let mut command = tokio::process::Command::new(gateway_binary());
    command.arg("--config").arg(&path);
    let client = within("connect", Client::builder("gateway-test", "1").connect_stdio(command)).await.unwrap();
    assert_eq!(client.server_info().name, "mcp-gateway");
    let result = within("call", client.call_tool("ex_create_project_from", json!({"projectName": "p"}))).await.unwrap();
    assert_eq!(result.text(), "Created project 'p' with framework: none");
    client.close().await;
    let _ = std::fs::remove_file(path);
}

#[tokio::test]
async fn the_program_serves_http_on_the_port_it_prints() {
    use tokio::io::AsyncBufReadExt;
    let path = write_config("http", &format!("[[upstream]]\nname = \"ex\"\ncommand = [{}]\n", toml_string(COMBINED)));
    let mut child = tokio::process::Command::new(gateway_binary())
        .args(["--port", "0", "--config"])
        .arg(&path)
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = tokio::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let first = within("LISTENING", lines.next_line()).await.unwrap().unwrap();
    let url = first.strip_prefix("LISTENING ").unwrap_or_else(|| panic!("first line {first:?}"));
    assert!(url.starts_with("http://127.0.0.1:") && url.ends_with("/mcp"), "{url}");
    for era in [ProtocolEra::Auto, ProtocolEra::Y2025] {
        let client =
            within("connect", Client::builder("gateway-test", "1").protocol_era(era).connect_http(url)).await.unwrap();
        let expected = if era == ProtocolEra::Auto { ProtocolEra::Y2026 } else { ProtocolEra::Y2025 };
        assert_eq!(client.era(), expected);
        let result =
            within("call", client.call_tool("ex_create_project_from", json!({"projectName": "p"}))).await.unwrap();
        assert_eq!(result.text(), "Created project 'p' with framework: none");
        client.close().await;
    }
    // Interrupted, the program stops its upstreams before it exits.
    let pid = child.id().unwrap().to_string();
    let _ = tokio::process::Command::new("kill").args(["-INT", &pid]).status().await;
    let status = within("exit", child.wait()).await.unwrap();
    assert!(status.success(), "{status}");
    let _ = std::fs::remove_file(path);
}

#[tokio::test]
async fn the_program_refuses_a_bad_file_naming_its_line() {
    let path = write_config("bad", "[[upstream]]\nname = \"a\"\ncommand = [\"x\"]\ncomand = 1\n");
    let output = tokio::process::Command::new(gateway_binary()).arg("--config").arg(&path).output().await.unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    let expected = format!("{}:4:", path.display());
    assert!(stderr.contains(&expected), "{stderr}");
    assert!(stderr.contains("comand"), "{stderr}");
    let _ = std::fs::remove_file(path);
}
