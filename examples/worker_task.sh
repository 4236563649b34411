#!/bin/sh
# A task command for `orch worker run` (needs curl and jq).
#
# The task arrives as JSON on stdin; ORCH_URL, ORCH_TASK_ID, ORCH_WORKFLOW_ID
# and ORCH_TASK_TOKEN (a credential for this task's routes only, while the
# task is held) are set; orchestrator tasks, which plan the workflow, also get
# the agent's key in ORCH_API_KEY. The last line printed on stdout is the
# task's output (JSON, else {"text": ...}); a non-zero exit fails the task.
#
# - The orchestrator task of a new workflow plans it: one work item and one
#   task per stage of the playbook.
# - Any other task "does" its stage and reports what it did.
set -eu
task=$(cat)
api() { # METHOD PATH [BODY]  (with the agent's key: orchestrator tasks only)
  curl -fsS -X "$1" "$ORCH_URL/api/v1$2" -H "Authorization: Bearer $ORCH_API_KEY" \
    -H 'content-type: application/json' ${3:+--data "$3"}
}
task_api() { # METHOD PATH [BODY]  (with the task token: this task's routes)
  curl -fsS -X "$1" "$ORCH_URL/api/v1$2" -H "Authorization: Bearer $ORCH_TASK_TOKEN" \
    -H 'content-type: application/json' ${3:+--data "$3"}
}
kind=$(printf '%s' "$task" | jq -r .task_kind)
event=$(printf '%s' "$task" | jq -r '.input.event_type // empty')
if [ "$kind" = orchestrator ] && [ "$event" = workflow.created ]; then
  stages=$(api GET "/workflows/$ORCH_WORKFLOW_ID" | jq -r '.data.workflow_stages[].name')
  planned=0
  for stage in $stages; do
    item=$(api POST "/workflows/$ORCH_WORKFLOW_ID/work-items" \
      "$(jq -nc --arg s "$stage" '{title: ("Stage " + $s), stage_name: $s}')" | jq -r .data.id)
    api POST /tasks "$(jq -nc --arg s "$stage" --arg w "$ORCH_WORKFLOW_ID" --arg i "$item" \
      '{title: ("Do the " + $s + " stage"), type: "code", workflow_id: $w, work_item_id: $i, stage_name: $s}')" >/dev/null
    echo "planned stage $stage" >&2
    planned=$((planned + 1))
  done
  echo "{\"planned\": $planned}"
else
  title=$(printf '%s' "$task" | jq -r .title)
  echo "working on: $title"
  task_api POST "/tasks/$ORCH_TASK_ID/handoffs" \
    "$(jq -nc --arg t "$title" '{summary: ("Did: " + $t)}')" >/dev/null
  echo "{\"done\": true, \"title\": $(printf '%s' "$title" | jq -R .)}"
fi
