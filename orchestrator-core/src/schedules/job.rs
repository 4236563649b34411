//! The firing job of the background runner: fires every due slot (the
//! timer's, a buffered one, a backfill's), applies catch-up to slots missed
//! while no server ran, and tells the runner when the next slot is due.

use crate::api::schedules::{CatchupPolicy, MAX_BACKFILL_SLOTS, OverlapPolicy};
use crate::background::Due;
use crate::caller::Caller;
use crate::control_plane::ControlPlane;
use crate::error::Result;
use crate::schedules::fire::{Decision, Slot, Source};
use crate::schedules::rows::{self, ScheduleRow};
use crate::store::on_db;
use chrono::{DateTime, Duration, Utc};
use uuid::Uuid;

/// A slot fired more than this after it was due counts as missed (no server
/// ran then), so the catch-up policy decides it. While a server runs, a slot
/// fires within about a second of being due.
const LATE_AFTER: Duration = Duration::seconds(5);

/// How often a schedule with a slot kept waiting by `buffer_one` looks
/// whether the running workflow or task has ended.
const BUFFER_POLL: Duration = Duration::seconds(1);

/// The earliest the job runs again after a turn (a slot still due after
/// its turn had an error).
const RETRY_SOON: Duration = Duration::milliseconds(200);

/// Most slots one schedule fires in one turn of the job (the rest in the
/// next turn, at once).
const SLOTS_PER_TURN: usize = 1_100;

/// What the timer does next for a schedule, from its row at `now`.
enum Step {
    Fire(Slot),
    /// Move `next_slot` to this slot without a run: slots older than the
    /// catch-up window (or beyond the 1,000 `all` fires) are dropped.
    Jump(Option<DateTime<Utc>>),
    Idle,
}

impl ControlPlane {
    /// The background job (see the module docs).
    pub(crate) async fn schedules_job(&self) -> Result<Due> {
        let now = self.clock().now();
        let due: Vec<(Uuid, Uuid)> = {
            let mut conn = self.store().read().await?;
            on_db!(&mut conn, c => sqlx::query_as(
                "SELECT tenant_id, id FROM schedules WHERE next_fire_at <= $1 \
                 OR buffered_slot IS NOT NULL OR backfill_next IS NOT NULL",
            )
            .bind(now)
            .fetch_all(c)
            .await)?
        };
        let mut busy = false;
        for (tenant_id, id) in due {
            match self.run_schedule(tenant_id, id, now).await {
                Ok(more) => busy |= more,
                Err(e) => tracing::warn!(schedule_id = %id, error = %e, "a schedule's turn failed"),
            }
        }
        let mut conn = self.store().read().await?;
        let next: Option<(DateTime<Utc>,)> = on_db!(&mut conn, c => sqlx::query_as(
            "SELECT next_fire_at FROM schedules WHERE next_fire_at IS NOT NULL ORDER BY next_fire_at LIMIT 1",
        )
        .fetch_optional(c)
        .await)?;
        let mut wake = next.map(|(at,)| at);
        if busy {
            let soon = now + BUFFER_POLL;
            wake = Some(wake.map_or(soon, |at| at.min(soon)));
        }
        // A slot still due here is one whose turn failed (logged above):
        // not again at once.
        Ok(wake.map(|at| at.max(now + RETRY_SOON)))
    }

    /// Fires what is due of one schedule; answers whether it should be
    /// looked at again soon (a slot waits for a running one to end, or the
    /// turn's limit was reached).
    async fn run_schedule(&self, tenant_id: Uuid, id: Uuid, now: DateTime<Utc>) -> Result<bool> {
        for _ in 0..SLOTS_PER_TURN {
            let row = {
                let mut conn = self.store().read().await?;
                match rows::find(&mut conn, tenant_id, id).await? {
                    Some(row) => row,
                    None => return Ok(false),
                }
            };
            let step = self.step(&row, now).await?;
            let slot = match step {
                Step::Idle => return Ok(row.buffered_slot.is_some()),
                Step::Jump(to) => {
                    self.jump(&row, to).await?;
                    continue;
                }
                Step::Fire(slot) => slot,
            };
            if let Decision::Fire {
                overlap: OverlapPolicy::CancelPrevious,
                ..
            } = slot.decision
            {
                let cancelled = self.cancel_running(&Caller::system(tenant_id), id).await?;
                let slot = Slot {
                    decision: Decision::Fire {
                        overlap: OverlapPolicy::CancelPrevious,
                        cancelled,
                    },
                    ..slot
                };
                self.fire_slot(tenant_id, id, slot).await?;
            } else {
                self.fire_slot(tenant_id, id, slot).await?;
            }
        }
        Ok(true)
    }

    /// The next thing to do for `row` at `now`.
    async fn step(&self, row: &ScheduleRow, now: DateTime<Utc>) -> Result<Step> {
        let spec = row.spec()?;
        let fire = |at, source, overlap| {
            Step::Fire(Slot {
                at,
                source,
                decision: Decision::Fire {
                    overlap,
                    cancelled: false,
                },
            })
        };
        if let Some(at) = row.buffered_slot {
            let mut conn = self.store().read().await?;
            if rows::running(&mut conn, row.id).await?.is_empty() {
                return Ok(fire(at, Source::Buffered, OverlapPolicy::AllowAll));
            }
        }
        if let Some(at) = row.backfill_next {
            return Ok(fire(at, Source::Backfill, OverlapPolicy::AllowAll));
        }
        let (Some(slot), false) = (row.next_slot, row.paused) else {
            return Ok(Step::Idle);
        };
        if row.due(slot) > now {
            return Ok(Step::Idle);
        }
        let overlap = row.overlap.parse().unwrap_or_default();
        if now - row.due(slot) <= LATE_AFTER {
            return Ok(fire(slot, Source::Next, overlap));
        }
        // Missed while no server ran: the catch-up policy, within the window.
        let window_start = now - Duration::seconds(row.catchup_window_seconds);
        let catchup: CatchupPolicy = row.catchup.parse().unwrap_or_default();
        let oldest_kept = match catchup {
            CatchupPolicy::All => spec.oldest_of_newest(window_start, now, MAX_BACKFILL_SLOTS),
            _ => None,
        };
        let keep_from = oldest_kept.map_or(window_start, |oldest| oldest.max(window_start));
        if slot < keep_from {
            return Ok(Step::Jump(spec.at_or_after(keep_from)));
        }
        let latest = spec.next_after(slot).is_none_or(|n| row.due(n) > now);
        let decision = match catchup {
            CatchupPolicy::All => None,
            CatchupPolicy::Latest if latest => None,
            _ => Some(Decision::Skip("missed")),
        };
        Ok(match decision {
            Some(decision) => Step::Fire(Slot {
                at: slot,
                source: Source::Next,
                decision,
            }),
            None => fire(slot, Source::Next, overlap),
        })
    }

    /// Moves the timer of `row` to `to` (no runs), unless it moved meanwhile.
    async fn jump(&self, row: &ScheduleRow, to: Option<DateTime<Utc>>) -> Result<()> {
        let mut tx = self.store().begin().await?;
        let mut locked = rows::lock(&mut tx, row.tenant_id, row.id).await?;
        if locked.next_slot != row.next_slot || locked.paused {
            return Ok(());
        }
        locked.set_next(to);
        rows::save(&mut tx, &locked).await?;
        tx.commit().await
    }
}
