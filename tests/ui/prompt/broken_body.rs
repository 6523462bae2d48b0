use typed_mcp::prelude::*;

/// A prompt whose body does not parse: only the compiler's syntax error is reported (the macro
/// reads the signature, not the body), and the prompt still registers.
#[prompt]
fn review(code: String) -> String {
    let text = code +;
    text
}

fn main() {
    let _ = Server::builder("t", "1").prompts(prompts![review]);
}
