use typed_mcp::prelude::*;

/// Reviews.
#[prompt(titel = "Review")]
fn review(code: String) -> String {
    code
}

fn main() {
    // The prompt still registers and is still callable: only the option is reported.
    let _ = Server::builder("p", "1").prompts(prompts![review]).build();
    let _ = review(String::new());
}
