use typed_mcp::prelude::*;

/// A view whose URI is not a `ui://` URI.
#[tool(ui = "https://board/view.html")]
fn show() -> &'static str {
    "board"
}

/// A view URI that is not a string.
#[tool(ui = 3)]
fn show_number() -> &'static str {
    "board"
}

/// Visible to no one it knows.
#[tool(visibility = "user")]
fn hidden() -> &'static str {
    "hidden"
}

/// An audience that does not exist, in the wire's list form.
#[tool(visibility = ["model", "agent"])]
fn listed() -> &'static str {
    "listed"
}

/// Visible to no one.
#[tool(visibility = [])]
fn nobody() -> &'static str {
    "nobody"
}

/// A misspelt option.
#[tool(visibilty = "app")]
fn misspelt() -> &'static str {
    "misspelt"
}

fn main() {}
