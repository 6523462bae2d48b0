//! The MCP Inspector (`@modelcontextprotocol/inspector`, pinned in `tests/interop/`) against the
//! examples (and the `conformance` test server).
//!
//! - Every command of the README's "Try it" section runs as written: `npx <inspector>` becomes the
//!   pinned Inspector on its pinned Node.js, `target/debug/NAME` the example binary, and
//!   `<elicitation-id>` the id the previous command printed. The version the README names must
//!   be the pinned one.
//! - `--strict` finds no schema portability problem in the tools of any example.
//! - A `tools/call` with a missing or mistyped argument is a tool error (`isError: true`) naming
//!   the argument, in both protocol eras, as the Inspector sees it.

use std::path::Path;

use tests::interop::{example_binary, workspace_root};

use crate::support::inspector::{HttpExample, Inspector, translate};

/// The shell lines of the README's "Try it" section that run the Inspector.
fn try_it_commands() -> Vec<String> {
    let readme = std::fs::read_to_string(workspace_root().join("README.md")).expect("README.md is readable");
    let section = readme.split_once("\n### Try it\n").expect("README.md has a \"### Try it\" section").1;
    let section = section.split("\n## ").next().unwrap_or(section);
    let mut commands = Vec::new();
    let mut in_shell = false;
    for line in section.lines() {
        match line.trim() {
            "```sh" => in_shell = true,
            "```" => in_shell = false,
            command if in_shell && !command.starts_with('#') && !command.is_empty() => {
                commands.push(command.to_owned())
            }
            _ => {}
        }
    }
    commands
}

/// The id in "elicitation/respond ID …", as mcpdo prints it for a form waiting for an answer.
fn printed_elicitation_id(stdout: &str) -> Option<String> {
    let after = stdout.split("elicitation/respond ").nth(1)?;
    let id: String = after.chars().take_while(|c| !c.is_whitespace() && *c != '`').collect();
    (!id.is_empty()).then_some(id)
}

/// What each README command must show, besides exiting with status 0.
fn expected_output(command: &str) -> Option<&'static str> {
    if command.contains("--tool-name add") {
        Some("\"42\"")
    } else if command.contains("tools/call create_project") {
        Some("Please provide the project details.")
    } else if command.contains("elicitation/respond") {
        Some("Created project 'demo' with framework: vue")
    } else {
        None
    }
}

#[test]
fn every_try_it_command_of_the_readme_runs() {
    let commands = try_it_commands();
    assert!(
        commands.iter().any(|c| c == "cargo build -p examples"),
        "the \"Try it\" section builds the examples first: {commands:?}"
    );
    let inspector_commands: Vec<&String> = commands.iter().filter(|c| c.starts_with("npx ")).collect();
    for needed in ["--method tools/list --strict", "--protocol-era modern", "mcpdo connect", "elicitation/respond"] {
        assert!(
            inspector_commands.iter().any(|c| c.contains(needed)),
            "no \"Try it\" command uses `{needed}`: {inspector_commands:?}"
        );
    }
    let mut inspector = Inspector::new();
    inspector.private_daemon();
    let mut elicitation_id = None;
    for command in inspector_commands {
        let (mcpdo, args) = translate(command, elicitation_id.as_deref());
        let output = inspector.run(mcpdo, &args);
        println!("$ {command}\n{}", output.stdout);
        assert!(output.success(), "README command `{command}` failed: {}", output.describe());
        if command.contains("--strict") {
            assert!(
                !output.stderr.contains("Error: tool") && !output.stderr.contains("Warning: tool"),
                "`{command}` reports schema portability problems: {}",
                output.stderr
            );
        }
        if let Some(expected) = expected_output(command) {
            assert!(output.stdout.contains(expected), "`{command}` did not print {expected:?}: {}", output.describe());
        }
        if let Some(id) = printed_elicitation_id(&output.stdout) {
            elicitation_id = Some(id);
        }
    }
}

/// `inspector --cli TARGET --method tools/list --strict --format json`: the result envelope.
fn strict_tools_list(inspector: &Inspector, target: &[String]) -> serde_json::Value {
    let mut args = vec!["--cli".to_owned()];
    args.extend(target.iter().cloned());
    args.extend(["--method", "tools/list", "--strict", "--format", "json"].map(str::to_owned));
    let output = inspector.run(false, &args);
    assert!(output.success(), "the Inspector's strict tools/list failed for {target:?}: {}", output.describe());
    let line = output.stdout.lines().rev().find(|l| l.trim_start().starts_with('{')).unwrap_or_default();
    serde_json::from_str(line).unwrap_or_else(|e| panic!("not a JSON envelope ({e}): {}", output.describe()))
}

#[test]
fn strict_mode_finds_no_portability_problem_in_any_example() {
    let inspector = Inspector::new();
    let stdio = ["quickstart", "elicitation", "notes", "url_elicitation", "tasks", "apps"].map(|name| {
        let mut command = vec![path(&example_binary(name))];
        if name == "url_elicitation" {
            // Its page on any free port, so that tests running at once never collide.
            command.extend(["--url-port".to_owned(), "0".to_owned()]);
        }
        (name, command)
    });
    let shared = HttpExample::start("shared", &example_binary("shared"));
    let conformance = HttpExample::start("conformance", Path::new(crate::support::servers::CONFORMANCE));
    let http = [("shared", vec![shared.url().to_owned()]), ("conformance", vec![conformance.url().to_owned()])];
    for (name, target) in stdio.iter().chain(http.iter()) {
        let envelope = strict_tools_list(&inspector, target);
        let tools = envelope["result"]["tools"].as_array().map_or(0, Vec::len);
        assert!(tools > 0, "the {name} example listed no tools: {envelope}");
        assert!(
            envelope.get("schemaFindings").is_none(),
            "the Inspector finds schema portability problems in the {name} example's tools: {:#}",
            envelope["schemaFindings"]
        );
    }
}

fn path(path: &Path) -> String {
    path.display().to_string()
}

#[test]
fn a_wrong_argument_is_a_tool_error_naming_it_in_both_eras() {
    let inspector = Inspector::new();
    let quickstart = path(&example_binary("quickstart"));
    for era in ["legacy", "modern"] {
        for (arguments, named) in [(r#"{"a": 2}"#, "`b`"), (r#"{"a": 2, "b": "forty"}"#, "`b`")] {
            let args: Vec<String> = [
                "--cli",
                &quickstart,
                "--protocol-era",
                era,
                "--method",
                "tools/call",
                "--tool-name",
                "add",
                "--tool-args-json",
                arguments,
                "--format",
                "json",
            ]
            .map(str::to_owned)
            .to_vec();
            let output = inspector.run(false, &args);
            // The Inspector exits non-zero for a result with `isError: true`; what matters is
            // that it got a result (not a JSON-RPC error) and what the result says.
            let line = output.stdout.lines().rev().find(|l| l.trim_start().starts_with('{')).unwrap_or_default();
            let envelope: serde_json::Value = serde_json::from_str(line)
                .unwrap_or_else(|e| panic!("{era}, {arguments}: no JSON result ({e}): {}", output.describe()));
            let result = &envelope["result"];
            assert_eq!(result["isError"], true, "{era}, {arguments}: not a tool error: {}", output.describe());
            let text = result["content"][0]["text"].as_str().unwrap_or_default();
            assert!(text.contains(named), "{era}, {arguments}: the error does not name {named}: {text:?}");
        }
    }
}
