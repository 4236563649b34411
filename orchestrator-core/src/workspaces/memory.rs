//! Workspace memory: a sticky key/value JSON object of at most 1 MiB.

use super::rows::{lock_workspace, update_row};
use crate::api::workspaces::{MAX_MEMORY_BYTES, SetMemory, Workspace};
use crate::caller::Caller;
use crate::control_plane::ControlPlane;
use crate::error::{Error, Result};
use crate::events::{self, NewEvent};
use crate::idempotency::{Begun, Storage};
use serde_json::{Value, json};
use uuid::Uuid;

pub(crate) fn check_memory_size(memory: &Value) -> Result<()> {
    let size = serde_json::to_vec(memory)?.len();
    if size > MAX_MEMORY_BYTES {
        return Err(Error::invalid_field(
            "memory",
            format!("is {size} bytes serialized; the limit is {MAX_MEMORY_BYTES} bytes (1 MiB)"),
        ));
    }
    Ok(())
}

pub(crate) fn validate_memory_key(key: &str) -> Result<()> {
    if key.is_empty() || key.len() > 200 {
        return Err(Error::invalid_field("key", "must be 1 to 200 characters"));
    }
    Ok(())
}

impl ControlPlane {
    /// `PATCH /workspaces/:id/memory`: sets one key (1 MiB cap on the whole memory).
    pub async fn set_workspace_memory(
        &self,
        caller: &Caller,
        id: Uuid,
        request: SetMemory,
    ) -> Result<Workspace> {
        validate_memory_key(&request.key)?;
        let mut write = match self
            .begin_idempotent(
                caller,
                "workspaces.memory.set",
                request.request_id.as_deref(),
                &(id, &request),
                Storage::Plain,
            )
            .await?
        {
            Begun::Replayed(recorded) => return Ok(recorded),
            Begun::Fresh(write) => write,
        };
        let mut row = lock_workspace(&mut write.tx, caller.tenant_id, id).await?;
        let memory = row
            .memory
            .0
            .as_object_mut()
            .ok_or_else(|| Error::internal("memory is not an object"))?;
        memory.insert(request.key.clone(), request.value.clone());
        check_memory_size(&row.memory.0)?;
        let row = update_row(&mut write.tx, &row).await?;
        let mut event = NewEvent::new(
            "workspace.memory_set",
            "workspace",
            id,
            json!({ "key": request.key }),
        );
        event.workspace_id = Some(id);
        events::record(&mut write.tx, caller, caller.tenant_id, event).await?;
        let record = self.workspace_record(&mut write.tx, &row).await?;
        write.finish(record).await
    }

    /// `DELETE /workspaces/:id/memory/:key`: removes one key (a missing key
    /// answers the workspace unchanged).
    pub async fn delete_workspace_memory(
        &self,
        caller: &Caller,
        id: Uuid,
        key: &str,
    ) -> Result<Workspace> {
        let mut tx = self.store().begin().await?;
        let mut row = lock_workspace(&mut tx, caller.tenant_id, id).await?;
        let removed = row
            .memory
            .0
            .as_object_mut()
            .and_then(|m| m.remove(key))
            .is_some();
        if !removed {
            let record = self.workspace_record(&mut tx, &row).await?;
            return Ok(record);
        }
        let row = update_row(&mut tx, &row).await?;
        let mut event = NewEvent::new(
            "workspace.memory_deleted",
            "workspace",
            id,
            json!({ "key": key }),
        );
        event.workspace_id = Some(id);
        events::record(&mut tx, caller, caller.tenant_id, event).await?;
        let record = self.workspace_record(&mut tx, &row).await?;
        tx.commit().await?;
        Ok(record)
    }
}
