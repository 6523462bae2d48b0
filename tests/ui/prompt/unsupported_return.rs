use mcp_core::prelude::*;

/// Counts.
#[prompt]
fn count(code: String) -> usize {
    code.len()
}

fn main() {}
