use typed_mcp::prelude::*;

/// Reviews several files.
#[prompt]
fn review(files: Vec<String>) -> String {
    files.join(",")
}

fn main() {}
