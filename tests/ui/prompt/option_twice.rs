use mcp_core::prelude::*;

/// Reviews.
#[prompt(title = "A", title = "B")]
fn review(code: String) -> String {
    code
}

fn main() {}
