use typed_mcp::prelude::*;

/// Several items.
#[resource("test://items/{ids}")]
fn items(ids: Vec<u32>) -> String {
    format!("{ids:?}")
}

fn main() {}
