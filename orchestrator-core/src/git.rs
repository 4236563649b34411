//! `verify-git-access`: a real check of a workspace's repository.
//!
//! The check runs `git ls-remote --symref <url> HEAD refs/heads/*` (the
//! smart-HTTP ref listing, or the ssh/file equivalent) with a timeout
//! ([`GIT_TIMEOUT`], the process is killed past it), no terminal prompt
//! (`GIT_TERMINAL_PROMPT=0`, `GIT_ASKPASS=true`, ssh in batch mode), no
//! credential helpers and no user or system git configuration. A token is
//! passed as an `http.extraHeader` through `GIT_CONFIG_COUNT`/`KEY`/`VALUE`
//! environment variables, never on the command line or in the URL, and is
//! redacted from anything git prints.
//!
//! A passing check answers `200` with the packet and stores the URL, the
//! branch and the token change (`git_token_mode`: `preserve` keeps and uses
//! the stored token, `replace` uses and stores `git_token`, `clear` checks
//! without one and removes the stored one). A failing check answers `400
//! VERIFICATION_FAILED` with the packet in `error.details`
//! (`failed_step` is `connect` or `branch`, `reason` says why) and stores
//! nothing.
//!
//! The stored token is bound to the host of the stored repository URL:
//! `preserve` with a URL on another host is refused (the token would be sent
//! there); another host needs `replace` or `clear`. `file://` paths and
//! hosts that are or resolve to loopback, link-local or private addresses
//! are refused unless the operator sets `ORCH_ALLOW_PRIVATE_NETWORK=true`
//! (the check resolves the name once; git resolves it again, so a name
//! whose answer changes in between is not caught).

use crate::api::workspaces::{GitTokenMode, GitVerification, VerifyGitAccess};
use crate::caller::Caller;
use crate::control_plane::ControlPlane;
use crate::error::{Error, Result};
use crate::events::{self, NewEvent};
use crate::idempotency::{Begun, Storage};
use crate::store::on_db;
use crate::workspaces::{
    check_token_host, lock_workspace, repository_host, require_workspace, update_row,
    validate_branch, validate_repository_url,
};
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde_json::json;
use std::net::IpAddr;
use std::process::Stdio;
use std::time::Duration;
use uuid::Uuid;

/// How long one `git ls-remote` may run.
pub const GIT_TIMEOUT: Duration = Duration::from_secs(15);

/// What the remote advertised.
#[derive(Debug, Default)]
struct Refs {
    head: Option<String>,
    branches: Vec<String>,
}

/// Runs `git ls-remote` against `url`; `Err(reason)` when it fails.
async fn ls_remote(url: &str, token: Option<&str>) -> std::result::Result<Refs, String> {
    let mut command = tokio::process::Command::new("git");
    command
        .args(["ls-remote", "--symref", "--", url, "HEAD", "refs/heads/*"])
        .env_clear()
        .env(
            "PATH",
            std::env::var_os("PATH").unwrap_or_else(|| "/usr/bin:/bin".into()),
        )
        .env("HOME", std::env::temp_dir())
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_ASKPASS", "true")
        .env("SSH_ASKPASS", "true")
        .env(
            "GIT_SSH_COMMAND",
            "ssh -o BatchMode=yes -o ConnectTimeout=10",
        )
        // Helpers (git-remote-https) give up on a stalled transfer themselves.
        .env("GIT_HTTP_LOW_SPEED_LIMIT", "1")
        .env("GIT_HTTP_LOW_SPEED_TIME", GIT_TIMEOUT.as_secs().to_string())
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_KEY_0", "credential.helper")
        .env("GIT_CONFIG_VALUE_0", "")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    match token {
        Some(token) => {
            let basic = STANDARD.encode(format!("x-access-token:{token}"));
            command
                .env("GIT_CONFIG_COUNT", "2")
                .env("GIT_CONFIG_KEY_1", "http.extraHeader")
                .env(
                    "GIT_CONFIG_VALUE_1",
                    format!("Authorization: Basic {basic}"),
                );
        }
        None => {
            command.env("GIT_CONFIG_COUNT", "1");
        }
    }
    let child = command
        .spawn()
        .map_err(|e| format!("could not run git: {e}"))?;
    let output = match tokio::time::timeout(GIT_TIMEOUT, child.wait_with_output()).await {
        Ok(Ok(output)) => output,
        Ok(Err(e)) => return Err(format!("git failed: {e}")),
        // Dropping the future kills the child (kill_on_drop).
        Err(_) => {
            return Err(format!("no answer within {} s", GIT_TIMEOUT.as_secs()));
        }
    };
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        let mut reason = stderr
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .map(|l| l.trim_start_matches("fatal: ").to_owned())
            .collect::<Vec<_>>()
            .join("; ");
        if reason.is_empty() {
            reason = format!("git ls-remote exited with {}", output.status);
        }
        if let Some(token) = token {
            reason = reason.replace(token, "********");
        }
        return Err(reason.chars().take(500).collect());
    }
    let mut refs = Refs::default();
    for line in String::from_utf8_lossy(&output.stdout).lines() {
        if let Some(rest) = line.strip_prefix("ref: ") {
            if let Some((target, name)) = rest.split_once('\t')
                && name == "HEAD"
            {
                refs.head = target.strip_prefix("refs/heads/").map(str::to_owned);
            }
        } else if let Some((_, name)) = line.split_once('\t')
            && let Some(branch) = name.strip_prefix("refs/heads/")
        {
            refs.branches.push(branch.to_owned());
        }
    }
    Ok(refs)
}

