use mcp_core::prelude::*;

/// The readme.
#[resource("README.md")]
fn readme() -> &'static str {
    "# Readme"
}

fn main() {}
