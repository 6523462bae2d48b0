use typed_mcp::prelude::*;

/// One item.
#[resource("test://items/{id}")]
fn item(#[arg(description = "The id.")] id: String) -> String {
    id
}

fn main() {}
