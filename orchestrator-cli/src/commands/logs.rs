//! `orch logs tail|query|get|export|stats`.
//!
//! `tail` prints one readable, coloured line per row (colours only when stdout
//! is a terminal and `NO_COLOR` is unset), or one JSON object per line with
//! `-o json`. `tail -f` keeps following: the SDK stream reconnects and
//! resumes after the last row printed, so it survives a server restart.

use crate::cli::{GlobalOpts, OutputFormat};
use crate::commands::resolve;
use crate::config;
use crate::output::{self, fields, opt, table};
use anstyle::{AnsiColor, Style};
use anyhow::Context;
use clap::{Args, Subcommand};
use futures_util::StreamExt;
use orchestrator_client::api::{
    ExportFormat, LogCategory, LogDetail, LogFilter, LogGroupBy, LogLevel, LogQuery, LogRow,
    LogSource, LogStatus, SortOrder,
};
use orchestrator_client::{Client, LogStreamItem, StreamFrom};
use std::io::{IsTerminal, Write};
use uuid::Uuid;

#[derive(Debug, Subcommand)]
pub enum LogsCommand {
    /// Print the latest rows, oldest first; `-f` keeps following.
    Tail(TailArgs),
    /// One page of rows, newest first.
    Query(QueryArgs),
    /// One row by id.
    Get(GetArgs),
    /// Download every matching row as CSV or JSON.
    Export(ExportArgs),
    /// Row counts grouped by a field.
    Stats(StatsArgs),
    /// The distinct operations logged (`GET /logs/operations`).
    #[command(after_help = "Example:\n  orch logs operations -o json")]
    Operations,
    /// The distinct roles logged (`GET /logs/roles`).
    #[command(after_help = "Example:\n  orch logs roles")]
    Roles,
    /// The distinct actors logged (`GET /logs/actors`).
    #[command(after_help = "Example:\n  orch logs actors --field actor_id")]
    Actors,
    /// The workflows that have log rows (`GET /logs/workflows`).
    #[command(after_help = "Example:\n  orch logs workflows")]
    Workflows,
    /// Send rows (`POST /logs/ingest`, worker key): a JSON array of entries,
    /// or one JSON object per line, from a file or `-` for stdin.
    #[command(
        after_help = "Examples:\n  orch logs ingest rows.json\n  echo '{\"category\":\"tool\",\"operation\":\"git.push\"}' | orch logs ingest -"
    )]
    Ingest(IngestArgs),
}

#[derive(Debug, Args)]
pub struct IngestArgs {
    /// The file to read, or `-` for stdin.
    pub path: String,
}

/// The filters every log command takes.
#[derive(Debug, Clone, Default, Args)]
pub struct FilterArgs {
    /// Only rows of this workflow (id, id prefix, short id or name).
    #[arg(long = "workflow")]
    pub workflow: Option<String>,
    /// Only rows of this workspace (id, id prefix, slug or name).
    #[arg(long = "workspace")]
    pub workspace: Option<String>,
    /// Only rows of this task (id, id prefix or short id).
    #[arg(long = "task")]
    pub task: Option<String>,
    /// Only rows of this work item (id; with --workflow also its id
    /// prefix, short id or title).
    #[arg(long = "work-item")]
    pub work_item: Option<String>,
    /// Only rows of this workflow activation (id).
    #[arg(long = "activation")]
    pub activation_id: Option<Uuid>,
    /// Only rows of this stage.
    #[arg(long = "stage")]
    pub stage_name: Option<String>,
    /// debug, info, warn or error.
    #[arg(long)]
    pub level: Option<LogLevel>,
    /// llm, tool, task_lifecycle or auth.
    #[arg(long)]
    pub category: Option<LogCategory>,
    /// runtime, platform or task_container.
    #[arg(long)]
    pub source: Option<LogSource>,
    /// Only rows of this operation, e.g. `task.fail` or `llm.chat`.
    #[arg(long)]
    pub operation: Option<String>,
    /// started, completed or failed.
    #[arg(long)]
    pub status: Option<LogStatus>,
    /// Only rows of tasks of this role.
    #[arg(long)]
    pub role: Option<String>,
    /// Only rows of this trace (id).
    #[arg(long = "trace")]
    pub trace_id: Option<Uuid>,
    /// RFC 3339 time or a duration back from now: 30s, 10m, 2h, 1d.
    #[arg(long)]
    pub since: Option<String>,
    /// RFC 3339 time or a duration back from now.
    #[arg(long)]
    pub until: Option<String>,
    /// Substring of the operation or payload.
    #[arg(long)]
    pub search: Option<String>,
}

