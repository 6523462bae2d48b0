use typed_mcp::prelude::*;

/// The readme.
#[resource(42)]
fn readme() -> &'static str {
    "# Readme"
}

fn main() {}
