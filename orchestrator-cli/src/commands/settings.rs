//! `orch settings llm get|set`: the tenant's LLM provider (admin).

use crate::cli::GlobalOpts;
use crate::config;
use crate::output::{self, fields, opt};
use clap::{Args, Subcommand};
use orchestrator_client::api::{LlmSettings, PutLlmSettings, SECRET_MASK};

#[derive(Debug, Subcommand)]
pub enum SettingsCommand {
    /// The LLM provider whose key claimed tasks receive.
    #[command(subcommand)]
    Llm(LlmCommand),
}

#[derive(Debug, Subcommand)]
pub enum LlmCommand {
    /// Show the settings (secrets as ********).
    Get,
    /// Change the settings; what is not given is kept.
    Set(SetArgs),
}

#[derive(Debug, Args)]
pub struct SetArgs {
    /// The LLM provider: `openai`, `anthropic` or any OpenAI-compatible service.
    #[arg(long)]
    pub provider: Option<String>,
    /// The model agents use by default, e.g. `gpt-4o`.
    #[arg(long)]
    pub model: Option<String>,
    /// The provider's API base URL (for a self-hosted or compatible service).
    #[arg(long)]
    pub base_url: Option<String>,
    /// The provider's API key (better from the environment than on the
    /// command line; `--api-key` is the credential for orch itself).
    #[arg(long, env = "ORCH_LLM_API_KEY", hide_env_values = true)]
    pub llm_api_key: Option<String>,
    /// Remove the stored provider API key.
    #[arg(long, conflicts_with = "llm_api_key")]
    pub clear_llm_api_key: bool,
    /// An extra header `NAME=VALUE` (repeatable; replaces all stored ones).
    #[arg(long = "header", value_parser = parse_header)]
    pub headers: Vec<(String, String)>,
}

fn parse_header(text: &str) -> Result<(String, String), String> {
    text.split_once('=')
        .map(|(n, v)| (n.trim().to_owned(), v.to_owned()))
        .ok_or_else(|| "expected NAME=VALUE".to_owned())
}

pub async fn run(global: &GlobalOpts, command: SettingsCommand) -> anyhow::Result<()> {
    let client = config::client(global)?;
    let settings = client.settings();
    let SettingsCommand::Llm(command) = command;
    match command {
        LlmCommand::Get => show(global, &settings.llm().await?),
        LlmCommand::Set(args) => {
            let current = settings.llm().await?;
            let provider = args
                .provider
                .or(current.provider)
                .ok_or_else(|| anyhow::anyhow!("--provider is required the first time"))?;
            let api_key = match (args.llm_api_key, args.clear_llm_api_key) {
                (_, true) => None,
                (Some(key), false) => Some(key),
                // The mask keeps the stored key.
                (None, false) => current.api_key,
            };
            let extra_headers = if args.headers.is_empty() {
                current.extra_headers
            } else {
                args.headers.into_iter().collect()
            };
            let request = PutLlmSettings {
                provider,
                model: args.model.or(current.model),
                base_url: args.base_url.or(current.base_url),
                api_key,
                extra_headers: Some(extra_headers),
            };
            show(global, &settings.put_llm(&request).await?);
        }
    }
    Ok(())
}

fn show(global: &GlobalOpts, s: &LlmSettings) {
    output::emit(global.format(), s, || {
        fields(&[
            ("provider", opt(&s.provider)),
            ("model", opt(&s.model)),
            ("base_url", opt(&s.base_url)),
            ("api_key", opt(&s.api_key)),
            (
                "extra_headers",
                s.extra_headers
                    .keys()
                    .map(|k| format!("{k}={SECRET_MASK}"))
                    .collect::<Vec<_>>()
                    .join(", "),
            ),
            ("updated_at", opt(&s.updated_at)),
        ])
    });
}
