//! The gateway relays its upstreams' tools, prompts and resources, each upstream's tools and
//! prompts under its prefix, to clients of both eras; the `mcp-gateway` program serves a
//! configuration file over stdio and Streamable HTTP. The upstreams are our own servers: the
//! `elicitation` server (`src/bin/combined.rs`) over stdio, the conformance server
//! (`src/bin/conformance.rs`) over HTTP. What stands in front (the resource server, a rate
//! limit) applies to every upstream.

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

/// The program's runtime threads: one worker over stdio (one client, little work per message:
/// a second worker would mostly hand messages between threads), one per core over HTTP, and
/// as many as `--threads` says; `--threads 0` is refused.
#[cfg(target_os = "linux")]
#[tokio::test]
async fn the_program_runs_as_many_worker_threads_as_it_is_told_one_over_stdio_by_default() {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt};

    /// The runtime's worker threads of process `pid`, by their name.
    fn workers(pid: u32) -> usize {
        std::fs::read_dir(format!("/proc/{pid}/task"))
            .unwrap()
            .filter_map(|task| std::fs::read_to_string(task.ok()?.path().join("comm")).ok())
            .filter(|name| name.trim() == "tokio-rt-worker")
            .count()
    }

    let path =
        write_config("threads", &format!("[[upstream]]\nname = \"ex\"\ncommand = [{}]\n", toml_string(COMBINED)));
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    for (args, expected) in [(&[][..], 1), (&["--threads", "3"][..], 3), (&["--port", "0"][..], cores)] {
        let mut child = tokio::process::Command::new(gateway_binary())
            .arg("--config")
            .arg(&path)
            .args(args)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        // Serving: the answer to `initialize` (stdio), or the address (HTTP).
        let mut stdin = child.stdin.take().unwrap();
        let mut lines = tokio::io::BufReader::new(child.stdout.take().unwrap()).lines();
        if !args.contains(&"--port") {
            let initialize = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
            stdin.write_all(format!("{initialize}\n").as_bytes()).await.unwrap();
        }
        let first = within("first line", lines.next_line()).await.unwrap().unwrap();
        assert!(first.contains("\"result\"") || first.starts_with("LISTENING "), "{args:?}: {first}");
        assert_eq!(workers(child.id().unwrap()), expected, "{args:?}");
        drop(stdin);
        let _ = child.kill().await;
    }
    let output = tokio::process::Command::new(gateway_binary())
        .arg("--config")
        .arg(&path)
        .args(["--threads", "0"])
        .output()
        .await
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("--threads: `0` is not a number above 0"), "{stderr}");
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

/// What the server builder puts in front applies to every upstream: the resource server
/// (a JWT access token for each request, verified against the issuer's keys) and a rate limit
/// of `tools/call` per user, across the gateway's tools of any upstream.
#[tokio::test]
async fn the_resource_server_and_a_rate_limit_stand_in_front_of_the_upstreams() {
    use std::time::Duration;

    use typed_mcp::client::http::HttpClientConfig;
    use typed_mcp::middleware::{RATE_LIMITED, RateLimit};
    use typed_mcp::protocol::Method;
    use typed_mcp::transport::http::HttpConfig;

    use crate::authorization::{Issuer, authorization, good};
    use crate::support::http::Endpoint;

    const LIMIT: u32 = 3;
    let issuer = Issuer::start().await;
    let gateway = Gateway::from_config(stdio_config("")).unwrap();
    let limit = RateLimit::new(LIMIT, Duration::from_secs(3600)).only_methods([Method::ToolsCall]);
    let server = within("gateway start", gateway.start(gateway.server_builder().middleware(limit))).await.unwrap();
    let endpoint = Endpoint::serve(&server, HttpConfig::default().authorization(authorization(&issuer))).await;

    // No token, or a token the issuer did not sign: refused before any upstream is asked.
    for token in [None, Some("not-a-jwt")] {
        let mut request = endpoint.client.post(&endpoint.url).header("accept", "application/json, text/event-stream");
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}});
        let response = request.header("content-type", "application/json").body(body.to_string()).send().await.unwrap();
        assert_eq!(response.status(), reqwest::StatusCode::UNAUTHORIZED, "token {token:?}");
        let challenge = response.headers().get("www-authenticate").map(|v| v.to_str().unwrap().to_owned());
        assert!(challenge.is_some_and(|c| c.starts_with("Bearer")), "a Bearer challenge");
    }

    let connect = |user: &str| {
        let token = good(&issuer.url, user, "notes:read");
        let url = endpoint.url.clone();
        async move {
            let http = HttpClientConfig::default().bearer_token(&token).unwrap();
            Client::builder("gateway-test", "1").connect_http_with(&url, http).await.unwrap()
        }
    };
    let alice = within("alice connects", connect("alice")).await;
    let tools = alice.list_all_tools().await.unwrap();
    assert!(tools.iter().any(|t| t.name == "ex_create_project_from"), "an authorized user sees the upstream's tools");
    let call = || alice.call_tool("ex_create_project_from", json!({"projectName": "gw", "framework": "vue"}));
    for _ in 0..LIMIT {
        assert_eq!(within("call", call()).await.unwrap().text(), "Created project 'gw' with framework: vue");
    }
    let spent = within("call", call()).await.unwrap_err();
    assert_eq!(spent.code(), Some(RATE_LIMITED), "{spent}");
    // Another tool of the same upstream draws on the same budget: the limit is in front.
    let other = within("call", alice.call_tool("ex_process_data", json!({}))).await.unwrap_err();
    assert_eq!(other.code(), Some(RATE_LIMITED), "{other}");
    // A new connection of the same user does not reset it; another user has a budget of his own.
    let alice_again = within("alice again", connect("alice")).await;
    let again = alice_again.call_tool("ex_create_project_from", json!({"projectName": "gw", "framework": "vue"}));
    assert_eq!(within("call", again).await.unwrap_err().code(), Some(RATE_LIMITED));
    let bob = within("bob connects", connect("bob")).await;
    let bobs = bob.call_tool("ex_create_project_from", json!({"projectName": "b", "framework": "vue"}));
    assert_eq!(within("call", bobs).await.unwrap().text(), "Created project 'b' with framework: vue");
    for client in [alice, alice_again, bob] {
        client.close().await;
    }
    gateway.shutdown().await;
}
