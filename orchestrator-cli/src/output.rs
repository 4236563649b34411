//! Everything printed: tables or JSON on stdout, errors on stderr, exit codes.

use crate::cli::OutputFormat;
use comfy_table::{ContentArrangement, Table, presets::UTF8_FULL_CONDENSED};
use serde::Serialize;
use serde_json::Value;
use std::io::{IsTerminal, Write};
use std::process::ExitCode;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};

/// The global `--field` path, set once at start.
static FIELD: OnceLock<Option<String>> = OnceLock::new();

/// Remembers `--field` for every later [`emit`].
pub fn set_field(path: Option<String>) {
    let _ = FIELD.set(path);
}

fn field() -> Option<&'static str> {
    FIELD.get().and_then(|f| f.as_deref())
}

/// Whether `--field` printed anything, and whether it looked into a value
/// where it found nothing (see [`field_missed`]).
static FIELD_HIT: AtomicBool = AtomicBool::new(false);
static FIELD_MISS: AtomicBool = AtomicBool::new(false);

/// After the command: an error when `--field` matched nothing in what the
/// command had to show (a typo in the path would otherwise print nothing
/// and succeed). An empty list is not a miss.
pub fn field_missed() -> Option<anyhow::Error> {
    let path = field()?;
    (FIELD_MISS.load(Ordering::Relaxed) && !FIELD_HIT.load(Ordering::Relaxed)).then(|| {
        anyhow::anyhow!(
            "--field {path} matched nothing in the output (see the field names with -o json)"
        )
    })
}

/// An error in the command line that the CLI found itself (a value clap
/// could not check): exit code 2, as clap's own usage errors.
#[derive(Debug)]
pub struct Usage(pub String);

impl std::fmt::Display for Usage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Usage {}

/// A name or id prefix that matched nothing: exit code 4, as a 404.
#[derive(Debug)]
pub struct NotFound(pub String);

