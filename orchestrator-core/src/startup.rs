//! Start-up: opening the store and making a fresh or upgraded database ready
//! to serve (migrations, the default tenant, the bootstrap keys).
//!
//! It sits above the resource modules it needs ([`crate::tenants`],
//! [`crate::keys`]), so the handle in [`crate::control_plane`] does not have
//! to know them.

use crate::api::{DEFAULT_TENANT_ID, Scope, Timestamp};
use crate::config::CoreConfig;
use crate::control_plane::{ControlPlane, GeneratedBootstrapKey};
use crate::error::{Error, Result};
use crate::keys::{self, NewKey};
use crate::secrets::Secrets;
use crate::store::{Store, StoreOptions, Tx, is_unique_violation, on_db};
use crate::tenants;

impl ControlPlane {
    /// Opens the store (applying migrations), loads the keys, makes sure the
    /// default tenant exists and sets up the bootstrap keys.
    pub async fn open(config: CoreConfig) -> Result<Self> {
        let store = Store::connect(&StoreOptions {
            url: config.database_url.clone(),
            max_connections: config.max_connections,
            writers: config.db_writers,
            group_commit: config.group_commit,
            writer_session: crate::lifecycle::claim_sql::CLAIM_EACH_FUNCTION,
        })
        .await?;
        let secrets = Secrets::load(&store, config.secret_key.as_deref()).await?;
        crate::webhook_outbox::load_webhook_flag(&mut store.read().await?).await?;
        let mut tx = store.begin().await?;
        tenants::ensure_default(&mut tx).await?;
        tx.commit().await?;
        let control_plane = Self::assemble(store, secrets, config);
        control_plane.bootstrap_key(Scope::Admin).await?;
        control_plane.bootstrap_key(Scope::Service).await?;
        Ok(control_plane)
    }

    /// Makes the configured bootstrap key of `scope` valid for the default
    /// tenant, or, when none is configured, generates one on the very first
    /// start (a marker row makes sure that happens once, across replicas).
    async fn bootstrap_key(&self, scope: Scope) -> Result<()> {
        let configured = match scope {
            Scope::Admin => self.config().bootstrap_admin_key.clone(),
            Scope::Service => self.config().bootstrap_service_key.clone(),
            _ => None,
        };
        let mut tx = self.store().begin().await?;
        let now = Timestamp::now();
        let name = format!("bootstrap {scope} key");
        let new = NewKey {
            tenant_id: DEFAULT_TENANT_ID,
            name: &name,
            scope,
            owner_type: scope.default_owner_type(),
            owner_id: None,
            expires_at: None,
        };
        if let Some(raw) = configured {
            if keys::scope_of(&raw) != Some(scope) {
                return Err(Error::validation(format!(
                    "the bootstrap {scope} key must look like orch_{scope}_ followed by 32 letters and digits"
                )));
            }
            let described = keys::describe(&raw);
            match keys::find_by_hash(&mut tx, &described.hash).await? {
                Some(row) if row.tenant_id != DEFAULT_TENANT_ID => {
                    return Err(Error::validation(format!(
                        "the bootstrap {scope} key belongs to another tenant"
                    )));
                }
                Some(row) if !row.is_usable(now.as_datetime()) => {
                    on_db!(&mut tx, c => sqlx::query("UPDATE api_keys SET revoked_at = NULL, expires_at = NULL WHERE id = $1")
                        .bind(row.id)
                        .execute(c).await.map(|r| r.rows_affected()))?;
                    tracing::warn!(%scope, key_id = %row.id, "bootstrap key was revoked or expired; configuration makes it valid again");
                }
                Some(_) => {}
                None => {
                    keys::insert(&mut tx, &new, &described).await?;
                }
            }
            mark_bootstrapped(&mut tx, scope).await?;
            tx.commit().await?;
            return Ok(());
        }
        if !mark_bootstrapped(&mut tx, scope).await? {
            return Ok(());
        }
        let generated = keys::generate(scope);
        keys::insert(&mut tx, &new, &generated).await?;
        tx.commit().await?;
        self.remember_generated_key(GeneratedBootstrapKey {
            scope,
            api_key: generated.raw,
        });
        Ok(())
    }
}

/// Records that the `scope` bootstrap happened; `false` if it already had.
async fn mark_bootstrapped(tx: &mut Tx, scope: Scope) -> Result<bool> {
    let inserted = on_db!(tx, c => sqlx::query(
        "INSERT INTO server_secrets (name, value, created_at) VALUES ($1, $2, $3) ON CONFLICT (name) DO NOTHING",
    )
    .bind(format!("bootstrap:{scope}"))
    .bind("done")
    .bind(Timestamp::now().as_datetime())
    .execute(c).await.map(|r| r.rows_affected()));
    match inserted {
        Ok(affected) => Ok(affected == 1),
        Err(e) if is_unique_violation(&e) => Ok(false),
        Err(e) => Err(e.into()),
    }
}
