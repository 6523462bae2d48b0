//! Every supported shape of `#[resource]`, compiled under strict lints.
#![deny(warnings, missing_docs)]

use typed_mcp::prelude::*;
use typed_mcp::resource::ResourceUri;
use serde::Serialize;

/// Shared storage.
pub struct Store;

/// A profile.
#[derive(Serialize)]
pub struct Profile {
    /// The name.
    pub name: String,
}

/// The readme.
#[resource("file:///README.md", name = "readme", title = "Read me", mime_type = "text/markdown")]
pub fn readme() -> &'static str {
    "# Readme"
}

/// The logo.
#[resource("file:///logo.png", mime_type = "image/png")]
pub async fn logo(_store: State<Store>) -> Vec<u8> {
    vec![0x89]
}

/// One user's profile.
#[resource("users://{org}/{id}/profile{?fields}")]
pub async fn profile(
    org: String,
    id: u64,
    fields: Option<String>,
    ctx: Context,
    uri: ResourceUri,
) -> Result<Option<Json<Profile>>, String> {
    let _ = (ctx.request_id(), uri.0, fields);
    Ok((id > 0).then(|| Json(Profile { name: org })))
}

/// A file by path.
#[resource("files:///{+path}", description = "Any file.")]
pub fn file(path: std::path::PathBuf) -> Vec<ResourceContents> {
    vec![ResourceContents::text(format!("files:///{}", path.display()), None, "x")]
}

/// Builds the server.
pub fn server() -> Result<Server, typed_mcp::BuildError> {
    Server::builder("r", "1").state(Store).resources(resources![readme, logo, profile, file]).build()
}

fn main() {
    let _ = server();
}

/// The view of an MCP App, with every option of one.
#[resource(
    "ui://board/view.html",
    app,
    title = "Board",
    connect_domains = ["https://api.example.com"],
    resource_domains = ["https://*.cdn.example"],
    frame_domains = ["https://player.example"],
    base_uri_domains = ["https://cdn.example"],
    permissions = ["camera", "microphone", "geolocation", "clipboard_write"],
    domain = "board.example",
    prefers_border = false
)]
pub fn board_view() -> &'static str {
    "<!doctype html><p>Board</p>"
}
