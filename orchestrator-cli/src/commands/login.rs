//! `orch login`: exchanges the key once to prove it works, then saves it in
//! a profile.

use crate::cli::GlobalOpts;
use crate::config::{self, ConfigFile, Profile};
use crate::output::{self, fields};
use anyhow::{Context, bail};
use clap::Args;
use orchestrator_client::Client;
use std::io::BufRead;

#[derive(Debug, Args)]
pub struct LoginArgs {
    /// Read the API key from standard input instead of --api-key / ORCH_API_KEY.
    #[arg(long)]
    pub stdin: bool,
    /// Open a persistent session and save it instead of the key: commands
    /// then use its short-lived access token, refreshed as it expires (the
    /// key never sits on disk); `orch logout` revokes the session.
    #[arg(long)]
    pub session: bool,
    /// Also make the profile the current one. Without it, `--profile NAME`
    /// saves NAME and leaves the current profile as it was (the first
    /// profile saved becomes current either way).
    #[arg(long = "use")]
    pub use_profile: bool,
}

pub async fn run(global: &GlobalOpts, args: LoginArgs) -> anyhow::Result<()> {
    let url = config::resolve_url(global)?;
    let key = if args.stdin {
        let mut line = String::new();
        std::io::stdin()
            .lock()
            .read_line(&mut line)
            .context("cannot read the API key from stdin")?;
        line.trim().to_owned()
    } else {
        match &global.api_key {
            Some(key) => key.clone(),
            None => bail!("give the key with --api-key, ORCH_API_KEY or --stdin"),
        }
    };
    if key.is_empty() {
        bail!("the API key is empty");
    }
    let session = Client::new(&url)?
        .auth()
        .token(&key, args.session)
        .await
        .context("the server refused the key")?;
    let exchange = session
        .exchange
        .clone()
        .context("the token answer lacked scope and tenant")?;

    let mut file = ConfigFile::load()?;
    let name = config::profile_name(global);
    let mut profile = Profile {
        url: url.clone(),
        api_key: String::new(),
        refresh_token: None,
        access_token: None,
        access_expires_at: None,
    };
    if args.session {
        if session.refresh_token.is_none() {
            bail!("the server opened no session (no refresh token in its answer)");
        }
        profile.set_session(&session);
    } else {
        profile.api_key = key;
    }
    file.profiles.insert(name.clone(), profile);
    if args.use_profile || global.profile.is_none() || file.current.is_none() {
        file.current = Some(name.clone());
    }
    let current = file.current.clone().unwrap_or_default();
    let path = file.save()?;
    output::emit(
        global.format(),
        &serde_json::json!({
            "url": url, "profile": name, "current": current, "scope": exchange.scope, "tenant_id": exchange.tenant_id, "config": path,
        }),
        || {
            fields(&[
                ("url", url.clone()),
                ("profile", name.clone()),
                ("current profile", current.clone()),
                ("scope", exchange.scope.to_string()),
                ("tenant_id", exchange.tenant_id.to_string()),
                ("saved to", path.display().to_string()),
            ])
        },
    );
    Ok(())
}
