//! The command line: global options and one subcommand per resource.

use crate::commands::{
    agents, api_keys, bench, catalog, completions, events, login, logs, playbooks, serve, tasks,
    tenants, workflows, workspaces,
};
use clap::{Args, Parser, Subcommand, ValueEnum};

#[derive(Debug, Parser)]
#[command(
    name = "orch",
    version,
    about = "orch: workflow-orchestration control plane",
    propagate_version = true
)]
pub struct Cli {
    #[command(flatten)]
    pub global: GlobalOpts,
    #[command(subcommand)]
    pub command: Command,
}

/// Options every command takes. Each is resolved flag first, then the
/// environment, then the saved profile.
#[derive(Debug, Clone, Args)]
pub struct GlobalOpts {
    /// Base URL of the control plane.
    #[arg(long, global = true, env = "ORCH_URL")]
    pub url: Option<String>,
    /// API key (or access token) to call it with.
    #[arg(long, global = true, env = "ORCH_API_KEY", hide_env_values = true)]
    pub api_key: Option<String>,
    /// Saved profile to use.
    #[arg(long, global = true, env = "ORCH_PROFILE")]
    pub profile: Option<String>,
    /// Output format.
    #[arg(short = 'o', long = "output", global = true, value_enum, default_value_t = OutputFormat::Table)]
    pub output: OutputFormat,
    /// Short for `-o json`.
    #[arg(long, global = true)]
    pub json: bool,
}

impl GlobalOpts {
    pub fn format(&self) -> OutputFormat {
        if self.json {
            OutputFormat::Json
        } else {
            self.output
        }
    }
}

/// `--page` and `--per-page`, shared by every list command.
#[derive(Debug, Clone, Copy, Args)]
pub struct PageArgs {
    #[arg(long, default_value_t = 1)]
    pub page: u32,
    /// At most 100.
    #[arg(long, default_value_t = 20)]
    pub per_page: u32,
}

impl PageArgs {
    pub fn request(self) -> orchestrator_client::api::PageRequest {
        orchestrator_client::api::PageRequest::new(self.page, self.per_page)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    Table,
    Json,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the control plane (embedded SQLite by default).
    Serve(serve::ServeArgs),
    /// Check an API key against a server and save it in a profile.
    Login(login::LoginArgs),
    /// Show who the current credential is.
    Whoami,
    /// Print this client's version and the server's.
    ///
    /// Example: `orch version -o json`
    Version,
    /// Manage API keys (admin).
    #[command(subcommand, name = "api-keys")]
    ApiKeys(api_keys::ApiKeysCommand),
    /// Manage tenants (service).
    #[command(subcommand)]
    Tenants(tenants::TenantsCommand),
    /// Print a shell completion script.
    Completions(completions::CompletionsArgs),
    /// Launch, follow and steer workflows.
    #[command(subcommand)]
    Workflows(workflows::WorkflowsCommand),
    /// Create, claim and move tasks through their lifecycle.
    #[command(subcommand)]
    Tasks(tasks::TasksCommand),
    /// Register and inspect agents.
    #[command(subcommand)]
    Agents(agents::AgentsCommand),
    /// Register and inspect workers.
    #[command(subcommand)]
    Workers(agents::WorkersCommand),
    /// Load generator: lifecycle, claim-latency, ingest, stream, noop.
    Bench(bench::BenchArgs),
    /// Manage playbooks (revisioned process definitions).
    #[command(subcommand)]
    Playbooks(playbooks::PlaybooksCommand),
    /// Manage workspaces, their memory, spec, files and artifacts.
    #[command(subcommand)]
    Workspaces(workspaces::WorkspacesCommand),
    /// Browse and import the community playbook catalog (admin).
    #[command(subcommand)]
    Catalog(catalog::CatalogCommand),
    /// Read, follow, export and count log rows.
    #[command(subcommand)]
    Logs(logs::LogsCommand),
    /// List or follow entity events.
    #[command(subcommand)]
    Events(events::EventsCommand),
    // Execution environments, fleet and the worker (issue 11)
    /// Manage execution environments: create, verify, approve or block (admin).
    #[command(subcommand)]
    Envs(crate::commands::environments::EnvsCommand),
    /// Workers, their agents and the containers they report (admin).
    #[command(subcommand)]
    Fleet(crate::commands::fleet::FleetCommand),
    /// Run tasks: `orch worker run --name NAME -- COMMAND [ARGS...]`.
    #[command(subcommand)]
    Worker(crate::commands::worker::WorkerCommand),
    // Integrations (A2A, ACP, claim credentials, remote MCP)
    /// A2A task ingress: the agent card, submit, get, watch.
    #[command(subcommand)]
    A2a(crate::commands::a2a::A2aCommand),
    /// ACP sessions and the claim that opens one.
    #[command(subcommand)]
    Acp(crate::commands::acp::AcpCommand),
    /// Tenant settings: the LLM provider (admin).
    #[command(subcommand)]
    Settings(crate::commands::settings::SettingsCommand),
    /// Remote MCP servers, verified before they are stored (admin).
    #[command(subcommand)]
    Mcp(crate::commands::mcp::McpCommand),
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_command_line_is_consistent() {
        use clap::CommandFactory;
        super::Cli::command().debug_assert();
    }
}
