//! A whole server session fed a script of lines (`Server::serve_io`, as over stdio): both
//! eras, every method a client may call, answers to the server's own requests (whose ids are
//! `0`, `1`, … in the order it asks), and `_meta` of the 2026 era, through the real dispatch.
//!
//! Checked besides "no panic": the session ends when its input does, and everything it writes
//! is a JSON-RPC message that decodes, answering only ids the script used (or `null`).

#![no_main]
// The forms exist for their schemas and their deserialization; not every field is read.
#![allow(dead_code)]

use std::collections::HashSet;
use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex, OnceLock};
use std::task::{Context as TaskContext, Poll};
use std::time::Duration;

use libfuzzer_sys::fuzz_target;
use typed_mcp::multi_round::state::StateKey;
use typed_mcp::prelude::*;
use typed_mcp::protocol::{CreateMessageParams, Message, RequestId, SamplingMessage};
use typed_mcp::server::CompletionCall;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use tokio::io::AsyncWrite;

#[derive(Deserialize, JsonSchema, Elicit)]
#[serde(rename_all = "lowercase")]
enum Color {
    Red,
    /// A calm colour.
    #[elicit(title = "Sea green")]
    Green,
}

#[derive(Deserialize, JsonSchema, Elicit)]
#[serde(rename_all = "camelCase")]
struct Details {
    /// Name of the project.
    #[schemars(length(min = 1, max = 20))]
    project_name: String,
    #[schemars(email)]
    contact: Option<String>,
    #[schemars(range(min = 1, max = 5))]
    stars: u8,
    colors: Vec<Color>,
    favourite: Option<Color>,
    #[schemars(extend("default" = true))]
    tests: bool,
    ratio: Option<f64>,
}

/// Adds two integers.
#[tool]
fn add(a: i64, b: i64) -> Result<i64, String> {
    a.checked_add(b).ok_or_else(|| "overflow".to_owned())
}

/// Asks for a form, then a confirmation.
#[tool]
async fn form(ctx: Context) -> Result<String, String> {
    let details = match ctx.elicit::<Details>("Details?").await.map_err(|e| e.to_string())? {
        Elicitation::Accept(d) => d,
        _ => return Ok("no".into()),
    };
    let sure = ctx.confirm("Sure?").timeout(Duration::from_secs(60)).await.map_err(|e| e.to_string())?;
    Ok(format!("{} {} {}", details.project_name, details.stars, sure))
}

/// Asks two questions at once.
#[tool]
async fn pair(ctx: Context) -> String {
    let (a, b) = tokio::join!(ctx.elicit_value::<i32>("A?"), ctx.choose("B?", ["x", "y"]));
    format!("{:?} {:?}", a.map(|e| e.accepted()), b.map(|e| e.accepted()))
}

/// Sends the user to a page.
#[tool]
async fn visit(ctx: Context) -> Result<String, String> {
    let answer = ctx.elicit_url("https://example.test/flow?id={elicitationId}", "Go").await;
    Ok(format!("{:?}", answer.map(|a| a.accepted()).map_err(|e| e.to_string())))
}

/// Needs a flow completed first.
#[tool]
fn protected(ctx: Context) -> Result<String, UrlElicitationRequired> {
    let id = ctx.new_url_elicitation_id();
    Err(UrlElicitationRequired::single(&id, format!("https://example.test/{id}"), "Authorize"))
}

/// Samples the client's model, then lists its roots.
#[tool]
async fn ask_model(ctx: Context) -> Result<String, String> {
    let params = CreateMessageParams::new(vec![SamplingMessage::user("hi")], 10);
    let answer = ctx.sample(params).await.map_err(|e| e.to_string())?;
    let roots = ctx.roots().await.map_err(|e| e.to_string())?;
    Ok(format!("{} {}", answer.text().unwrap_or_default(), roots.len()))
}

/// A greeting.
#[prompt]
fn greeting(name: String, times: Option<u8>) -> String {
    name.repeat(usize::from(times.unwrap_or(1)).min(3))
}

