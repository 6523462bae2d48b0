use typed_mcp::prelude::*;

/// An item.
#[resource("test://items/{item id}")]
fn item() -> &'static str {
    "x"
}

fn main() {}
