//! # Using a server from a host
//!
//! A host is the application the person works in (Claude Desktop, VS Code, an agent of your
//! own): it runs the model, and connects to MCP servers for it. A host connects to a server in
//! one of two ways, and every example of this repository serves both:
//!
//! - **stdio**: the host starts the program itself and speaks JSON-RPC on its stdin and stdout.
//!   That is how a desktop host runs a server on the same machine.
//! - **Streamable HTTP**: the program runs on its own, and the host connects to its URL. Each
//!   example serves it when started with `--port N` (or the `PORT` variable):
//!   `http://127.0.0.1:N/mcp`, on the loopback interface only.
//!
//! Build the example first, so that the host starts a binary rather than a compiler
//! (`cargo build -p examples --bin elicitation` gives `target/debug/elicitation`), and give hosts
//! absolute paths: a host does not start the program in your project's directory. The examples
//! are `quickstart`, `elicitation`, `url_elicitation`, `notes`, `tasks`, `apps`, `protected`,
//! `shared` and `audited` (see [the examples](super::examples) for what each shows).
//!
//! Every claim below about a host is taken from that host's own documentation (for Claude
//! Desktop's configuration file, the MCP documentation's walkthrough of it), linked where it is
//! made; hosts change quickly, so check the page when something differs.
//!
//! # Claude Desktop
//!
//! Claude Desktop reads its local servers from `claude_desktop_config.json` (Settings →
//! Developer → Edit Config creates or opens it), which lives at
//!
//! - macOS: `~/Library/Application Support/Claude/claude_desktop_config.json`
//! - Windows: `%APPDATA%\Claude\claude_desktop_config.json`
//!
//! Its top-level key is `mcpServers`; each entry names a server and says how to start it:
//! `command`, `args`, and optionally `env`. Quit Claude Desktop completely and start it again
//! after editing the file. For the `elicitation` example, with debug logs:
//!
//! ```json
//! {
//!   "mcpServers": {
//!     "elicitation": {
//!       "command": "/Users/you/typed-mcp/target/debug/elicitation",
//!       "args": [],
//!       "env": { "RUST_LOG": "debug" }
//!     }
//!   }
//! }
//! ```
//!
//! On Windows the command is a path such as `"C:\\Users\\you\\typed-mcp\\target\\debug\\elicitation.exe"`
//! (backslashes doubled in JSON). Source: [Connect to local MCP
//! servers](https://modelcontextprotocol.io/docs/2026-07-28/develop/connect-local-servers), the
//! MCP documentation's Claude Desktop walkthrough.
//!
//! A server started by hand in a terminal prints this entry, filled in for the program, on
//! stderr. Remote servers are a different path in Claude: they are added as custom connectors in
//! the app's settings, not in this file (Claude Desktop does not connect to remote servers
//! configured in `claude_desktop_config.json`), and Claude reaches them from Anthropic's cloud,
//! so a server listening on `127.0.0.1` is not one of them; run it over stdio instead. Source:
//! [Building custom connectors via remote MCP
//! servers](https://support.claude.com/en/articles/11503834-building-custom-connectors-via-remote-mcp-servers).
//!
//! # VS Code
//!
//! VS Code reads `mcp.json`: `.vscode/mcp.json` in a workspace (share it through source control),
//! or the one in your user profile (**MCP: Open User Configuration**). Its top-level key is
//! `servers`. A stdio entry has `"type": "stdio"`, a `command`, and optionally `args`, `env` and
//! `envFile`; an HTTP entry has `"type": "http"` and a `url`. Predefined variables such as
//! `${workspaceFolder}` work in the values. One of each:
//!
//! ```json
//! {
//!   "servers": {
//!     "elicitation": {
//!       "type": "stdio",
//!       "command": "${workspaceFolder}/target/debug/elicitation",
//!       "env": { "RUST_LOG": "info" }
//!     },
//!     "quickstart-http": {
//!       "type": "http",
//!       "url": "http://127.0.0.1:8080/mcp"
//!     }
//!   }
//! }
//! ```
//!
//! VS Code asks you to trust a server before it starts it for the first time. **MCP: List
//! Servers** in the Command Palette lists the configured servers and starts, stops and restarts
//! them. Sources: [MCP configuration
//! reference](https://code.visualstudio.com/docs/agents/reference/mcp-configuration) and [Add and
//! manage MCP servers in VS Code](https://code.visualstudio.com/docs/agent-customization/mcp-servers).
//!
//! # Any host, over Streamable HTTP
//!
//! Start the example yourself, then give the host its URL:
//!
//! ```sh
//! cargo run -p examples --bin quickstart -- --port 8080
//! # or: PORT=8080 target/debug/quickstart
//! ```
//!
//! The server is then at `http://127.0.0.1:8080/mcp`, for as long as the program runs (Ctrl-C
//! stops it). Any host or client that speaks Streamable HTTP connects there: the `"type":
//! "http"` entry above in VS Code, the MCP Inspector below, or a Rust client of your own
//! (`connect_http(url)` with the `http-client` feature; see [the client](super::client)). `--port 0` picks a free port and logs it. The
//! `url_elicitation` example also serves the page it sends users to, on `--url-port` (8931 by
//! default). What is worth knowing about serving HTTP for real (TLS, mounting in axum, limits) is
//! in [the HTTP chapter](super::http), and protecting it in [the authorization
//! chapter](super::authorization).
//!
//! # Logs
//!
//! A server spoken to over stdio must **never write anything but the protocol to stdout**: a
//! stray `println!` is a line the host fails to parse, and the connection breaks. typed-mcp
//! writes nothing else there; your code and its dependencies must not either. Log to stderr,
//! which hosts keep for you.
//!
//! The examples log through `tracing`, with `tracing-subscriber` writing to stderr
//! (`tracing_subscriber::fmt().with_writer(std::io::stderr)`) and filtered by the `RUST_LOG`
//! variable (`EnvFilter`, `info` when unset). Set it in the host's `env` for a server entry:
//! `"RUST_LOG": "debug"`, or `"info,typed_mcp=debug"` for the library's details alone. Over HTTP
//! the logs simply go to the terminal that started the program.
//!
//! Where the hosts put a stdio server's stderr:
//!
//! - **Claude Desktop** writes MCP logs to `~/Library/Logs/Claude` on macOS and
//!   `%APPDATA%\Claude\logs` on Windows: `mcp.log` for connections and their failures, and
//!   `mcp-server-NAME.log` with the stderr of the server named `NAME` in the config
//!   (`tail -n 20 -f ~/Library/Logs/Claude/mcp*.log` follows them). Source: [Connect to local
//!   MCP servers](https://modelcontextprotocol.io/docs/2026-07-28/develop/connect-local-servers).
//! - **VS Code** shows a server's log with **Show Output**: from the error notice in the Chat
//!   view when a server fails, or from **MCP: List Servers** → the server → **Show Output**.
//!   Source: [Add and manage MCP servers in
//!   VS Code](https://code.visualstudio.com/docs/agent-customization/mcp-servers).
//!
//! To send logs to the client as MCP log messages instead (`notifications/message`), a handler
//! calls `ctx.log(…)` (see [resources, prompts and logging](super::resources_and_prompts)), and
//! the `tracing-bridge` feature forwards the application's `tracing` events to clients
//! (`Server::client_log_layer`).
//!
//! # The MCP Inspector
//!
//! The [MCP Inspector](https://modelcontextprotocol.io/docs/2026-07-28/tools/inspector) is the
//! protocol's debugging client: it connects to a server, lists what it offers, calls it, and shows
//! every message. It needs Node.js 22.19 or newer and runs through `npx`; this repository's tests
//! pin version 2.12.0, which the commands below name.
//!
//! ```sh
//! # Web UI: starts the server over stdio and prints a URL to open.
//! npx @modelcontextprotocol/inspector@2.12.0 target/debug/elicitation
//!
//! # Command line: one request, its result on stdout (for scripts and CI).
//! npx @modelcontextprotocol/inspector@2.12.0 --cli target/debug/quickstart --method tools/list
//! npx @modelcontextprotocol/inspector@2.12.0 --cli target/debug/quickstart --method tools/call --tool-name add --tool-arg a=2 b=40
//!
//! # A server already running over HTTP.
//! npx @modelcontextprotocol/inspector@2.12.0 --cli http://127.0.0.1:8080/mcp --method tools/list
//!
//! # The 2026-07-28 era instead of a 2025-11-25 session.
//! npx @modelcontextprotocol/inspector@2.12.0 --cli target/debug/quickstart --protocol-era modern --method tools/list
//! ```
//!
//! To answer forms from a terminal, `mcpdo`, the Inspector's command-line client, keeps a
//! connection open between commands (`npx -p @modelcontextprotocol/inspector@2.12.0 mcpdo connect
//! target/debug/elicitation`, then `… mcpdo --connection target/debug/elicitation tools/call
//! create_project`); the README's "Try it" section walks through it. Started by hand in a
//! terminal, a stdio example prints these commands, filled in for itself, on stderr.
//!
//! # Which hosts show forms and URL requests
//!
//! A server cannot make a host support elicitation; it can only check. A tool asks only clients
//! that declared the capability (`ctx.can_elicit()` for forms, `ctx.can_elicit_url()` for URL
//! mode) and should say something useful to the others (see [elicitation](super::elicitation)).
//! As each host's documentation states it:
//!
//! | host | form elicitation | URL elicitation |
//! | --- | --- | --- |
//! | VS Code | supported: the [MCP developer guide](https://code.visualstudio.com/api/extension-guides/ai/mcp) lists "Elicitation: request input from the user" among the MCP features VS Code supports | supported since version 1.107, whose [release notes](https://code.visualstudio.com/updates/v1_107) list URL mode elicitation as part of its support for the 2025-11-25 revision |
//! | Claude Desktop | not stated in its documentation: [Connect to local MCP servers](https://modelcontextprotocol.io/docs/2026-07-28/develop/connect-local-servers) does not mention it, and [Building custom connectors](https://support.claude.com/en/articles/11503834-building-custom-connectors-via-remote-mcp-servers) lists tools, prompts and resources | not stated in its documentation |
//!
//! For a host not listed here, or to check what a given version does, let the server tell you:
//! a tool that logs `ctx.can_elicit()` and `ctx.can_elicit_url()` to stderr shows, in the host's
//! log, what the host declared when it connected.