/// Refuses credentials inside an http(s) URL: they belong in `git_token`.
fn check_no_userinfo(url: &str) -> Result<()> {
    let lower = url.to_ascii_lowercase();
    if let Some(rest) = lower
        .strip_prefix("https://")
        .or_else(|| lower.strip_prefix("http://"))
    {
        let authority = rest.split('/').next().unwrap_or("");
        if authority.contains('@') {
            return Err(Error::invalid_field(
                "repository_url",
                "must not carry credentials; send the token as git_token",
            ));
        }
    }
    Ok(())
}

/// Whether an address is one a server must not be sent to on a tenant's
/// word: loopback, private (RFC 1918, IPv6 unique local), link-local
/// (cloud metadata lives there), carrier-grade NAT or unspecified.
fn is_private(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => {
            v4.is_loopback()
                || v4.is_private()
                || v4.is_link_local()
                || v4.is_unspecified()
                || v4.is_broadcast()
                || (v4.octets()[0] == 100 && (v4.octets()[1] & 0xc0) == 64)
        }
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => is_private(IpAddr::V4(v4)),
            None => {
                v6.is_loopback()
                    || v6.is_unspecified()
                    || (v6.segments()[0] & 0xfe00) == 0xfc00
                    || (v6.segments()[0] & 0xffc0) == 0xfe80
            }
        },
    }
}

/// Refuses a repository URL that is a local path or names (or resolves to)
/// a private address, unless the operator allows it
/// (`ORCH_ALLOW_PRIVATE_NETWORK=true`). A name that does not resolve is left
/// to git, which reports it as unreachable.
async fn check_public_address(url: &str) -> Result<()> {
    let refuse = |why: &str| {
        Err(Error::invalid_field(
            "repository_url",
            format!("{why}; the operator allows it with ORCH_ALLOW_PRIVATE_NETWORK=true"),
        ))
    };
    let Some(host) = repository_host(url) else {
        return refuse("names no host");
    };
    if host.is_empty() {
        return refuse("is a local path");
    }
    check_public_host("repository_url", &host).await
}

/// Refuses `host` (a name or an address, as in a URL) when it is or
/// resolves to a private address, as [`check_public_address`] does, naming
/// `field` (remote MCP endpoints use it too). A name that does not resolve
/// is left to the caller's connection attempt.
pub(crate) async fn check_public_host(field: &str, host: &str) -> Result<()> {
    let refuse = |why: &str| {
        Err(Error::invalid_field(
            field,
            format!("{why}; the operator allows it with ORCH_ALLOW_PRIVATE_NETWORK=true"),
        ))
    };
    let host = host.trim_start_matches('[').trim_end_matches(']');
    let addresses: Vec<IpAddr> = match host.parse::<IpAddr>() {
        Ok(ip) => vec![ip],
        Err(_) => match tokio::net::lookup_host((host, 443)).await {
            Ok(found) => found.map(|a| a.ip()).collect(),
            Err(_) => return Ok(()),
        },
    };
    if addresses.into_iter().any(is_private) {
        return refuse("names a loopback, link-local or private address");
    }
    Ok(())
}

