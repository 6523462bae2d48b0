use mcp_core::prelude::*;

/// Reviews.
#[prompt(title)]
fn review(code: String) -> String {
    code
}

fn main() {}
