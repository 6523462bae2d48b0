use typed_mcp::prelude::*;

/// One item.
#[resource("test://{org}/items/{id}", nme = "x", title = 1)]
async unsafe fn item(id: &str) -> String {
    id.to_owned()
}

fn main() {}
