//! Talks to a running control plane through the SDK: checks the credential,
//! issues an agent key, lists the tenant's keys and revokes the new one.
//!
//! ```sh
//! orch serve &                      # prints the first admin key once
//! ORCH_API_KEY=orch_admin_... cargo run --example sdk_quickstart
//! ```

use orchestrator_client::Client;
use orchestrator_client::api::{CreateApiKey, PageRequest, Scope};

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let url = std::env::var("ORCH_URL").unwrap_or_else(|_| "http://127.0.0.1:8080".into());
    let key = std::env::var("ORCH_API_KEY")
        .map_err(|_| anyhow::anyhow!("set ORCH_API_KEY to an admin key"))?;
    let client = Client::new(url)?.with_api_key(key);

    let me = client.auth().me().await?;
    println!(
        "signed in with {} scope in tenant {}",
        me.scope, me.tenant_id
    );

    let created = client
        .api_keys()
        .create(&CreateApiKey {
            name: Some("quickstart agent".into()),
            scope: Scope::Agent,
            expires_at: None,
            owner_type: None,
            owner_id: None,
            request_id: None,
        })
        .await?;
    println!("issued {} ({})", created.key.key_prefix, created.key.id);

    let page = client.api_keys().list(PageRequest::default()).await?;
    for key in &page.items {
        println!("  {:<24} {:<8} {}", key.name, key.scope, key.key_prefix);
    }

    client.api_keys().revoke(created.key.id).await?;
    println!("revoked {}", created.key.id);
    Ok(())
}