impl std::fmt::Display for NotFound {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for NotFound {}

/// A local command refused to run because it would harm data as it stands
/// (exit 5, like the API's conflicts).
#[derive(Debug)]
pub struct Conflict(pub String);

impl std::fmt::Display for Conflict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Conflict {}

/// `anyhow::Error` of a [`Conflict`].
pub fn conflict(message: impl Into<String>) -> anyhow::Error {
    anyhow::Error::new(Conflict(message.into()))
}

/// `anyhow::Error` of a [`Usage`] error.
pub fn usage(message: impl Into<String>) -> anyhow::Error {
    anyhow::Error::new(Usage(message.into()))
}

/// `anyhow::Error` of a [`NotFound`] error.
pub fn not_found(message: impl Into<String>) -> anyhow::Error {
    anyhow::Error::new(NotFound(message.into()))
}

/// Prints `value` as pretty JSON, YAML, or the table `table` builds; with
/// `--field PATH`, only the values at that path, one a line.
pub fn emit<T: Serialize>(format: OutputFormat, value: &T, table: impl FnOnce() -> Table) {
    if let Some(path) = field() {
        return print_field(value, path);
    }
    match format {
        OutputFormat::Json => match serde_json::to_string_pretty(value) {
            Ok(text) => print_out(&text),
            Err(e) => eprintln!("error: cannot render JSON: {e}"),
        },
        OutputFormat::Yaml => match serde_norway::to_string(value) {
            Ok(text) => print_out(text.trim_end()),
            Err(e) => eprintln!("error: cannot render YAML: {e}"),
        },
        OutputFormat::Table => {
            print_out(&table().to_string());
            page_footer(value);
        }
    }
}

/// Under a table of one page of a list, the same footer everywhere, on
/// stderr (stdout stays the table): "showing 1–20 of 153; --page 2 for
/// more, or --all".
fn page_footer<T: Serialize>(value: &T) {
    let Ok(Value::Object(page)) = serde_json::to_value(value) else {
        return;
    };
    let number = |k: &str| page.get(k).and_then(Value::as_u64);
    let (Some(Value::Array(items)), Some(total), Some(number), Some(per_page)) = (
        page.get("items"),
        number("total"),
        number("page"),
        number("per_page"),
    ) else {
        return;
    };
    let shown = items.len() as u64;
    if shown == 0 {
        if total > 0 {
            eprintln!("nothing on page {number} of {total} in all; try --page 1");
        }
        return;
    }
    let from = (number.max(1) - 1) * per_page.max(1) + 1;
    let to = from + shown - 1;
    if to < total {
        eprintln!(
            "showing {from}–{to} of {total}; --page {} for more, or --all",
            number + 1
        );
    } else {
        eprintln!("showing {from}–{to} of {total}");
    }
}

/// One item of a stream: a JSON line, a YAML document, or `line()`.
pub fn emit_line<T: Serialize>(format: OutputFormat, value: &T, line: impl FnOnce() -> String) {
    if let Some(path) = field() {
        return print_field(value, path);
    }
    match format {
        OutputFormat::Json => match serde_json::to_string(value) {
            Ok(text) => print_out(&text),
            Err(e) => eprintln!("error: cannot render JSON: {e}"),
        },
        OutputFormat::Yaml => match serde_norway::to_string(value) {
            Ok(text) => print_out(&format!("---\n{}", text.trim_end())),
            Err(e) => eprintln!("error: cannot render YAML: {e}"),
        },
        OutputFormat::Table => print_out(&line()),
    }
}

/// `--field PATH`: the values at a dot path, strings bare, others as JSON.
/// A page (`{items: [...]}`) or an array applies the path to each item.
fn print_field<T: Serialize>(value: &T, path: &str) {
    let value = match serde_json::to_value(value) {
        Ok(value) => value,
        Err(e) => return eprintln!("error: cannot render JSON: {e}"),
    };
    let found = select(&value, path);
    if found.is_empty() {
        let empty = match value.get("items").unwrap_or(&value) {
            Value::Array(items) => items.is_empty(),
            _ => false,
        };
        if !empty {
            FIELD_MISS.store(true, Ordering::Relaxed);
        }
    } else {
        FIELD_HIT.store(true, Ordering::Relaxed);
    }
    for found in found {
        match found {
            Value::String(s) => print_out(s),
            other => print_out(&other.to_string()),
        }
    }
}

/// The values at `path` in `value` (see [`print_field`]).
pub fn select<'v>(value: &'v Value, path: &str) -> Vec<&'v Value> {
    let segments: Vec<&str> = path
        .trim_start_matches('.')
        .split('.')
        .filter(|s| !s.is_empty())
        .collect();
    // A page: the path is about its items unless it names a page field.
    let first = segments.first().copied().unwrap_or("");
    let value = match value.get("items") {
        Some(items @ Value::Array(_))
            if !matches!(first, "items" | "total" | "page" | "per_page") =>
        {
            items
        }
        _ => value,
    };
    let mut current = vec![value];
    for segment in segments {
        let mut next = Vec::new();
        for v in current {
            match v {
                Value::Array(items) => match segment.parse::<usize>() {
                    Ok(i) => next.extend(items.get(i)),
                    Err(_) if segment == "*" => next.extend(items.iter()),
                    Err(_) => next.extend(items.iter().filter_map(|item| item.get(segment))),
                },
                Value::Object(map) => next.extend(map.get(segment)),
                _ => {}
            }
        }
        current = next;
    }
    current
        .into_iter()
        .flat_map(|v| match v {
            Value::Array(items) if items.iter().all(|i| !i.is_object()) => {
                items.iter().collect::<Vec<_>>()
            }
            other => vec![other],
        })
        .collect()
}

/// Asks before a destructive operation: `--yes` goes ahead; on a terminal
/// the user types `y`; without a terminal (and no `--yes`) it refuses.
pub fn confirm(yes: bool, what: &str) -> anyhow::Result<()> {
    if yes {
        return Ok(());
    }
    if !std::io::stdin().is_terminal() {
        return Err(usage(format!(
            "{what}: refusing without --yes (stdin is not a terminal)"
        )));
    }
    eprint!("{what}. Continue? [y/N] ");
    let _ = std::io::stderr().flush();
    let mut answer = String::new();
    std::io::stdin().read_line(&mut answer)?;
    if matches!(answer.trim(), "y" | "Y" | "yes" | "YES" | "Yes") {
        Ok(())
    } else {
        anyhow::bail!("cancelled")
    }
}

/// A table with a header row, sized to the terminal.
pub fn table(headers: &[&str]) -> Table {
    let mut table = Table::new();
    table
        .load_style(UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Dynamic)
        .set_header(headers.to_vec());
    table
}

