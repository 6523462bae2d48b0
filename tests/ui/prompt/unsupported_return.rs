use typed_mcp::prelude::*;

/// Counts.
#[prompt]
fn count(code: String) -> usize {
    code.len()
}

fn main() {}
