//! Real time over HTTP: an `every_seconds: 1` schedule fires within 1 s of
//! each slot; pausing stops fires; resuming starts them again without
//! catching up. Also trigger and backfill answers, a failed fire (the
//! playbook archived) that the schedule survives, the workflow metadata,
//! and delete.

use super::{every, runs};
use chrono::Utc;
use orchestrator_client::api::schedules::{
    BackfillSchedule, CreateSchedule, OverlapPolicy, RunOutcome, ScheduleTarget,
};
use orchestrator_client::api::{EventFilter, Timestamp};
use orchestrator_tests::TestServer;
use std::time::Duration;

#[tokio::test]
async fn an_every_second_schedule_fires_on_time_pauses_and_resumes_without_catching_up() {
    let server = TestServer::start().await;
    let admin = server.admin();
    let schedule = admin
        .schedules()
        .create(&every("ticker", 1, OverlapPolicy::AllowAll))
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(3500)).await;
    let fired = runs(&admin, schedule.id).await;
    assert!(fired.len() >= 2, "{fired:?}");
    for run in &fired {
        assert_eq!(run.outcome, RunOutcome::Launched);
        let lag = run.fired_at.as_datetime() - run.scheduled_for.as_datetime();
        assert!(
            lag >= chrono::Duration::zero() && lag < chrono::Duration::seconds(1),
            "fired {lag} after its slot"
        );
    }
    let paused = admin.schedules().pause(schedule.id).await.unwrap();
    assert!(paused.paused && paused.next_fire_at.is_none());
    let before = runs(&admin, schedule.id).await.len();
    tokio::time::sleep(Duration::from_millis(2500)).await;
    assert_eq!(
        runs(&admin, schedule.id).await.len(),
        before,
        "paused: no fires"
    );

    // The metrics, read while paused (a fire between two scrapes would
    // make the count and the bucket disagree): runs by outcome, and every
    // timer fire's lag under 1 s.
    let launched = server
        .metric("orch_schedule_runs_total{outcome=\"launched\"}")
        .await
        .unwrap();
    assert!(launched >= 2.0, "{launched}");
    let fires = server
        .metric("orch_schedule_fire_lag_seconds_count")
        .await
        .unwrap();
    assert!(fires >= 2.0);
    assert_eq!(
        server
            .metric("orch_schedule_fire_lag_seconds_bucket{le=\"1\"}")
            .await,
        Some(fires)
    );

    let resumed_at = Utc::now();
    let resumed = admin.schedules().resume(schedule.id).await.unwrap();
    assert!(resumed.next_fire_at.is_some());
    tokio::time::sleep(Duration::from_millis(2500)).await;
    let after = runs(&admin, schedule.id).await;
    let new: Vec<_> = after.iter().take(after.len() - before).collect();
    assert!(!new.is_empty(), "fires again after resume");
    for run in new {
        assert_eq!(
            run.outcome,
            RunOutcome::Launched,
            "nothing skipped as missed"
        );
        assert!(
            run.scheduled_for.as_datetime() >= resumed_at - chrono::Duration::milliseconds(5),
            "no paused slot caught up: {run:?}"
        );
    }
    let events = admin
        .events()
        .list(&EventFilter {
            entity_id: Some(schedule.id),
            limit: Some(500),
            ..Default::default()
        })
        .await
        .unwrap();
    let types: Vec<_> = events.items.iter().map(|e| e.event_type.as_str()).collect();
    for expected in [
        "schedule.created",
        "schedule.fired",
        "schedule.paused",
        "schedule.resumed",
    ] {
        assert!(types.contains(&expected), "{expected} in {types:?}");
    }
    let deleted = admin.schedules().delete(schedule.id).await.unwrap();
    assert!(deleted.deleted);
    assert_eq!(
        admin
            .schedules()
            .get(schedule.id)
            .await
            .unwrap_err()
            .status(),
        Some(404)
    );
}

