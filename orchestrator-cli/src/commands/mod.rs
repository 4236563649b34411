//! One module per resource; each verb has its own clap `Args`.

pub mod admin;
pub mod agents;
pub mod api_keys;
pub mod artifacts;
pub mod bench;
pub mod bulk;
pub mod catalog;
pub mod completions;
pub mod db;
pub mod docs;
pub mod environments;
pub mod events;
pub mod fleet;
pub mod login;
pub mod logs;
pub mod playbooks;
pub mod schedules;
pub mod serve;
pub mod task_run_control;
pub mod tasks;
pub mod tenants;
pub mod worker;
pub mod workflows;
pub mod workspaces;

// Integrations (A2A, ACP, claim credentials, remote MCP)
pub mod a2a;
pub mod acp;
pub mod limits;
pub mod mcp;
pub mod settings;
pub mod webhooks;

// Profiles and sessions (issue 15)
pub mod profiles;

// Why a task failed or waits (issue 36)
pub mod resolve;
pub mod upload;
pub mod why;

use crate::cli::{Cli, Command};
use crate::config;
use crate::output::{self, fields, opt};

pub async fn run(cli: Cli) -> anyhow::Result<()> {
    let global = cli.global;
    match cli.command {
        Command::Serve(args) => serve::run(args).await,
        Command::Admin(command) => admin::run(command).await,
        Command::Db(command) => db::run(&global, command).await,
        Command::Login(args) => login::run(&global, args).await,
        Command::Whoami => {
            let me = config::client(&global)?.auth().me().await?;
            output::emit(global.format(), &me, || {
                fields(&[
                    ("scope", me.scope.to_string()),
                    ("tenant_id", me.tenant_id.to_string()),
                    ("owner_type", me.owner_type.clone()),
                    ("owner_id", opt(&me.owner_id)),
                    ("key_id", me.key_id.to_string()),
                ])
            });
            Ok(())
        }
        Command::Version => version(&global).await,
        Command::ApiKeys(command) => api_keys::run(&global, command).await,
        Command::Tenants(command) => tenants::run(&global, command).await,
        Command::Completions(args) => completions::run(args),
        Command::Workflows(command) => workflows::run(&global, command).await,
        Command::Tasks(command) => tasks::run(&global, command).await,
        Command::Agents(command) => agents::run(&global, command).await,
        Command::Workers(command) => agents::run_workers(&global, command).await,
        Command::Bench(args) => bench::run(&global, args).await,
        Command::Logs(command) => logs::run(&global, command).await,
        Command::Events(command) => events::run(&global, command).await,
        Command::Playbooks(command) => playbooks::run(&global, command).await,
        Command::Workspaces(command) => workspaces::run(&global, command).await,
        Command::Catalog(command) => catalog::run(&global, command).await,
        // Execution environments, fleet and the worker (issue 11)
        Command::Envs(command) => environments::run(&global, command).await,
        Command::Fleet(command) => fleet::run(&global, command).await,
        // Schedules (issue 29)
        Command::Schedules(command) => schedules::run(&global, command).await,
        Command::Worker(command) => worker::run(&global, command).await,
        // Integrations (A2A, ACP, claim credentials, remote MCP)
        Command::A2a(command) => a2a::run(&global, command).await,
        Command::Acp(command) => acp::run(&global, command).await,
        Command::Settings(command) => settings::run(&global, command).await,
        Command::Mcp(command) => mcp::run(&global, command).await,
        Command::Webhooks(command) => webhooks::run(&global, command).await,
        Command::Limits(command) => limits::run(&global, command).await,
        // Profiles and sessions (issue 15)
        Command::Profiles(command) => profiles::run(&global, command).await,
        Command::Logout => profiles::logout(&global).await,
        Command::Auth(command) => profiles::run_auth(&global, command).await,
        Command::Docs(command) => docs::run(command),
    }
}

/// `orch version`: the client's version, then the server's (an unreachable
/// server is an error after the client line, as `kubectl version` does).
async fn version(global: &crate::cli::GlobalOpts) -> anyhow::Result<()> {
    let client_version = env!("CARGO_PKG_VERSION");
    let server = config::anonymous_client(global)?.health().version().await;
    match server {
        Ok(server) => {
            let both =
                serde_json::json!({ "client": { "version": client_version }, "server": server });
            output::emit(global.format(), &both, || {
                fields(&[
                    ("client", client_version.to_owned()),
                    ("server", server.version.clone()),
                    ("api", server.api_version.clone()),
                ])
            });
            Ok(())
        }
        Err(e) => {
            println!("client  {client_version}");
            Err(anyhow::Error::new(e).context("could not read the server's version"))
        }
    }
}

/// The text of the file at `path`, or of standard input when it is `-`
/// (`orch logs ingest`, `orch tasks create-batch`).
pub fn read_path_or_stdin(path: &str) -> anyhow::Result<String> {
    if path == "-" {
        let mut text = String::new();
        std::io::Read::read_to_string(&mut std::io::stdin(), &mut text)?;
        Ok(text)
    } else {
        std::fs::read_to_string(path).map_err(|e| anyhow::anyhow!("cannot read {path}: {e}"))
    }
}
