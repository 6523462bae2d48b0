use typed_mcp::prelude::*;

/// Adds two integers.
#[tool(name = "add numbers")]
async fn add(a: i64, b: i64) -> i64 {
    a + b
}

/// Says nothing.
#[tool(name = "")]
fn quiet() {}

fn main() {
    let _ = Server::builder("t", "1").tools(tools![add, quiet]);
}
