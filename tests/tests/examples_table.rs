//! `examples/README.md`'s table of the examples (example, what it teaches, features, try it),
//! held true.
//!
//! - Every "try it" command runs as written, the way `support::inspector` runs documented
//!   commands, once the servers its row shows running are up, and prints each result after its
//!   arrow. A server shown with `--port N` gets a free port instead, a `redis-server` is a private
//!   one: each `127.0.0.1:N` of the row then names the port it really got.
//! - Each example's doc comment says what its row says: its features, its try-it commands and
//!   their results, and that `--port N` (or `PORT=N`) serves Streamable HTTP.
//! - The features a row names are features of `typed-mcp` (or `typed-mcp-redis`) that the
//!   examples package turns on, and they cover what the file uses (`serve_stdio_or_http` needs
//!   `http`, and so on).
//! - The table has a row for every file of `examples/src/bin/`, and the guide's page of
//!   examples (`mcp-core/src/guide/examples.rs`) has the same table.
//! - Every example started with `--port N` serves Streamable HTTP there: those whose try-it
//!   starts them that way already do; the others are asked for their tools over HTTP.

use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;
use std::time::Duration;

use tests::interop::{example_binary, require_program, run_with_deadline, workspace_root};
use typed_mcp_redis::testing::{RedisServer, free_port};

use crate::support::inspector::{HttpExample, Inspector, local, translate};

/// One command that is not the Inspector (`curl`).
const COMMAND_DEADLINE: Duration = Duration::from_secs(30);

/// One row of the table.
#[derive(Debug)]
struct Row {
    /// The example: the binary and the file `src/bin/NAME.rs`.
    name: String,
    /// The features it needs, besides the defaults.
    features: String,
    /// `[SERVER running: ]COMMAND → RESULT[, RESULT]`.
    try_it: String,
}

/// What a try-it cell says: servers to start first, the command, what it prints.
#[derive(Debug)]
struct TryIt<'a> {
    running: Vec<&'a str>,
    command: &'a str,
    results: Vec<&'a str>,
}

