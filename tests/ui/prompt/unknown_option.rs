use mcp_core::prelude::*;

/// Reviews.
#[prompt(nmae = "review")]
fn review(code: String) -> String {
    code
}

fn main() {}
