use typed_mcp::prelude::*;

/// Items.
#[resource("test://items/{ids*}")]
fn items(ids: String) -> String {
    ids
}

fn main() {}
