//! Embeds the control plane in-process, with no HTTP: opens a SQLite store
//! in a temporary directory, authenticates with a bootstrap key and manages
//! keys through `ControlPlane` directly.
//!
//! ```sh
//! cargo run --example embedded
//! ```

use orchestrator_core::api::{CreateApiKey, PageRequest, Scope};
use orchestrator_core::{ControlPlane, CoreConfig};

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let url = format!("sqlite://{}", dir.path().join("orch.db").display());
    let admin_key = format!("orch_admin_{}", uuid::Uuid::new_v4().simple());
    let mut config = CoreConfig::new(url);
    config.bootstrap_admin_key = Some(admin_key.clone());

    let control_plane = ControlPlane::open(config).await?;
    let admin = control_plane.authenticate(&admin_key).await?;
    println!(
        "embedded control plane on {:?}; caller has {} scope",
        control_plane.store().dialect(),
        admin.scope
    );

    let created = control_plane
        .create_api_key(
            &admin,
            CreateApiKey {
                name: Some("in-process agent".into()),
                scope: Scope::Agent,
                expires_at: None,
                owner_type: None,
                owner_id: None,
                request_id: Some("embedded-example".into()),
            },
        )
        .await?;
    let agent = control_plane.authenticate(&created.api_key).await?;
    println!(
        "agent key {} authenticates as {}",
        created.key.key_prefix, agent.scope
    );

    let keys = control_plane
        .list_api_keys(&admin, PageRequest::default())
        .await?;
    println!("{} keys in the default tenant", keys.total);
    control_plane.store().close().await;
    Ok(())
}
