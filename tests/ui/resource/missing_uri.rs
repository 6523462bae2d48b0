use mcp_core::prelude::*;

/// The readme.
#[resource]
fn readme() -> &'static str {
    "# Readme"
}

fn main() {}
