use typed_mcp::prelude::*;

/// Adds two integers.
#[tool(read_only, name = "add", read_only = false, name = "plus")]
async fn add(a: i64, b: i64) -> i64 {
    a + b
}

fn main() {
    let _ = Server::builder("t", "1").tools(tools![add]);
}
