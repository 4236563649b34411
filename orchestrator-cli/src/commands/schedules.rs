//! `orch schedules create|list|get|update|delete|pause|resume|trigger|backfill|runs`:
//! cron and interval schedules that launch a workflow or create a task
//! (admin).

use crate::cli::{GlobalOpts, OutputFormat, PageArgs};
use crate::commands::playbooks::read_document;
use crate::config;
use crate::output::{self, fields, opt, table};
use anyhow::{Context, bail};
use chrono::{DateTime, Utc};
use clap::{Args, Subcommand};
use orchestrator_client::api::schedules::{
    BackfillSchedule, CatchupPolicy, CreateSchedule, OverlapPolicy, PatchSchedule, Schedule,
    ScheduleFilter, ScheduleTarget, TriggerSchedule,
};
use orchestrator_client::api::{CreateTask, Timestamp};
use std::path::PathBuf;
use uuid::Uuid;

#[derive(Debug, Subcommand)]
pub enum SchedulesCommand {
    /// Create a schedule: `--cron` or `--every`, and `--playbook/--workspace`
    /// or `--task-file`.
    Create(CreateArgs),
    /// List schedules, newest first, with their next fire.
    List(ListArgs),
    /// Show a schedule.
    Get(IdArgs),
    /// Change a schedule (a new spec or zone recomputes the next fire).
    Update(UpdateArgs),
    /// Delete a schedule and its run history.
    Delete(IdArgs),
    /// Pause: no fires until resumed.
    Pause(IdArgs),
    /// Resume from now (paused time is not caught up).
    Resume(IdArgs),
    /// Fire once now.
    Trigger(TriggerArgs),
    /// Fire every slot of a past range, oldest first.
    Backfill(BackfillArgs),
    /// A schedule's runs, newest first.
    Runs(RunsArgs),
}

#[derive(Debug, Args)]
pub struct IdArgs {
    /// The schedule's id.
    pub id: Uuid,
}

#[derive(Debug, Args)]
pub struct SpecArgs {
    /// A five-field cron expression or macro, e.g. "0 2 * * *" or @daily.
    #[arg(long, conflicts_with = "every")]
    pub cron: Option<String>,
    /// An interval: 30s, 5m, 2h, 1d (or plain seconds).
    #[arg(long, value_parser = parse_every)]
    pub every: Option<i64>,
    /// An IANA time zone (default UTC), e.g. Europe/Paris.
    #[arg(long)]
    pub tz: Option<String>,
    /// skip, buffer_one, allow_all or cancel_previous.
    #[arg(long)]
    pub overlap: Option<OverlapPolicy>,
    /// skip, latest or all.
    #[arg(long)]
    pub catchup: Option<CatchupPolicy>,
    /// How far back missed fires are caught up after downtime, in seconds.
    #[arg(long)]
    pub catchup_window_seconds: Option<i64>,
    /// Delay each fire by a random 0 to N seconds, so schedules set for the same minute do not
    /// all fire at once.
    #[arg(long)]
    pub jitter_seconds: Option<i64>,
}

#[derive(Debug, Args)]
pub struct CreateArgs {
    /// The schedule's name.
    #[arg(long)]
    pub name: String,
    /// What the schedule is for.
    #[arg(long)]
    pub description: Option<String>,
    #[command(flatten)]
    pub spec: SpecArgs,
    /// The playbook to launch (with --workspace).
    #[arg(long, requires = "workspace", conflicts_with = "task_file")]
    pub playbook: Option<Uuid>,
    /// The workspace the launched workflows run in (id, with --playbook).
    #[arg(long, requires = "playbook")]
    pub workspace: Option<Uuid>,
    /// A YAML or JSON file with the task to create (the POST /tasks body).
    #[arg(long)]
    pub task_file: Option<PathBuf>,
    /// Create the schedule paused.
    #[arg(long)]
    pub paused: bool,
    /// Makes the call replay-safe: the same id again answers the first schedule instead of
    /// creating a second.
    #[arg(long)]
    pub request_id: Option<String>,
}

#[derive(Debug, Args)]
pub struct UpdateArgs {
    /// The schedule's id.
    pub id: Uuid,
    /// A new name.
    #[arg(long)]
    pub name: Option<String>,
    /// A new description.
    #[arg(long)]
    pub description: Option<String>,
    #[command(flatten)]
    pub spec: SpecArgs,
}

#[derive(Debug, Args)]
pub struct ListArgs {
    /// Only paused (true) or only running (false) schedules.
    #[arg(long)]
    pub paused: Option<bool>,
    /// Search names and descriptions.
    #[arg(long)]
    pub search: Option<String>,
    #[command(flatten)]
    pub page: PageArgs,
}

