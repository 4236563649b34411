//! Saved profiles: `config.json` in the user's config directory (or the file
//! named by `ORCH_CONFIG`), written by `orch login`.

use crate::cli::GlobalOpts;
use anyhow::{Context, Result, bail};
use orchestrator_client::api::Timestamp;
use orchestrator_client::{Client, Session, SessionTokens};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::PathBuf;

pub const DEFAULT_URL: &str = "http://127.0.0.1:8080";
const DEFAULT_PROFILE: &str = "default";

#[derive(Debug, Default, Serialize, Deserialize)]
pub struct ConfigFile {
    #[serde(default)]
    pub current: Option<String>,
    #[serde(default)]
    pub profiles: BTreeMap<String, Profile>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Profile {
    pub url: String,
    /// Empty after `orch logout`.
    #[serde(default)]
    pub api_key: String,
    /// A session's refresh token (`orch login --session`). When present,
    /// commands authenticate with the session's access token, refreshed as
    /// it expires, and the rotated tokens are written back here.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refresh_token: Option<String>,
    /// The session's last access token, so each command does not refresh.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub access_token: Option<String>,
    /// When `access_token` expires.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub access_expires_at: Option<Timestamp>,
}

impl Profile {
    /// Keeps `session`'s tokens (after a login or a refresh).
    pub fn set_session(&mut self, session: &Session) {
        if let Some(refresh) = &session.refresh_token {
            self.refresh_token = Some(refresh.clone());
        }
        self.access_token = Some(session.token.clone());
        self.access_expires_at = Some(session.expires_at);
    }

    /// Forgets the session's tokens.
    pub fn clear_session(&mut self) {
        self.refresh_token = None;
        self.access_token = None;
        self.access_expires_at = None;
    }
}

pub fn path() -> Result<PathBuf> {
    if let Some(path) = std::env::var_os("ORCH_CONFIG") {
        return Ok(PathBuf::from(path));
    }
    let dir = dirs::config_dir().context("no config directory on this system; set ORCH_CONFIG")?;
    Ok(dir.join("orch").join("config.json"))
}

impl ConfigFile {
    pub fn load() -> Result<Self> {
        let path = path()?;
        match std::fs::read(&path) {
            Ok(bytes) => serde_json::from_slice(&bytes)
                .with_context(|| format!("{} is not a valid orch config", path.display())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Self::default()),
            Err(e) => Err(e).with_context(|| format!("cannot read {}", path.display())),
        }
    }

    /// Writes the file readable by its owner only (it holds keys).
    pub fn save(&self) -> Result<PathBuf> {
        let path = path()?;
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)
                .with_context(|| format!("cannot create {}", dir.display()))?;
        }
        let bytes = serde_json::to_vec_pretty(self)?;
        write_private(&path, &bytes).with_context(|| format!("cannot write {}", path.display()))?;
        Ok(path)
    }

    pub fn profile(&self, name: Option<&str>) -> Option<&Profile> {
        self.profiles.get(&self.profile_in_use(name))
    }

    /// The name of the profile a command reads: `name`, else the current
    /// one, else `default`.
    pub fn profile_in_use(&self, name: Option<&str>) -> String {
        name.or(self.current.as_deref())
            .unwrap_or(DEFAULT_PROFILE)
            .to_owned()
    }
}

#[cfg(unix)]
fn write_private(path: &std::path::Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)?;
    file.write_all(bytes)
}

#[cfg(not(unix))]
fn write_private(path: &std::path::Path, bytes: &[u8]) -> std::io::Result<()> {
    std::fs::write(path, bytes)
}

/// The profile name a command writes to or reads from.
pub fn profile_name(global: &GlobalOpts) -> String {
    global
        .profile
        .clone()
        .unwrap_or_else(|| DEFAULT_PROFILE.to_owned())
}

/// The URL to talk to: flag or `ORCH_URL`, else the profile's, else the default.
pub fn resolve_url(global: &GlobalOpts) -> Result<String> {
    if let Some(url) = &global.url {
        return Ok(url.clone());
    }
    let file = ConfigFile::load()?;
    Ok(file
        .profile(global.profile.as_deref())
        .map_or_else(|| DEFAULT_URL.to_owned(), |p| p.url.clone()))
}

/// An SDK client with the resolved URL and credential.
/// A client for the configured server without a credential (public routes
/// such as `/api/v1/version`).
pub fn anonymous_client(global: &GlobalOpts) -> Result<Client> {
    let file = ConfigFile::load()?;
    let profile = file.profile(global.profile.as_deref());
    let url = global
        .url
        .clone()
        .or_else(|| profile.map(|p| p.url.clone()))
        .unwrap_or_else(|| DEFAULT_URL.to_owned());
    Ok(Client::new(url)?)
}

/// An SDK client with the resolved URL and credential: `--api-key` /
/// `ORCH_API_KEY`, else the profile's session (refreshed as needed, the
/// rotated tokens saved back to the profile), else the profile's key.
pub fn client(global: &GlobalOpts) -> Result<Client> {
    let file = ConfigFile::load()?;
    let profile = file.profile(global.profile.as_deref());
    let url = global
        .url
        .clone()
        .or_else(|| profile.map(|p| p.url.clone()))
        .unwrap_or_else(|| DEFAULT_URL.to_owned());
    if global.api_key.is_none()
        && let Some(profile) = profile
        && let Some(refresh) = &profile.refresh_token
    {
        let name = file.profile_in_use(global.profile.as_deref());
        return session_client(url, name, profile, refresh);
    }
    let Some(key) = global
        .api_key
        .clone()
        .or_else(|| profile.map(|p| p.api_key.clone()))
        .filter(|key| !key.is_empty())
    else {
        bail!("no credential: run `orch login`, or set ORCH_API_KEY / --api-key");
    };
    Ok(Client::new(url)?.with_api_key(key))
}

/// A client on the profile `name`'s session. Each refresh rotates the
/// refresh token and the old one stops working, so the new tokens are saved
/// at once (a later command reusing the old one would end the session), and
/// before refreshing the client reads the profile again: another `orch`
/// (a `worker run` in another shell) may have refreshed meanwhile.
fn session_client(url: String, name: String, profile: &Profile, refresh: &str) -> Result<Client> {
    let builder = Client::builder(url);
    let builder = match (&profile.access_token, profile.access_expires_at) {
        (Some(token), Some(expires_at)) => builder.refresh_session(Session {
            token: token.clone(),
            expires_at,
            // Not used by the client; the server keeps the real one.
            refresh_expires_at: expires_at,
            refresh_token: Some(refresh.to_owned()),
            csrf_token: None,
            exchange: None,
        }),
        _ => builder.refresh_token(refresh),
    };
    let reload_name = name.clone();
    let client = builder
        .reload_session(move || {
            let file = ConfigFile::load().ok()?;
            let profile = file.profiles.get(&reload_name)?;
            Some(SessionTokens {
                refresh_token: profile.refresh_token.clone()?,
                access_token: profile.access_token.clone(),
                expires_at: profile.access_expires_at,
            })
        })
        .on_refresh(move |session| {
            if let Err(e) = save_session(&name, session) {
                eprintln!("warning: the session was refreshed but not saved ({e:#}); run `orch login --session` again");
            }
        })
        .build()?;
    Ok(client)
}

/// Writes `session`'s tokens into the profile `name`.
fn save_session(name: &str, session: &Session) -> Result<()> {
    let mut file = ConfigFile::load()?;
    let Some(profile) = file.profiles.get_mut(name) else {
        bail!("the profile {name:?} is gone");
    };
    profile.set_session(session);
    file.save()?;
    Ok(())
}
