//! Serving a [`Server`] in this process and talking to it through a [`LineClient`].

use serde_json::{Value, json};
use typed_mcp::Server;

use crate::stdio::LineClient;

/// Serves `server` over an in-memory pipe; returns the client end, not yet initialized.
pub fn serve(server: &Server) -> LineClient {
    let (client_io, server_io) = tokio::io::duplex(1 << 16);
    let (server_read, server_write) = tokio::io::split(server_io);
    let server = server.clone();
    tokio::spawn(async move { server.serve_io(server_read, server_write).await });
    let (client_read, client_write) = tokio::io::split(client_io);
    LineClient::new(client_read, client_write)
}

/// Serves `server` and initializes the session (revision 2025-11-25) with the client
/// `capabilities`; returns the client and the `initialize` result.
pub async fn connect_with(server: &Server, capabilities: Value) -> (LineClient, Value) {
    let mut client = serve(server);
    let init = client
        .result(
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": capabilities, "clientInfo": {"name": "t", "version": "1"}}),
        )
        .await;
    client.notify("notifications/initialized", json!({})).await;
    // A round trip, so the server has registered the session before the test goes on.
    client.result("ping", json!({})).await;
    (client, init)
}

/// Serves `server` and initializes a session whose client declares no capabilities.
pub async fn connect(server: &Server) -> LineClient {
    connect_with(server, json!({})).await.0
}
