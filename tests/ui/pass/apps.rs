//! An MCP App declared with the macros: generated code adds no warning under
//! `#![deny(warnings, missing_docs)]`, nor any clippy pedantic lint.
#![deny(warnings, missing_docs)]
#![deny(clippy::pedantic)]

/// The board and its view.
pub mod board {
    use typed_mcp::prelude::*;

    /// Shows the board.
    #[must_use]
    #[tool(ui = "ui://board/view.html", read_only)]
    pub fn show_board() -> String {
        "no task".to_owned()
    }

    /// Moves a task; only the view calls it.
    #[must_use]
    #[tool(visibility = "app")]
    pub fn move_task(id: u32, position: u32) -> String {
        format!("{id} -> {position}")
    }

    /// Summarizes the board, for the model only.
    #[must_use]
    #[tool(visibility = ["model"])]
    pub fn summary() -> &'static str {
        "empty"
    }

    /// The board's view.
    #[must_use]
    #[resource("ui://board/view.html", app, prefers_border)]
    pub fn view() -> &'static str {
        "<!doctype html><p>Board</p>"
    }
}

fn main() {
    use typed_mcp::{resources, tools};
    let server = typed_mcp::Server::builder("apps", "1.0.0")
        .tools(tools![board::show_board, board::move_task, board::summary])
        .resources(resources![board::view])
        .build()
        .expect("the server builds");
    assert_eq!(server.tools().tools.len(), 3);
}
