use typed_mcp::prelude::*;

/// The readme.
#[resource(name = "readme")]
fn readme() -> &'static str {
    "# Readme"
}

fn main() {}
