//! The workspace's repository: URL and branch checks, the host a stored
//! token is bound to, and the token sealed at rest (never read back).

use super::rows::WorkspaceRow;
use crate::control_plane::ControlPlane;
use crate::error::{Error, Result};
use uuid::Uuid;

/// The context a workspace's git token is encrypted under.
pub(crate) fn token_context(workspace_id: Uuid) -> String {
    format!("workspace-git-token:{workspace_id}")
}

/// Accepts `https://`, `http://`, `ssh://`, `git://`, `file://` URLs and
/// scp-like `user@host:path`.
pub(crate) fn validate_repository_url(url: &str) -> Result<()> {
    let schemes = ["https://", "http://", "ssh://", "git://", "file://"];
    let ok = url.len() <= 2000
        && !url.chars().any(char::is_whitespace)
        && (schemes
            .iter()
            .any(|s| url.len() > s.len() && url.to_ascii_lowercase().starts_with(s))
            || url
                .split_once('@')
                .is_some_and(|(user, rest)| !user.is_empty() && rest.contains(':')));
    if ok {
        Ok(())
    } else {
        Err(Error::schema_field(
            "repository_url",
            "must be an https, http, ssh, git or file URL (or user@host:path)",
        ))
    }
}

/// The host a repository URL names, lowercased and without user or port
/// (`""` for `file://` paths); `None` when there is none to find. A stored git
/// token is bound to the host it was given for.
pub(crate) fn repository_host(url: &str) -> Option<String> {
    let lower = url.trim().to_ascii_lowercase();
    let authority = match lower.split_once("://") {
        Some(("file", _)) => return Some(String::new()),
        Some((_, rest)) => rest.split(['/', '?', '#']).next()?,
        // scp-like `user@host:path`
        None => lower.split_once('@')?.1.split(':').next()?,
    };
    let host = authority.rsplit('@').next()?;
    let host = match host.strip_prefix('[') {
        Some(v6) => v6.split(']').next()?,
        None => host.split(':').next()?,
    };
    Some(host.to_owned())
}

/// Where a stored git token may be sent: the scheme, host and port of a
/// repository URL (the scheme's default port spelled out), as git's own
/// credential matching binds a credential. Another port of the same host
/// can be another service, or someone else's.
pub(crate) fn token_origin(url: &str) -> Option<String> {
    let host = repository_host(url)?;
    let lower = url.trim().to_ascii_lowercase();
    let (scheme, port) = match lower.split_once("://") {
        Some(("file", _)) => return Some("file://".to_owned()),
        Some((scheme, rest)) => {
            let authority = rest.split(['/', '?', '#']).next()?;
            let host_port = authority.rsplit('@').next()?;
            let port = match host_port.rsplit_once(']') {
                Some((_, after)) => after.strip_prefix(':'),
                None => host_port.split_once(':').map(|(_, port)| port),
            };
            (scheme.to_owned(), port.filter(|p| !p.is_empty()))
        }
        // scp-like `user@host:path` is ssh on its default port
        None => ("ssh".to_owned(), None),
    };
    let default = match scheme.as_str() {
        "https" => "443",
        "http" => "80",
        "ssh" => "22",
        "git" => "9418",
        _ => "",
    };
    Some(format!("{scheme}://{host}:{}", port.unwrap_or(default)))
}

/// Refuses to keep a stored git token when the repository moves to another
/// scheme, host or port ([`token_origin`]): the token would be sent there.
pub(crate) fn check_token_host(row: &WorkspaceRow, new_url: &str, field: &str) -> Result<()> {
    if row.git_token_encrypted.is_none() {
        return Ok(());
    }
    let bound = row.repository_url.as_deref().and_then(token_origin);
    let new = token_origin(new_url);
    if bound.is_some() && bound == new {
        return Ok(());
    }
    Err(Error::invalid_field(
        field,
        format!(
            "the stored git token was given for `{}`; another scheme, host or port needs git_token_mode replace or clear",
            bound.unwrap_or_default()
        ),
    ))
}

pub(crate) fn validate_branch(branch: &str) -> Result<()> {
    let ok = !branch.is_empty()
        && branch.len() <= 255
        && !branch.starts_with('-')
        && !branch.contains("..")
        && !branch
            .chars()
            .any(|c| c.is_whitespace() || c.is_control() || "~^:?*[\\".contains(c));
    if ok {
        Ok(())
    } else {
        Err(Error::schema_field(
            "default_branch",
            "is not a valid branch name",
        ))
    }
}

impl ControlPlane {
    /// Encrypts a workspace's git token for storage.
    pub(crate) fn seal_git_token(&self, workspace_id: Uuid, token: &str) -> String {
        self.secrets()
            .encrypt(token.as_bytes(), token_context(workspace_id).as_bytes())
    }

    /// The decrypted git token of a workspace row, if one is stored.
    pub(crate) fn workspace_git_token(&self, row: &WorkspaceRow) -> Result<Option<String>> {
        row.git_token_encrypted
            .as_deref()
            .map(|sealed| {
                let bytes = self
                    .secrets()
                    .decrypt(sealed, token_context(row.id).as_bytes())?;
                String::from_utf8(bytes).map_err(Error::internal)
            })
            .transpose()
    }
}
