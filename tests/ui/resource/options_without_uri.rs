use mcp_core::prelude::*;

/// The readme.
#[resource(name = "readme")]
fn readme() -> &'static str {
    "# Readme"
}

fn main() {}
