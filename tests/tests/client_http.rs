//! Our client over Streamable HTTP against our server (in process on a loopback port, and the
//! elicitation example started with `--port`): JSON and SSE answers, server requests on a
//! request's stream, notifications on the GET stream, DELETE on close, sessionless servers, a
//! session the server forgot, and unreachable endpoints.

use std::time::Duration;

use crate::support::processes::http_server;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use tests::interop::example_binary;
use tests::stdio::within;
use tokio::sync::oneshot;
use typed_mcp::client::http::HttpClientConfig;
use typed_mcp::client::{CancellationToken, Client, ClientError, ElicitationModes, ServerNotification, elicitation_fn};
use typed_mcp::prelude::*;
use typed_mcp::protocol::ElicitResult;
use typed_mcp::testing::{ElicitationScript, ToolResultExt};
use typed_mcp::transport::http::{HttpConfig, StreamableHttp};

#[derive(Deserialize, JsonSchema, Elicit)]
struct Name {
    /// Your name.
    name: String,
    /// Greeting style.
    #[schemars(extend("default" = "Hello"))]
    greeting: String,
}

/// Adds two integers.
#[tool]
async fn add(a: i64, b: i64) -> i64 {
    a + b
}

/// Greets the user by the name they give.
#[tool]
async fn greet(ctx: Context) -> Result<String, String> {
    match ctx.elicit::<Name>("What is your name?").await {
        Ok(Elicitation::Accept(n)) => Ok(format!("{}, {}!", n.greeting, n.name)),
        Ok(other) => Ok(format!("{:?}", other.action())),
        Err(e) => Err(e.to_string()),
    }
}

/// Reports progress and logs while it works.
#[tool]
async fn busy(ctx: Context) -> String {
    ctx.info("starting").await;
    for i in 1..=2 {
        let _ = ctx.progress(f64::from(i), Some(2.0), None).await;
    }
    "busy done".into()
}

/// Says when its future is dropped.
struct DropSignal(tokio::sync::mpsc::UnboundedSender<()>);

impl Drop for DropSignal {
    fn drop(&mut self) {
        let _ = self.0.send(());
    }
}

/// Runs until cancelled, saying nothing meanwhile (so its answer's headers wait too).
#[tool]
async fn hold(dropped: State<tokio::sync::mpsc::UnboundedSender<()>>) -> String {
    let _signal = DropSignal((*dropped).clone());
    std::future::pending::<()>().await;
    "unreachable".into()
}

/// A server on a loopback port, stopped when dropped.
struct Served {
    server: Server,
    dropped: tokio::sync::mpsc::UnboundedReceiver<()>,
    http: StreamableHttp,
    pub(crate) url: String,
    stop: Option<oneshot::Sender<()>>,
}

impl Drop for Served {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

async fn serve(config: HttpConfig) -> Served {
    let (signal, dropped) = tokio::sync::mpsc::unbounded_channel::<()>();
    let server = Server::builder("http-test", "1.0.0")
        .tools(tools![add, greet, busy, hold])
        .state(signal)
        .dynamic_tools()
        .build()
        .unwrap();
    let http = server.streamable_http(config);
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0)).await.unwrap();
    let url = format!("http://127.0.0.1:{}/mcp", listener.local_addr().unwrap().port());
    let (stop, stopped) = oneshot::channel::<()>();
    let serving = http.clone();
    tokio::spawn(async move {
        serving
            .serve(listener, async {
                let _ = stopped.await;
            })
            .await
    });
    Served { server, dropped, http, url, stop: Some(stop) }
}

