use typed_mcp::prelude::*;

/// Reviews.
#[prompt]
fn review(#[arg(rename = "")] code: String) -> String {
    code
}

fn main() {}
