use typed_mcp::prelude::*;

/// The readme.
#[resource("test://readme", mime = "text/markdown")]
fn readme() -> &'static str {
    "# Readme"
}

fn main() {}
