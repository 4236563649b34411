//! Daylight-saving days in Europe/Paris under a manual clock: `0 9 * * *`
//! fires once at 09:00 local on the spring-forward and fall-back days;
//! `30 2 * * *` fires once at 03:00 local on the spring-forward day (02:30
//! does not exist) and once, at the first 02:30, on the fall-back day.

use super::{at, manual_server, move_to, runs};
use chrono::{DateTime, Duration, Utc};
use orchestrator_client::Client;
use orchestrator_client::api::schedules::{CreateSchedule, OverlapPolicy, RunOutcome};
use orchestrator_core::clock::ManualClock;
use uuid::Uuid;

fn paris(name: &str, cron: &str) -> CreateSchedule {
    CreateSchedule {
        cron: Some(cron.into()),
        every_seconds: None,
        timezone: Some("Europe/Paris".into()),
        overlap: Some(OverlapPolicy::AllowAll),
        ..super::every(name, 1, OverlapPolicy::AllowAll)
    }
}

/// Walks the clock from `from` to `to` in 10-minute steps, letting the
/// runner fire what falls due at each.
async fn walk(client: &Client, clock: &ManualClock, ids: &[Uuid], from: &str, to: &str) {
    let (mut now, end) = (at(from), at(to));
    while now <= end {
        for id in ids {
            move_to(client, clock, *id, now).await;
        }
        now += Duration::minutes(10);
    }
}

async fn fired(client: &Client, id: Uuid) -> Vec<DateTime<Utc>> {
    let mut runs = runs(client, id).await;
    runs.reverse();
    assert!(
        runs.iter().all(|r| r.outcome == RunOutcome::Launched),
        "{runs:?}"
    );
    runs.iter().map(|r| r.scheduled_for.as_datetime()).collect()
}

#[tokio::test]
async fn paris_daylight_saving_days_fire_once_per_day() {
    let (server, clock) = manual_server("2026-03-28T12:00:00Z").await;
    let admin = server.admin();
    let nine = admin
        .schedules()
        .create(&paris("nine", "0 9 * * *"))
        .await
        .unwrap();
    let half_past_two = admin
        .schedules()
        .create(&paris("half past two", "30 2 * * *"))
        .await
        .unwrap();
    let ids = [nine.id, half_past_two.id];

    // Spring forward: 2026-03-29, 02:00 CET becomes 03:00 CEST.
    walk(
        &admin,
        &clock,
        &ids,
        "2026-03-28T12:00:00Z",
        "2026-03-29T12:00:00Z",
    )
    .await;
    assert_eq!(
        fired(&admin, nine.id).await,
        vec![at("2026-03-29T07:00:00Z")]
    );
    assert_eq!(
        fired(&admin, half_past_two.id).await,
        vec![at("2026-03-29T01:00:00Z")],
        "02:30 does not exist: once, at 03:00 CEST"
    );

    // Fall back: 2026-10-25, 03:00 CEST becomes 02:00 CET. The months
    // between fall outside the catch-up window and fire nothing.
    walk(
        &admin,
        &clock,
        &ids,
        "2026-10-24T12:00:00Z",
        "2026-10-25T12:00:00Z",
    )
    .await;
    assert_eq!(
        fired(&admin, nine.id).await,
        vec![at("2026-03-29T07:00:00Z"), at("2026-10-25T08:00:00Z")]
    );
    assert_eq!(
        fired(&admin, half_past_two.id).await,
        vec![at("2026-03-29T01:00:00Z"), at("2026-10-25T00:30:00Z")],
        "02:30 occurs twice: once, at its first occurrence (CEST)"
    );
    let record = admin.schedules().get(nine.id).await.unwrap();
    assert_eq!(record.fire_count, 2);
    assert_eq!(
        record.next_fire_at.unwrap().to_string(),
        "2026-10-26T08:00:00.000Z"
    );
}
