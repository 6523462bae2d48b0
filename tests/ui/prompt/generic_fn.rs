use typed_mcp::prelude::*;

/// Reviews.
#[prompt]
fn review<T: Into<String>>(code: String) -> String {
    code
}

fn main() {}
