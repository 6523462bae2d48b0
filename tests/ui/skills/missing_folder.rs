use typed_mcp::prelude::*;

fn main() {
    let _ = Server::builder("s", "1").skills(typed_mcp::skills::embed_skills!("no/such/skills")).build();
}
