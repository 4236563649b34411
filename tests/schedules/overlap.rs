//! Overlap policies, each with the previous run's task held by an agent:
//! `skip` writes a skipped run and a `schedule.skipped` event; `buffer_one`
//! keeps one slot waiting (later ones skip) and fires it when the running
//! one ends; `allow_all` fires anyway; `cancel_previous` cancels the held
//! task through the operator's cancel and fires.

use super::{agent, at, every, manual_server, move_to, runs};
use chrono::Duration;
use orchestrator_client::Client;
use orchestrator_client::TaskOperation;
use orchestrator_client::api::schedules::{OverlapPolicy, RunOutcome, Schedule, ScheduleRun};
use orchestrator_client::api::{ClaimTask, EventFilter, TaskState};
use orchestrator_core::clock::ManualClock;
use orchestrator_tests::TestServer;
use std::sync::Arc;
use uuid::Uuid;

/// A server, a one-minute schedule under `overlap`, and its first slot's
/// task claimed by an agent; the clock stands at the first slot.
async fn held(overlap: OverlapPolicy) -> (TestServer, Arc<ManualClock>, Schedule, Uuid) {
    let (server, clock) = manual_server("2026-06-01T00:00:30Z").await;
    let admin = server.admin();
    let schedule = admin
        .schedules()
        .create(&every("minutely", 60, overlap))
        .await
        .unwrap();
    move_to(&admin, &clock, schedule.id, at("2026-06-01T00:01:00Z")).await;
    let first = runs(&admin, schedule.id).await;
    assert_eq!(first.len(), 1);
    assert_eq!(first[0].outcome, RunOutcome::Launched);
    let task_id = first[0].task_id.expect("the run's task");
    let task = admin.tasks().get(task_id).await.unwrap();
    assert_eq!(task.metadata["schedule_id"], schedule.id.to_string());
    assert_eq!(task.metadata["scheduled_for"], "2026-06-01T00:01:00.000Z");
    let agent = agent(&admin, "holder").await;
    let claimed = admin
        .tasks()
        .claim(&ClaimTask {
            agent_id: agent,
            ..Default::default()
        })
        .await
        .unwrap()
        .expect("the agent holds the task");
    assert_eq!(claimed.id, task_id);
    (server, clock, schedule, task_id)
}

async fn second_slot(admin: &Client, clock: &ManualClock, id: Uuid) -> Vec<ScheduleRun> {
    move_to(admin, clock, id, at("2026-06-01T00:02:00Z")).await;
    runs(admin, id).await
}

#[tokio::test]
async fn skip_writes_a_skipped_run_and_an_event() {
    let (server, clock, schedule, held) = held(OverlapPolicy::Skip).await;
    let admin = server.admin();
    let runs = second_slot(&admin, &clock, schedule.id).await;
    assert_eq!(runs.len(), 2);
    assert_eq!(runs[0].outcome, RunOutcome::Skipped);
    assert_eq!(runs[0].reason.as_deref(), Some("overlap"));
    assert_eq!(runs[0].task_id, None);
    let events = admin
        .events()
        .list(&EventFilter {
            event_type: Some("schedule.skipped".into()),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(events.items.len(), 1);
    assert_eq!(events.items[0].entity_id, schedule.id);
    assert_eq!(events.items[0].data["reason"], "overlap");
    assert_eq!(
        admin.tasks().get(held).await.unwrap().state,
        TaskState::Claimed
    );
    let record = admin.schedules().get(schedule.id).await.unwrap();
    assert_eq!((record.fire_count, record.skip_count), (1, 1));
}

#[tokio::test]
async fn buffer_one_fires_the_waiting_slot_when_the_running_one_ends() {
    let (server, clock, schedule, held) = held(OverlapPolicy::BufferOne).await;
    let admin = server.admin();
    let runs_now = second_slot(&admin, &clock, schedule.id).await;
    assert_eq!(runs_now.len(), 1, "the second slot waits without a run yet");
    move_to(&admin, &clock, schedule.id, at("2026-06-01T00:03:00Z")).await;
    let runs_now = runs(&admin, schedule.id).await;
    assert_eq!(runs_now.len(), 2);
    assert_eq!(
        runs_now[0].scheduled_for.to_string(),
        "2026-06-01T00:03:00.000Z"
    );
    assert_eq!(
        runs_now[0].outcome,
        RunOutcome::Skipped,
        "one slot waits at most"
    );

    // The held task ends (cancelled by the operator).
    admin
        .tasks()
        .act(held, TaskOperation::Cancel, &Default::default())
        .await
        .unwrap();
    clock.advance(Duration::seconds(1));
    let mut buffered = None;
    for _ in 0..500 {
        buffered = runs(&admin, schedule.id)
            .await
            .into_iter()
            .find(|r| r.scheduled_for.to_string() == "2026-06-01T00:02:00.000Z");
        if buffered.is_some() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    let buffered = buffered.expect("the buffered slot fired once the task ended");
    assert_eq!(buffered.outcome, RunOutcome::Launched);
    assert!(buffered.task_id.is_some());
}

#[tokio::test]
async fn allow_all_fires_beside_the_running_one() {
    let (server, clock, schedule, held) = held(OverlapPolicy::AllowAll).await;
    let admin = server.admin();
    let runs = second_slot(&admin, &clock, schedule.id).await;
    assert_eq!(runs[0].outcome, RunOutcome::Launched);
    assert_ne!(runs[0].task_id, Some(held));
    assert_eq!(
        admin.tasks().get(held).await.unwrap().state,
        TaskState::Claimed
    );
}

#[tokio::test]
async fn cancel_previous_cancels_the_held_task_then_fires() {
    let (server, clock, schedule, held) = held(OverlapPolicy::CancelPrevious).await;
    let admin = server.admin();
    let runs = second_slot(&admin, &clock, schedule.id).await;
    assert_eq!(runs[0].outcome, RunOutcome::CancelledPrevious);
    assert!(runs[0].task_id.is_some());
    assert_eq!(
        admin.tasks().get(held).await.unwrap().state,
        TaskState::Cancelled
    );
    let events = admin
        .events()
        .list(&EventFilter {
            entity_id: Some(held),
            ..Default::default()
        })
        .await
        .unwrap();
    assert!(
        events
            .items
            .iter()
            .any(|e| e.data.to_string().contains("schedule overlap")),
        "the cancel carries its reason: {:?}",
        events.items
    );
}
