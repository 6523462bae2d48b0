use typed_mcp::prelude::*;

/// The readme.
#[resource("test://readme", name = "a", name = "b")]
fn readme() -> &'static str {
    "# Readme"
}

fn main() {}
