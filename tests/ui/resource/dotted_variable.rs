use typed_mcp::prelude::*;

/// A user.
#[resource("users://{user.id}")]
fn user(id: String) -> String {
    id
}

fn main() {}
