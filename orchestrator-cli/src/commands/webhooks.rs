//! `orch webhooks create|list|get|update|delete|rotate-secret|test|deliveries|redeliver`:
//! outbound webhooks (admin). The secret is printed by `create` and
//! `rotate-secret` only; keep it then.

use crate::cli::{GlobalOpts, OutputFormat, PageArgs};
use crate::config;
use crate::output::{self, fields, opt, table};
use clap::{Args, Subcommand};
use orchestrator_client::api::{
    CreateWebhook, DeliveryFilter, DeliveryStatus, UpdateWebhook, Webhook, WebhookDelivery,
    WebhookWithSecret,
};
use uuid::Uuid;

#[derive(Debug, Subcommand)]
pub enum WebhooksCommand {
    /// Create a webhook; prints its secret once.
    #[command(
        after_help = "Example:\n  orch webhooks create https://ci.example.com/hooks/orch --event task.failed --event 'workflow.*'"
    )]
    Create(CreateArgs),
    /// List the webhooks, newest first.
    List(ListArgs),
    /// Show one webhook (never its secret).
    Get(IdArgs),
    /// Change a webhook's URL, event types, workspace, description or
    /// enabled flag.
    Update(UpdateArgs),
    /// Delete a webhook and its delivery log.
    Delete(IdArgs),
    /// A new secret, printed once; the old one also signs for 24 h.
    RotateSecret(IdArgs),
    /// Deliver a `webhook.test` event now and show the attempt.
    Test(IdArgs),
    /// The delivery log: every attempt, newest first.
    Deliveries(DeliveriesArgs),
    /// Queue a new attempt of a delivery (same webhook-id).
    Redeliver(RedeliverArgs),
}

#[derive(Debug, Args)]
pub struct CreateArgs {
    /// Where events are posted (http or https).
    #[arg(id = "webhook_url", value_name = "URL")]
    pub url: String,
    /// An event type (`task.failed`) or prefix (`task.*`); repeat it.
    #[arg(long = "event", required = true)]
    pub events: Vec<String>,
    /// Only events of this workspace.
    #[arg(long)]
    pub workspace: Option<Uuid>,
    /// What the webhook is for.
    #[arg(long)]
    pub description: Option<String>,
    /// Create it disabled.
    #[arg(long)]
    pub disabled: bool,
}

#[derive(Debug, Args)]
pub struct ListArgs {
    #[command(flatten)]
    pub page: PageArgs,
}

#[derive(Debug, Args)]
pub struct IdArgs {
    /// The webhook's id.
    pub id: Uuid,
}

#[derive(Debug, Args)]
pub struct UpdateArgs {
    /// The webhook's id.
    pub id: Uuid,
    /// A new URL to post to (`--url` is the server's own).
    #[arg(long = "endpoint", id = "webhook_url", value_name = "URL")]
    pub url: Option<String>,
    /// Replaces the event types; repeat it.
    #[arg(long = "event")]
    pub events: Vec<String>,
    /// Only events of this workspace (id) from now on.
    #[arg(long, conflicts_with = "all_workspaces")]
    pub workspace: Option<Uuid>,
    /// Events of every workspace again.
    #[arg(long)]
    pub all_workspaces: bool,
    /// A new description.
    #[arg(long)]
    pub description: Option<String>,
    /// Deliver events again.
    #[arg(long, conflicts_with = "disable")]
    pub enable: bool,
    /// Stop delivering events (they are not queued meanwhile).
    #[arg(long)]
    pub disable: bool,
}

#[derive(Debug, Args)]
pub struct DeliveriesArgs {
    /// The webhook's id.
    pub id: Uuid,
    /// Only attempts in this status: pending, delivered, failed.
    #[arg(long)]
    pub status: Option<DeliveryStatus>,
    #[command(flatten)]
    pub page: PageArgs,
}

#[derive(Debug, Args)]
pub struct RedeliverArgs {
    /// The webhook's id.
    pub id: Uuid,
    /// The delivery to send again (as `webhooks deliveries` lists it).
    pub delivery_id: Uuid,
}

