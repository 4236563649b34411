//! Validation (422 naming the field, 400 for dangling references, 409 for a
//! name in use), another tenant's 404, the preview, and the record's shape.

use orchestrator_client::api::schedules::{PatchSchedule, PreviewSchedule};
use orchestrator_client::api::{CreateTenant, ErrorCode};
use orchestrator_tests::TestServer;
use reqwest::StatusCode;
use serde_json::{Value, json};

async fn post(server: &TestServer, path: &str, body: Value) -> (StatusCode, Value) {
    let response = server
        .http()
        .post(server.at(path))
        .bearer_auth(&server.admin_key)
        .json(&body)
        .send()
        .await
        .unwrap();
    let status = response.status();
    (status, response.json().await.unwrap_or(Value::Null))
}

fn body(extra: Value) -> Value {
    let mut body = json!({
        "name": "nightly",
        "cron": "0 2 * * *",
        "target": { "kind": "task", "task": { "title": "report", "type": "code" } },
    });
    for (key, value) in extra.as_object().unwrap() {
        if value.is_null() {
            body.as_object_mut().unwrap().remove(key);
        } else {
            body[key] = value.clone();
        }
    }
    body
}

/// The fields a 422 or 400 names.
fn fields(answer: &Value) -> Vec<String> {
    answer["error"]["details"]["issues"]["fieldErrors"]
        .as_object()
        .map(|m| m.keys().cloned().collect())
        .unwrap_or_default()
}

#[tokio::test]
async fn bad_bodies_are_refused_naming_the_field_and_change_nothing() {
    let server = TestServer::start().await;
    let cases = [
        (json!({ "cron": "61 * * * *" }), "cron"),
        (json!({ "cron": "0 2 * * * *" }), "cron"),
        (json!({ "cron": "every night" }), "cron"),
        (json!({ "timezone": "Europe/Atlantis" }), "timezone"),
        (json!({ "every_seconds": 60 }), "every_seconds"),
        (json!({ "overlap": "sometimes" }), "overlap"),
        (json!({ "catchup": "never" }), "catchup"),
        (json!({ "cron": null }), "cron"),
        (json!({ "target": { "kind": "webhook" } }), "target"),
    ];
    for (extra, field) in cases {
        let (status, answer) = post(&server, "/api/v1/schedules", body(extra.clone())).await;
        assert_eq!(
            status,
            StatusCode::UNPROCESSABLE_ENTITY,
            "{extra}: {answer}"
        );
        assert_eq!(answer["error"]["code"], "SCHEMA_VALIDATION_FAILED");
        assert!(
            fields(&answer).iter().any(|f| f.starts_with(field)),
            "{extra} names {field}: {answer}"
        );
    }
    for (extra, field) in [
        (json!({ "every_seconds": 0, "cron": null }), "every_seconds"),
        (json!({ "jitter_seconds": 3601 }), "jitter_seconds"),
        (
            json!({ "catchup_window_seconds": -1 }),
            "catchup_window_seconds",
        ),
        (json!({ "name": " " }), "name"),
        (
            json!({ "start_at": "2027-01-02T00:00:00Z", "end_at": "2027-01-01T00:00:00Z" }),
            "end_at",
        ),
        (
            json!({ "target": { "kind": "workflow", "playbook_id": uuid::Uuid::new_v4(), "workspace_id": uuid::Uuid::new_v4() } }),
            "target.playbook_id",
        ),
        (
            json!({ "target": { "kind": "task", "task": { "title": "t", "type": "code", "workspace_id": uuid::Uuid::new_v4() } } }),
            "target.task.workspace_id",
        ),
    ] {
        let (status, answer) = post(&server, "/api/v1/schedules", body(extra.clone())).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{extra}: {answer}");
        assert_eq!(answer["error"]["code"], "VALIDATION_ERROR");
        assert!(
            fields(&answer).contains(&field.to_owned()),
            "{extra} names {field}: {answer}"
        );
    }
    let admin = server.admin();
    assert_eq!(
        admin
            .schedules()
            .list(&Default::default(), Default::default())
            .await
            .unwrap()
            .total,
        0,
        "a refused create leaves nothing"
    );
    let tasks = admin
        .tasks()
        .list(&Default::default(), Default::default())
        .await
        .unwrap();
    assert_eq!(tasks.total, 0, "checking a target creates no task");

    // A name in use is 409.
    let (status, created) = post(&server, "/api/v1/schedules", body(json!({}))).await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    let (status, answer) = post(&server, "/api/v1/schedules", body(json!({}))).await;
    assert_eq!(status, StatusCode::CONFLICT, "{answer}");
    assert_eq!(answer["error"]["code"], "CONFLICT");

    // The record: the body's fields, the defaults, the next fire.
    let record = &created["data"];
    assert_eq!(record["timezone"], "UTC");
    assert_eq!(record["overlap"], "skip");
    assert_eq!(record["catchup"], "latest");
    assert_eq!(record["catchup_window_seconds"], 3600);
    assert_eq!(record["jitter_seconds"], 0);
    assert_eq!(record["paused"], false);
    assert_eq!(record["fire_count"], 0);
    assert!(
        record["next_fire_at"]
            .as_str()
            .unwrap()
            .ends_with("T02:00:00.000Z")
    );

    // A patch of the wrong shape is 422 too.
    let id = record["id"].as_str().unwrap().parse().unwrap();
    let error = admin
        .schedules()
        .patch(
            id,
            &PatchSchedule {
                timezone: Some("Mars/Olympus".into()),
                ..Default::default()
            },
        )
        .await
        .unwrap_err();
    assert_eq!(error.code(), Some(ErrorCode::SchemaValidationFailed));
}

