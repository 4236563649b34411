//! `/api/v1/schedules` (admin): cron and interval schedules and their runs.

use crate::client::{Client, JsonWithRequestId, M, page_query};
use crate::error::Result;
use crate::paging;
use futures_util::stream::BoxStream;
use orchestrator_core::api::schedules::{
    Backfill, BackfillSchedule, CreateSchedule, DeletedSchedule, PatchSchedule, PreviewSchedule,
    Schedule, ScheduleFilter, SchedulePreview, ScheduleRun, TriggerSchedule,
};
use orchestrator_core::api::{Page, PageRequest};
use uuid::Uuid;

/// The `Schedules` routes: get one from [`Client::schedules`].
pub struct Schedules<'c> {
    pub(crate) client: &'c Client,
}

impl Schedules<'_> {
    fn path(id: Uuid, rest: &str) -> String {
        format!("/api/v1/schedules/{id}{rest}")
    }

    /// `POST /schedules`.
    pub async fn create(&self, request: &CreateSchedule) -> Result<Schedule> {
        self.client
            .data(
                self.client
                    .request(M::POST, "/api/v1/schedules")
                    .json_id(self.client, request),
            )
            .await
    }

    /// `GET /schedules` with the `paused` and `search` filters, newest first.
    pub async fn list(&self, filter: &ScheduleFilter, page: PageRequest) -> Result<Page<Schedule>> {
        self.client
            .page(
                self.client
                    .request(M::GET, "/api/v1/schedules")
                    .query(filter)
                    .query(&page_query(page)),
            )
            .await
    }

    /// Every schedule matching `filter`, page after page, as one stream.
    pub fn list_all(&self, filter: &ScheduleFilter) -> BoxStream<'static, Result<Schedule>> {
        let client = self.client.clone();
        let filter = filter.clone();
        paging::pages(move |page| {
            let client = client.clone();
            let filter = filter.clone();
            async move { client.schedules().list(&filter, page).await }
        })
    }

    /// `GET /schedules/:id`.
    pub async fn get(&self, id: Uuid) -> Result<Schedule> {
        self.client
            .data(self.client.request(M::GET, &Self::path(id, "")))
            .await
    }

    /// `PATCH /schedules/:id`.
    pub async fn patch(&self, id: Uuid, request: &PatchSchedule) -> Result<Schedule> {
        self.client
            .data(
                self.client
                    .request(M::PATCH, &Self::path(id, ""))
                    .json_id(self.client, request),
            )
            .await
    }

    /// `DELETE /schedules/:id`.
    pub async fn delete(&self, id: Uuid) -> Result<DeletedSchedule> {
        self.client
            .data(self.client.request(M::DELETE, &Self::path(id, "")))
            .await
    }

    /// `POST /schedules/:id/pause`.
    pub async fn pause(&self, id: Uuid) -> Result<Schedule> {
        self.client
            .data(self.client.request(M::POST, &Self::path(id, "/pause")))
            .await
    }

    /// `POST /schedules/:id/resume` (paused time is not caught up).
    pub async fn resume(&self, id: Uuid) -> Result<Schedule> {
        self.client
            .data(self.client.request(M::POST, &Self::path(id, "/resume")))
            .await
    }

    /// `POST /schedules/:id/trigger`: one fire now; the run it wrote.
    pub async fn trigger(&self, id: Uuid, request: &TriggerSchedule) -> Result<ScheduleRun> {
        self.client
            .data(
                self.client
                    .request(M::POST, &Self::path(id, "/trigger"))
                    .json_id(self.client, request),
            )
            .await
    }

    /// `POST /schedules/:id/backfill`: fires every slot in `[from, to)`.
    pub async fn backfill(&self, id: Uuid, request: &BackfillSchedule) -> Result<Backfill> {
        self.client
            .data(
                self.client
                    .request(M::POST, &Self::path(id, "/backfill"))
                    .json_id(self.client, request),
            )
            .await
    }

    /// `GET /schedules/:id/runs`, newest first.
    pub async fn runs(&self, id: Uuid, page: PageRequest) -> Result<Page<ScheduleRun>> {
        self.client
            .page(
                self.client
                    .request(M::GET, &Self::path(id, "/runs"))
                    .query(&page_query(page)),
            )
            .await
    }

    /// `POST /schedules/preview`: the next fire times of a spec.
    pub async fn preview(&self, request: &PreviewSchedule) -> Result<SchedulePreview> {
        self.client
            .data(
                self.client
                    .request(M::POST, "/api/v1/schedules/preview")
                    .json(request),
            )
            .await
    }
}