impl ControlPlane {
    /// `POST /workspaces/:id/verify-git-access`.
    pub async fn verify_git_access(
        &self,
        caller: &Caller,
        workspace_id: Uuid,
        request: VerifyGitAccess,
    ) -> Result<GitVerification> {
        let url = request.repository_url.trim().to_owned();
        validate_repository_url(&url)?;
        check_no_userinfo(&url)?;
        if let Some(branch) = request.default_branch.as_deref() {
            validate_branch(branch)?;
        }
        match (request.git_token_mode, request.git_token.as_deref()) {
            (GitTokenMode::Replace, None | Some("")) => {
                return Err(Error::invalid_field(
                    "git_token",
                    "is required when git_token_mode is replace",
                ));
            }
            (GitTokenMode::Preserve | GitTokenMode::Clear, Some(_)) => {
                return Err(Error::invalid_field(
                    "git_token",
                    "is only used when git_token_mode is replace",
                ));
            }
            _ => {}
        }
        if !self.config().allow_private_network {
            check_public_address(&url).await?;
        }
        let stored = {
            let mut conn = self.store().read().await?;
            let row = require_workspace(&mut conn, caller.tenant_id, workspace_id).await?;
            if request.git_token_mode == GitTokenMode::Preserve {
                check_token_host(&row, &url, "git_token_mode")?;
            }
            self.workspace_git_token(&row)?
        };
        let token = match request.git_token_mode {
            GitTokenMode::Preserve => stored,
            GitTokenMode::Replace => request.git_token.clone(),
            GitTokenMode::Clear => None,
        };
        let outcome = ls_remote(&url, token.as_deref()).await;
        let mut packet = GitVerification {
            reachable: outcome.is_ok(),
            repository_url: url.clone(),
            default_branch: request.default_branch.clone(),
            branch_found: false,
            remote_head: None,
            branch_count: 0,
            git_token_mode: request.git_token_mode,
            used_token: token.is_some(),
            failed_step: None,
            reason: None,
            checked_at: self.now(),
        };
        match outcome {
            Err(reason) => {
                packet.failed_step = Some("connect".into());
                packet.reason = Some(reason);
            }
            Ok(refs) => {
                packet.remote_head = refs.head.clone();
                packet.branch_count = refs.branches.len() as i64;
                packet.default_branch = request.default_branch.clone().or(refs.head.clone());
                match &packet.default_branch {
                    Some(branch) if refs.branches.contains(branch) => packet.branch_found = true,
                    Some(branch) => {
                        packet.failed_step = Some("branch".into());
                        packet.reason = Some(format!("the repository has no branch `{branch}`"));
                    }
                    None => {
                        packet.failed_step = Some("branch".into());
                        packet.reason = Some("the repository has no branches yet".into());
                    }
                }
            }
        }
        if let Some(reason) = &packet.reason {
            return Err(Error::VerificationFailed {
                message: format!("git access could not be verified: {reason}"),
                details: serde_json::to_value(&packet)?,
            });
        }
        let mut write = match self
            .begin_idempotent(
                caller,
                "workspaces.verify_git",
                request.request_id.as_deref(),
                &(workspace_id, &request),
                Storage::Plain,
            )
            .await?
        {
            Begun::Replayed(recorded) => return Ok(recorded),
            Begun::Fresh(write) => write,
        };
        let mut row = lock_workspace(&mut write.tx, caller.tenant_id, workspace_id).await?;
        row.repository_url = Some(url);
        row.default_branch = packet.default_branch.clone();
        match request.git_token_mode {
            GitTokenMode::Preserve => {}
            GitTokenMode::Replace => {
                let token = request.git_token.as_deref().unwrap_or_default();
                row.git_token_encrypted = Some(self.seal_git_token(workspace_id, token));
            }
            GitTokenMode::Clear => row.git_token_encrypted = None,
        }
        update_row(&mut write.tx, &row).await?;
        on_db!(&mut write.tx, c => sqlx::query("UPDATE workspaces SET git_verified_at = $1 WHERE id = $2")
            .bind(packet.checked_at.as_datetime())
            .bind(workspace_id)
            .execute(c).await.map(|r| r.rows_affected()))?;
        let mut event = NewEvent::new(
            "workspace.git_verified",
            "workspace",
            workspace_id,
            json!({ "repository_url": packet.repository_url, "default_branch": packet.default_branch, "git_token_mode": request.git_token_mode }),
        );
        event.workspace_id = Some(workspace_id);
        events::record(&mut write.tx, caller, caller.tenant_id, event).await?;
        write.finish(packet).await
    }
}
