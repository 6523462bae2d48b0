use typed_mcp::prelude::*;

/// A number.
#[resource("test://number")]
fn number() -> u32 {
    7
}

fn main() {}
