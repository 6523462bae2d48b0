use typed_mcp::prelude::*;

/// Reviews.
#[prompt]
fn review(code: &str) -> String {
    code.to_owned()
}

fn main() {}
