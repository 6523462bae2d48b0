use typed_mcp::prelude::*;

/// One item.
#[resource("test://items/{id}", mimetype = "text/plain")]
fn item(id: String) -> String {
    id
}

fn main() {
    // The resource still registers and is still callable: only the option is reported.
    let _ = Server::builder("r", "1").resources(resources![item]).build();
    let _ = item(String::new());
}
