//! Start-up: opening the store and making a fresh or upgraded database ready
//! to serve (migrations, the default tenant, the bootstrap keys).
//!
//! It sits above the resource modules it needs ([`crate::tenants`],
//! [`crate::keys`]), so the handle in [`crate::control_plane`] does not have
//! to know them.

use crate::api::{CreateApiKey, DEFAULT_TENANT_ID, Scope};
use crate::caller::Caller;
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
            wal_restart_bytes: config.sqlite_wal_restart_bytes,
            clock: config.clock.clone(),
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
        let now = self.now();
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
            if scope == Scope::Admin {
                // The operator configured it: they know it.
                mark(&mut tx, ADMIN_KEY_SHOWN).await?;
            }
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

    /// Whether this database generated its first admin key and no start
    /// ever showed it (a start that failed after generating it, an embedder
    /// that never printed it), nor was one configured or created offline
    /// since: the operator has no admin key and needs to be told how to get
    /// one.
    pub async fn admin_key_never_shown(&self) -> Result<bool> {
        let mut conn = self.store().read().await?;
        let (bootstrapped, shown): (i64, i64) = on_db!(&mut conn, c => sqlx::query_as(
            "SELECT (SELECT COUNT(*) FROM server_secrets WHERE name = 'bootstrap:admin'), \
                    (SELECT COUNT(*) FROM server_secrets WHERE name = $1)",
        )
        .bind(ADMIN_KEY_SHOWN)
        .fetch_one(c)
        .await)?;
        Ok(bootstrapped > 0 && shown == 0)
    }

    /// Records that the operator now holds an admin key: called once a
    /// generated key has been printed (after the start succeeded).
    pub async fn record_admin_key_shown(&self) -> Result<()> {
        let mut tx = self.store().begin().await?;
        mark(&mut tx, ADMIN_KEY_SHOWN).await?;
        tx.commit().await
    }

    /// Issues a new admin key of the default tenant, as the control plane
    /// itself ([`Caller::system`]): the way back in for an operator who
    /// has no admin key, used offline on the database (`orch admin
    /// create-key`). Returns the raw key, to be shown once.
    pub async fn create_admin_key(&self, name: &str) -> Result<String> {
        let caller = Caller::system(DEFAULT_TENANT_ID);
        let created = self
            .create_api_key(
                &caller,
                CreateApiKey {
                    name: Some(name.to_owned()),
                    scope: Scope::Admin,
                    expires_at: None,
                    owner_type: None,
                    owner_id: None,
                    request_id: None,
                },
            )
            .await?;
        self.record_admin_key_shown().await?;
        Ok(created.api_key)
    }
}

/// The marker row of an admin key the operator has been given.
const ADMIN_KEY_SHOWN: &str = "bootstrap:admin:shown";

/// Records that the `scope` bootstrap happened; `false` if it already had.
async fn mark_bootstrapped(tx: &mut Tx, scope: Scope) -> Result<bool> {
    mark(tx, &format!("bootstrap:{scope}")).await
}

/// Inserts the marker row `name` once; `false` if it was there.
async fn mark(tx: &mut Tx, name: &str) -> Result<bool> {
    let now = tx.now().as_datetime();
    let inserted = on_db!(tx, c => sqlx::query(
        "INSERT INTO server_secrets (name, value, created_at) VALUES ($1, $2, $3) ON CONFLICT (name) DO NOTHING",
    )
    .bind(name)
    .bind("done")
    .bind(now)
    .execute(c).await.map(|r| r.rows_affected()));
    match inserted {
        Ok(affected) => Ok(affected == 1),
        Err(e) if is_unique_violation(&e) => Ok(false),
        Err(e) => Err(e.into()),
    }
}
