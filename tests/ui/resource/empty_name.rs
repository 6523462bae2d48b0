use typed_mcp::prelude::*;

/// The readme.
#[resource("test://readme", name = " ")]
fn readme() -> &'static str {
    "# Readme"
}

fn main() {}
