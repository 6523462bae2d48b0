use typed_mcp::prelude::*;

/// Reviews.
#[prompt]
fn review(#[arg(colour = "red")] code: String) -> String {
    code
}

fn main() {}