impl FilterArgs {
    /// The filter, with the workflow, workspace, task and work item typed
    /// as people type them resolved to ids.
    pub async fn filter(&self, client: &Client) -> anyhow::Result<LogFilter> {
        let workflow_id = resolve::workflow_opt(client, self.workflow.as_deref()).await?;
        Ok(LogFilter {
            workspace_id: resolve::workspace_opt(client, self.workspace.as_deref()).await?,
            workflow_id,
            task_id: resolve::task_opt(client, self.task.as_deref()).await?,
            work_item_id: resolve::work_item_opt(client, workflow_id, self.work_item.as_deref())
                .await?,
            stage_name: self.stage_name.clone(),
            activation_id: self.activation_id,
            source: self.source,
            category: self.category,
            level: self.level,
            operation: self.operation.clone(),
            status: self.status,
            role: self.role.clone(),
            trace_id: self.trace_id,
            since: self.since.clone(),
            until: self.until.clone(),
            search: self.search.clone(),
        })
    }
}

#[derive(Debug, Args)]
pub struct TailArgs {
    #[command(flatten)]
    pub filter: FilterArgs,
    /// Keep following new rows (survives server restarts).
    #[arg(short = 'f', long)]
    pub follow: bool,
    /// How many recent rows to print first.
    #[arg(short = 'n', long, default_value_t = 20)]
    pub lines: u32,
}

#[derive(Debug, Args)]
pub struct QueryArgs {
    #[command(flatten)]
    pub filter: FilterArgs,
    /// Rows per page (at most 500).
    #[arg(long, default_value_t = 50)]
    pub per_page: u32,
    /// The `next cursor` a previous page printed.
    #[arg(long)]
    pub cursor: Option<String>,
    /// Leave payloads out and shorten errors.
    #[arg(long)]
    pub summary: bool,
}

#[derive(Debug, Args)]
pub struct GetArgs {
    /// The log row's id (as `logs tail -o json` shows it).
    pub id: String,
}

#[derive(Debug, Args)]
pub struct ExportArgs {
    #[command(flatten)]
    pub filter: FilterArgs,
    /// csv or json.
    #[arg(long, default_value = "json")]
    pub format: ExportFormat,
    /// asc (oldest first) or desc.
    #[arg(long, default_value = "desc")]
    pub order: SortOrder,
    /// File to write (stdout when absent). (`-o` is the global output format.)
    #[arg(long = "out", value_name = "FILE")]
    pub out: Option<std::path::PathBuf>,
}

#[derive(Debug, Args)]
pub struct StatsArgs {
    #[command(flatten)]
    pub filter: FilterArgs,
    /// category, operation, level, task_id, work_item_id, stage_name,
    /// activation_id, is_orchestrator_task, source, execution_backend, tool_owner.
    #[arg(long)]
    pub group_by: LogGroupBy,
}

