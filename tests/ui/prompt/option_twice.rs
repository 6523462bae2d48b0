use typed_mcp::prelude::*;

/// Reviews.
#[prompt(title = "A", title = "B")]
fn review(code: String) -> String {
    code
}

fn main() {}
