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
    /// Output format: a table (default), JSON or YAML.
    #[arg(short = 'o', long = "output", global = true, value_enum, default_value_t = OutputFormat::Table)]
    pub output: OutputFormat,
    /// Short for `-o json`.
    #[arg(long, global = true)]
    pub json: bool,
    /// Print only this field of the result, one value a line: a dot path
    /// into the JSON (`id`, `workflow.state`, `items.0.id`). On a list,
    /// the path applies to each item (`--field id` prints every id).
    #[arg(long, global = true, value_name = "PATH")]
    pub field: Option<String>,
    /// Answer yes to confirmations (needed for destructive commands when
    /// stdin is not a terminal).
    #[arg(short = 'y', long, global = true)]
    pub yes: bool,
}

impl GlobalOpts {
    pub fn format(&self) -> OutputFormat {
        if self.json {
            OutputFormat::Json
        } else {
            self.output
        }
    }

    /// [`Self::format`] for a free-form document that has no table form
    /// (a context packet, claimed credentials): `table` prints it as JSON.
    pub fn document_format(&self) -> OutputFormat {
        match self.format() {
            OutputFormat::Table => OutputFormat::Json,
            other => other,
        }
    }
}

/// `--page`, `--per-page`, `--all` and `--limit`, shared by every list command.
#[derive(Debug, Clone, Copy, Args)]
pub struct PageArgs {
    /// The page to show, from 1.
    #[arg(long, default_value_t = 1)]
    pub page: u32,
    /// At most 100.
    #[arg(long, default_value_t = 20)]
    pub per_page: u32,
    /// Every item: read page after page until the end.
    #[arg(long, conflicts_with = "limit")]
    pub all: bool,
    /// At most N items, read page after page from `--page`.
    #[arg(long, value_name = "N")]
    pub limit: Option<u64>,
}

impl PageArgs {
    pub fn request(self) -> orchestrator_client::api::PageRequest {
        orchestrator_client::api::PageRequest::new(self.page, self.per_page)
    }