pub async fn run(global: &GlobalOpts, command: LogsCommand) -> anyhow::Result<()> {
    let client = config::client(global)?;
    match command {
        LogsCommand::Operations | LogsCommand::Roles => {
            let names = match command {
                LogsCommand::Operations => client.logs().operations().await?,
                _ => client.logs().roles().await?,
            };
            output::emit(global.format(), &names, || {
                let mut t = output::table(&["name"]);
                for n in &names {
                    t.add_row(vec![n.clone()]);
                }
                t
            });
        }
        LogsCommand::Actors => {
            let actors = client.logs().actors().await?;
            output::emit(global.format(), &actors, || {
                let mut t = output::table(&["actor"]);
                for a in &actors {
                    t.add_row(vec![serde_json::to_string(a).unwrap_or_default()]);
                }
                t
            });
        }
        LogsCommand::Workflows => {
            let ids = client.logs().workflows().await?;
            output::emit(global.format(), &ids, || {
                let mut t = output::table(&["workflow"]);
                for id in &ids {
                    t.add_row(vec![id.to_string()]);
                }
                t
            });
        }
        LogsCommand::Ingest(args) => {
            let text = super::read_path_or_stdin(&args.path)?;
            let entries: Vec<orchestrator_client::api::NewLogEntry> =
                if text.trim_start().starts_with('[') {
                    serde_json::from_str(&text)
                        .map_err(|e| anyhow::anyhow!("not a JSON array of log entries: {e}"))?
                } else {
                    text.lines()
                        .filter(|l| !l.trim().is_empty())
                        .enumerate()
                        .map(|(i, l)| {
                            serde_json::from_str(l)
                                .map_err(|e| anyhow::anyhow!("line {}: {e}", i + 1))
                        })
                        .collect::<anyhow::Result<_>>()?
                };
            let ingested = client.logs().ingest(entries).await?;
            output::emit(global.format(), &ingested, || {
                fields(&[(
                    "ingested",
                    serde_json::to_string(&ingested).unwrap_or_default(),
                )])
            });
        }
        LogsCommand::Tail(args) => {
            let filter = args.filter.filter(&client).await?;
            let painter = Painter::for_stdout();
            let page = client
                .logs()
                .query(&LogQuery {
                    filter: filter.clone(),
                    per_page: Some(args.lines.clamp(1, 500)),
                    ..Default::default()
                })
                .await?;
            // `-n 0` shows no old rows; the newest one still marks where
            // `-f` follows from.
            let last = page.items.first().map(|row| row.id.clone());
            let shown = page.items.len().min(args.lines as usize);
            for row in page.items[..shown].iter().rev() {
                print_row(global.format(), &painter, row);
            }
            if args.follow {
                let from = last.map_or(StreamFrom::Now, StreamFrom::AfterId);
                let filter = LogFilter {
                    since: None,
                    ..filter
                };
                let mut stream = client.logs().stream(&filter, from);
                while let Some(item) = stream.next().await {
                    match item? {
                        LogStreamItem::Log(row) => print_row(global.format(), &painter, &row),
                        LogStreamItem::Heartbeat(_) => {}
                    }
                }
            }
        }
        LogsCommand::Query(args) => {
            let page = client
                .logs()
                .query(&LogQuery {
                    filter: args.filter.filter(&client).await?,
                    detail: args.summary.then_some(LogDetail::Summary),
                    cursor: args.cursor,
                    per_page: Some(args.per_page),
                })
                .await?;
            output::emit(global.format(), &page, || {
                let mut t = table(&[
                    "id",
                    "created",
                    "level",
                    "category",
                    "operation",
                    "status",
                    "duration",
                    "task",
                ]);
                for row in &page.items {
                    t.add_row(vec![
                        row.id.clone(),
                        row.created_at.to_string(),
                        row.level.to_string(),
                        row.category.to_string(),
                        row.operation.clone(),
                        opt(&row.status),
                        row.duration_ms.map_or("-".into(), |d| format!("{d}ms")),
                        opt(&row.task_id),
                    ]);
                }
                t
            });
            if global.format() == OutputFormat::Table
                && let Some(cursor) = &page.next_cursor
            {
                eprintln!("more: --cursor {cursor}");
            }
        }
        LogsCommand::Get(args) => {
            let row = client
                .logs()
                .get(&args.id)
                .await?
                .with_context(|| format!("no log row {}", args.id))?;
            output::emit(global.format(), &row, || {
                let value = serde_json::to_value(&row).unwrap_or_default();
                let mut rows = Vec::new();
                if let serde_json::Value::Object(map) = value {
                    for (key, value) in map {
                        let text = match value {
                            serde_json::Value::Null => "-".to_owned(),
                            serde_json::Value::String(s) => s,
                            other => other.to_string(),
                        };
                        rows.push((key, text));
                    }
                }
                let refs: Vec<(&str, String)> =
                    rows.iter().map(|(k, v)| (k.as_str(), v.clone())).collect();
                fields(&refs)
            });
        }
        LogsCommand::Export(args) => {
            let mut chunks = client
                .logs()
                .export(&args.filter.filter(&client).await?, args.format, args.order)
                .await?;
            let mut sink: Box<dyn Write> = match &args.out {
                Some(path) => Box::new(std::io::BufWriter::new(
                    std::fs::File::create(path)
                        .with_context(|| format!("cannot create {}", path.display()))?,
                )),
                None => Box::new(std::io::stdout().lock()),
            };
            let progress = indicatif::ProgressBar::new_spinner();
            progress.set_draw_target(indicatif::ProgressDrawTarget::stderr());
            progress.set_style(
                indicatif::ProgressStyle::with_template(
                    "{spinner} exporting logs: {bytes} ({bytes_per_sec})",
                )
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_spinner()),
            );
            while let Some(chunk) = chunks.next().await {
                let chunk = chunk?;
                sink.write_all(&chunk)?;
                progress.inc(chunk.len() as u64);
            }
            sink.flush()?;
            progress.finish_and_clear();
            if let Some(path) = &args.out {
                eprintln!("wrote {} ({} bytes)", path.display(), progress.position());
            }
        }
        LogsCommand::Stats(args) => {
            let stats = client
                .logs()
                .stats(args.group_by, &args.filter.filter(&client).await?)
                .await?;
            output::emit(global.format(), &stats, || {
                let mut t = table(&[stats.group_by.as_str(), "count"]);
                for group in &stats.groups {
                    let value = match &group.value {
                        serde_json::Value::Null => "-".to_owned(),
                        serde_json::Value::String(s) => s.clone(),
                        other => other.to_string(),
                    };
                    t.add_row(vec![value, group.count.to_string()]);
                }
                t
            });
        }
    }
    Ok(())
}

