use typed_mcp::prelude::*;

struct Point {
    x: i64,
}

/// Takes a borrowed string.
#[tool]
fn shout(text: &str) -> String {
    text.to_uppercase()
}

/// Takes a struct without a schema.
#[tool]
fn norm(point: Point) -> i64 {
    point.x.abs()
}

/// Takes a list of structs without a schema.
#[tool]
fn longest(points: Vec<Option<Point>>) -> usize {
    points.len()
}

fn main() {
    let _ = Server::builder("t", "1").tools(tools![shout, norm, longest]);
}
