use typed_mcp::prelude::*;

/// Writes a note.
#[tool(scopes = "notes:write")]
async fn write(text: String) -> String {
    text
}

/// Deletes a note.
#[tool(scopes = ["notes:delete", 7, "has space", ""])]
async fn delete(name: String) -> String {
    name
}

fn main() {
    let _ = Server::builder("t", "1").tools(tools![write, delete]);
}
