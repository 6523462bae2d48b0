//! A notes server: resources (a static index and a URI template per note) with subscriptions,
//! a prompt with argument completion, tools that change notes and announce it, logging, and
//! requests to the client (sampling its model, listing its roots). It needs typed-mcp's
//! features `http` and `otel-otlp`, besides the default ones.
//!
//! Run it with `cargo run -p examples --bin notes` (stdio), or start it with `--port N` (or
//! `PORT=N`) to serve Streamable HTTP at `http://127.0.0.1:N/mcp`; then point any MCP host at
//! it. The notes live in the process's memory. Logs go to stderr (`RUST_LOG`, default `info`).
//!
//! Try it, from the repository's root after `cargo build -p examples`:
//!
//! ```sh
//! npx @modelcontextprotocol/inspector@2.12.0 --cli target/debug/notes --method resources/read --uri notes://index
//! ```
//!
//! reads the index, which names the one note there is at first: `"text": "welcome"`.

use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::sync::Mutex;

use tracing_subscriber::EnvFilter;
use typed_mcp::prelude::*;
use typed_mcp::protocol::{CreateMessageParams, SamplingMessage};
use typed_mcp::server::{ClientRequestError, CompletionCall};

/// The notes, by name.
#[derive(Default)]
struct Notes(Mutex<BTreeMap<String, String>>);

impl Notes {
    fn names(&self) -> Vec<String> {
        self.0.lock().map(|n| n.keys().cloned().collect()).unwrap_or_default()
    }

    fn get(&self, name: &str) -> Option<String> {
        self.0.lock().ok()?.get(name).cloned()
    }

    /// Stores a note; `Some(true)` when it is new, `None` when the store is unavailable.
    fn write(&self, name: &str, text: String) -> Option<bool> {
        Some(self.0.lock().ok()?.insert(name.to_owned(), text).is_none())
    }
}

/// The names of every note, one per line.
#[resource("notes://index", name = "index", mime_type = "text/plain")]
fn index(notes: State<Notes>) -> String {
    notes.names().join("\n")
}

/// One note.
#[resource("notes://{name}", name = "note", mime_type = "text/markdown")]
fn note(name: String, notes: State<Notes>) -> Option<String> {
    notes.get(&name)
}

/// Writes a note (replacing one of the same name) and tells subscribers.
///
/// # Arguments
/// * `name` - The note's name.
/// * `text` - Its text, in Markdown.
#[tool(idempotent)]
async fn write_note(ctx: Context, notes: State<Notes>, name: String, text: String) -> String {
    let Some(created) = notes.write(&name, text) else {
        return "the notes are unavailable".into();
    };
    ctx.info(format!("{} note `{name}`", if created { "created" } else { "updated" })).await;
    let server = ctx.server_handle();
    server.notify_resource_updated(&format!("notes://{name}")).await;
    if created {
        server.notify_resource_updated("notes://index").await;
    }
    format!("saved `{name}`")
}

/// Asks the client's model for a title for a note.
///
/// # Arguments
/// * `name` - The note to title.
#[tool(read_only)]
async fn suggest_title(ctx: Context, notes: State<Notes>, name: String) -> Result<String, ClientRequestError> {
    let text = notes.get(&name).unwrap_or_default();
    let params = CreateMessageParams::new(vec![SamplingMessage::user(format!("Suggest a title for:\n{text}"))], 30)
        .system_prompt("Answer with the title only.");
    let answer = ctx.sample(params).await?;
    Ok(format!("{} suggests: {}", answer.model, answer.text().unwrap_or_default()))
}

/// Lists the directories the client lets the server work in (its roots).
#[tool(read_only)]
async fn workspaces(ctx: Context) -> Result<String, ClientRequestError> {
    let roots = ctx.roots().await?;
    Ok(roots
        .iter()
        .map(|r| format!("{} ({})", r.uri, r.name.as_deref().unwrap_or("unnamed")))
        .collect::<Vec<_>>()
        .join("\n"))
}

/// Asks the model to summarize a note.
///
/// # Arguments
/// * `name` - The note to summarize.
/// * `style` - How: `bullets` or `prose`.
#[prompt(title = "Summarize a note")]
fn summarize(notes: State<Notes>, name: String, style: Option<String>) -> Result<Vec<PromptMessage>, ErrorObject> {
    let text = notes.get(&name).ok_or_else(|| ErrorObject::invalid_params(format!("no note is named `{name}`")))?;
    let style = style.unwrap_or_else(|| "prose".into());
    Ok(vec![
        PromptMessage::resource(
            Role::User,
            ResourceContents::text(format!("notes://{name}"), Some("text/markdown".into()), text),
        ),
        PromptMessage::user(format!("Summarize the note above as {style}.")),
    ])
}

/// Suggests note names starting with what was typed.
fn note_names() -> Completer {
    Completer::new(|call: CompletionCall| async move {
        let names = call.ctx.state::<Notes>().map(|n| n.names()).unwrap_or_default();
        Ok::<_, ErrorObject>(names.into_iter().filter(|n| n.starts_with(&call.value)).collect::<Vec<_>>())
    })
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // Logs go to stderr: over stdio, stdout carries the protocol.
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .with_env_filter(EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info")))
        .init();
    let notes = Notes::default();
    notes.write("welcome", "# Welcome\n\nWrite notes with `write_note`.".into());
    // Traces and metrics go over OTLP when OTEL_EXPORTER_OTLP_ENDPOINT is set (the other
    // standard OTEL_* variables apply), and are flushed when the program stops.
    let otlp = typed_mcp::telemetry::otlp_from_env()?;
    let server = Server::builder("notes", env!("CARGO_PKG_VERSION"))
        .title("Notes")
        .instructions("Notes as resources (`notes://{name}`); write them with `write_note`.")
        .state(notes)
        .tools(tools![write_note, suggest_title, workspaces])
        .resources(resources![index, note])
        .resource_subscriptions()
        .prompts(prompts![summarize])
        .complete_prompt_argument("summarize", "name", note_names())
        .complete_prompt_argument("summarize", "style", Completer::values(["bullets", "prose"]))
        .complete_template_variable("notes://{name}", "name", note_names())
        .default_log_level(LoggingLevel::Info)
        .telemetry(typed_mcp::telemetry::Telemetry::global())
        .build()?;
    // `--port N` (or `PORT`): Streamable HTTP at http://127.0.0.1:N/mcp; otherwise stdio.
    tokio::select! {
        served = server.serve_stdio_or_http() => served?,
        () = typed_mcp::telemetry::shutdown_signal() => {}
    }
    drop(otlp);
    Ok(())
}
