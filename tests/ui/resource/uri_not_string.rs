use mcp_core::prelude::*;

/// The readme.
#[resource(42)]
fn readme() -> &'static str {
    "# Readme"
}

fn main() {}
