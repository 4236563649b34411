//! Everything printed: tables or JSON on stdout, errors on stderr, exit codes.

use crate::cli::OutputFormat;
use comfy_table::{ContentArrangement, Table, presets::UTF8_FULL_CONDENSED};
use serde::Serialize;
use serde_json::Value;
use std::io::{IsTerminal, Write};
use std::process::ExitCode;
use std::sync::OnceLock;

/// The global `--field` path, set once at start.
static FIELD: OnceLock<Option<String>> = OnceLock::new();

/// Remembers `--field` for every later [`emit`].
pub fn set_field(path: Option<String>) {
    let _ = FIELD.set(path);
}

fn field() -> Option<&'static str> {
    FIELD.get().and_then(|f| f.as_deref())
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
        OutputFormat::Table => print_out(&table().to_string()),
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
    for found in select(&value, path) {
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
        anyhow::bail!("{what}: refusing without --yes (stdin is not a terminal)");
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
            eprintln!("hint: {hint}");
        }
        return ExitCode::from(match status {
            401 | 403 => 3,
            404 => 4,
            409 => 5,
            _ => 1,
        });
    }
    eprintln!("error: {error:#}");
    ExitCode::FAILURE
}
