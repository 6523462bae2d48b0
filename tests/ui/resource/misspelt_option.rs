use typed_mcp::prelude::*;

/// A resource whose option is misspelt.
#[resource("x://y", mime_tipe = "text/plain")]
fn y() -> &'static str {
    "y"
}

fn main() {}
