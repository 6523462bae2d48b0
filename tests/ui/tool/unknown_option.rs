use typed_mcp::prelude::*;

/// Adds two integers.
#[tool(nmae = "add")]
async fn add(a: i64, b: i64) -> i64 {
    a + b
}

fn main() {
    let _ = Server::builder("t", "1").tools(tools![add]);
}