#[tokio::test]
async fn another_tenant_sees_404_and_an_empty_list() {
    let server = TestServer::start().await;
    let (_, created) = post(&server, "/api/v1/schedules", body(json!({}))).await;
    let id: uuid::Uuid = created["data"]["id"].as_str().unwrap().parse().unwrap();
    let other = server
        .service()
        .tenants()
        .create(&CreateTenant {
            name: "Other".into(),
            slug: None,
            request_id: None,
        })
        .await
        .unwrap();
    let theirs = server.client(&other.admin_key.api_key);
    let schedules = theirs.schedules();
    assert_eq!(schedules.get(id).await.unwrap_err().status(), Some(404));
    assert_eq!(schedules.pause(id).await.unwrap_err().status(), Some(404));
    assert_eq!(schedules.delete(id).await.unwrap_err().status(), Some(404));
    assert_eq!(
        schedules
            .trigger(id, &Default::default())
            .await
            .unwrap_err()
            .status(),
        Some(404)
    );
    assert_eq!(
        schedules
            .runs(id, Default::default())
            .await
            .unwrap_err()
            .status(),
        Some(404)
    );
    let list = schedules
        .list(&Default::default(), Default::default())
        .await
        .unwrap();
    assert_eq!(list.total, 0);
}

#[tokio::test]
async fn the_preview_shows_the_next_five_fires_in_the_zone() {
    let (server, _clock) = super::manual_server("2026-03-27T12:00:00Z").await;
    let preview = server
        .admin()
        .schedules()
        .preview(&PreviewSchedule {
            cron: Some("30 2 * * *".into()),
            timezone: Some("Europe/Paris".into()),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(
        preview.local_times,
        vec![
            "2026-03-28T02:30:00+01:00",
            // 02:30 does not exist on the spring-forward day: 03:00 CEST.
            "2026-03-29T03:00:00+02:00",
            "2026-03-30T02:30:00+02:00",
            "2026-03-31T02:30:00+02:00",
            "2026-04-01T02:30:00+02:00",
        ]
    );
    assert_eq!(
        preview.fire_times[1].to_string(),
        "2026-03-29T01:00:00.000Z"
    );
    let error = server
        .admin()
        .schedules()
        .preview(&PreviewSchedule {
            cron: Some("0 9 * *".into()),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(error.status(), Some(422));
}
