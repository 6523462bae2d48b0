use mcp_core::prelude::*;

/// Reviews.
#[prompt]
fn review(#[arg(rename = "code")] text: String, code: String) -> String {
    text + &code
}

fn main() {}
