use mcp_core::prelude::*;

/// A user.
#[resource("users://{user.id}")]
fn user(id: String) -> String {
    id
}

fn main() {}
