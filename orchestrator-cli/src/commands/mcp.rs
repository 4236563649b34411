//! `orch mcp list|get|add|update|reverify|connect|disconnect|delete`:
//! remote MCP servers
//! (admin). `add` and `update` read the server from a YAML or JSON file
//! (the API's camelCase fields); the server verifies it before storing.
//! Secret parameter values print as `********`; an `update` file may send
//! `********` to keep a stored secret.

use crate::cli::{GlobalOpts, OutputFormat, PageArgs};
use crate::commands::playbooks::read_document;
use crate::config;
use crate::output::{self, fields, opt, table};
use clap::{Args, Subcommand};
use orchestrator_client::api::{McpCapability, RemoteMcpServer, RemoteMcpServerRequest};
use std::path::PathBuf;
use uuid::Uuid;

#[derive(Debug, Subcommand)]
pub enum McpCommand {
    /// List the servers, newest first.
    List(ListArgs),
    /// Show one server.
    Get(IdArgs),
    /// Verify and store a server described in a file.
    Add(FileArgs),
    /// Replace a server from a file (verified first).
    Update(UpdateArgs),
    /// Verify a stored server again and record the outcome.
    Reverify(IdArgs),
    /// Start OAuth for a server with authMode oauth: prints the
    /// authorization URL to open in a browser.
    Connect(IdArgs),
    /// Revoke and delete a server's OAuth tokens.
    Disconnect(IdArgs),
    /// Delete a server.
    Delete(IdArgs),
}

#[derive(Debug, Args)]
pub struct ListArgs {
    #[command(flatten)]
    pub page: PageArgs,
}

#[derive(Debug, Args)]
pub struct IdArgs {
    /// The remote MCP server's id.
    pub id: Uuid,
}

#[derive(Debug, Args)]
pub struct FileArgs {
    /// A YAML or JSON file with name, endpointUrl, transportPreference,
    /// callTimeoutSeconds, authMode, enabledByDefaultForNewSpecialists,
    /// parameters.
    #[arg(short = 'f', long = "file")]
    pub file: PathBuf,
}

#[derive(Debug, Args)]
pub struct UpdateArgs {
    /// The remote MCP server's id.
    pub id: Uuid,
    /// A YAML or JSON file with the fields to change (as for `mcp create`).
    #[arg(short = 'f', long = "file")]
    pub file: PathBuf,
}

pub async fn run(global: &GlobalOpts, command: McpCommand) -> anyhow::Result<()> {
    let client = config::client(global)?;
    let servers = client.mcp_servers();
    let format = global.format();
    match command {
        McpCommand::List(args) => {
            let page = servers.list(args.page.request()).await?;
            output::emit(format, &page, || {
                let mut t = table(&["id", "name", "endpoint", "status", "transport", "tools"]);
                for s in &page.items {
                    t.add_row(vec![
                        s.id.to_string(),
                        s.name.clone(),
                        s.endpoint_url.clone(),
                        s.verification_status.as_str().to_owned(),
                        s.resolved_transport
                            .map(|t| t.as_str().to_owned())
                            .unwrap_or_default(),
                        s.capabilities.tools.len().to_string(),
                    ]);
                }
                t
            });
        }
        McpCommand::Get(args) => show(format, &servers.get(args.id).await?),
        McpCommand::Add(args) => {
            let request: RemoteMcpServerRequest = read_document(&args.file)?;
            show(format, &servers.create(&request).await?);
        }
        McpCommand::Update(args) => {
            let request: RemoteMcpServerRequest = read_document(&args.file)?;
            show(format, &servers.replace(args.id, &request).await?);
        }
        McpCommand::Reverify(args) => show(format, &servers.reverify(args.id).await?),
        McpCommand::Connect(args) => {
            let started = servers.oauth_reconnect(args.id).await?;
            output::emit(format, &started, || {
                fields(&[("authorization_url", started.authorization_url.clone())])
            });
        }
        McpCommand::Disconnect(args) => show(format, &servers.oauth_disconnect(args.id).await?),
        McpCommand::Delete(args) => show(format, &servers.delete(args.id).await?),
    }
    Ok(())
}

fn names(items: &[McpCapability]) -> String {
    items
        .iter()
        .map(|c| c.name.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

fn show(format: OutputFormat, s: &RemoteMcpServer) {
    output::emit(format, s, || {
        fields(&[
            ("id", s.id.to_string()),
            ("name", s.name.clone()),
            ("endpoint_url", s.endpoint_url.clone()),
            ("transport_preference", s.transport_preference.to_string()),
            ("resolved_transport", opt(&s.resolved_transport)),
            ("verification_status", s.verification_status.to_string()),
            ("verification_error", opt(&s.verification_error)),
            ("verified_at", opt(&s.verified_at)),
            ("auth_mode", s.auth_mode.to_string()),
            ("oauth_status", s.oauth_status.clone()),
            (
                "parameters",
                s.parameters
                    .iter()
                    .map(|p| format!("{} {}={}", p.placement, p.key, p.value))
                    .collect::<Vec<_>>()
                    .join(", "),
            ),
            ("tools", names(&s.capabilities.tools)),
            ("resources", names(&s.capabilities.resources)),
            ("prompts", names(&s.capabilities.prompts)),
        ])
    });
}