#[tokio::test]
async fn workflows_carry_the_slot_a_failed_fire_is_recorded_and_backfills_fire_each_slot() {
    let server = TestServer::start().await;
    let admin = server.admin();
    let (playbook, workspace) = server.launch_fixtures("nightly build", "repo").await;
    let schedule = admin
        .schedules()
        .create(&CreateSchedule {
            cron: Some("0 2 * * *".into()),
            every_seconds: None,
            timezone: Some("Europe/Paris".into()),
            target: ScheduleTarget::Workflow {
                playbook_id: playbook,
                workspace_id: workspace,
                name: None,
                parameters: None,
                metadata: Some(serde_json::json!({ "team": "ops" })),
            },
            ..every("nightly", 1, OverlapPolicy::AllowAll)
        })
        .await
        .unwrap();
    let run = admin
        .schedules()
        .trigger(schedule.id, &Default::default())
        .await
        .unwrap();
    assert_eq!(run.outcome, RunOutcome::Launched);
    let workflow = admin
        .workflows()
        .get(run.workflow_id.unwrap())
        .await
        .unwrap()
        .workflow;
    assert_eq!(workflow.metadata["schedule_id"], schedule.id.to_string());
    assert_eq!(
        workflow.metadata["scheduled_for"],
        run.scheduled_for.to_string()
    );
    assert_eq!(workflow.metadata["team"], "ops");
    assert!(workflow.name.starts_with("nightly "));

    // Backfill: every slot of [from, to), at most 1,000.
    let answer = server
        .http()
        .post(server.at(&format!("/api/v1/schedules/{}/backfill", schedule.id)))
        .bearer_auth(&server.admin_key)
        .json(&serde_json::json!({ "from": "2026-01-01T00:00:00Z", "to": "2026-01-04T00:00:00Z" }))
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), reqwest::StatusCode::ACCEPTED);
    let body: serde_json::Value = answer.json().await.unwrap();
    assert_eq!(body["data"]["slots"], 3);
    assert_eq!(body["data"]["schedule_id"], schedule.id.to_string());
    let mut backfilled = Vec::new();
    for _ in 0..500 {
        backfilled = runs(&admin, schedule.id)
            .await
            .into_iter()
            .filter(|r| r.scheduled_for.as_datetime().timestamp() < 1_800_000_000)
            .collect();
        if backfilled.len() == 4 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let slots: Vec<_> = backfilled
        .iter()
        .map(|r| r.scheduled_for.to_string())
        .collect();
    assert!(
        slots.contains(&"2026-01-01T01:00:00.000Z".to_owned()),
        "{slots:?}"
    );
    assert!(
        slots.contains(&"2026-01-03T01:00:00.000Z".to_owned()),
        "{slots:?}"
    );
    let too_many = admin
        .schedules()
        .backfill(
            schedule.id,
            &BackfillSchedule {
                from: Timestamp::from(
                    "2020-01-01T00:00:00Z"
                        .parse::<chrono::DateTime<Utc>>()
                        .unwrap(),
                ),
                to: Timestamp::from(
                    "2026-01-01T00:00:00Z"
                        .parse::<chrono::DateTime<Utc>>()
                        .unwrap(),
                ),
                request_id: None,
            },
        )
        .await
        .unwrap_err();
    assert_eq!(too_many.status(), Some(400));

    // A patched target is checked like a created one.
    let dangling = admin
        .schedules()
        .patch(
            schedule.id,
            &orchestrator_client::api::schedules::PatchSchedule {
                target: Some(ScheduleTarget::Workflow {
                    playbook_id: uuid::Uuid::new_v4(),
                    workspace_id: workspace,
                    name: None,
                    parameters: None,
                    metadata: None,
                }),
                ..Default::default()
            },
        )
        .await
        .unwrap_err();
    assert_eq!(dangling.status(), Some(400));
    let renamed = admin
        .schedules()
        .patch(
            schedule.id,
            &orchestrator_client::api::schedules::PatchSchedule {
                name: Some("nightly build".into()),
                target: Some(ScheduleTarget::Task {
                    task: Box::new(orchestrator_client::api::CreateTask {
                        title: "t".into(),
                        task_type: "code".into(),
                        ..Default::default()
                    }),
                }),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(renamed.name, "nightly build");
    assert!(matches!(renamed.target, ScheduleTarget::Task { .. }));
    admin
        .schedules()
        .patch(
            schedule.id,
            &orchestrator_client::api::schedules::PatchSchedule {
                target: Some(ScheduleTarget::Workflow {
                    playbook_id: playbook,
                    workspace_id: workspace,
                    name: None,
                    parameters: None,
                    metadata: None,
                }),
                ..Default::default()
            },
        )
        .await
        .unwrap();

    // The playbook archived: the fire is a failed run with its reason and
    // an event, and the schedule keeps going.
    admin.playbooks().archive(playbook, true).await.unwrap();
    let failed = admin
        .schedules()
        .trigger(schedule.id, &Default::default())
        .await
        .unwrap();
    assert_eq!(failed.outcome, RunOutcome::Failed);
    assert!(
        failed.reason.as_deref().unwrap().contains("archived"),
        "{failed:?}"
    );
    let events = admin
        .events()
        .list(&EventFilter {
            event_type: Some("schedule.fired".into()),
            limit: Some(100),
            ..Default::default()
        })
        .await
        .unwrap();
    assert!(events.items.iter().any(|e| e.data["outcome"] == "failed"));
    let record = admin.schedules().get(schedule.id).await.unwrap();
    assert!(!record.paused && record.next_fire_at.is_some());
    admin.playbooks().archive(playbook, false).await.unwrap();
    let again = admin
        .schedules()
        .trigger(schedule.id, &Default::default())
        .await
        .unwrap();
    assert_eq!(again.outcome, RunOutcome::Launched);
}
