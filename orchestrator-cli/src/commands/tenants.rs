//! `orch tenants create|list` (service scope).

use crate::cli::{GlobalOpts, PageArgs};
use crate::config;
use crate::output::{self, fields, table};
use clap::{Args, Subcommand};
use orchestrator_client::api::CreateTenant;

#[derive(Debug, Subcommand)]
pub enum TenantsCommand {
    /// Create a tenant; its first admin key is printed once.
    Create(CreateArgs),
    /// List tenants.
    List(PageArgs),
}

#[derive(Debug, Args)]
pub struct CreateArgs {
    /// The tenant's name.
    #[arg(long)]
    pub name: String,
    /// The tenant's short unique name (default: made from the name).
    #[arg(long)]
    pub slug: Option<String>,
    /// Makes the call replay-safe: the same id again answers the first tenant instead of
    /// creating a second.
    #[arg(long)]
    pub request_id: Option<String>,
}

pub async fn run(global: &GlobalOpts, command: TenantsCommand) -> anyhow::Result<()> {
    let client = config::client(global)?;
    match command {
        TenantsCommand::Create(args) => {
            output::confirm(
                global.yes,
                &format!("create tenant {:?} with a new admin key", args.name),
            )?;
            let created = client
                .tenants()
                .create(&CreateTenant {
                    name: args.name,
                    slug: args.slug,
                    request_id: args.request_id,
                })
                .await?;
            output::emit(global.format(), &created, || {
                fields(&[
                    ("id", created.tenant.id.to_string()),
                    ("name", created.tenant.name.clone()),
                    ("slug", created.tenant.slug.clone()),
                    ("admin api_key", created.admin_key.api_key.clone()),
                ])
            });
            if global.format() == crate::cli::OutputFormat::Table {
                eprintln!("Store the admin key now: it is not shown again.");
            }
        }
        TenantsCommand::List(args) => {
            let list = client.tenants();
            let page = args.fetch(|p| list.list(p)).await?;
            output::emit(global.format(), &page, || {
                let mut t = table(&["id", "name", "slug", "created"]);
                for tenant in &page.items {
                    t.add_row(vec![
                        tenant.id.to_string(),
                        tenant.name.clone(),
                        tenant.slug.clone(),
                        tenant.created_at.to_string(),
                    ]);
                }
                t
            });
        }
    }
    Ok(())
}
