//! Everything printed: tables or JSON on stdout, errors on stderr, exit codes.

use crate::cli::OutputFormat;
use comfy_table::{ContentArrangement, Table, presets::UTF8_FULL_CONDENSED};
use serde::Serialize;
use std::io::Write;
use std::process::ExitCode;

/// Prints `value` as pretty JSON, or as the table `rows` builds.
pub fn emit<T: Serialize>(format: OutputFormat, value: &T, table: impl FnOnce() -> Table) {
    match format {
        OutputFormat::Json => match serde_json::to_string_pretty(value) {
            Ok(text) => print_out(&text),
            Err(e) => eprintln!("error: cannot render JSON: {e}"),
        },
        OutputFormat::Table => print_out(&table().to_string()),
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
                eprintln!("  {field}: {messages}");
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
