//! The benchmark server, written with mcp-core: `echo {text}` and `form`, which elicits a
//! three-field form and returns what the user entered.
//!
//! `ours-server` serves stdio; `ours-server --http 0` serves Streamable HTTP on a free loopback
//! port and prints that port as its first line.

use mcp_core::prelude::*;
use mcp_core::transport::http::HttpConfig;
use schemars::JsonSchema;
use serde::Deserialize;

/// The form `form` asks for.
#[derive(Debug, Deserialize, JsonSchema, Elicit)]
struct Contact {
    /// Your name.
    name: String,
    /// Your age in years.
    age: u32,
    /// Send me the newsletter.
    subscribe: bool,
}

/// Returns the text it is given.
///
/// # Arguments
/// * `text` - The text to send back.
#[tool]
fn echo(text: String) -> String {
    text
}

/// Asks the user for their contact details and returns them.
#[tool]
async fn form(ctx: Context) -> Result<String, String> {
    let label = "contact"; // bench: edited line
    match ctx.elicit::<Contact>("Please enter your contact details.").await {
        Ok(Elicitation::Accept(c)) => Ok(format!("{label}: {} ({}), newsletter: {}", c.name, c.age, c.subscribe)),
        Ok(Elicitation::Decline | Elicitation::Cancel) => Ok(format!("{label}: none given")),
        Err(e) => Err(e.to_string()),
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let server = Server::builder("bench-ours", "0.0.0").enable_elicitation().tools(tools![echo, form]).build()?;
    let mut args = std::env::args().skip(1);
    match (args.next().as_deref(), args.next()) {
        (Some("--http"), Some(port)) => {
            let listener = tokio::net::TcpListener::bind(("127.0.0.1", port.parse::<u16>()?)).await?;
            println!("{}", listener.local_addr()?.port());
            server.streamable_http(HttpConfig::default()).serve(listener, std::future::pending()).await?;
        }
        (None, _) => server.serve_stdio().await?,
        _ => return Err("usage: ours-server [--http PORT]".into()),
    }
    Ok(())
}