/// Colours for the tail lines, or none.
pub struct Painter {
    enabled: bool,
}

impl Painter {
    /// Colours when stdout is a terminal and `NO_COLOR` is not set.
    pub fn for_stdout() -> Self {
        let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        Self {
            enabled: std::io::stdout().is_terminal() && !no_color,
        }
    }

    pub fn paint(&self, style: Style, text: &str) -> String {
        if self.enabled {
            format!("{style}{text}{style:#}")
        } else {
            text.to_owned()
        }
    }
}

fn level_style(level: LogLevel) -> Style {
    let color = match level {
        LogLevel::Debug => AnsiColor::BrightBlack,
        LogLevel::Info => AnsiColor::Green,
        LogLevel::Warn => AnsiColor::Yellow,
        LogLevel::Error => AnsiColor::Red,
    };
    Style::new().fg_color(Some(color.into())).bold()
}

/// One row as a readable line (or a JSON line).
pub fn format_row(painter: &Painter, row: &LogRow) -> String {
    let dim = Style::new().dimmed();
    let mut line = format!(
        "{} {} {} {}",
        painter.paint(dim, &row.created_at.to_string()),
        painter.paint(
            level_style(row.level),
            &format!("{:<5}", row.level.as_str().to_uppercase())
        ),
        painter.paint(
            Style::new().fg_color(Some(AnsiColor::Cyan.into())),
            &format!("{:<14}", row.category.as_str())
        ),
        painter.paint(Style::new().bold(), &row.operation),
    );
    if let Some(status) = row.status {
        let style = match status {
            LogStatus::Failed => Style::new().fg_color(Some(AnsiColor::Red.into())),
            LogStatus::Completed => Style::new().fg_color(Some(AnsiColor::Green.into())),
            LogStatus::Started => Style::new(),
        };
        line.push(' ');
        line.push_str(&painter.paint(style, status.as_str()));
    }
    if let Some(ms) = row.duration_ms {
        line.push_str(&format!(" {ms}ms"));
    }
    for (name, id) in [("workflow", &row.workflow_id), ("task", &row.task_id)] {
        if let Some(id) = id {
            let short = crate::output::short_id(id);
            line.push_str(&painter.paint(dim, &format!(" {name}={short}")));
        }
    }
    if let Some(actor) = row.actor_name.as_ref().or(row.actor_type.as_ref()) {
        line.push_str(&painter.paint(dim, &format!(" by {actor}")));
    }
    if let Some(error) = &row.error {
        let message = error
            .get("message")
            .and_then(|m| m.as_str())
            .map_or_else(|| error.to_string(), str::to_owned);
        line.push_str(&painter.paint(
            Style::new().fg_color(Some(AnsiColor::Red.into())),
            &format!(" error: {message}"),
        ));
    }
    if let Some(payload) = row
        .payload
        .as_ref()
        .filter(|p| p.as_object().is_some_and(|o| !o.is_empty()))
    {
        let mut text = payload.to_string();
        if text.len() > 200 {
            text = format!("{}…", text.chars().take(200).collect::<String>());
        }
        line.push(' ');
        line.push_str(&painter.paint(dim, &text));
    }
    line
}

fn print_row(format: OutputFormat, painter: &Painter, row: &LogRow) {
    output::emit_line(format, row, || format_row(painter, row));
}