    /// One page, or with `--all`/`--limit` the pages after it gathered into
    /// one (its `total` is the server's, `per_page` the items returned).
    pub async fn fetch<T, F, Fut>(
        self,
        mut fetch: F,
    ) -> orchestrator_client::Result<orchestrator_client::api::Page<T>>
    where
        F: FnMut(orchestrator_client::api::PageRequest) -> Fut,
        Fut: std::future::Future<
                Output = orchestrator_client::Result<orchestrator_client::api::Page<T>>,
            >,
    {
        use orchestrator_client::api::{Page, PageRequest};
        let cap = match (self.all, self.limit) {
            (true, _) => u64::MAX,
            (false, Some(limit)) => limit,
            (false, None) => return fetch(self.request()).await,
        };
        let per_page = if self.all { 100 } else { self.per_page.max(1) };
        let mut number = self.page.max(1);
        let mut items = Vec::new();
        let mut total = 0;
        while (items.len() as u64) < cap {
            let page = fetch(PageRequest::new(number, per_page)).await?;
            total = page.total;
            let done = page.items.is_empty()
                || u64::from(page.page) * u64::from(page.per_page) >= page.total;
            items.extend(page.items);
            if done {
                break;
            }
            number += 1;
        }
        items.truncate(usize::try_from(cap).unwrap_or(usize::MAX));
        let returned = u32::try_from(items.len()).unwrap_or(u32::MAX);
        Ok(Page {
            items,
            total,
            page: self.page.max(1),
            per_page: returned,
        })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    Table,
    Json,
    Yaml,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the control plane (embedded SQLite by default).
    Serve(serve::ServeArgs),
    /// Work on the server's database directly, while the server is down
    /// (create an admin key when none is known).
    #[command(subcommand)]
    Admin(crate::commands::admin::AdminCommand),
    /// Back up, restore, check, or copy to PostgreSQL the server's database,
    /// working on the database itself (not through the API).
    #[command(subcommand)]
    Db(crate::commands::db::DbCommand),
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
    /// Cron and interval schedules that launch workflows or tasks (admin).
    #[command(subcommand)]
    Schedules(crate::commands::schedules::SchedulesCommand),
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
    /// Outbound webhooks, signed as Standard Webhooks, and their delivery
    /// log (admin).
    #[command(subcommand)]
    Webhooks(crate::commands::webhooks::WebhooksCommand),
    /// Flow limits per key: concurrency limits and rate limits (admin).
    #[command(subcommand)]
    Limits(crate::commands::limits::LimitsCommand),
    // Profiles and sessions (issue 15)
    /// Saved profiles: list, switch, delete.
    #[command(subcommand)]
    Profiles(crate::commands::profiles::ProfilesCommand),
    /// Revoke the profile's saved session and remove its credential.
    #[command(after_help = "Example:\n  orch logout --profile staging")]
    Logout,
    /// Session routes: refresh an access token, end a session.
    #[command(subcommand)]
    Auth(crate::commands::profiles::AuthCommand),
    /// The repository's generated pages (`orch docs cli` writes docs/cli.md).
    #[command(subcommand, hide = true)]
    Docs(crate::commands::docs::DocsCommand),
}

/// The command line as `orch` parses and prints it: [`with_examples`] and
/// [`globals_once`].
pub fn command() -> clap::Command {
    globals_once(with_examples(<Cli as clap::CommandFactory>::command()))
}

/// The global options are listed once, under their own heading in `orch
/// --help`, instead of in every subcommand's help, where they buried the
/// command's own options. Each subcommand still parses them anywhere on the
/// line: it gets hidden copies (clap's propagation of a global option skips
/// a command that already has one of that id, and the hidden copy is global
/// too, so it reaches the commands below); its help ends with a pointer.
pub fn globals_once(root: clap::Command) -> clap::Command {
    fn visit(mut command: clap::Command, globals: &[clap::Arg]) -> clap::Command {
        for global in globals {
            command = command.arg(global.clone().hide(true));
        }
        let names: Vec<String> = command
            .get_subcommands()
            .map(|s| s.get_name().to_owned())
            .collect();
        for name in names {
            command = command.mut_subcommand(&name, |sub| visit(sub, globals));
        }
        command.help_template(
            "{before-help}{about-with-newline}\n{usage-heading} {usage}\n\n{all-args}{after-help}\n\n\
             Global options (--url, --api-key, --profile, -o, --json, --field, -y): see `orch --help`.",
        )
    }
    let globals: Vec<clap::Arg> = root
        .get_arguments()
        .filter(|a| a.is_global_set())
        .cloned()
        .collect();
    let mut root = root;
    for global in &globals {
        root = root.mut_arg(global.get_id().clone(), |a| {
            a.help_heading("Global options")
        });
    }
    let names: Vec<String> = root
        .get_subcommands()
        .map(|s| s.get_name().to_owned())
        .collect();
    for name in names {
        root = root.mut_subcommand(&name, |sub| visit(sub, &globals));
    }
    root
}

/// The command line with an example in every command's help: commands
/// that give none get one built from their required arguments.
pub fn with_examples(command: clap::Command) -> clap::Command {
    fn visit(mut command: clap::Command, path: &str) -> clap::Command {
        let names: Vec<String> = command
            .get_subcommands()
            .map(|s| s.get_name().to_owned())
            .collect();
        for name in names {
            let sub_path = format!("{path} {name}");
            command = command.mut_subcommand(&name, |sub| visit(sub, &sub_path));
        }
        if command.get_subcommands().next().is_some() || path == "orch" {
            if command.get_after_help().is_none() {
                let first = command
                    .get_subcommands()
                    .find(|s| s.get_name() != "help")
                    .map(|s| s.get_name().to_owned());
                if let Some(first) = first {
                    command = command.after_help(format!("Example:\n  {path} {first} --help"));
                }
            }
            return command;
        }
        let documented = command.get_after_help().is_some()
            || command
                .get_long_about()
                .is_some_and(|a| a.to_string().contains("Example"))
            || command
                .get_about()
                .is_some_and(|a| a.to_string().contains("Example"));
        if documented {
            return command;
        }
        let mut example = path.to_owned();
        for arg in command.get_arguments() {
            if arg.is_global_set() || !arg.is_required_set() {
                continue;
            }
            let value = arg
                .get_value_names()
                .and_then(|names| names.first())
                .map_or_else(|| arg.get_id().as_str().to_uppercase(), |n| n.to_string());
            match arg.get_long() {
                Some(long) => example.push_str(&format!(" --{long} <{value}>")),
                // A trailing command (`last`) is only taken after `--`.
                None if arg.is_last_set() => example.push_str(&format!(" -- <{value}>...")),
                None => example.push_str(&format!(" <{value}>")),
            }
        }
        command.after_help(format!("Example:\n  {example}"))
    }
    visit(command, "orch")
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_command_has_an_example() {
        fn check(command: &clap::Command, path: &str) {
            let help = command
                .get_after_help()
                .map(|h| h.to_string())
                .unwrap_or_default()
                + &command
                    .get_long_about()
                    .map(|h| h.to_string())
                    .unwrap_or_default()
                + &command
                    .get_about()
                    .map(|h| h.to_string())
                    .unwrap_or_default();
            assert!(help.contains("Example"), "`{path}` has no example");
            for sub in command.get_subcommands() {
                if sub.get_name() != "help" {
                    check(sub, &format!("{path} {}", sub.get_name()));
                }
            }
        }
        use clap::CommandFactory;
        check(&super::with_examples(super::Cli::command()), "orch");
    }

    #[test]
    fn the_command_line_is_consistent() {
        use clap::CommandFactory;
        super::Cli::command().debug_assert();
    }
}
