use typed_mcp::prelude::*;

/// One item.
#[resource("test://items/{id}")]
fn item<T>(id: String) -> String {
    id
}

fn main() {}
