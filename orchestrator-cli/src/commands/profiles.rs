//! `orch profiles list|use|delete`, `orch logout` and `orch auth
//! refresh|logout`: the saved profiles and the session routes.

use crate::cli::GlobalOpts;
use crate::config::{self, ConfigFile};
use crate::output::{self, fields, table};
use anyhow::{Context, bail};
use clap::{Args, Subcommand};
use serde::Serialize;

#[derive(Debug, Subcommand)]
pub enum ProfilesCommand {
    /// The saved profiles; `*` marks the current one.
    #[command(after_help = "Example:\n  orch profiles list -o json")]
    List,
    /// Make a profile the current one.
    #[command(after_help = "Example:\n  orch profiles use staging")]
    Use(NameArg),
    /// Forget a profile and its credential.
    #[command(after_help = "Example:\n  orch profiles delete staging --yes")]
    Delete(NameArg),
}

#[derive(Debug, Args)]
pub struct NameArg {
    /// The profile's name.
    pub name: String,
}

#[derive(Debug, Serialize)]
struct ProfileView {
    name: String,
    url: String,
    current: bool,
    has_api_key: bool,
    has_session: bool,
}

pub async fn run(global: &GlobalOpts, command: ProfilesCommand) -> anyhow::Result<()> {
    let mut file = ConfigFile::load()?;
    let current = file.current.clone().unwrap_or_else(|| "default".to_owned());
    match command {
        ProfilesCommand::List => {
            let views: Vec<ProfileView> = file
                .profiles
                .iter()
                .map(|(name, p)| ProfileView {
                    name: name.clone(),
                    url: p.url.clone(),
                    current: *name == current,
                    has_api_key: !p.api_key.is_empty(),
                    has_session: p.refresh_token.is_some(),
                })
                .collect();
            output::emit(global.format(), &views, || {
                let mut t = table(&["", "name", "url", "credential"]);
                for v in &views {
                    t.add_row(vec![
                        if v.current { "*" } else { "" }.to_owned(),
                        v.name.clone(),
                        v.url.clone(),
                        match (v.has_api_key, v.has_session) {
                            (true, true) => "api key, session",
                            (true, false) => "api key",
                            (false, true) => "session",
                            (false, false) => "none (logged out)",
                        }
                        .to_owned(),
                    ]);
                }
                t
            });
        }
        ProfilesCommand::Use(args) => {
            if !file.profiles.contains_key(&args.name) {
                bail!(
                    "no profile named {:?} (see `orch profiles list`)",
                    args.name
                );
            }
            file.current = Some(args.name.clone());
            file.save()?;
            eprintln!("now using profile {}", args.name);
        }
        ProfilesCommand::Delete(args) => {
            if !file.profiles.contains_key(&args.name) {
                bail!(
                    "no profile named {:?} (see `orch profiles list`)",
                    args.name
                );
            }
            output::confirm(global.yes, &format!("delete profile {}", args.name))?;
            file.profiles.remove(&args.name);
            if file.current.as_deref() == Some(args.name.as_str()) {
                file.current = None;
            }
            file.save()?;
            eprintln!("deleted profile {}", args.name);
        }
    }
    Ok(())
}

/// `orch logout`: revokes the profile's saved session (`POST /auth/logout`)
/// and removes its credentials; the URL stays for the next `orch login`.
pub async fn logout(global: &GlobalOpts) -> anyhow::Result<()> {
    let mut file = ConfigFile::load()?;
    let name = global
        .profile
        .clone()
        .or_else(|| file.current.clone())
        .unwrap_or_else(|| "default".to_owned());
    let Some(profile) = file.profiles.get_mut(&name) else {
        bail!("no profile named {name:?}: nothing to log out of");
    };
    let mut revoked = false;
    if let Some(refresh) = profile.refresh_token.clone() {
        orchestrator_client::Client::new(&profile.url)?
            .auth()
            .logout(Some(&refresh))
            .await
            .context("the server did not end the session")?;
        revoked = true;
    }
    profile.api_key.clear();
    profile.clear_session();
    file.save()?;
    let out =
        serde_json::json!({ "profile": name, "session_revoked": revoked, "logged_out": true });
    output::emit(global.format(), &out, || {
        fields(&[
            ("profile", name.clone()),
            ("session revoked", revoked.to_string()),
            ("credential", "removed".to_owned()),
        ])
    });
    Ok(())
}

#[derive(Debug, Subcommand)]
pub enum AuthCommand {
    /// Trade a refresh token for a new access token (`POST /auth/refresh`).
    ///
    /// Uses --refresh-token, else the profile's saved session (`orch login
    /// --session`), whose refresh token is then rotated in place.
    #[command(after_help = "Example:\n  orch auth refresh --field token")]
    Refresh(RefreshArgs),
    /// End a session (`POST /auth/logout`) without touching the profile.
    #[command(after_help = "Example:\n  orch auth logout --refresh-token \"$REFRESH\"")]
    Logout(RefreshArgs),
}

#[derive(Debug, Args)]
pub struct RefreshArgs {
    /// The refresh token (default: the profile's saved one).
    #[arg(long, env = "ORCH_REFRESH_TOKEN", hide_env_values = true)]
    pub refresh_token: Option<String>,
}

#[derive(Debug, Serialize)]
struct SessionView {
    token: String,
    expires_at: String,
    refresh_expires_at: String,
    refresh_token: Option<String>,
}

pub async fn run_auth(global: &GlobalOpts, command: AuthCommand) -> anyhow::Result<()> {
    let mut file = ConfigFile::load()?;
    let name = global
        .profile
        .clone()
        .or_else(|| file.current.clone())
        .unwrap_or_else(|| "default".to_owned());
    let saved = file
        .profiles
        .get(&name)
        .and_then(|p| p.refresh_token.clone());
    let client = config::anonymous_client(global)?;
    match command {
        AuthCommand::Refresh(args) => {
            let from_profile = args.refresh_token.is_none();
            let Some(refresh) = args.refresh_token.or(saved) else {
                bail!("no refresh token: give --refresh-token or run `orch login --session`");
            };
            let session = client.auth().refresh(&refresh).await?;
            if from_profile
                && let Some(profile) = file.profiles.get_mut(&name)
                && session.refresh_token.is_some()
            {
                profile.set_session(&session);
                file.save()?;
            }
            let view = SessionView {
                token: session.token,
                expires_at: session.expires_at.to_string(),
                refresh_expires_at: session.refresh_expires_at.to_string(),
                refresh_token: session.refresh_token,
            };
            output::emit(global.format(), &view, || {
                fields(&[
                    ("token", view.token.clone()),
                    ("expires_at", view.expires_at.clone()),
                    ("refresh_expires_at", view.refresh_expires_at.clone()),
                ])
            });
        }
        AuthCommand::Logout(args) => {
            let Some(refresh) = args.refresh_token.or(saved) else {
                bail!("no refresh token: give --refresh-token");
            };
            let out = client.auth().logout(Some(&refresh)).await?;
            output::emit(global.format(), &out, || {
                fields(&[("logged_out", out.logged_out.to_string())])
            });
        }
    }
    Ok(())
}
