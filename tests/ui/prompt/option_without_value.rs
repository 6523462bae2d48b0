use typed_mcp::prelude::*;

/// Reviews.
#[prompt(title)]
fn review(code: String) -> String {
    code
}

fn main() {}
