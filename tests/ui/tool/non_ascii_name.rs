use typed_mcp::prelude::*;

/// Greets someone.
#[tool]
fn grüßen(name: String) -> String {
    format!("Grüß dich, {name}!")
}

fn main() {
    let _ = Server::builder("t", "1").tools(tools![grüßen]);
}
