use typed_mcp::prelude::*;

/// A resource whose body does not parse: only the compiler's syntax error is reported (the
/// macro reads the signature, not the body), and the resource still registers.
#[resource("notes://{id}")]
fn note(id: u32) -> String {
    let text = format!("{id}") +;
    text
}

fn main() {
    let _ = Server::builder("t", "1").resources(resources![note]);
}
