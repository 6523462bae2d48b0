use typed_mcp::prelude::*;

/// Reviews.
#[prompt(nmae = "review")]
fn review(code: String) -> String {
    code
}

fn main() {}
