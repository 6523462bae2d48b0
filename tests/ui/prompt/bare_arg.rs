use mcp_core::prelude::*;

/// Reviews.
#[prompt]
fn review(#[arg] code: String) -> String {
    code
}

fn main() {}
