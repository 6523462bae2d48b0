use mcp_core::prelude::*;

/// An item.
#[resource("test://items/{item id}")]
fn item() -> &'static str {
    "x"
}

fn main() {}
