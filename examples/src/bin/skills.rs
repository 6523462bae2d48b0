//! A skills server: serves the agent skills of a folder (the `io.modelcontextprotocol/skills`
//! extension), by default `examples/skills/` of this repository, another with `--dir PATH`.
//! Each skill is a folder with a `SKILL.md` and the files it refers to: `release-notes` has a
//! subfolder of references and a script, `team/code-review` is grouped under `team/`. Hosts
//! list them with `skills/list`, read their files as `skill://` resources checked against
//! their digests, and browse their folders with `resources/directory/read`. A skill that
//! breaks a rule (a name that is not its folder's, no description) stops the program at start
//! with the file and the rule. With `--watch`, a change to the folder is served within a
//! second and announced to clients (`notifications/resources/list_changed`). It needs typed-mcp's features `skills`, `http` and `otel-otlp`,
//! besides the default ones.
//!
//! Run it with `cargo run -p examples --bin skills` (stdio), or start it with `--port N` (or
//! `PORT=N`) to serve Streamable HTTP at `http://127.0.0.1:N/mcp`. Logs go to stderr
//! (`RUST_LOG`, default `info`).
//!
//! Try it, from the repository's root after `cargo build -p examples`:
//!
//! ```sh
//! npx @modelcontextprotocol/inspector@2.12.0 --cli target/debug/skills --method resources/read --uri skill://release-notes/SKILL.md
//! ```
//!
//! reads the `SKILL.md` of `release-notes`: `"mimeType": "text/markdown"`.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::Duration;

use tracing_subscriber::EnvFilter;
use typed_mcp::prelude::*;
use typed_mcp::skills::Skills;

/// The folder of skills: `--dir PATH`, else the one beside this example's sources.
fn skills_folder() -> Result<PathBuf, String> {
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        if let Some(path) = arg.strip_prefix("--dir=") {
            return Ok(path.into());
        }
        if arg == "--dir" {
            return args.next().map(PathBuf::from).ok_or_else(|| "`--dir` needs a folder".to_owned());
        }
    }
    Ok(PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/skills")))
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // Logs go to stderr: over stdio, stdout carries the protocol.
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .with_env_filter(EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info")))
        .init();
    let otlp = typed_mcp::telemetry::otlp_from_env()?;
    let folder = skills_folder()?;
    let mut builder = Server::builder("skills", env!("CARGO_PKG_VERSION"))
        .title("Skills")
        .instructions("Agent skills: list them with skills/list, then read a skill's SKILL.md when it fits the task.")
        .skills(if std::env::args().any(|a| a == "--watch") {
            Skills::dir(&folder).watch(Duration::from_secs(1))
        } else {
            Skills::dir(&folder)
        });
    if let Some(otlp) = &otlp {
        builder = builder.telemetry(otlp.telemetry());
    }
    // A skill that breaks a rule is an error here, naming the file and the rule.
    let server = builder.build()?;
    tracing::info!(folder = %folder.display(), "serving skills");
    // `--port N` (or `PORT`): Streamable HTTP at http://127.0.0.1:N/mcp; otherwise stdio.
    tokio::select! {
        served = server.serve_stdio_or_http() => served?,
        () = typed_mcp::telemetry::shutdown_signal() => {}
    }
    drop(otlp);
    Ok(())
}
