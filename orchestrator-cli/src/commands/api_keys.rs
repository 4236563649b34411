//! `orch api-keys list|create|revoke`.

use crate::cli::{GlobalOpts, PageArgs};
use crate::config;
use crate::output::{self, fields, opt, table};
use clap::{Args, Subcommand};
use orchestrator_client::api::{ApiKey, CreateApiKey, Scope, Timestamp};
use uuid::Uuid;

#[derive(Debug, Subcommand)]
pub enum ApiKeysCommand {
    /// List the tenant's keys, newest first.
    List(PageArgs),
    /// Issue a key; it is printed once.
    Create(CreateArgs),
    /// Revoke a key by id.
    Revoke(RevokeArgs),
}

#[derive(Debug, Args)]
pub struct CreateArgs {
    /// agent, worker, admin or service.
    #[arg(long)]
    pub scope: Scope,
    /// A name to tell the key apart in `api-keys list` (default: the scope).
    #[arg(long)]
    pub name: Option<String>,
    /// RFC 3339 time after which the key stops working.
    #[arg(long)]
    pub expires_at: Option<String>,
    /// Idempotency key: repeating the command with it returns the same key.
    #[arg(long)]
    pub request_id: Option<String>,
}

#[derive(Debug, Args)]
pub struct RevokeArgs {
    /// The key's id (as `api-keys list` shows it).
    pub id: Uuid,
}

pub async fn run(global: &GlobalOpts, command: ApiKeysCommand) -> anyhow::Result<()> {
    let client = config::client(global)?;
    match command {
        ApiKeysCommand::List(args) => {
            let list = client.api_keys();
            let page = args.fetch(|p| list.list(p)).await?;
            output::emit(global.format(), &page, || {
                let mut t = table(&[
                    "id", "name", "scope", "prefix", "created", "expires", "status",
                ]);
                for key in &page.items {
                    t.add_row(row(key));
                }
                t
            });
        }
        ApiKeysCommand::Create(args) => {
            let expires_at = match args.expires_at {
                Some(text) => Some(serde_json::from_value::<Timestamp>(
                    serde_json::Value::String(text),
                )?),
                None => None,
            };
            let request = CreateApiKey {
                name: args.name,
                scope: args.scope,
                expires_at,
                owner_type: None,
                owner_id: None,
                request_id: args.request_id,
            };
            let created = client.api_keys().create(&request).await?;
            output::emit(global.format(), &created, || {
                fields(&[
                    ("id", created.key.id.to_string()),
                    ("name", created.key.name.clone()),
                    ("scope", created.key.scope.to_string()),
                    ("api_key", created.api_key.clone()),
                    ("expires", opt(&created.key.expires_at)),
                ])
            });
            if global.format() == crate::cli::OutputFormat::Table {
                eprintln!("Store the key now: it is not shown again.");
            }
        }
        ApiKeysCommand::Revoke(args) => {
            output::confirm(global.yes, &format!("revoke API key {}", args.id))?;
            let key = client.api_keys().revoke(args.id).await?;
            output::emit(global.format(), &key, || {
                let mut t = table(&[
                    "id", "name", "scope", "prefix", "created", "expires", "status",
                ]);
                t.add_row(row(&key));
                t
            });
        }
    }
    Ok(())
}

fn row(key: &ApiKey) -> Vec<String> {
    let status = if key.revoked_at.is_some() {
        "revoked"
    } else {
        "active"
    };
    vec![
        key.id.to_string(),
        key.name.clone(),
        key.scope.to_string(),
        key.key_prefix.clone(),
        key.created_at.to_string(),
        opt(&key.expires_at),
        status.to_owned(),
    ]
}
