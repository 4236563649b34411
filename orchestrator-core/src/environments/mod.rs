//! Execution environments: the container images tasks run in.
//!
//! - `rows.rs`: the table, its reads and writes;
//! - `fields.rs`: the rules of the request fields (limits, images, domains);
//! - `catalog.rs`: the bundled, versioned catalog of base environments
//!   (`ORCH_ENV_CATALOG_DIR` replaces it);
//! - `probe.rs` (+ `probe.sh`): verification in a container runtime or, with
//!   the host probe, a local shell, and the agent hint built from its facts;
//! - `operations.rs`: the `impl ControlPlane` operations.
//!
//! For other modules: `usable_environment` reads an environment a new task
//! may name (400 when unknown or blocked).

mod catalog;
mod fields;
mod operations;
mod probe;
mod rows;

use crate::api::environments::SupportStatus;
use crate::error::{Error, Result};
use crate::store::Access;
use serde_json::{Value, json};
use uuid::Uuid;

/// The summary of an environment a task stores and shows as
/// `execution_environment`; 400 on `execution_environment_id` when the
/// environment is unknown in the tenant or blocked.
pub(crate) async fn usable_environment(
    access: &mut impl Access,
    tenant_id: Uuid,
    id: Uuid,
) -> Result<Value> {
    let Some(row) = rows::find_environment(access, tenant_id, id).await? else {
        return Err(Error::invalid_field(
            "execution_environment_id",
            "names no execution environment",
        ));
    };
    if row.support_status() == Some(SupportStatus::Blocked) {
        return Err(Error::invalid_field(
            "execution_environment_id",
            format!("the execution environment `{}` is blocked", row.name),
        ));
    }
    Ok(json!({
        "id": row.id,
        "name": row.name,
        "image": row.image,
        "cpu": row.cpu,
        "memory": row.memory,
        "pull_policy": row.pull_policy,
        "compatibility_status": row.compatibility_status,
        "agent_hint": row.agent_hint,
    }))
}