/// Waits until `check` holds, failing after a few seconds.
async fn eventually(what: &str, mut check: impl FnMut() -> bool) {
    within(what, async {
        while !check() {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await;
}

#[tokio::test]
async fn tools_elicitation_progress_and_logs_over_http() {
    let served = serve(HttpConfig::default()).await;
    let script = ElicitationScript::new().accept(json!({"name": "Ada"})).decline();
    let client = Client::builder("http-test", "1").elicitation(script.clone()).connect_http(&served.url).await.unwrap();
    assert_eq!(client.protocol_version(), "2025-11-25");
    assert_eq!(served.http.session_count(), 1);

    // Plain JSON answer.
    assert_eq!(client.call_tool("add", json!({"a": 40, "b": 2})).await.unwrap().text(), "42");
    // The elicitation travels on the call's SSE stream; the answer is a new POST.
    assert_eq!(client.call_tool("greet", ()).await.unwrap().text(), "Hello, Ada!");
    assert_eq!(client.call_tool("greet", ()).await.unwrap().text(), "Decline");
    script.assert_done();

    client.set_log_level(LoggingLevel::Info).await.unwrap();
    let mut events = client.notifications();
    let (tx, mut progress) = tokio::sync::mpsc::unbounded_channel();
    let result = client
        .tool("busy")
        .on_progress(move |p| {
            let _ = tx.send(p.progress);
        })
        .await
        .unwrap();
    assert_eq!(result.text(), "busy done");
    let mut steps = Vec::new();
    while let Ok(p) = progress.try_recv() {
        steps.push(p);
    }
    assert_eq!(steps, [1.0, 2.0]);
    assert!(matches!(events.try_recv(), Ok(ServerNotification::Log(l)) if l.data == json!("starting")));

    // A change announced outside any request arrives on the GET stream.
    let schema = json!({"type": "object"}).as_object().unwrap().clone();
    let late = ToolDef::new("late", schema, |_| async { Ok::<_, ErrorObject>(CallToolResult::success(vec![])) });
    // (The client opened the GET stream before its first request after initialization.)
    served.server.add_tool(late).await.unwrap();
    loop {
        match within("tools/list_changed", events.recv()).await.unwrap() {
            ServerNotification::ToolListChanged => break,
            _ => continue,
        }
    }

    // Closing deletes the session on the server.
    client.close().await;
    eventually("the session to be deleted", || served.http.session_count() == 0).await;
    assert_eq!(client.ping().await, Err(ClientError::Closed));
}

#[tokio::test]
async fn a_silent_call_holds_up_nothing_and_can_be_cancelled() {
    let mut served = serve(HttpConfig::default()).await;
    let client = Client::builder("http-test", "1").connect_http(&served.url).await.unwrap();
    let token = CancellationToken::new();
    let held = tokio::spawn({
        let client = client.clone();
        let token = token.clone();
        async move { client.tool("hold").cancel_on(token).await }
    });
    eventually("the call to be in flight", || served.http.request_streams() > 0).await;
    // Other calls go through while the server says nothing about the first.
    let sum = within("a concurrent call", client.call_tool("add", json!({"a": 1, "b": 1}))).await.unwrap();
    assert_eq!(sum.text(), "2");
    token.cancel();
    assert_eq!(within("the cancelled call", held).await.unwrap(), Err(ClientError::Cancelled));
    within("the server to drop the tool", served.dropped.recv()).await;
    client.close().await;
}

#[tokio::test]
async fn sessionless_servers_work_without_sessions() {
    let served = serve(HttpConfig::default().sessionless(true)).await;
    let client = Client::builder("http-test", "1").connect_http(&served.url).await.unwrap();
    assert_eq!(client.call_tool("add", json!({"a": 1, "b": 2})).await.unwrap().text(), "3");
    client.ping().await.unwrap();
    client.close().await;
}

#[tokio::test]
async fn a_session_the_server_forgot_closes_the_client() {
    let served = serve(HttpConfig::default().idle_timeout(Duration::from_millis(200))).await;
    let client = Client::builder("http-test", "1").connect_http(&served.url).await.unwrap();
    eventually("the idle session to expire", || served.http.session_count() == 0).await;
    let err = client.call_tool("add", json!({"a": 1, "b": 2})).await.unwrap_err();
    assert!(matches!(err, ClientError::Transport(ref m) if m.contains("404")), "{err:?}");
    within("the client to close", client.closed()).await;
    assert_eq!(client.ping().await, Err(ClientError::Closed));
}

#[tokio::test]
async fn unreachable_endpoints_and_bad_urls() {
    let port = {
        let l = std::net::TcpListener::bind(("127.0.0.1", 0)).unwrap();
        l.local_addr().unwrap().port()
    };
    let refused = Client::builder("http-test", "1").connect_http(&format!("http://127.0.0.1:{port}/mcp")).await;
    assert!(matches!(refused, Err(ClientError::Transport(_))), "{refused:?}");
    let bad = Client::builder("http-test", "1").connect_http("not a url").await;
    assert!(matches!(bad, Err(ClientError::Transport(_))), "{bad:?}");
    let ftp = Client::builder("http-test", "1").connect_http("ftp://127.0.0.1/mcp").await;
    assert!(matches!(ftp, Err(ClientError::Transport(_))), "{ftp:?}");
    // A server that is not MCP: an HTTP error, reported as such.
    let served = serve(HttpConfig::default()).await;
    let wrong_path = served.url.replace("/mcp", "/elsewhere");
    let not_found = Client::builder("http-test", "1").connect_http(&wrong_path).await;
    assert!(matches!(not_found, Err(ClientError::Transport(_) | ClientError::Rpc(_))), "{not_found:?}");
}

#[tokio::test]
async fn extra_headers_reach_the_server() {
    // The server refuses an Origin it does not know: proof the header was sent.
    let served = serve(HttpConfig::default()).await;
    let config = HttpClientConfig::default()
        .header(reqwest::header::ORIGIN, reqwest::header::HeaderValue::from_static("https://evil.example"));
    let refused = Client::builder("http-test", "1").connect_http_with(&served.url, config).await;
    assert!(matches!(refused, Err(ClientError::Rpc(ref e)) if e.code == -32600), "{refused:?}");
}

#[tokio::test]
async fn the_url_elicitation_and_shared_examples_over_http() {
    let url_example = http_server(&example_binary("url_elicitation"), &["--url-port", "0"]).await;
    let shared = http_server(&example_binary("shared"), &[]).await;
    let user = || {
        elicitation_fn(ElicitationModes::ALL, |request| async move {
            match request.as_url() {
                Some(url) => {
                    let page = url.url.clone();
                    tokio::spawn(async move { crate::support::press_authorize(&page).await });
                    ElicitResult::accept_url()
                }
                None => request.as_form().map_or_else(ElicitResult::decline, |form| {
                    let mut content = form.defaults();
                    content.insert("projectName".into(), json!("over-http"));
                    form.accept(content).unwrap_or_else(|_| ElicitResult::cancel())
                }),
            }
        })
    };
    let forms = Client::builder("http-test", "1").elicitation(user()).connect_http(&shared.url).await.unwrap();
    let created = forms.call_tool("create_project", ()).await.unwrap();
    assert_eq!(created.text(), "Created project 'over-http'");
    forms.close().await;
    let client = Client::builder("http-test", "1").elicitation(user()).connect_http(&url_example.url).await.unwrap();
    let started = within("auth_via_url", client.call_tool("auth_via_url", ())).await.unwrap();
    assert!(started.text().starts_with("Authorization flow "), "{}", started.text());
    let done = within("the URL flow", client.call_tool_with_url_elicitation("protected_action", ())).await.unwrap();
    assert_eq!(done.text(), "Protected action completed: you are authorized.");
    client.close().await;
}
