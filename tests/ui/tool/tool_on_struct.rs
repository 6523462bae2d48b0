use mcp_core::prelude::*;

/// Not a function.
#[tool]
struct Add {
    a: i64,
}

fn main() {
    let _ = Add { a: 1 }.a;
}
