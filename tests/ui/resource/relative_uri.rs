use typed_mcp::prelude::*;

/// The readme.
#[resource("README.md")]
fn readme() -> &'static str {
    "# Readme"
}

fn main() {}
