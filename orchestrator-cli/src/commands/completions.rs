//! `orch completions <shell>`.

use crate::cli::Cli;
use clap::{Args, CommandFactory};
use clap_complete::Shell;

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// bash, zsh, fish, elvish or powershell.
    pub shell: Shell,
}

pub fn run(args: CompletionsArgs) -> anyhow::Result<()> {
    let mut command = Cli::command();
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut command, "orch", &mut script);
    crate::output::print_out(String::from_utf8_lossy(&script).trim_end());
    Ok(())
}
