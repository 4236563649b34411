//! `POST /acp/claim`: the claim engine's claim, the start and the session,
//! in one transaction; the answer carries what an ACP runtime needs to run
//! the task (prompt, working directory, input, context, files).

use super::sessions::{NewSession, open};
use crate::api::{
    AcpClaim, AcpClaimed, AcpClaimedSession, AcpClaimedTask, AcpFileReference, TaskContext,
    TaskState,
};
use crate::caller::Caller;
use crate::control_plane::ControlPlane;
use crate::error::Result;
use crate::lifecycle::claim::{claim_open, claimer_tags};
use crate::store::Tx;
use crate::tasks::rows::{TaskRow, record_change, save};
use crate::tasks::state::{TaskOp, transition};
use serde_json::Value;

/// The routing tag an ACP claim adds when the request names none.
const ACP_TAG: &str = "acp";

/// Moves a freshly claimed task to `in_progress` in `tx` (a task the agent
/// already had in progress stays as it is).
async fn start_in(tx: &mut Tx, caller: &Caller, row: &mut TaskRow) -> Result<()> {
    let from = row.state()?;
    if from != TaskState::Claimed {
        return Ok(());
    }
    let to = transition(TaskOp::Start, from)?;
    let now = tx.now().as_datetime();
    row.state = to.as_str().into();
    row.started_at = Some(now);
    row.updated_at = now;
    save(tx, row).await?;
    record_change(tx, caller, row, TaskOp::Start, (from, to), "started").await
}

/// Workspace files (with id and download URL) and the workflow's input
/// files (inline: no id, no URL), from the task's context packet.
fn file_references(packet: &TaskContext) -> Vec<AcpFileReference> {
    let text = |v: &Value, key: &str| v.get(key).and_then(Value::as_str).map(str::to_owned);
    let documents = packet.documents.iter().map(|d| AcpFileReference {
        id: text(d, "id").and_then(|id| id.parse().ok()),
        file_name: text(d, "file_name").unwrap_or_default(),
        content_type: text(d, "content_type"),
        size_bytes: d.get("size_bytes").and_then(Value::as_i64).unwrap_or(0),
        download_url: text(d, "download_url"),
    });
    let attachments = packet.attachments.iter().map(|a| AcpFileReference {
        id: None,
        file_name: text(a, "file_name").unwrap_or_default(),
        content_type: text(a, "content_type"),
        size_bytes: text(a, "content_base64").map_or(0, |b| decoded_len(&b)),
        download_url: None,
    });
    documents.chain(attachments).collect()
}

/// The byte length base64 text decodes to.
fn decoded_len(text: &str) -> i64 {
    let text = text.trim_end();
    let padding = text.bytes().rev().take_while(|b| *b == b'=').count();
    ((text.len() / 4) * 3).saturating_sub(padding) as i64
}

impl ControlPlane {
    /// `POST /acp/claim`: `None` (204) when nothing is claimable for the
    /// agent with its tags plus `routing_tags` (default `["acp"]`).
    pub async fn acp_claim(
        &self,
        caller: &Caller,
        request: AcpClaim,
    ) -> Result<Option<AcpClaimed>> {
        let agent = self
            .acp_agent(caller, request.agent_id, request.worker_id)
            .await?;
        let extra = request
            .routing_tags
            .clone()
            .unwrap_or_else(|| vec![ACP_TAG.to_owned()]);
        let tags = claimer_tags(&agent, Some(&extra));
        let session = request.session.unwrap_or_default();
        let now = self.now().as_datetime();
        let (mut tx, row) = claim_open(self.store(), caller, &agent, &tags, None, now).await?;
        let Some(mut row) = row else {
            return Ok(None);
        };
        start_in(&mut tx, caller, &mut row).await?;
        let (session_row, _) = open(
            &mut tx,
            caller,
            &agent,
            NewSession {
                worker_id: request.worker_id,
                workflow_id: row.workflow_id,
                task_id: Some(row.id),
                transport: session.transport,
                mode: session.mode,
                workspace_path: session.workspace_path,
                metadata: None,
            },
        )
        .await?;
        tx.commit().await?;
        let task = self
            .claimed_task(caller, row, request.include_context)
            .await?;
        let packet = self.context_packet(caller, &task).await?;
        Ok(Some(AcpClaimed {
            session: AcpClaimedSession {
                id: session_row.id,
                status: session_row.status(),
            },
            task: AcpClaimedTask {
                id: task.id,
                prompt: task
                    .description
                    .clone()
                    .filter(|d| !d.trim().is_empty())
                    .unwrap_or_else(|| task.title.clone()),
                title: task.title,
                cwd: session_row.workspace_path,
                input: task.input,
                context: task.context,
                file_references: file_references(&packet),
            },
        }))
    }
}
