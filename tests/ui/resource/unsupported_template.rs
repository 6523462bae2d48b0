use mcp_core::prelude::*;

/// Items.
#[resource("test://items/{ids*}")]
fn items(ids: String) -> String {
    ids
}

fn main() {}
