use mcp_core::prelude::*;

/// Reviews.
#[prompt(name =)]
fn review(code: String) -> String {
    code
}

fn main() {}