pub async fn run(global: &GlobalOpts, command: WebhooksCommand) -> anyhow::Result<()> {
    let client = config::client(global)?;
    let hooks = client.webhooks();
    let format = global.format();
    match command {
        WebhooksCommand::Create(args) => {
            let created = hooks
                .create(&CreateWebhook {
                    url: args.url,
                    event_types: args.events,
                    workspace_id: args.workspace,
                    description: args.description,
                    enabled: Some(!args.disabled),
                })
                .await?;
            show_secret(format, &created);
        }
        WebhooksCommand::List(args) => {
            let page = hooks.list(args.page.request()).await?;
            output::emit(format, &page, || {
                let mut t = table(&["id", "url", "events", "workspace", "enabled"]);
                for w in &page.items {
                    t.add_row(vec![
                        w.id.to_string(),
                        w.url.clone(),
                        w.event_types.join(" "),
                        opt(&w.workspace_id),
                        w.enabled.to_string(),
                    ]);
                }
                t
            });
        }
        WebhooksCommand::Get(args) => show(format, &hooks.get(args.id).await?),
        WebhooksCommand::Update(args) => {
            let request = UpdateWebhook {
                url: args.url,
                event_types: (!args.events.is_empty()).then_some(args.events),
                workspace_id: match (args.workspace, args.all_workspaces) {
                    (Some(w), _) => Some(Some(w)),
                    (None, true) => Some(None),
                    (None, false) => None,
                },
                description: args.description.map(Some),
                enabled: match (args.enable, args.disable) {
                    (true, _) => Some(true),
                    (_, true) => Some(false),
                    _ => None,
                },
            };
            show(format, &hooks.update(args.id, &request).await?);
        }
        WebhooksCommand::Delete(args) => {
            output::confirm(
                global.yes,
                &format!("delete webhook {} and its delivery log", args.id),
            )?;
            let deleted = hooks.delete(args.id).await?;
            output::emit(format, &deleted, || {
                fields(&[
                    ("id", deleted.id.to_string()),
                    ("deleted", deleted.deleted.to_string()),
                ])
            });
        }
        WebhooksCommand::RotateSecret(args) => {
            show_secret(format, &hooks.rotate_secret(args.id).await?)
        }
        WebhooksCommand::Test(args) => show_attempts(format, &[hooks.test(args.id).await?]),
        WebhooksCommand::Deliveries(args) => {
            let request = args.page.request();
            let page = hooks
                .deliveries(
                    args.id,
                    &DeliveryFilter {
                        status: args.status,
                        page: Some(request.page),
                        per_page: Some(request.per_page),
                    },
                )
                .await?;
            show_attempts(format, &page.items);
            if format == OutputFormat::Table {
                eprintln!(
                    "page {} of {} ({} attempts)",
                    page.page,
                    page.pages(),
                    page.total
                );
            }
        }
        WebhooksCommand::Redeliver(args) => {
            show_attempts(format, &[hooks.redeliver(args.id, args.delivery_id).await?])
        }
    }
    Ok(())
}

fn show(format: OutputFormat, w: &Webhook) {
    output::emit(format, w, || fields(&rows(w)));
}

fn rows(w: &Webhook) -> Vec<(&'static str, String)> {
    vec![
        ("id", w.id.to_string()),
        ("url", w.url.clone()),
        ("event_types", w.event_types.join(" ")),
        ("workspace_id", opt(&w.workspace_id)),
        ("description", opt(&w.description)),
        ("enabled", w.enabled.to_string()),
        (
            "previous_secret_expires_at",
            opt(&w.previous_secret_expires_at),
        ),
        ("created_at", w.created_at.to_string()),
    ]
}

fn show_secret(format: OutputFormat, created: &WebhookWithSecret) {
    output::emit(format, created, || {
        let mut rows = rows(&created.webhook);
        rows.push(("secret", created.secret.clone()));
        fields(&rows)
    });
    if format == OutputFormat::Table {
        eprintln!("Keep the secret now: it is not shown again.");
    }
}

fn show_attempts(format: OutputFormat, attempts: &[WebhookDelivery]) {
    output::emit(format, &attempts, || {
        let mut t = table(&[
            "id", "event", "type", "attempt", "status", "code", "error", "next",
        ]);
        for a in attempts {
            t.add_row(vec![
                a.id.to_string(),
                a.event_id.to_string(),
                a.event_type.clone(),
                a.attempt.to_string(),
                a.status.to_string(),
                opt(&a.response_status),
                opt(&a.last_error),
                opt(&a.next_attempt_at),
            ]);
        }
        t
    });
}
