//! An MCP App: a task board whose view (an HTML page the host renders next to the tool's result)
//! lists the tasks, lets the person reorder them and add one, and calls the server's tools
//! through the host. Beside it, an elicitation: `plan_task` asks for a few fields in a form,
//! which is all a form is for; the board is what a form cannot do.
//!
//! - `show_board` opens the view (`#[tool(ui = "ui://…")]`) and answers in plain text too, for
//!   hosts that do not render apps.
//! - `add_task` is for the model and the view alike; `move_task` only for the view
//!   (`visibility = "app"`: hosts leave it out of the model's tools).
//! - The view, `apps/board.html`, is compiled in (`include_str!`); with `--view-from-disk` it
//!   is read from that file at each render instead, so an edit shows without a rebuild.
//!
//! It needs typed-mcp's features `http` and `otel-otlp`, besides the default ones. Run it with
//! `cargo run -p examples --bin apps -- --port 8080`: `--port N` (or `PORT=N`) serves Streamable
//! HTTP at `http://127.0.0.1:N/mcp`; without it, stdio. Then add it to a host that renders MCP
//! Apps (the guide's chapter on apps lists some and shows how). Logs go to stderr (`RUST_LOG`,
//! default `info`).
//!
//! Try it, from the repository's root after `cargo build -p examples`: with
//!
//! ```sh
//! target/debug/apps --port 8080
//! ```
//!
//! running, in another terminal
//!
//! ```sh
//! npx @modelcontextprotocol/inspector@2.12.0 --cli http://127.0.0.1:8080/mcp --method tools/call --tool-name show_board --app-info
//! ```
//!
//! shows the view `show_board` opens: `"resourceUri":"ui://task-board/board.html"`.

use std::io::IsTerminal;
use std::sync::Mutex;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tracing_subscriber::EnvFilter;
use typed_mcp::prelude::*;
use typed_mcp::resource::AppResource;

/// The view's URI, shared by the tool that shows it and the resource that serves it.
const BOARD_VIEW: &str = "ui://task-board/board.html";

/// One task.
#[derive(Debug, Clone, Serialize)]
struct Task {
    id: u32,
    title: String,
    priority: Priority,
}

/// How urgent a task is.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema, Elicit)]
#[serde(rename_all = "lowercase")]
enum Priority {
    /// Low
    Low,
    /// Normal
    Normal,
    /// High
    High,
}

/// The board: tasks in order, first on top.
#[derive(Default)]
struct Board {
    tasks: Mutex<(u32, Vec<Task>)>,
}

impl Board {
    fn with(&self, change: impl FnOnce(&mut u32, &mut Vec<Task>) -> String) -> CallToolResult {
        let Ok(mut guard) = self.tasks.lock() else {
            return CallToolResult::error_text("the board is unavailable");
        };
        let (next, tasks) = &mut *guard;
        let said = change(next, tasks);
        // Plain text for the model and for hosts without apps; the tasks as data for the view.
        let lines: Vec<String> = tasks
            .iter()
            .enumerate()
            .map(|(i, t)| format!("{}. {} (#{}, {:?})", i + 1, t.title, t.id, t.priority))
            .collect();
        let text = if lines.is_empty() {
            format!("{said}\nThe board is empty.")
        } else {
            format!("{said}\n{}", lines.join("\n"))
        };
        CallToolResult {
            content: vec![Content::text(text.trim_start().to_owned())],
            structured_content: Some(serde_json::json!({ "tasks": tasks })),
            ..Default::default()
        }
    }

    fn add(&self, title: String, priority: Priority) -> CallToolResult {
        self.with(|next, tasks| {
            *next += 1;
            let said = format!("Added “{title}” (#{next}).");
            tasks.push(Task { id: *next, title, priority });
            said
        })
    }
}

/// Shows the task board, in order.
#[tool(ui = "ui://task-board/board.html", read_only)]
fn show_board(board: State<Board>) -> CallToolResult {
    board.with(|_, tasks| format!("The board has {} task(s):", tasks.len()))
}

/// Adds a task at the bottom of the board.
///
/// # Arguments
/// * `title` - What the task is.
/// * `priority` - `low`, `normal` (the default) or `high`.
#[tool]
fn add_task(board: State<Board>, title: String, priority: Option<Priority>) -> Result<CallToolResult, ErrorObject> {
    let title = title.trim().to_owned();
    if title.is_empty() {
        return Err(ErrorObject::invalid_params("`title` cannot be empty"));
    }
    Ok(board.add(title, priority.unwrap_or(Priority::Normal)))
}

/// Moves a task to another place on the board (the view calls this when the person reorders).
///
/// # Arguments
/// * `id` - The task.
/// * `position` - Its new place, from 1 (the top).
#[tool(visibility = "app", idempotent)]
fn move_task(board: State<Board>, id: u32, position: usize) -> CallToolResult {
    board.with(|_, tasks| {
        let Some(from) = tasks.iter().position(|t| t.id == id) else {
            return format!("There is no task #{id}.");
        };
        let task = tasks.remove(from);
        let to = position.clamp(1, tasks.len() + 1) - 1;
        let said = format!("Moved “{}” to place {}.", task.title, to + 1);
        tasks.insert(to, task);
        said
    })
}

/// What `plan_task` asks for: a few fields, which a form does well.
#[derive(Deserialize, JsonSchema, Elicit)]
struct TaskDetails {
    /// What the task is.
    #[schemars(length(min = 1, max = 80))]
    title: String,
    /// How urgent it is.
    priority: Priority,
}

/// Plans a task with the person: asks for its title and priority in a form, then adds it.
#[tool]
async fn plan_task(ctx: Context, board: State<Board>) -> Result<CallToolResult, ElicitError> {
    Ok(match ctx.elicit::<TaskDetails>("What should the new task be?").await? {
        Elicitation::Accept(details) => board.add(details.title, details.priority),
        Elicitation::Decline | Elicitation::Cancel => {
            CallToolResult::success(vec![Content::text("No task was added.")])
        }
    })
}

/// The board's view: the page compiled in, or read from disk at each render (`--view-from-disk`).
fn board_view(from_disk: bool) -> ResourceDef {
    let view = if from_disk {
        AppResource::file(BOARD_VIEW, concat!(env!("CARGO_MANIFEST_DIR"), "/apps/board.html"))
    } else {
        AppResource::html(BOARD_VIEW, include_str!("../../apps/board.html"))
    };
    // The page loads nothing and connects nowhere: its policy allows no other origin.
    view.title("Task board").description("The tasks, in order; reorder them and add one.").prefers_border(true).into()
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // Logs go to stderr: over stdio, stdout carries the protocol.
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .with_env_filter(EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info")))
        .init();
    let from_disk = std::env::args().any(|a| a == "--view-from-disk");
    let board = Board::default();
    let _ = board.add("Write the release notes".into(), Priority::High);
    let _ = board.add("Answer the issue about proxies".into(), Priority::Normal);
    // Traces and metrics go over OTLP when OTEL_EXPORTER_OTLP_ENDPOINT is set (the other
    // standard OTEL_* variables apply), and are flushed when the program stops.
    let otlp = typed_mcp::telemetry::otlp_from_env()?;
    let server = Server::builder("apps", env!("CARGO_PKG_VERSION"))
        .title("Task board")
        .instructions("A task board. `show_board` shows it (with an interactive view in hosts that render MCP Apps).")
        .state(board)
        .tools(tools![show_board, add_task, move_task, plan_task])
        .resource(board_view(from_disk))
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
