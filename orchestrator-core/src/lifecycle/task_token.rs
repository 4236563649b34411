//! Task tokens: a credential limited to one task, for the command a worker
//! runs for it (`orch worker run` puts it in `ORCH_TASK_TOKEN`).
//!
//! `POST /tasks/:id/token` (the task's current assignee, or its worker)
//! issues `orch_task_<HS256 JWT>` naming the tenant, the task, its assignee,
//! the moment it was claimed and the key that asked. The token is checked on
//! every use, so it stops working the moment the task leaves that
//! assignment: the task must still be `claimed` or `in_progress`, held by the
//! same agent since the same claim (a reassign and a new claim by the same
//! agent make a new assignment), and the issuing key must still be usable.
//! It also expires after the task's timeout plus a margin.
//!
//! A task token acts as the assignee agent with worker scope, but the server
//! lets it reach only the routes about its own task (see the server's
//! `task_tokens.rs`): reads of the task and its context, start, complete,
//! fail, claim-credentials, handoffs, artifacts, `POST /logs/ingest` with
//! every entry naming the task, and the assignee's own heartbeat.

use crate::api::{IssueTaskToken, Scope, TaskToken};
use crate::caller::Caller;
use crate::control_plane::ControlPlane;
use crate::error::{Error, Result};
use crate::store::on_db;
use crate::tasks::acting::Acting;
use chrono::{DateTime, Utc};
use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation};
use serde::{Deserialize, Serialize};
use std::time::Duration;
use uuid::Uuid;

/// What a task token starts with, so the server tells it from API keys and
/// access tokens before any parsing.
pub const TASK_TOKEN_PREFIX: &str = "orch_task_";

/// Marks task tokens, so an access token can never pass for one and back.
const TOKEN_TYPE: &str = "orch.task.v1";

/// How long a token outlives the task's own timeout.
const MARGIN: Duration = Duration::from_secs(15 * 60);

#[derive(Debug, Serialize, Deserialize)]
struct Claims {
    /// The task id.
    sub: Uuid,
    tid: Uuid,
    /// The assignee agent.
    agt: Uuid,
    /// When the assignment began (`claimed_at`, microseconds).
    clm: i64,
    /// The key that asked for the token.
    key: Uuid,
    iat: i64,
    exp: i64,
    typ: String,
    jti: Uuid,
}

/// Whether a bearer credential is a task token.
pub fn is_task_token(bearer: &str) -> bool {
    bearer.trim().starts_with(TASK_TOKEN_PREFIX)
}

type Holding = (
    String,
    Option<Uuid>,
    Option<Uuid>,
    Option<DateTime<Utc>>,
    i32,
);

impl ControlPlane {
    /// `POST /tasks/:id/token`: a token for the task's current assignment;
    /// `403` unless the caller is the assignee (or its worker), `409` unless
    /// the task is claimed or in progress.
    pub async fn issue_task_token(
        &self,
        caller: &Caller,
        task_id: Uuid,
        request: IssueTaskToken,
    ) -> Result<TaskToken> {
        let acting = Acting::resolve(caller, request.agent_id, request.worker_id)?;
        let (state, agent, worker, claimed_at, timeout) = self
            .holding(caller.tenant_id, task_id)
            .await?
            .ok_or(Error::not_found("task"))?;
        let held = (acting.agent_id.is_some() && acting.agent_id == agent)
            || (acting.worker_id.is_some() && acting.worker_id == worker);
        if !held {
            return Err(Error::forbidden(
                "only the task's current assignee (or its worker) can get a task token",
            ));
        }
        let (Some(agent), Some(claimed_at), true) = (
            agent,
            claimed_at,
            matches!(state.as_str(), "claimed" | "in_progress"),
        ) else {
            return Err(Error::Conflict {
                message: format!(
                    "the task is {state}; a task token needs a claimed or in-progress task"
                ),
                hint: None,
            });
        };
        let now = self.now();
        let ttl = Duration::from_secs(60 * u64::try_from(timeout.max(1)).unwrap_or(180)) + MARGIN;
        let expires_at = now.plus(ttl);
        let claims = Claims {
            sub: task_id,
            tid: caller.tenant_id,
            agt: agent,
            clm: claimed_at.timestamp_micros(),
            key: caller.key_id,
            iat: now.as_datetime().timestamp(),
            exp: expires_at.as_datetime().timestamp(),
            typ: TOKEN_TYPE.to_owned(),
            jti: Uuid::new_v4(),
        };
        let jwt = jsonwebtoken::encode(
            &Header::new(Algorithm::HS256),
            &claims,
            &EncodingKey::from_secret(self.secrets().signing_key()),
        )
        .map_err(Error::internal)?;
        Ok(TaskToken {
            token: format!("{TASK_TOKEN_PREFIX}{jwt}"),
            task_id,
            agent_id: agent,
            expires_at,
        })
    }

    /// Resolves a task token to the caller it acts as (the assignee agent,
    /// worker scope) and the one task it is for; `401` once the task has left
    /// that assignment or the issuing key is no longer usable.
    pub async fn authenticate_task_token(&self, bearer: &str) -> Result<(Caller, Uuid)> {
        let jwt = bearer
            .trim()
            .strip_prefix(TASK_TOKEN_PREFIX)
            .ok_or_else(|| Error::unauthorized("malformed task token"))?;
        let mut validation = Validation::new(Algorithm::HS256);
        validation.leeway = 5;
        validation.set_required_spec_claims(&["exp", "sub"]);
        let claims = jsonwebtoken::decode::<Claims>(
            jwt,
            &DecodingKey::from_secret(self.secrets().signing_key()),
            &validation,
        )
        .map_err(|e| match e.kind() {
            jsonwebtoken::errors::ErrorKind::ExpiredSignature => {
                Error::unauthorized("the task token has expired")
            }
            _ => Error::unauthorized("invalid task token"),
        })?
        .claims;
        if claims.typ != TOKEN_TYPE {
            return Err(Error::unauthorized("invalid task token"));
        }
        // The key that asked for it must still be good (a revoked worker key
        // takes its tasks' tokens with it).
        let key = self.usable_key_by_id(claims.key).await?;
        if key.tenant_id != claims.tid {
            return Err(Error::unauthorized("invalid task token"));
        }
        let current = self.holding(claims.tid, claims.sub).await?;
        let live = current.is_some_and(|(state, agent, _, claimed_at, _)| {
            matches!(state.as_str(), "claimed" | "in_progress")
                && agent == Some(claims.agt)
                && claimed_at.map(|at| at.timestamp_micros()) == Some(claims.clm)
        });
        if !live {
            return Err(Error::unauthorized(
                "this task token is no longer valid: its task has left the assignment it was issued for",
            ));
        }
        Ok((
            Caller {
                tenant_id: claims.tid,
                scope: Scope::Worker,
                key_id: claims.key,
                owner_type: "agent".to_owned(),
                owner_id: Some(claims.agt),
            },
            claims.sub,
        ))
    }

    /// The task's state, assignee, worker, claim time and timeout.
    async fn holding(&self, tenant_id: Uuid, task_id: Uuid) -> Result<Option<Holding>> {
        let mut conn = self.store().read().await?;
        let row: Option<Holding> = on_db!(&mut conn, c => sqlx::query_as(
            "SELECT state, assigned_agent_id, assigned_worker_id, claimed_at, timeout_minutes \
             FROM tasks WHERE id = $1 AND tenant_id = $2",
        ).bind(task_id).bind(tenant_id).fetch_optional(c).await)?;
        Ok(row)
    }
}
