//! The benchmark server, written with the official `rmcp` crate: `echo {text}` and `form`,
//! which elicits a three-field form and returns what the user entered.
//!
//! `rmcp-server` serves stdio; `rmcp-server --http 0` serves Streamable HTTP on a free loopback
//! port and prints that port as its first line. With `--stateless` too, it serves Streamable
//! HTTP without sessions (`legacy_session_mode: false`), answering plain calls with a JSON body
//! (`json_response: true`): rmcp's best configuration for stateless requests.

use std::sync::Arc;

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{ServerCapabilities, ServerConfig};
use rmcp::service::ElicitationError;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{Peer, RoleServer, ServerHandler, ServiceExt, tool, tool_handler, tool_router};
use schemars::JsonSchema;
use serde::Deserialize;

/// The arguments of `echo`.
#[derive(Debug, Deserialize, JsonSchema)]
struct EchoArgs {
    /// The text to send back.
    text: String,
}

/// The form `form` asks for.
#[derive(Debug, Deserialize, JsonSchema)]
struct Contact {
    /// Your name.
    name: String,
    /// Your age in years.
    age: u32,
    /// Send me the newsletter.
    subscribe: bool,
}

rmcp::elicit_safe!(Contact);

#[derive(Debug, Clone)]
struct Bench {
    tool_router: ToolRouter<Self>,
}

#[tool_router]
impl Bench {
    fn new() -> Self {
        Bench { tool_router: Self::tool_router() }
    }

    /// Returns the text it is given.
    #[tool]
    fn echo(&self, Parameters(EchoArgs { text }): Parameters<EchoArgs>) -> String {
        text
    }

    /// Asks the user for their contact details and returns them.
    #[tool]
    async fn form(&self, peer: Peer<RoleServer>) -> Result<String, String> {
        let label = "contact"; // bench: edited line
        match peer.elicit::<Contact>("Please enter your contact details.").await {
            Ok(Some(c)) => Ok(format!("{label}: {} ({}), newsletter: {}", c.name, c.age, c.subscribe)),
            Ok(None) | Err(ElicitationError::UserDeclined | ElicitationError::UserCancelled) => {
                Ok(format!("{label}: none given"))
            }
            Err(e) => Err(e.to_string()),
        }
    }
}

// The router built once in `new`, not rebuilt per call (the attribute's default).
#[tool_handler(router = self.tool_router)]
impl ServerHandler for Bench {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let stateless = args.iter().any(|a| a == "--stateless");
    let port = args.iter().position(|a| a == "--http").and_then(|i| args.get(i + 1));
    match port {
        Some(port) => {
            let listener = tokio::net::TcpListener::bind(("127.0.0.1", port.parse::<u16>()?)).await?;
            println!("{}", listener.local_addr()?.port());
            let config = if stateless {
                StreamableHttpServerConfig::default().with_legacy_session_mode(false).with_json_response(true)
            } else {
                StreamableHttpServerConfig::default()
            };
            let service =
                StreamableHttpService::new(|| Ok(Bench::new()), Arc::new(LocalSessionManager::default()), config);
            // Without TCP_NODELAY an SSE response written in several pieces waits for the
            // client's delayed ACK (~40 ms) between them; rmcp gets its best configuration here.
            let listener = axum::serve::ListenerExt::tap_io(listener, |tcp| {
                let _ = tcp.set_nodelay(true);
            });
            axum::serve(listener, axum::Router::new().nest_service("/mcp", service)).await?;
        }
        None if args.is_empty() => {
            Bench::new().serve(rmcp::transport::stdio()).await?.waiting().await?;
        }
        None => return Err("usage: rmcp-server [--http PORT [--stateless]]".into()),
    }
    Ok(())
}
