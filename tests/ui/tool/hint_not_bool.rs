use typed_mcp::prelude::*;

/// Adds two integers.
#[tool(read_only = "yes")]
async fn add(a: i64, b: i64) -> i64 {
    a + b
}

/// Subtracts two integers.
#[tool(idempotent(true))]
async fn sub(a: i64, b: i64) -> i64 {
    a - b
}

fn main() {
    let _ = Server::builder("t", "1").tools(tools![add, sub]);
}
