use typed_mcp::prelude::*;

const FOLDER: &str = "skills";

fn main() {
    let _ = Server::builder("s", "1").skills(typed_mcp::skills::embed_skills!(FOLDER)).build();
}
