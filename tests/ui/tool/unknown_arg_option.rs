use typed_mcp::prelude::*;

/// Moves a point.
#[tool]
fn step(#[arg(rename = "from", default = 0)] x: i64, #[arg] dx: i64) -> i64 {
    x + dx
}

fn main() {
    let _ = Server::builder("t", "1").tools(tools![step]);
}
