use typed_mcp::prelude::*;

/// Data of one item.
#[resource("test://template/{id}/data")]
fn item(id: String, format: String) -> String {
    id + &format
}

fn main() {}
