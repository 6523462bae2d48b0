//! What a stdio server tells a person who started it in a terminal.
//!
//! A stdio server waits for a client on stdin; someone who runs it by hand sees nothing happen.
//! When standard input is a terminal (a host always connects a pipe), [`Server::serve_stdio`]
//! first prints to stderr what the program is, how to try it with the MCP Inspector, and the
//! entry to put into a desktop host's server list. Stdout stays the protocol's.
//!
//! [`Server::serve_stdio`]: super::Server::serve_stdio

/// The MCP Inspector release the note names.
pub(crate) const INSPECTOR: &str = "@modelcontextprotocol/inspector@2.12.0";

/// The note for server `name`, started with the command line `args` (program first).
pub(crate) fn note(name: &str, args: &[String]) -> String {
    let program = std::env::current_exe()
        .ok()
        .map(|path| path.display().to_string())
        .or_else(|| args.first().cloned())
        .unwrap_or_else(|| name.to_owned());
    let command: Vec<String> = std::iter::once(program).chain(args.iter().skip(1).cloned()).collect();
    let shell = command.iter().map(|word| shell_word(word)).collect::<Vec<_>>().join(" ");
    let host_entry = serde_json::json!({"mcpServers": {name: {"command": command[0], "args": &command[1..]}}});
    format!(
        "{name}: an MCP server speaking JSON-RPC on stdin/stdout. It waits for an MCP client, not for typing.\n\
         Try it with the MCP Inspector (Node.js 22.19 or newer):\n\
         \x20 web UI:    npx {INSPECTOR} {shell}\n\
         \x20 one call:  npx {INSPECTOR} --cli {shell} --method tools/list\n\
         \x20 forms too: npx -p {INSPECTOR} mcpdo connect {shell}\n\
         \x20 (--protocol-era modern, or mcpdo connect --era modern, speaks the 2026-07-28 protocol)\n\
         In a desktop host, add it to the server list (Claude Desktop: claude_desktop_config.json):\n\
         \x20 {host_entry}\n\
         Press Ctrl-D to quit.\n"
    )
}

/// `word` as one word for a POSIX shell: as it stands when that is safe, else single-quoted.
fn shell_word(word: &str) -> String {
    let plain = !word.is_empty() && word.chars().all(|c| c.is_ascii_alphanumeric() || "/._-+=:,@%".contains(c));
    if plain { word.to_owned() } else { format!("'{}'", word.replace('\'', "'\\''")) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_note_names_the_program_the_inspector_and_a_host_entry() {
        let note = note("demo", &["/opt/demo".to_owned(), "--flag".to_owned(), "a b".to_owned()]);
        let exe = std::env::current_exe().unwrap().display().to_string();
        assert!(note.starts_with("demo: an MCP server"), "{note}");
        assert!(note.contains(&format!("npx {INSPECTOR} --cli {exe} --flag 'a b' --method tools/list")), "{note}");
        let entry = note.lines().find(|line| line.trim_start().starts_with('{')).expect("a JSON line");
        let entry: serde_json::Value = serde_json::from_str(entry.trim()).expect("the host entry is JSON");
        assert_eq!(entry["mcpServers"]["demo"]["command"], exe.as_str());
        assert_eq!(entry["mcpServers"]["demo"]["args"], serde_json::json!(["--flag", "a b"]));
    }

    #[test]
    fn shell_words_are_quoted_only_when_needed() {
        assert_eq!(shell_word("/usr/bin/x"), "/usr/bin/x");
        assert_eq!(shell_word("it's"), "'it'\\''s'");
        assert_eq!(shell_word(""), "''");
    }
}
