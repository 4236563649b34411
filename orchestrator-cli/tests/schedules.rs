//! `orch schedules` against a real server: create with --cron/--tz and
//! --every with a task file, next fire shown relative and exact, list, get,
//! update, pause, resume, trigger, backfill, runs, delete, and refusals.

use common::{json, orch_admin as orch, text};
use orchestrator_tests::TestServer;

mod common;

#[tokio::test]
async fn schedules_create_show_trigger_backfill_and_delete() {
    let server = TestServer::start().await;
    let (playbook, workspace) = server.launch_fixtures("nightly", "repo").await;
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();

    let nightly = json(
        &orch(
            &server,
            dir,
            &[
                "schedules",
                "create",
                "--name",
                "nightly",
                "--cron",
                "0 2 * * *",
                "--tz",
                "Europe/Paris",
                "--playbook",
                &playbook.to_string(),
                "--workspace",
                &workspace.to_string(),
                "-o",
                "json",
            ],
        )
        .await,
    );
    assert_eq!(nightly["timezone"], "Europe/Paris");
    assert_eq!(nightly["target"]["kind"], "workflow");
    let id = nightly["id"].as_str().unwrap().to_owned();
    let next = nightly["next_fire_at"].as_str().unwrap().to_owned();

    // The table shows the next fire relative and exact.
    let shown = text(&orch(&server, dir, &["schedules", "get", &id]).await);
    assert!(shown.contains("in ") && shown.contains(&next), "{shown}");
    let listed = text(&orch(&server, dir, &["schedules", "list"]).await);
    assert!(
        listed.contains("nightly") && listed.contains(&next),
        "{listed}"
    );

    // An interval with a task from a file.
    let task_file = dir.join("task.yaml");
    std::fs::write(&task_file, "title: sweep\ntype: code\n").unwrap();
    let sweep = json(
        &orch(
            &server,
            dir,
            &[
                "schedules",
                "create",
                "--name",
                "sweep",
                "--every",
                "5m",
                "--task-file",
                task_file.to_str().unwrap(),
                "--paused",
                "-o",
                "json",
            ],
        )
        .await,
    );
    assert_eq!(sweep["every_seconds"], 300);
    assert_eq!(sweep["paused"], true);
    assert!(sweep["next_fire_at"].is_null());
    let sweep_id = sweep["id"].as_str().unwrap().to_owned();
    let paused = text(&orch(&server, dir, &["schedules", "get", &sweep_id]).await);
    assert!(paused.contains("paused"), "{paused}");

    // Trigger, backfill, runs.
    let run = json(&orch(&server, dir, &["schedules", "trigger", &id, "-o", "json"]).await);
    assert_eq!(run["outcome"], "launched");
    assert!(run["workflow_id"].is_string());
    let backfill = json(
        &orch(
            &server,
            dir,
            &[
                "schedules",
                "backfill",
                &id,
                "--from",
                "2026-01-01T00:00:00Z",
                "--to",
                "2026-01-03T00:00:00Z",
                "-o",
                "json",
            ],
        )
        .await,
    );
    assert_eq!(backfill["slots"], 2);
    let mut runs = serde_json::Value::Null;
    for _ in 0..200 {
        runs = json(&orch(&server, dir, &["schedules", "runs", &id, "-o", "json"]).await);
        if runs["items"].as_array().is_some_and(|r| r.len() == 3) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert_eq!(runs["items"].as_array().unwrap().len(), 3, "{runs}");

    // Update, pause, resume.
    let updated = json(
        &orch(
            &server,
            dir,
            &[
                "schedules",
                "update",
                &id,
                "--cron",
                "@hourly",
                "-o",
                "json",
            ],
        )
        .await,
    );
    assert_eq!(updated["cron"], "@hourly");
    let paused = json(&orch(&server, dir, &["schedules", "pause", &id, "-o", "json"]).await);
    assert!(paused["next_fire_at"].is_null());
    let resumed = json(&orch(&server, dir, &["schedules", "resume", &id, "-o", "json"]).await);
    assert!(resumed["next_fire_at"].is_string());

    // Refusals: no spec, a bad zone (the server's 422).
    let missing = orch(
        &server,
        dir,
        &[
            "schedules",
            "create",
            "--name",
            "x",
            "--task-file",
            task_file.to_str().unwrap(),
        ],
    )
    .await;
    assert!(!missing.status.success());
    let bad_zone = orch(
        &server,
        dir,
        &[
            "schedules",
            "create",
            "--name",
            "x",
            "--cron",
            "@daily",
            "--tz",
            "Nowhere/Here",
            "--task-file",
            task_file.to_str().unwrap(),
        ],
    )
    .await;
    assert!(!bad_zone.status.success());
    assert!(
        String::from_utf8_lossy(&bad_zone.stderr).contains("timezone"),
        "{}",
        String::from_utf8_lossy(&bad_zone.stderr)
    );

    let deleted = json(&orch(&server, dir, &["schedules", "delete", &id, "-o", "json"]).await);
    assert_eq!(deleted["deleted"], true);
    let gone = orch(&server, dir, &["schedules", "get", &id]).await;
    assert!(!gone.status.success());
}
