use typed_mcp::prelude::*;

/// The readme.
#[resource]
fn readme() -> &'static str {
    "# Readme"
}

fn main() {}