#[derive(Debug, Args)]
pub struct TriggerArgs {
    /// The schedule's id.
    pub id: Uuid,
    /// Fire even while a previous run is running.
    #[arg(long)]
    pub ignore_overlap: bool,
}

#[derive(Debug, Args)]
pub struct BackfillArgs {
    /// The schedule's id.
    pub id: Uuid,
    /// The range's start (RFC 3339), included.
    #[arg(long)]
    pub from: DateTime<Utc>,
    /// The range's end (RFC 3339), excluded.
    #[arg(long)]
    pub to: DateTime<Utc>,
}

#[derive(Debug, Args)]
pub struct RunsArgs {
    /// The schedule's id.
    pub id: Uuid,
    #[command(flatten)]
    pub page: PageArgs,
}

/// `30s`, `5m`, `2h`, `1d` or plain seconds.
fn parse_every(text: &str) -> Result<i64, String> {
    let text = text.trim();
    let (number, unit) = match text.find(|c: char| !c.is_ascii_digit()) {
        Some(at) => text.split_at(at),
        None => (text, "s"),
    };
    let number: i64 = number
        .parse()
        .map_err(|_| format!("`{text}` is not an interval like 30s, 5m, 2h or 1d"))?;
    let unit = match unit {
        "s" => 1,
        "m" => 60,
        "h" => 3_600,
        "d" => 86_400,
        _ => return Err(format!("`{text}`: the unit is one of s, m, h, d")),
    };
    Ok(number * unit)
}

/// "in 3h 12m" / "5m ago".
fn relative(at: DateTime<Utc>, now: DateTime<Utc>) -> String {
    let seconds = (at - now).num_seconds();
    let span = seconds.unsigned_abs();
    let text = match span {
        0..60 => format!("{span}s"),
        60..3_600 => format!("{}m {}s", span / 60, span % 60),
        3_600..86_400 => format!("{}h {}m", span / 3_600, span % 3_600 / 60),
        _ => format!("{}d {}h", span / 86_400, span % 86_400 / 3_600),
    };
    if seconds >= 0 {
        format!("in {text}")
    } else {
        format!("{text} ago")
    }
}

/// `next fire`: relative and exact (`in 3h 12m (2026-11-27T02:00:00.000Z)`).
fn next_fire(schedule: &Schedule) -> String {
    match schedule.next_fire_at {
        Some(at) => format!("{} ({at})", relative(at.as_datetime(), Utc::now())),
        None if schedule.paused => "paused".into(),
        None => "none".into(),
    }
}

fn spec_text(schedule: &Schedule) -> String {
    match (&schedule.cron, schedule.every_seconds) {
        (Some(cron), _) => format!("cron {cron} ({})", schedule.timezone),
        (None, Some(seconds)) => format!("every {seconds}s"),
        _ => String::new(),
    }
}

fn target_text(target: &ScheduleTarget) -> String {
    match target {
        ScheduleTarget::Workflow { playbook_id, .. } => {
            format!("workflow of playbook {playbook_id}")
        }
        ScheduleTarget::Task { task } => format!("task \"{}\"", task.title),
    }
}

fn show(format: OutputFormat, schedule: &Schedule) {
    output::emit(format, schedule, || {
        fields(&[
            ("id", schedule.id.to_string()),
            ("name", schedule.name.clone()),
            ("spec", spec_text(schedule)),
            ("target", target_text(&schedule.target)),
            ("overlap", schedule.overlap.as_str().to_owned()),
            ("catchup", schedule.catchup.as_str().to_owned()),
            ("paused", schedule.paused.to_string()),
            ("next fire", next_fire(schedule)),
            ("last fired", opt(&schedule.last_fired_at)),
            (
                "fires / skips",
                format!("{} / {}", schedule.fire_count, schedule.skip_count),
            ),
        ])
    });
}

fn target(args: &CreateArgs) -> anyhow::Result<ScheduleTarget> {
    match (args.playbook, args.workspace, &args.task_file) {
        (Some(playbook_id), Some(workspace_id), None) => Ok(ScheduleTarget::Workflow {
            playbook_id,
            workspace_id,
            name: None,
            parameters: None,
            metadata: None,
        }),
        (None, None, Some(path)) => {
            let task: CreateTask = read_document(path)
                .with_context(|| format!("reading the task of {}", path.display()))?;
            Ok(ScheduleTarget::Task {
                task: Box::new(task),
            })
        }
        _ => bail!("give --playbook and --workspace, or --task-file"),
    }
}

