use typed_mcp::prelude::*;

/// Reviews.
#[prompt]
fn review((code, focus): (String, String)) -> String {
    code + &focus
}

fn main() {}
