use typed_mcp::prelude::*;

struct Point {
    x: i64,
}

/// Returns a struct that is not a tool result.
#[tool]
async fn origin() -> Point {
    Point { x: 0 }
}

/// Returns a list of numbers.
#[tool]
fn numbers() -> Vec<i64> {
    vec![1, 2, 3]
}

/// Returns a pair, synchronously, as a result.
#[tool]
fn pair() -> Result<(i64, i64), String> {
    Ok((1, 2))
}

fn main() {
    let _ = Server::builder("t", "1").tools(tools![origin, numbers, pair]);
}
