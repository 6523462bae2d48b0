use typed_mcp::prelude::*;

/// The readme.
#[resource("test://readme", mime_type = text)]
fn readme() -> &'static str {
    "# Readme"
}

fn main() {}
