//! Schedules end to end (issue 29), on SQLite and PostgreSQL: the spec's
//! daylight-saving rules under a manual clock, each overlap policy with the
//! previous run held by an agent, catch-up across a restart, exactly once
//! across replicas and concurrent triggers, real-time fires over HTTP,
//! trigger, backfill, failed fires, and every validation answer.

mod catchup;
mod dst;
mod once;
mod overlap;
mod realtime;
mod validation;

use chrono::{DateTime, Utc};
use orchestrator_client::Client;
use orchestrator_client::api::schedules::{
    CreateSchedule, OverlapPolicy, Schedule, ScheduleRun, ScheduleTarget,
};
use orchestrator_client::api::{CreateTask, PageRequest, RegisterAgent};
use orchestrator_core::clock::ManualClock;
use orchestrator_tests::TestServer;
use std::sync::Arc;
use std::time::Duration;
use uuid::Uuid;

/// A task target titled `title`.
pub fn task_target(title: &str) -> ScheduleTarget {
    ScheduleTarget::Task {
        task: Box::new(CreateTask {
            title: title.into(),
            task_type: "code".into(),
            ..Default::default()
        }),
    }
}

/// A create body for an interval schedule launching a task.
pub fn every(name: &str, seconds: i64, overlap: OverlapPolicy) -> CreateSchedule {
    CreateSchedule {
        name: name.into(),
        description: None,
        cron: None,
        every_seconds: Some(seconds),
        timezone: None,
        overlap: Some(overlap),
        catchup: None,
        catchup_window_seconds: None,
        jitter_seconds: None,
        start_at: None,
        end_at: None,
        paused: None,
        target: task_target(name),
        request_id: None,
    }
}

/// A server whose core reads time from a manual clock starting at `start`.
pub async fn manual_server(start: &str) -> (TestServer, Arc<ManualClock>) {
    let clock = Arc::new(ManualClock::new(at(start)));
    let given = clock.clone();
    let server = TestServer::start_with(move |config| config.core.clock = given).await;
    (server, clock)
}

pub fn at(text: &str) -> DateTime<Utc> {
    text.parse().unwrap()
}

/// Every run of a schedule, newest first.
pub async fn runs(client: &Client, id: Uuid) -> Vec<ScheduleRun> {
    client
        .schedules()
        .runs(id, PageRequest::new(1, 100))
        .await
        .unwrap()
        .items
}

/// Waits (up to 10 s) until `check` holds on the schedule's record.
pub async fn wait_for(client: &Client, id: Uuid, check: impl Fn(&Schedule) -> bool) -> Schedule {
    for _ in 0..1000 {
        let schedule = client.schedules().get(id).await.unwrap();
        if check(&schedule) {
            return schedule;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("schedule {id} never reached the expected state");
}

/// Moves the manual clock to `to` and waits until the runner has fired
/// what fell due for `id` (its next fire is later than `to`).
pub async fn move_to(client: &Client, clock: &ManualClock, id: Uuid, to: DateTime<Utc>) {
    clock.set(to);
    wait_for(client, id, |s| {
        s.next_fire_at.is_none_or(|next| next.as_datetime() > to)
    })
    .await;
}

/// An agent that can hold a task.
pub async fn agent(client: &Client, name: &str) -> Uuid {
    client
        .agents()
        .register(&RegisterAgent {
            name: name.into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .id
}
