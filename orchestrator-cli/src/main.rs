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

use clap::FromArgMatches;
use std::process::ExitCode;

/// mimalloc instead of the system allocator. A profile of `orch serve`
/// under the lifecycle bench (BENCHMARKS.md item 16) spent about a sixth
/// of its samples in glibc's malloc and free: a request's values are
/// allocated on one thread (the HTTP runtime, the SQLite writer thread,
/// sqlx's connection thread) and freed on another, which glibc pays for
/// with arena locks and chunk consolidation. mimalloc's thread-local free
/// lists make both cheap. Only the binary chooses: the library crates leave
/// the allocator to whoever embeds them.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[tokio::main]
async fn main() -> ExitCode {
    quiet_on_closed_pipe();
    let matches = cli::command().get_matches();
    let cli = match cli::Cli::from_arg_matches(&matches) {
        Ok(cli) => cli,
        Err(e) => e.exit(),
    };
    output::set_field(cli.global.field.clone());
    match commands::run(cli).await {
        Ok(()) => match output::field_missed() {
            Some(missed) => output::report_error(&missed),
            None => ExitCode::SUCCESS,
        },
        Err(error) => output::report_error(&error),
    }
}

/// `orch ... | head -1`: a reader that stops early closes the pipe, and a
/// write that finds it closed (a `println!` anywhere, or a library's
/// `expect`) panics. That is the reader's choice, not an error of ours:
/// end quietly with success instead of a panic message and exit 101. Any
/// other panic keeps the default report.
fn quiet_on_closed_pipe() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let message = info
            .payload()
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| info.payload().downcast_ref::<&str>().copied())
            .unwrap_or("");
        if message.contains("Broken pipe") || message.contains("BrokenPipe") {
            std::process::exit(0);
        }
        default(info);
    }));
}