/// A two-column field/value table for one record.
pub fn fields(rows: &[(&str, String)]) -> Table {
    let mut table = table(&["field", "value"]);
    for (name, value) in rows {
        table.add_row(vec![name.to_string(), value.clone()]);
    }
    table
}

/// Writes a line to stdout; a closed pipe (`orch ... | head`) ends quietly.
pub fn print_out(text: &str) {
    let mut stdout = std::io::stdout().lock();
    if let Err(e) = writeln!(stdout, "{text}") {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
        eprintln!("error: cannot write output: {e}");
    }
}

/// The part of an id a person can tell apart: its last 8 hex digits. Tasks,
/// workflows and work items have UUIDv7 ids, whose first 8 hex digits are a
/// timestamp (the same for everything created in one minute or so); the
/// last ones are random.
pub fn short_id(id: &uuid::Uuid) -> String {
    let hex = id.simple().to_string();
    hex[hex.len() - 8..].to_owned()
}

/// Shows an optional value as text.
pub fn opt<T: ToString>(value: &Option<T>) -> String {
    value
        .as_ref()
        .map_or_else(|| "-".to_owned(), ToString::to_string)
}

/// The server's hints name its routes (any client reads them); in a
/// terminal the route's command is what helps.
const ROUTE_COMMANDS: &[(&str, &str)] = &[
    (
        "DELETE /playbooks/:id/permanent",
        "`orch playbooks delete ID --permanent`",
    ),
    (
        "PATCH /playbooks/:id/archive with archived false",
        "`orch playbooks archive ID --undo`",
    ),
];

/// `hint` with the routes it names replaced by their `orch` commands.
fn cli_hint(hint: &str) -> String {
    ROUTE_COMMANDS
        .iter()
        .fold(hint.to_owned(), |hint, (route, command)| {
            hint.replace(route, command)
        })
}

/// Prints an error on stderr and picks the exit code.
pub fn report_error(error: &anyhow::Error) -> ExitCode {
    let api = error
        .chain()
        .find_map(|e| e.downcast_ref::<orchestrator_client::Error>());
    if let Some(orchestrator_client::Error::Api {
        status,
        error: body,
        ..
    }) = api
    {
        eprintln!("error: {} ({}): {}", body.code, status, body.message);
        if let Some(fields) = api.and_then(orchestrator_client::Error::field_errors) {
            for (field, messages) in fields {
                let text = match messages {
                    Value::Array(list) => list
                        .iter()
                        .map(|m| m.as_str().map_or_else(|| m.to_string(), str::to_owned))
                        .collect::<Vec<_>>()
                        .join("; "),
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                eprintln!("  {field}: {text}");
            }
        }
        if let Some(hint) = &body.recovery_hint {
            eprintln!("hint: {}", cli_hint(hint));
        }
        return ExitCode::from(match status {
            401 | 403 => 3,
            404 => 4,
            409 => 5,
            _ => 1,
        });
    }
    if let Some(orchestrator_client::Error::Transport(e)) = api
        && (e.is_connect() || e.is_timeout())
    {
        // Once, in words, instead of reqwest's chain of causes.
        let url = e.url().map_or_else(String::new, |u| {
            let mut base = u.clone();
            base.set_path("");
            base.set_query(None);
            format!(" at {}", base.as_str().trim_end_matches('/'))
        });
        let why = if e.is_timeout() {
            "timed out"
        } else {
            "connection refused"
        };
        // What the command was doing, when it said so (`could not read the
        // server's version`), then the one line about the server.
        let doing = error
            .chain()
            .next()
            .filter(|top| !top.is::<orchestrator_client::Error>())
            .map_or_else(String::new, |top| format!("{top}: "));
        eprintln!("error: {doing}cannot reach orch{url} ({why}): is `orch serve` running?");
        return ExitCode::FAILURE;
    }
    eprintln!("error: {error:#}");
    if error.chain().any(|e| e.is::<Usage>()) {
        return ExitCode::from(2);
    }
    if error.chain().any(|e| e.is::<NotFound>()) {
        return ExitCode::from(4);
    }
    if error.chain().any(|e| e.is::<Conflict>()) {
        return ExitCode::from(5);
    }
    ExitCode::FAILURE
}
