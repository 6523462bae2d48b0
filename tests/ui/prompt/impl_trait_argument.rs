use typed_mcp::prelude::*;

/// Reviews.
#[prompt]
fn review(code: impl Into<String>) -> String {
    code.into()
}

fn main() {}
