use typed_mcp::prelude::*;

/// Reviews.
#[prompt]
fn review(#[arg(rename = "code")] text: String, code: String) -> String {
    text + &code
}

fn main() {}
