use typed_mcp::prelude::*;

/// Adds a pair.
#[tool]
fn add((a, b): (i64, i64)) -> i64 {
    a + b
}

/// Ignores its argument.
#[tool]
fn ignore(_: String) {}

fn main() {
    let _ = Server::builder("t", "1").tools(tools![add, ignore]);
}
