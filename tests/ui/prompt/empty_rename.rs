use mcp_core::prelude::*;

/// Reviews.
#[prompt]
fn review(#[arg(rename = "")] code: String) -> String {
    code
}

fn main() {}
