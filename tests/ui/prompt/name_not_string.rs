use typed_mcp::prelude::*;

/// Reviews.
#[prompt(name = review)]
fn review(code: String) -> String {
    code
}

fn main() {}
