//! A long-running SDK client on a refresh session: the API key is used once,
//! then short-lived access tokens are refreshed by the client itself (before
//! they expire, or once after a `401`), and each rotated refresh token is
//! handed to a hook to keep (here: printed as a count, never the token).
//!
//! ```sh
//! ORCH_API_KEY=orch_admin_... cargo run --example sdk_session
//! ```

use orchestrator_client::Client;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let url = std::env::var("ORCH_URL").unwrap_or_else(|_| "http://127.0.0.1:8080".into());
    let key = std::env::var("ORCH_API_KEY")
        .map_err(|_| anyhow::anyhow!("set ORCH_API_KEY to an admin key"))?;
    // Trade the key for a persistent session (access + refresh token).
    let session = Client::new(&url)?.auth().token(&key, true).await?;
    println!("access token valid until {}", session.expires_at);

    let refreshes = Arc::new(AtomicUsize::new(0));
    let seen = refreshes.clone();
    let client = Client::builder(&url)
        .refresh_session(session)
        .refresh_skew(Duration::from_secs(120))
        // Keep `s.refresh_token` somewhere safe to resume the session later
        // with `Client::builder(url).refresh_token(saved)`.
        .on_refresh(move |s| {
            seen.fetch_add(1, Ordering::SeqCst);
            println!("refreshed; new access token valid until {}", s.expires_at);
        })
        .build()?;

    // Clones share the session: concurrent calls never refresh twice.
    let me = client.auth().me().await?;
    println!("{} in tenant {}", me.scope, me.tenant_id);
    println!("refreshes so far: {}", refreshes.load(Ordering::SeqCst));
    Ok(())
}
