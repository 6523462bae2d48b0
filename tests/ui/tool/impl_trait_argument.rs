use typed_mcp::prelude::*;

/// Shows a value.
#[tool]
fn show(value: impl std::fmt::Display) -> String {
    value.to_string()
}

fn main() {
    let _ = Server::builder("t", "1").tools(tools![show]);
}
