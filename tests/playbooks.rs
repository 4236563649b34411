//! Playbooks end to end: revision numbering and history, validation,
//! archive round trip, delete-impact, delete and permanent delete.

use orchestrator_client::api::ErrorCode;
use orchestrator_client::api::PageRequest;
use orchestrator_client::api::playbooks::{CreatePlaybook, Lifecycle, PatchPlaybook};
use orchestrator_tests::TestServer;
use reqwest::StatusCode;
use reqwest::header::AUTHORIZATION;
use serde_json::{Value, json};

fn playbook(name: &str) -> CreatePlaybook {
    CreatePlaybook {
        name: name.to_owned(),
        outcome: "a reviewed change".to_owned(),
        definition: json!({
            "roles": [{"name": "developer"}, {"name": "reviewer"}],
            "stages": [{"name": "implement"}, {"name": "review"}],
        }),
        slug: None,
        description: Some("ship a change".to_owned()),
        lifecycle: None,
        request_id: None,
    }
}

#[tokio::test]
async fn revisions_number_up_and_keep_history() {
    let server = TestServer::start().await;
    let admin = server.admin();
    let created = admin
        .playbooks()
        .create(&playbook("Ship a change"))
        .await
        .unwrap();
    assert_eq!(created.version, 1);
    assert!(created.is_active);
    assert_eq!(created.family_id, created.id);
    assert_eq!(created.slug, "ship-a-change");
    assert_eq!(created.lifecycle, Lifecycle::Planned);

    let patched = admin
        .playbooks()
        .patch(
            created.id,
            &PatchPlaybook {
                outcome: Some("a merged change".into()),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(patched.version, 2);
    assert_ne!(patched.id, created.id);
    assert_eq!(patched.family_id, created.id);
    assert_eq!(patched.outcome, "a merged change");
    assert_eq!(
        patched.definition, created.definition,
        "PATCH carries the rest over"
    );

    let mut replacement = playbook("Ship a change");
    replacement.definition = json!({"stages": [{"name": "only"}]});
    replacement.lifecycle = Some(Lifecycle::Ongoing);
    // PUT through an old revision id still revises the family.
    let replaced = admin
        .playbooks()
        .replace(created.id, &replacement)
        .await
        .unwrap();
    assert_eq!(replaced.version, 3);
    assert_eq!(replaced.lifecycle, Lifecycle::Ongoing);
    assert_eq!(replaced.description, "ship a change");

    // GET by any id answers the active revision.
    let current = admin.playbooks().get(patched.id).await.unwrap();
    assert_eq!(current.id, replaced.id);
    assert_eq!(current.definition, json!({"stages": [{"name": "only"}]}));

    let history = admin
        .playbooks()
        .revisions(created.id, PageRequest::default())
        .await
        .unwrap();
    let versions: Vec<i32> = history.items.iter().map(|p| p.version).collect();
    assert_eq!(versions, vec![3, 2, 1]);
    let active: Vec<bool> = history.items.iter().map(|p| p.is_active).collect();
    assert_eq!(active, vec![true, false, false]);
    assert_eq!(
        history.items[2].outcome, "a reviewed change",
        "history is untouched"
    );

    let list = admin
        .playbooks()
        .list(PageRequest::default())
        .await
        .unwrap();
    assert_eq!(list.total, 1, "one family, one list item");
    assert_eq!(list.items[0].version, 3);

    // A second family may not take the same slug or name.
    let duplicate = admin
        .playbooks()
        .create(&playbook("Ship a change"))
        .await
        .unwrap_err();
    assert_eq!(duplicate.code(), Some(ErrorCode::Conflict));
}

#[tokio::test]
async fn definitions_are_validated_and_bad_input_writes_nothing() {
    let server = TestServer::start().await;
    let admin = server.admin();
    for definition in [
        json!({"stages": []}),
        json!({"stages": [{"name": "a"}, {"name": "a"}]}),
        json!({"stages": [{"name": "a"}], "roles": [{"name": "r"}, {"name": "r"}]}),
        // A stage's role must be one of the roles (a rule: 400).
        json!({"stages": [{"name": "a", "role": "dev"}], "roles": [{"name": "qa"}]}),
    ] {
        let mut request = playbook("Bad");
        request.definition = definition.clone();
        let error = admin.playbooks().create(&request).await.unwrap_err();
        assert_eq!(error.status(), Some(400), "{definition}");
        assert_eq!(error.code(), Some(ErrorCode::ValidationError));
    }
    // The definition has a typed schema: a wrong shape or a typo in a key
    // is 422 naming its path.
    for (definition, path) in [
        (json!({"roles": [{"name": "r"}]}), "definition.stages"),
        (json!("not an object"), "definition"),
        (
            json!({"stagse": [{"name": "a"}], "stages": [{"name": "a"}]}),
            "definition.stagse",
        ),
        (
            json!({"stages": [{"name": "a"}, {"name": "b", "gaol": "x"}]}),
            "definition.stages[1].gaol",
        ),
        (
            json!({"stages": [{"name": "a"}], "roles": [{"name": "r", "skills": []}]}),
            "definition.roles[0].skills",
        ),
        (
            json!({"stages": [{"name": 7}]}),
            "definition.stages[0].name",
        ),
    ] {
        let mut request = playbook("Bad");
        request.definition = definition.clone();
        let error = admin.playbooks().create(&request).await.unwrap_err();
        assert_eq!(error.status(), Some(422), "{definition}");
        assert_eq!(error.code(), Some(ErrorCode::SchemaValidationFailed));
        let fields = error.field_errors().expect("field errors");
        assert!(fields.get(path).is_some(), "{definition}: {fields:?}");
    }
    // Missing outcome is a schema failure.
    let response = server
        .http()
        .post(server.at("/api/v1/playbooks"))
        .header(AUTHORIZATION, format!("Bearer {}", server.admin_key))
        .json(&json!({"name": "x", "definition": {"stages": [{"name": "a"}]}}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::UNPROCESSABLE_ENTITY);
    let body: Value = response.json().await.unwrap();
    assert!(
        body["error"]["details"]["issues"]["fieldErrors"]["outcome"].is_array(),
        "{body}"
    );
    assert_eq!(
        admin
            .playbooks()
            .list(PageRequest::default())
            .await
            .unwrap()
            .total,
        0
    );
    // Stage roles and catalog fields that exist are accepted.
    let mut request = playbook("Good");
    request.definition = json!({
        "roles": [{"name": "dev", "specialist_id": "backend-developer", "description": "writes code"}],
        "stages": [{"name": "build", "role": "dev", "goal": "it works", "description": "d"}],
    });
    let created = admin.playbooks().create(&request).await.unwrap();
    assert_eq!(created.version, 1);
}

#[tokio::test]
async fn archive_round_trip_and_deletes() {
    let server = TestServer::start().await;
    let admin = server.admin();
    let created = admin
        .playbooks()
        .create(&playbook("Archivable"))
        .await
        .unwrap();
    let archived = admin.playbooks().archive(created.id, true).await.unwrap();
    assert!(!archived.is_active);
    assert!(archived.archived);
    assert_eq!(archived.version, 1, "archiving makes no revision");
    let edit = admin
        .playbooks()
        .patch(
            created.id,
            &PatchPlaybook {
                name: Some("Renamed".into()),
                ..Default::default()
            },
        )
        .await
        .unwrap_err();
    assert_eq!(
        edit.code(),
        Some(ErrorCode::Conflict),
        "an archived playbook is not edited"
    );
    let restored = admin.playbooks().archive(created.id, false).await.unwrap();
    assert!(restored.is_active);
    assert!(!restored.archived);

    let impact = admin.playbooks().delete_impact(created.id).await.unwrap();
    assert_eq!(impact.revisions, 1);
    assert_eq!(impact.workflows.total, 0);
    assert!(impact.can_delete);

    let revised = admin
        .playbooks()
        .patch(
            created.id,
            &PatchPlaybook {
                name: Some("Renamed".into()),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    let deleted = admin.playbooks().delete(revised.id).await.unwrap();
    assert!(deleted.deleted);
    assert_eq!(deleted.id, created.id);
    assert_eq!(deleted.revisions_deleted, 2);
    let gone = admin.playbooks().get(created.id).await.unwrap_err();
    assert_eq!(gone.status(), Some(404));

    let other = admin
        .playbooks()
        .create(&playbook("Permanent"))
        .await
        .unwrap();
    let removed = admin
        .playbooks()
        .delete_permanently(other.id)
        .await
        .unwrap();
    assert_eq!(removed.revisions_deleted, 1);
    assert_eq!(removed.workflows_deleted, 0);
    assert_eq!(
        admin
            .playbooks()
            .delete(other.id)
            .await
            .unwrap_err()
            .status(),
        Some(404)
    );

    // Agents read but do not write.
    let agent_key = admin
        .api_keys()
        .create(&orchestrator_tests::key_request(
            orchestrator_client::api::Scope::Agent,
            "a",
        ))
        .await
        .unwrap()
        .api_key;
    let agent = server.client(&agent_key);
    assert_eq!(
        agent
            .playbooks()
            .list(PageRequest::default())
            .await
            .unwrap()
            .total,
        0
    );
    let denied = agent
        .playbooks()
        .create(&playbook("Nope"))
        .await
        .unwrap_err();
    assert_eq!(denied.status(), Some(403));
}

/// Run control §2: a playbook's default `retry_policy` is checked when it is
/// saved (422 naming its path, nothing saved) and applied, with its
/// backoff, to the tasks of its workflows that name no policy of their own;
/// a task's own policy wins.
#[tokio::test]
async fn a_playbook_default_retry_policy_is_checked_and_applied() {
    use chrono::{DateTime, Duration, Utc};
    use orchestrator_client::api::{
        ClaimTask, CreateTask, CreateWorkflow, EventFilter, FailTask, RegisterAgent, RetryPolicy,
        TaskError, TaskState, workspaces::CreateWorkspace,
    };
    use orchestrator_core::clock::{Clock, ManualClock};
    use std::sync::Arc;

    // Real time to start with, moved less than a minute in all, so the
    // agent (registered at the clock's now) stays active.
    let start = DateTime::from_timestamp(Utc::now().timestamp(), 0).unwrap();
    let clock = Arc::new(ManualClock::new(start));
    let given = clock.clone();
    let server = TestServer::start_with(move |c| c.core.clock = given).await;
    let admin = server.admin();
    let with_policy = |name: &str, policy: Value| {
        let mut request = playbook(name);
        request.definition["retry_policy"] = policy;
        request
    };

    for (policy, path) in [
        (json!({"max_attempts": 0}), "max_attempts"),
        (json!({"max_attempts": 3, "jitter": 2.0}), "jitter"),
        (
            json!({"max_attempts": 3, "backoff_coefficient": 0.5}),
            "backoff_coefficient",
        ),
        (
            json!({"max_attempts": 3, "initial_interval_seconds": 100000}),
            "initial_interval_seconds",
        ),
        (json!({"max_attempts": "three"}), "max_attempts"),
        (json!({"initial_interval_seconds": 1}), "max_attempts"),
        (json!({"max_attempts": 3, "backof": 2}), "backof"),
        (json!("often"), ""),
    ] {
        let error = admin
            .playbooks()
            .create(&with_policy("Bad default", policy.clone()))
            .await
            .unwrap_err();
        assert_eq!(error.status(), Some(422), "{policy}");
        assert_eq!(error.code(), Some(ErrorCode::SchemaValidationFailed));
        let fields = error.field_errors().expect("field errors");
        let field = match path {
            "" => "definition.retry_policy".to_owned(),
            name => format!("definition.retry_policy.{name}"),
        };
        assert!(fields.get(&field).is_some(), "{policy}: {fields:?}");
    }
    assert_eq!(
        admin
            .playbooks()
            .list(PageRequest::default())
            .await
            .unwrap()
            .total,
        0,
        "nothing saved"
    );

    // A default of 5 s × 3, at most 3 attempts, no jitter.
    let default = json!({"max_attempts": 3, "initial_interval_seconds": 5,
        "backoff_coefficient": 3.0, "jitter": 0.0});
    let created = admin
        .playbooks()
        .create(&with_policy("Retrying", default.clone()))
        .await
        .unwrap();
    assert_eq!(created.definition["retry_policy"], default);
    // A patch with a bad default is refused and makes no revision.
    let mut bad = created.definition.clone();
    bad["retry_policy"]["max_interval_seconds"] = json!(-1);
    let error = admin
        .playbooks()
        .patch(
            created.id,
            &PatchPlaybook {
                definition: Some(bad),
                ..Default::default()
            },
        )
        .await
        .unwrap_err();
    assert_eq!(error.status(), Some(422));
    assert!(
        error
            .field_errors()
            .and_then(|f| f.get("definition.retry_policy.max_interval_seconds"))
            .is_some(),
        "{error:?}"
    );
    assert_eq!(admin.playbooks().get(created.id).await.unwrap().version, 1);

    let workspace = admin
        .workspaces()
        .create(&CreateWorkspace {
            name: "retries".into(),
            ..Default::default()
        })
        .await
        .unwrap();
    let workflow = admin
        .workflows()
        .create(&CreateWorkflow {
            playbook_id: created.id,
            workspace_id: workspace.id,
            name: "nightly".into(),
            ..Default::default()
        })
        .await
        .unwrap();
    let agent = admin
        .agents()
        .register(&RegisterAgent {
            name: "retrier".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .id;
    let create = |title: &str, policy: Option<RetryPolicy>, in_workflow: bool| CreateTask {
        title: title.into(),
        task_type: "code".into(),
        workflow_id: in_workflow.then_some(workflow.id),
        retry_policy: policy,
        ..Default::default()
    };
    let claim = ClaimTask {
        agent_id: agent,
        ..Default::default()
    };
    let fail = FailTask {
        agent_id: Some(agent),
        error: Some(TaskError {
            category: Some("tool".into()),
            ..Default::default()
        }),
        ..Default::default()
    };

    // The workflow's task names no policy: it takes the playbook's.
    let task = admin
        .tasks()
        .create(&create("inherits", None, true))
        .await
        .unwrap();
    let policy = task.retry_policy.clone().expect("the playbook's default");
    assert_eq!(
        (policy.max_attempts, policy.initial_interval_seconds),
        (3, Some(5))
    );
    assert_eq!(policy.max_interval_seconds, Some(500), "defaults filled in");
    let mut delays = Vec::new();
    for attempt in 1..=3 {
        let claimed = admin.tasks().claim(&claim).await.unwrap().expect("a task");
        assert_eq!((claimed.id, claimed.attempt), (task.id, attempt));
        clock.advance(Duration::seconds(2));
        let failed_at = clock.now();
        let after = admin.tasks().fail(task.id, &fail).await.unwrap();
        if attempt == 3 {
            assert_eq!(after.state, TaskState::Failed, "attempts spent");
            break;
        }
        assert_eq!(
            (after.state, after.attempt),
            (TaskState::Pending, attempt + 1)
        );
        let run_at = after.run_at.expect("a delayed retry").as_datetime();
        delays.push((run_at - failed_at).num_seconds());
        clock.set(run_at - Duration::milliseconds(500));
        assert!(admin.tasks().claim(&claim).await.unwrap().is_none());
        clock.set(run_at);
    }
    assert_eq!(delays, vec![5, 15], "the playbook's backoff");
    let scheduled = admin
        .events()
        .list(&EventFilter {
            event_type: Some("task.retry_scheduled".into()),
            entity_id: Some(task.id),
            ..Default::default()
        })
        .await
        .unwrap()
        .items;
    let seconds: Vec<f64> = scheduled
        .iter()
        .map(|e| e.data["delay_seconds"].as_f64().unwrap())
        .collect();
    assert_eq!(seconds.len(), 2);
    assert!(
        seconds.contains(&5.0) && seconds.contains(&15.0),
        "{seconds:?}"
    );

    // A task's own policy wins; outside a workflow there is no default.
    let own = RetryPolicy {
        max_attempts: 2,
        initial_interval_seconds: Some(1),
        jitter: Some(0.0),
        ..Default::default()
    };
    let task = admin
        .tasks()
        .create(&create("own policy", Some(own), true))
        .await
        .unwrap();
    assert_eq!(task.retry_policy.as_ref().map(|p| p.max_attempts), Some(2));
    admin.tasks().claim(&claim).await.unwrap().expect("a task");
    let failed_at = clock.now();
    let after = admin.tasks().fail(task.id, &fail).await.unwrap();
    let run_at = after.run_at.expect("a delayed retry").as_datetime();
    assert_eq!((run_at - failed_at).num_seconds(), 1);
    let legacy = CreateTask {
        auto_retry: Some(true),
        max_retries: Some(1),
        ..create("contract retries", None, true)
    };
    let legacy = admin.tasks().create(&legacy).await.unwrap();
    assert!(
        legacy.retry_policy.is_none(),
        "auto_retry keeps its meaning"
    );
    let alone = admin
        .tasks()
        .create(&create("no workflow", None, false))
        .await
        .unwrap();
    assert!(alone.retry_policy.is_none());
}

/// A permanent delete removes the family's workflows in steps of 100 (each
/// statement journals its own cascade; `playbooks/rows.rs`): 205 workflows
/// take three steps, and every one of them goes.
#[tokio::test]
async fn a_permanent_delete_removes_a_long_history_in_steps() {
    use orchestrator_client::api::workspaces::CreateWorkspace;
    use orchestrator_client::api::{CreateWorkflow, WorkflowFilter};
    let server = TestServer::start().await;
    let admin = server.admin();
    let family = admin
        .playbooks()
        .create(&playbook("Long history"))
        .await
        .unwrap();
    let workspace_id = admin
        .workspaces()
        .create(&CreateWorkspace {
            name: "Repo".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .id;
    let mut launched = Vec::new();
    for n in 0..205 {
        let workflow = admin
            .workflows()
            .create(&CreateWorkflow {
                playbook_id: family.id,
                workspace_id,
                name: format!("run {n}"),
                ..Default::default()
            })
            .await
            .unwrap();
        launched.push(workflow.id);
    }
    let impact = admin.playbooks().delete_impact(family.id).await.unwrap();
    assert_eq!(impact.workflows.total, 205);
    let removed = admin
        .playbooks()
        .delete_permanently(family.id)
        .await
        .unwrap();
    assert_eq!(removed.workflows_deleted, 205);
    let left = admin
        .workflows()
        .list(&WorkflowFilter::default(), PageRequest::default())
        .await
        .unwrap();
    assert_eq!(left.total, 0, "every workflow of the family is gone");
    for id in [launched[0], launched[100], launched[204]] {
        let gone = admin.workflows().get(id).await.unwrap_err();
        assert_eq!(gone.status(), Some(404));
    }
}
