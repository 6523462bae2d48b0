use typed_mcp::prelude::*;

/// Not a function.
#[tool]
struct Add {
    a: i64,
}

fn main() {
    let _ = Add { a: 1 }.a;
}
