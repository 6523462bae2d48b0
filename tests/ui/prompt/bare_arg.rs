use typed_mcp::prelude::*;

/// Reviews.
#[prompt]
fn review(#[arg] code: String) -> String {
    code
}

fn main() {}
