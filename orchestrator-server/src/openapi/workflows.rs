//! Workflows, their work items and the operations views: each route's input and output types.

use super::describe::*;
use http::Method as M;
use orchestrator_core::api::*;

/// Workflows, their work items and the operations views.
pub(super) fn docs() -> Vec<Doc> {
    vec![
        op(M::POST, "/api/v1/workflows", "Create a workflow", created::<Workflow>()).body::<CreateWorkflow>(),
        op(M::GET, "/api/v1/workflows", "List workflows", page::<WorkflowListItem>()).query::<WorkflowFilter>(),
        op(M::GET, "/api/v1/workflows/{id}", "Get a workflow", ok::<WorkflowDetail>()),
        op(M::POST, "/api/v1/workflows/{id}/redrives", "Redrive a workflow", created::<Applied>()).body::<RedriveWorkflow>(),
        op(M::GET, "/api/v1/workflows/{id}/events", "A workflow's events (cursor list)", Success::Cursor(schema::<Event>, EVENT_CURSOR)).query::<WorkflowEventQuery>(),
        op(M::POST, "/api/v1/workflows/{id}/activations", "Enqueue an activation", created::<Applied>()).body::<EnqueueActivation>(),
        op(M::GET, "/api/v1/workflows/{id}/activations", "A workflow's activations", ok::<Vec<Activation>>()),
        op(M::GET, "/api/v1/workflows/{id}/board", "A workflow's board", ok::<Board>()),
        op(M::GET, "/api/v1/workflows/{id}/stages", "A workflow's stages", ok::<Vec<WorkflowStage>>()),
        op(M::POST, "/api/v1/workflows/{id}/pause", "Pause a workflow", ok::<Workflow>()).body::<WorkflowAction>(),
        op(M::POST, "/api/v1/workflows/{id}/resume", "Resume a workflow", ok::<Workflow>()).body::<WorkflowAction>(),
        op(M::POST, "/api/v1/workflows/{id}/cancel", "Cancel a workflow", ok::<Workflow>()).body::<WorkflowAction>(),
        op(M::POST, "/api/v1/workflows/{id}/work-items", "Create a work item", created::<WorkItem>()).body::<CreateWorkItem>(),
        op(M::GET, "/api/v1/workflows/{id}/work-items", "A workflow's work items", ok::<Vec<WorkItem>>()),
        op(M::GET, "/api/v1/workflows/{id}/work-items/{work_item_id}", "Get a work item", ok::<WorkItem>()),
        op(M::PATCH, "/api/v1/workflows/{id}/work-items/{work_item_id}", "Update a work item", ok::<WorkItem>()).body::<UpdateWorkItem>(),
        op(M::GET, "/api/v1/operations/workflows/rail", "The operations rail", page::<RailItem>())
            .param("mode", TEXT, "Rail mode")
            .param("needs_action_only", BOOL, "Only workflows that need an operator")
            .param("lifecycle", TEXT, "Lifecycle filter")
            .param("search", TEXT, "Free-text search")
            .param("workflow_id", UUID, "One workflow")
            .paged(),
        op(M::GET, "/api/v1/operations/workflows/{id}/workspace", "The operations workspace packet of a workflow", ok::<WorkspacePacket>())
            .param("work_item_id", UUID, "Focus on one work item")
            .param("task_id", UUID, "Focus on one task")
            .param("tab_scope", TEXT, "Which tab the packet is for")
            .param("live_console_after", INT, "Live console cursor")
            .param("live_console_limit", INT, "Live console page size")
            .param("briefs_after", INT, "Briefs cursor")
            .param("history_after", INT, "History cursor")
            .param("deliverables_after", INT, "Deliverables cursor"),
        op(M::POST, "/api/v1/workspaces/{id}/planning-workflow", "Start a planning workflow in a workspace", created::<Workflow>()).body::<PlanningWorkflow>(),
    ]
}
