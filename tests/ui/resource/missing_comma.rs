use typed_mcp::prelude::*;

/// The readme.
#[resource("test://readme" name = "readme")]
fn readme() -> &'static str {
    "# Readme"
}

fn main() {}