impl<'a> TryIt<'a> {
    fn parse(name: &str, cell: &'a str) -> TryIt<'a> {
        let (before, after) = cell
            .split_once('→')
            .unwrap_or_else(|| panic!("the try-it of `{name}` has no `→` before the result it shows: {cell}"));
        let mut commands = code_spans(before);
        let command = commands.pop().unwrap_or_else(|| panic!("the try-it of `{name}` shows no command: {cell}"));
        let results = code_spans(after);
        assert!(!results.is_empty(), "the try-it of `{name}` shows no result after its `→`: {cell}");
        TryIt { running: commands, command, results }
    }
}

/// The code spans of a Markdown text, whitespace collapsed.
fn code_spans(text: &str) -> Vec<&str> {
    text.split('`').skip(1).step_by(2).map(str::trim).collect()
}

/// Whitespace collapsed to single spaces.
fn collapsed(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The cells of the table rows (after its header and delimiter) of `text`, whose lines start
/// with `prefix` (`//! ` for a doc comment).
fn table_rows(text: &str, prefix: &str) -> Vec<Vec<String>> {
    let lines: Vec<&str> =
        text.lines().filter_map(|l| l.strip_prefix(prefix)).filter(|l| l.starts_with("| ")).collect();
    assert!(lines.len() > 2, "no table: {lines:?}");
    lines[2..]
        .iter()
        .map(|line| {
            let inner = line.trim_end().strip_prefix("| ").and_then(|l| l.strip_suffix(" |")).unwrap_or(line);
            inner.split(" | ").map(str::to_owned).collect()
        })
        .collect()
}

/// The table of `examples/README.md`.
fn readme_table() -> Vec<Row> {
    let readme = std::fs::read_to_string(workspace_root().join("examples/README.md")).expect("examples/README.md");
    table_rows(&readme, "")
        .into_iter()
        .map(|cells| {
            let [example, _teaches, features, try_it] = <[String; 4]>::try_from(cells.clone())
                .unwrap_or_else(|_| panic!("a row of examples/README.md's table is not 4 cells: {cells:?}"));
            let name = code_spans(&example).first().map(|n| (*n).to_owned()).unwrap_or_default();
            assert_eq!(
                example,
                format!("[`{name}`](src/bin/{name}.rs)"),
                "a row of examples/README.md's table does not link its example's file"
            );
            Row { name, features, try_it }
        })
        .collect()
}

/// The leading `//!` comment of `examples/src/bin/NAME.rs`, whitespace collapsed.
fn doc_comment(name: &str) -> String {
    let path = workspace_root().join("examples/src/bin").join(format!("{name}.rs"));
    let source = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let lines: Vec<&str> = source.lines().map_while(|l| l.strip_prefix("//!")).collect();
    collapsed(&lines.join("\n"))
}

/// `127.0.0.1:N` as written → as run, for the servers a try-it started.
#[derive(Default)]
struct Ports(Vec<(u16, u16)>);

impl Ports {
    fn apply(&self, text: &str) -> String {
        self.0.iter().fold(text.to_owned(), |text, (written, real)| {
            text.replace(&format!("127.0.0.1:{written}"), &format!("127.0.0.1:{real}"))
        })
    }
}

/// The value of `--port` among `words`.
fn written_port(words: &[&str]) -> Option<u16> {
    words.windows(2).find(|w| w[0] == "--port").and_then(|w| w[1].parse().ok())
}

/// Runs one row's try-it and checks that what it shows appears in the command's output.
fn try_row(inspector: &Inspector, row: &Row) {
    let try_it = TryIt::parse(&row.name, &row.try_it);
    let mut ports = Ports::default();
    let mut redis = Vec::new();
    let mut servers = Vec::new();
    for server in &try_it.running {
        let words: Vec<&str> = server.split_whitespace().collect();
        let written = written_port(&words)
            .unwrap_or_else(|| panic!("`{server}`, running for the try-it of `{}`, is given no `--port`", row.name));
        match words.as_slice() {
            ["redis-server", ..] => {
                let started = RedisServer::start();
                ports.0.push((written, started.port()));
                redis.push(started);
            }
            [program, args @ ..] if program.starts_with("target/debug/") => {
                let real = free_port();
                let args: Vec<String> = args
                    .iter()
                    .map(|arg| if *arg == written.to_string() { real.to_string() } else { ports.apply(arg) })
                    .collect();
                ports.0.push((written, real));
                let name = &program["target/debug/".len()..];
                servers.push(HttpExample::start_with(name, &example_binary(name), &args, real));
            }
            _ => panic!("`{server}`, running for the try-it of `{}`, is neither an example nor redis-server", row.name),
        }
    }
    let command = ports.apply(try_it.command);
    let words: Vec<&str> = command.split_whitespace().collect();
    let output = match words.first() {
        Some(&"npx") => {
            let (mcpdo, args) = translate(&command, None);
            inspector.run(mcpdo, &args)
        }
        Some(&"curl") => {
            require_program(
                "curl",
                "the try-it of `protected` runs curl: install it (Debian/Ubuntu: `apt-get install curl`)",
            );
            let mut curl = Command::new("curl");
            curl.args(words[1..].iter().map(|w| local(w))).current_dir(workspace_root());
            run_with_deadline(&mut curl, COMMAND_DEADLINE)
        }
        _ => panic!("the try-it of `{}` runs neither the Inspector nor curl: `{command}`", row.name),
    };
    let printed = format!("{}\n{}", output.stdout, output.stderr);
    for result in &try_it.results {
        let result = ports.apply(result);
        assert!(
            printed.contains(&result),
            "examples/README.md, try-it of `{}`: `{}` (run as `{command}`, {} first) did not print {result:?}: {}",
            row.name,
            try_it.command,
            if try_it.running.is_empty() {
                "nothing started".to_owned()
            } else {
                format!("{:?} started", try_it.running)
            },
            output.describe()
        );
    }
    drop(servers);
    drop(redis);
}

#[test]
fn every_try_it_command_of_the_examples_table_prints_what_it_shows() {
    let inspector = Inspector::new();
    for row in readme_table() {
        try_row(&inspector, &row);
    }
}

#[test]
fn every_example_started_with_a_port_serves_streamable_http_there() {
    let inspector = Inspector::new();
    for row in readme_table() {
        let try_it = TryIt::parse(&row.name, &row.try_it);
        if try_it.running.iter().any(|s| s.starts_with(&format!("target/debug/{} ", row.name))) {
            continue; // its try-it serves it over HTTP already
        }
        let server = HttpExample::start(&row.name, &example_binary(&row.name));
        let args = ["--cli", server.url(), "--method", "tools/list"].map(str::to_owned);
        let output = inspector.run(false, &args);
        assert!(
            output.success() && output.stdout.contains("\"tools\""),
            "the {} example, started with `--port`, did not list its tools at {}: {}",
            row.name,
            server.url(),
            output.describe()
        );
    }
}

#[test]
fn each_examples_doc_comment_says_what_its_row_says() {
    for row in readme_table() {
        let doc = doc_comment(&row.name);
        // Features as code (`http`), commands as they are, in a code block or not.
        let features: Vec<String> = code_spans(&row.features).iter().map(|f| format!("`{f}`")).collect();
        let try_it = TryIt::parse(&row.name, &row.try_it);
        let mut said: Vec<&str> = features.iter().map(String::as_str).collect();
        said.extend(&try_it.running);
        said.push(try_it.command);
        said.extend(&try_it.results);
        for span in said {
            assert!(
                doc.contains(&collapsed(span)),
                "the doc comment of examples/src/bin/{}.rs does not say `{span}`, as its row of examples/README.md does",
                row.name
            );
        }
        if row.features.contains("typed-mcp-redis") {
            assert!(
                doc.contains("typed-mcp-redis"),
                "the doc comment of {}.rs does not say it needs typed-mcp-redis",
                row.name
            );
        }
        for words in ["`--port N`", "`PORT=N`", "Streamable HTTP"] {
            assert!(doc.contains(words), "the doc comment of {}.rs does not say {words}", row.name);
        }
    }
}

/// The features of a workspace package (name → what each turns on), and the features of
/// `typed-mcp` and `typed-mcp-redis` that the examples package turns on.
struct Features {
    of: BTreeMap<String, BTreeMap<String, Vec<String>>>,
    in_examples: BTreeMap<String, Vec<String>>,
}

impl Features {
    fn read() -> Features {
        let metadata = tests::interop::cargo_metadata();
        let packages = metadata["packages"].as_array().expect("packages");
        let of = packages
            .iter()
            .map(|p| {
                let features = serde_json::from_value(p["features"].clone()).expect("a feature table");
                (p["name"].as_str().unwrap_or_default().to_owned(), features)
            })
            .collect();
        let examples = packages.iter().find(|p| p["name"] == "examples").expect("the examples package");
        let in_examples = examples["dependencies"]
            .as_array()
            .expect("dependencies")
            .iter()
            .map(|d| {
                let features = serde_json::from_value(d["features"].clone()).expect("a dependency's features");
                (d["name"].as_str().unwrap_or_default().to_owned(), features)
            })
            .collect();
        Features { of, in_examples }
    }

    /// `named` features of `package` and every feature of it they turn on.
    fn closure(&self, package: &str, named: &[&str]) -> BTreeSet<String> {
        let table = &self.of[package];
        let mut on: BTreeSet<String> = BTreeSet::new();
        let mut todo: Vec<String> = named.iter().map(|f| (*f).to_owned()).collect();
        while let Some(feature) = todo.pop() {
            if table.contains_key(&feature) && on.insert(feature.clone()) {
                todo.extend(table[&feature].iter().cloned());
            }
        }
        on
    }
}

/// What a file uses → the feature it needs (of `typed-mcp`, or `typed-mcp-redis`'s `dpop`), or
/// the crate itself.
const NEEDS: [(&str, &str); 8] = [
    ("serve_stdio_or_http", "http"),
    ("typed_mcp::transport::http", "http"),
    ("typed_mcp::telemetry::", "otel"),
    ("otlp_from_env", "otel-otlp"),
    ("typed_mcp::auth::", "auth"),
    ("ServerCertificate", "http-tls"),
    ("typed_mcp_redis", "typed-mcp-redis"),
    (".replay_cache(", "dpop"),
];

#[test]
fn the_features_of_each_row_are_the_crates_and_cover_what_the_example_uses() {
    let features = Features::read();
    for row in readme_table() {
        let named = code_spans(&row.features);
        let with_redis = row.features.contains("typed-mcp-redis");
        for feature in &named {
            let package = if features.of["typed-mcp"].contains_key(*feature) {
                "typed-mcp"
            } else if with_redis && features.of["typed-mcp-redis"].contains_key(*feature) {
                "typed-mcp-redis"
            } else {
                panic!("`{}` needs `{feature}`, which is no feature of typed-mcp or typed-mcp-redis", row.name)
            };
            assert!(
                features.in_examples[package].iter().any(|f| f == feature),
                "`{}` needs {package}'s `{feature}`, which examples/Cargo.toml does not turn on",
                row.name
            );
        }
        let mut on = features.closure("typed-mcp", &[&["macros", "rustls"][..], &named[..]].concat());
        on.extend(features.closure("typed-mcp-redis", &named));
        if with_redis {
            on.insert("typed-mcp-redis".to_owned());
        }
        let path = workspace_root().join("examples/src/bin").join(format!("{}.rs", row.name));
        let source = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        for (uses, needs) in NEEDS {
            assert!(
                !source.contains(uses) || on.contains(needs),
                "examples/src/bin/{}.rs uses `{uses}`, which needs `{needs}`, but its row of examples/README.md names {}",
                row.name,
                row.features
            );
        }
    }
}

#[test]
fn the_table_has_every_example_and_the_guide_has_the_same_table() {
    let rows = readme_table();
    let named: BTreeSet<String> = rows.iter().map(|r| r.name.clone()).collect();
    let files: BTreeSet<String> = std::fs::read_dir(workspace_root().join("examples/src/bin"))
        .expect("examples/src/bin")
        .filter_map(|entry| entry.ok()?.path().file_stem()?.to_str().map(str::to_owned))
        .collect();
    assert_eq!(named, files, "examples/README.md's table has a row for each file of examples/src/bin/, and no other");

    let readme = std::fs::read_to_string(workspace_root().join("examples/README.md")).expect("examples/README.md");
    let guide = std::fs::read_to_string(workspace_root().join("mcp-core/src/guide/examples.rs")).expect("the guide");
    let mut expected = table_rows(&readme, "");
    for (cells, row) in expected.iter_mut().zip(&rows) {
        // The guide, on docs.rs, cannot link to a file of the repository.
        cells[0] = format!("`{}`", row.name);
    }
    assert_eq!(
        table_rows(&guide, "//! "),
        expected,
        "the guide's page of examples shows examples/README.md's table (its names not linked)"
    );
}