/// A static resource.
#[resource("file:///readme", mime_type = "text/plain")]
fn readme() -> &'static str {
    "read me"
}

/// A user's profile.
#[resource("users://{id}/profile{?fields}")]
fn profile(id: u32, fields: Option<String>) -> Option<String> {
    (id < 10).then(|| format!("{id} {}", fields.unwrap_or_default()))
}

/// A file under a root.
#[resource("files://{+path}")]
fn file(path: String) -> String {
    path
}

/// A server of its own for each script, so that nothing one run leaves behind (URL flows of
/// 2026-era requests live for minutes) changes what the next one does.
fn server() -> Server {
    Server::builder("fuzz", "0.0.0")
        .tools(tools![add, form, pair, visit, protected, ask_model])
        .prompts(prompts![greeting])
        .resources(resources![readme, profile, file])
        .resource_subscriptions()
        .complete_prompt_argument("greeting", "name", Completer::values(["ada", "alan", "grace"]))
        .complete_template_variable(
            "users://{id}/profile{?fields}",
            "id",
            Completer::new(
                |call: CompletionCall| async move { Ok::<_, ErrorObject>(vec![format!("{}1", call.value)]) },
            ),
        )
        .page_size(2)
        .request_state_key(StateKey::from_bytes([7; 32]))
        .build()
        .expect("the fuzz server builds")
}

fn runtime() -> &'static tokio::runtime::Runtime {
    static RUNTIME: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a runtime"))
}

/// Collects what the server writes.
#[derive(Clone, Default)]
struct Sink(Arc<Mutex<Vec<u8>>>);

impl AsyncWrite for Sink {
    fn poll_write(self: Pin<&mut Self>, _: &mut TaskContext<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        self.0.lock().expect("sink").extend_from_slice(buf);
        Poll::Ready(Ok(buf.len()))
    }
    fn poll_flush(self: Pin<&mut Self>, _: &mut TaskContext<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
    fn poll_shutdown(self: Pin<&mut Self>, _: &mut TaskContext<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

/// The ids of the requests in the script, as the server must echo them.
fn script_ids(script: &[u8]) -> HashSet<Value> {
    // Only the id is read, as the server reads a frame: the rest may hold what a `Value` cannot
    // (a number out of range in a member nobody reads).
    #[derive(Deserialize)]
    struct IdOnly {
        id: Option<Value>,
    }
    script
        .split(|b| *b == b'\n')
        .filter_map(|line| std::str::from_utf8(line).ok())
        .filter(|line| line.trim_start().starts_with('{'))
        .filter_map(|line| serde_json::from_str::<IdOnly>(line.trim_end_matches('\r')).ok())
        .filter_map(|x| x.id)
        .collect()
}

fuzz_target!(|script: &[u8]| {
    let sink = Sink::default();
    let served = runtime().block_on(async {
        tokio::time::timeout(Duration::from_secs(20), server().serve_io(script, sink.clone())).await
    });
    served.expect("the session ends with its input").expect("serve_io");
    let written = std::mem::take(&mut *sink.0.lock().expect("sink"));
    let text = std::str::from_utf8(&written).expect("the server writes UTF-8");
    let ids = script_ids(script);
    for line in text.lines() {
        let value: Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("the server wrote {line:?}: {e}"));
        assert_eq!(value["jsonrpc"], "2.0", "{line}");
        if value.get("id") == Some(&Value::Null) {
            // An error that cannot name the request it answers.
            assert!(value["error"]["code"].is_i64() && value.get("result").is_none(), "{line}");
            continue;
        }
        let message = Message::decode(line).unwrap_or_else(|e| panic!("the server wrote {line:?}: {e:?}"));
        if let Message::Response(r) = message {
            let id = match &r.id {
                RequestId::Number(n) => Value::from(*n),
                RequestId::String(s) => Value::from(&**s),
            };
            assert!(ids.contains(&id), "answered id {id}, which the script never used: {line}");
        }
    }
});
