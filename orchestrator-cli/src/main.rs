//! `orch`: the command-line interface of the orch control plane.
//!
//! Every operation goes through the SDK (`orchestrator-client`); `orch serve`
//! embeds the server. Data goes to stdout, progress and errors to stderr.
//!
//! Exit codes: 0 success, 1 failure, 2 usage error, 3 not authenticated or
//! not allowed (401/403), 4 not found (404), 5 conflict (409).

mod cli;
mod commands;
mod config;
mod output;

use clap::{CommandFactory, FromArgMatches};
use std::process::ExitCode;

#[tokio::main]
async fn main() -> ExitCode {
    let matches = cli::with_examples(cli::Cli::command()).get_matches();
    let cli = match cli::Cli::from_arg_matches(&matches) {
        Ok(cli) => cli,
        Err(e) => e.exit(),
    };
    output::set_field(cli.global.field.clone());
    match commands::run(cli).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => output::report_error(&error),
    }
}
