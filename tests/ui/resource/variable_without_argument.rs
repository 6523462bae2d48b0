use typed_mcp::prelude::*;

/// Data of one item.
#[resource("test://template/{id}/data")]
fn item(ident: String) -> String {
    ident
}

fn main() {}
