use typed_mcp::prelude::*;

/// Reviews.
#[prompt]
fn review(code: String) -> String
where
    String: Clone,
{
    code
}

fn main() {}
