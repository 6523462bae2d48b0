//! # MCP Apps: tools with an interactive view
//!
//! Elicitation asks the person for a flat form. When a tool needs more (a list to reorder, a
//! chart to read, a board to drag cards on), the MCP Apps extension (`io.modelcontextprotocol/ui`)
//! lets it point at an HTML view: the host renders it in a sandboxed iframe next to the tool's
//! result, and the view calls the server's tools through the host. Claude, VS Code, ChatGPT,
//! Goose and the MCP Inspector's web UI render apps.
//!
//! ## Declaring an app
//!
//! Two pieces: a tool that names its view with `ui = "ui://…"`, and the view, a resource at that
//! URI marked `app`:
//!
//! ```rust
//! use typed_mcp::prelude::*;
//!
//! /// Shows the task board.
//! #[tool(ui = "ui://board/view.html", read_only)]
//! fn show_board() -> String {
//!     // What hosts without apps (and the model) read: the tool answers in text as always.
//!     "1. Write the release notes\n2. Answer the issue".to_owned()
//! }
//!
//! /// Moves a task; only the view calls it.
//! #[tool(visibility = "app")]
//! fn move_task(id: u32, position: u32) -> String {
//!     format!("moved #{id} to place {position}")
//! }
//!
//! /// The board's view.
//! #[resource("ui://board/view.html", app, prefers_border)]
//! fn board_view() -> &'static str {
//!     "<!doctype html><p>The board</p>" // in practice: include_str!("board.html")
//! }
//!
//! # fn main() -> Result<(), typed_mcp::BuildError> {
//! let server = Server::builder("board", "1.0.0")
//!     .tools(tools![show_board, move_task])
//!     .resources(resources![board_view])
//!     .build()?;
//! # assert!(server.tools().tools[0].meta.is_some());
//! # Ok(())
//! # }
//! ```
//!
//! - `tools/list` shows `_meta.ui.resourceUri` on `show_board` (and the flat
//!   `_meta["ui/resourceUri"]` key that earlier hosts read), in both eras.
//! - `visibility` says who may call a tool: `"model"`, `"app"`, or both (`["model", "app"]`, the
//!   default). Hosts leave an `"app"` tool out of the model's tools: it is for the view.
//! - The view is served as `text/html;profile=mcp-app`, with its `_meta.ui` both on its entry in
//!   `resources/list` and on the contents `resources/read` returns.
//! - The server declares the extension (`capabilities.extensions["io.modelcontextprotocol/ui"]`)
//!   as soon as a tool or a resource uses it.
//! - `build()` refuses a `ui` URI that is not `ui://`, or that names no resource registered as a
//!   view; the macros refuse what they can see at compile time (a misspelt option, an unknown
//!   audience, view options without `app`, a view that is a URI template).
//!
//! Without macros, the same is [`ToolDef::ui`](crate::ToolDef::ui),
//! [`ToolDef::visibility`](crate::ToolDef::visibility) and
//! [`AppResource`](crate::resource::AppResource) (or [`ResourceDef::app`](crate::ResourceDef::app)
//! on any resource).
//!
//! ## Bundling the view
//!
//! A view is one HTML document with its script and styles inline: hosts load it from the
//! resource's text, not from a web server. Compile it into the program:
//!
//! ```rust
//! use typed_mcp::resource::AppResource;
//! # let html = "<!doctype html>";
//! // let html = include_str!("../apps/board.html");
//! let view = AppResource::html("ui://board/view.html", html).title("Task board");
//! ```
//!
//! While you write it, read it from disk at each render instead, so a reload of the view shows
//! the edit without a rebuild:
//!
//! ```rust
//! use typed_mcp::resource::AppResource;
//! let view = AppResource::file("ui://board/view.html", concat!(env!("CARGO_MANIFEST_DIR"), "/apps/board.html"));
//! ```
//!
//! Inside the view, the page talks to the host with JSON-RPC over `postMessage`: it sends
//! `ui/initialize`, then `ui/notifications/initialized`; the host sends the tool's result
//! (`ui/notifications/tool-result`, with `structuredContent` for the view to draw) and forwards
//! the view's `tools/call` to the server. A few dozen lines of script do it (the `apps` example's
//! `examples/apps/board.html` is one); the `App` class of `@modelcontextprotocol/ext-apps`,
//! bundled into the page, is the other way. Hosts sandbox the iframe, often without
//! `allow-forms`: listen to buttons rather than to a form's `submit`.
//!
//! ## What the view may reach: the content security policy
//!
//! A view reaches no other origin unless it says so; the host builds the iframe's policy from
//! what the view declares, and the browser enforces it:
//!
//! ```rust
//! use typed_mcp::prelude::*;
//!
//! /// The weather view.
//! #[resource(
//!     "ui://weather/view.html",
//!     app,
//!     connect_domains = ["https://api.weather.example"],   // fetch, XHR, WebSocket
//!     resource_domains = ["https://*.cdn.example"],         // scripts, styles, images, fonts
//!     permissions = ["geolocation"],                        // camera, microphone, geolocation, clipboard_write
//! )]
//! fn weather_view() -> &'static str {
//!     "<!doctype html><p>Weather</p>"
//! }
//! # fn main() {}
//! ```
//!
//! `frame_domains` (nested iframes), `base_uri_domains`, `domain` (a dedicated sandbox origin,
//! in the host's format) and `prefers_border` complete the list. Each origin is
//! `scheme://host[:port]`, the host possibly starting with `*.`; anything else (a path, a `;`)
//! is a compile error, or a `build()` error for [`AppResource`](crate::resource::AppResource).
//! Permissions are requests: a view checks that a feature works before relying on it.
//!
//! ## Hosts without apps
//!
//! Most clients render no view. A tool with one is still an ordinary tool to them, so its
//! `content` must make sense alone: say in text what the view would show. A tool can tell
//! whether the client declared the extension with [`apps::client_supports`](crate::apps::client_supports),
//! and answer more briefly when a view will show the detail, but it never leaves `content` out.
//! Put the data the view draws in `structuredContent`.
//!
//! ## A Rust host
//!
//! The client declares the extension with [`ClientBuilder::apps`](crate::client::ClientBuilder::apps)
//! (in `initialize`, or in each request's `_meta` in the 2026-07-28 era), and has what a host
//! needs to render views:
//!
//! ```rust
//! # use typed_mcp::prelude::*;
//! # use typed_mcp::testing;
//! # /// Shows the board.
//! # #[tool(ui = "ui://board/view.html")]
//! # fn show_board() -> &'static str { "the board" }
//! # /// The view.
//! # #[resource("ui://board/view.html", app)]
//! # fn board_view() -> &'static str { "<p>board</p>" }
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # let server = Server::builder("board", "1.0.0").tools(tools![show_board]).resources(resources![board_view]).build()?;
//! let client = testing::client().apps().connect_in_process(&server).await?;
//! let model_tools = client.list_model_tools().await?; // what to offer the model
//! for (tool, ui) in client.list_app_tools().await? {
//!     if let Some(uri) = ui.resource_uri {
//!         let view = client.read_app_view(&uri).await?; // HTML, CSP, permissions
//!         assert_eq!(view.html, "<p>board</p>");
//!         # let _ = (tool, &model_tools);
//!     }
//! }
//! # Ok(())
//! # }
//! ```
//!
//! ## Trying it
//!
//! The [`apps` example](crate::guide::examples) is a task board: `cargo run -p examples --bin
//! apps -- --port 8080` serves it at `http://127.0.0.1:8080/mcp`.
//!
//! - **MCP Inspector**: `npx @modelcontextprotocol/inspector@2.12.0`, connect to the URL (transport
//!   Streamable HTTP), call `show_board`, and open the Apps tab to see the view. With `--cli`, the
//!   Inspector lists the tools and their `_meta.ui` (`--method tools/list`).
//! - **A desktop host**: add the server as a stdio command (`cargo run -p examples --bin apps`,
//!   or the built binary) to a host that renders apps, such as Claude Desktop or VS Code, and
//!   ask it to show the board.
//!
//! Add `--view-from-disk` to the command while you edit `examples/apps/board.html`.