pub async fn run(global: &GlobalOpts, command: SchedulesCommand) -> anyhow::Result<()> {
    let client = config::client(global)?;
    let schedules = client.schedules();
    let format = global.format();
    match command {
        SchedulesCommand::Create(args) => {
            if args.spec.cron.is_none() && args.spec.every.is_none() {
                bail!("give --cron or --every");
            }
            let request = CreateSchedule {
                name: args.name.clone(),
                description: args.description.clone(),
                cron: args.spec.cron.clone(),
                every_seconds: args.spec.every,
                timezone: args.spec.tz.clone(),
                overlap: args.spec.overlap,
                catchup: args.spec.catchup,
                catchup_window_seconds: args.spec.catchup_window_seconds,
                jitter_seconds: args.spec.jitter_seconds,
                start_at: None,
                end_at: None,
                paused: args.paused.then_some(true),
                target: target(&args)?,
                request_id: args.request_id.clone(),
            };
            show(format, &schedules.create(&request).await?);
        }
        SchedulesCommand::List(args) => {
            let filter = ScheduleFilter {
                paused: args.paused,
                search: args.search,
            };
            let page = args.page.fetch(|p| schedules.list(&filter, p)).await?;
            output::emit(format, &page, || {
                let mut t = table(&["id", "name", "spec", "next fire", "fires", "skips"]);
                for s in &page.items {
                    t.add_row(vec![
                        s.id.to_string(),
                        s.name.clone(),
                        spec_text(s),
                        next_fire(s),
                        s.fire_count.to_string(),
                        s.skip_count.to_string(),
                    ]);
                }
                t
            });
        }
        SchedulesCommand::Get(args) => show(format, &schedules.get(args.id).await?),
        SchedulesCommand::Update(args) => {
            let request = PatchSchedule {
                name: args.name,
                description: args.description.map(Some),
                cron: args.spec.cron,
                every_seconds: args.spec.every,
                timezone: args.spec.tz,
                overlap: args.spec.overlap,
                catchup: args.spec.catchup,
                catchup_window_seconds: args.spec.catchup_window_seconds,
                jitter_seconds: args.spec.jitter_seconds,
                ..Default::default()
            };
            show(format, &schedules.patch(args.id, &request).await?);
        }
        SchedulesCommand::Delete(args) => {
            let deleted = schedules.delete(args.id).await?;
            output::emit(format, &deleted, || {
                fields(&[("id", deleted.id.to_string()), ("deleted", "true".into())])
            });
        }
        SchedulesCommand::Pause(args) => show(format, &schedules.pause(args.id).await?),
        SchedulesCommand::Resume(args) => show(format, &schedules.resume(args.id).await?),
        SchedulesCommand::Trigger(args) => {
            let request = TriggerSchedule {
                ignore_overlap: args.ignore_overlap.then_some(true),
                request_id: None,
            };
            let run = schedules.trigger(args.id, &request).await?;
            output::emit(format, &run, || {
                fields(&[
                    ("run", run.id.to_string()),
                    ("scheduled_for", run.scheduled_for.to_string()),
                    ("outcome", run.outcome.as_str().to_owned()),
                    ("reason", opt(&run.reason)),
                    ("workflow_id", opt(&run.workflow_id)),
                    ("task_id", opt(&run.task_id)),
                ])
            });
        }
        SchedulesCommand::Backfill(args) => {
            let request = BackfillSchedule {
                from: Timestamp::from(args.from),
                to: Timestamp::from(args.to),
                request_id: None,
            };
            let backfill = schedules.backfill(args.id, &request).await?;
            output::emit(format, &backfill, || {
                fields(&[
                    ("schedule_id", backfill.schedule_id.to_string()),
                    ("slots", backfill.slots.to_string()),
                ])
            });
        }
        SchedulesCommand::Runs(args) => {
            let page = args.page.fetch(|p| schedules.runs(args.id, p)).await?;
            output::emit(format, &page, || {
                let mut t = table(&["scheduled_for", "outcome", "reason", "launched"]);
                for r in &page.items {
                    let launched = r
                        .workflow_id
                        .map(|id| format!("workflow {id}"))
                        .or(r.task_id.map(|id| format!("task {id}")))
                        .unwrap_or_default();
                    t.add_row(vec![
                        r.scheduled_for.to_string(),
                        r.outcome.as_str().to_owned(),
                        opt(&r.reason),
                        launched,
                    ]);
                }
                t
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn intervals_read_with_units() {
        assert_eq!(parse_every("5m"), Ok(300));
        assert_eq!(parse_every("90"), Ok(90));
        assert_eq!(parse_every("1d"), Ok(86_400));
        assert!(parse_every("5 parsecs").is_err());
    }
}
