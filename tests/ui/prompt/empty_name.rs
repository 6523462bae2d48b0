use typed_mcp::prelude::*;

/// Reviews.
#[prompt(name = "")]
fn review(code: String) -> String {
    code
}

fn main() {}
