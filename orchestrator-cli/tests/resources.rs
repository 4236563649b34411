//! `orch catalog`, `orch playbooks` and `orch workspaces` against a real
//! server, the way a new user would go: import from the catalog, see the
//! playbook, author one from a YAML file, and move files in and out of a
//! workspace.

use orchestrator_tests::TestServer;
use std::path::Path;
use std::process::Output;

mod common;

use common::{json, orch_with};

async fn orch(server: &TestServer, dir: &Path, args: &[&str]) -> Output {
    let config = dir.join("config.json").display().to_string();
    let env = [
        ("ORCH_URL", server.url.as_str()),
        ("ORCH_API_KEY", server.admin_key.as_str()),
        ("ORCH_CONFIG", config.as_str()),
    ];
    orch_with(args, &env).await
}

fn text(output: &Output) -> String {
    assert!(
        output.status.success(),
        "orch failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[tokio::test]
async fn catalog_import_then_playbooks_list_shows_it() {
    let server = TestServer::start().await;
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();

    let listing = text(&orch(&server, dir, &["catalog", "list"]).await);
    assert!(listing.contains("feature-delivery"), "{listing}");
    assert!(listing.contains("compliance"));
    let shown = text(&orch(&server, dir, &["catalog", "show", "feature-delivery"]).await);
    assert!(
        shown.contains("# Feature delivery"),
        "the README is printed: {shown}"
    );

    let imported = json(
        &orch(
            &server,
            dir,
            &["catalog", "import", "feature-delivery", "-o", "json"],
        )
        .await,
    );
    assert_eq!(imported["playbook"]["name"], "Feature delivery");
    let table = text(&orch(&server, dir, &["playbooks", "list"]).await);
    assert!(table.contains("Feature delivery"), "{table}");
    assert!(table.contains("catalog:feature-delivery"), "{table}");

    // A second import collides everywhere; overriding the playbook revises it.
    let preview = text(&orch(&server, dir, &["catalog", "preview", "feature-delivery"]).await);
    assert!(preview.contains("override_existing"), "{preview}");
    let again = json(
        &orch(
            &server,
            dir,
            &[
                "catalog",
                "import",
                "feature-delivery",
                "--override",
                "playbook:feature-delivery",
                "--json",
            ],
        )
        .await,
    );
    assert_eq!(again["playbook"]["version"], 2);
    let bad = orch(
        &server,
        dir,
        &[
            "catalog",
            "import",
            "feature-delivery",
            "--override",
            "nonsense",
        ],
    )
    .await;
    assert!(!bad.status.success());
}

#[tokio::test]
async fn playbooks_from_yaml_files() {
    let server = TestServer::start().await;
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let file = dir.join("review.yaml");
    std::fs::write(
        &file,
        "name: Code review\noutcome: an approved change\nlifecycle: ongoing\ndefinition:\n  roles:\n    - name: reviewer\n  stages:\n    - name: review\n    - name: merge\n",
    )
    .unwrap();
    let created = json(
        &orch(
            &server,
            dir,
            &[
                "playbooks",
                "create",
                "-f",
                file.to_str().unwrap(),
                "-o",
                "json",
            ],
        )
        .await,
    );
    assert_eq!(created["version"], 1);
    assert_eq!(created["lifecycle"], "ongoing");
    let id = created["id"].as_str().unwrap().to_owned();

    let patch = dir.join("patch.json");
    std::fs::write(&patch, r#"{"outcome": "a merged change"}"#).unwrap();
    let updated = json(
        &orch(
            &server,
            dir,
            &[
                "playbooks",
                "update",
                &id,
                "-f",
                patch.to_str().unwrap(),
                "--json",
            ],
        )
        .await,
    );
    assert_eq!(updated["version"], 2);
    assert_eq!(updated["outcome"], "a merged change");
    let revisions = json(&orch(&server, dir, &["playbooks", "revisions", &id, "--json"]).await);
    assert_eq!(revisions["total"], 2);

    let archived = json(&orch(&server, dir, &["playbooks", "archive", &id, "--json"]).await);
    assert_eq!(archived["is_active"], false);
    let impact = json(&orch(&server, dir, &["playbooks", "impact", &id, "--json"]).await);
    assert_eq!(impact["can_delete"], true);
    let deleted = json(&orch(&server, dir, &["playbooks", "delete", &id, "--json"]).await);
    assert_eq!(deleted["revisions_deleted"], 2);
    let missing = orch(&server, dir, &["playbooks", "get", &id]).await;
    assert!(!missing.status.success());

    // A file that does not fit is refused before any request.
    std::fs::write(&file, "name: x\nbogus: 1\n").unwrap();
    let refused = orch(
        &server,
        dir,
        &["playbooks", "create", "-f", file.to_str().unwrap()],
    )
    .await;
    assert!(!refused.status.success());
    assert!(String::from_utf8_lossy(&refused.stderr).contains("does not fit"));
}

#[tokio::test]
async fn workspace_files_memory_and_spec_through_the_binary() {
    let server = TestServer::start().await;
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let ws = json(
        &orch(
            &server,
            dir,
            &["workspaces", "create", "--name", "Docs", "--json"],
        )
        .await,
    );
    let id = ws["id"].as_str().unwrap().to_owned();

    let binary: Vec<u8> = (0..=255u8).cycle().take(70_000).collect();
    std::fs::write(dir.join("image.bin"), &binary).unwrap();
    std::fs::write(dir.join("Read Me.md"), "# hello\n").unwrap();
    let uploaded = json(
        &orch(
            &server,
            dir,
            &[
                "workspaces",
                "files",
                "upload",
                &id,
                dir.join("image.bin").to_str().unwrap(),
                dir.join("Read Me.md").to_str().unwrap(),
                "--json",
            ],
        )
        .await,
    );
    assert_eq!(uploaded[1]["key"], "read-me.md");
    let file_id = uploaded[0]["id"].as_str().unwrap().to_owned();
    let out = dir.join("copy.bin");
    let saved = orch(
        &server,
        dir,
        &[
            "workspaces",
            "files",
            "download",
            &id,
            &file_id,
            "-O",
            out.to_str().unwrap(),
        ],
    )
    .await;
    assert!(
        saved.status.success(),
        "{}",
        String::from_utf8_lossy(&saved.stderr)
    );
    assert!(
        std::fs::read(&out).unwrap() == binary,
        "downloaded bytes differ"
    );

    let memory = json(
        &orch(
            &server,
            dir,
            &[
                "workspaces",
                "memory",
                "set",
                &id,
                "plan",
                r#"{"step": 1}"#,
                "--json",
            ],
        )
        .await,
    );
    assert_eq!(memory["memory"]["plan"]["step"], 1);
    let memory = json(
        &orch(
            &server,
            dir,
            &["workspaces", "memory", "delete", &id, "plan", "--json"],
        )
        .await,
    );
    assert_eq!(memory["memory"], serde_json::json!({}));

    let spec = dir.join("spec.yaml");
    std::fs::write(
        &spec,
        "instructions:\n  text: keep it short\ntools:\n  git: true\n",
    )
    .unwrap();
    let put = json(
        &orch(
            &server,
            dir,
            &[
                "workspaces",
                "spec",
                "put",
                &id,
                "-f",
                spec.to_str().unwrap(),
                "--json",
            ],
        )
        .await,
    );
    assert_eq!(put["version"], 1);
    let got = json(
        &orch(
            &server,
            dir,
            &["workspaces", "spec", "get", &id, "--version", "1"],
        )
        .await,
    );
    assert_eq!(got["instructions"]["text"], "keep it short");

    let timeline = text(&orch(&server, dir, &["workspaces", "timeline", &id]).await);
    assert!(timeline.contains("workspace.spec_updated"), "{timeline}");
    let artifacts = json(
        &orch(
            &server,
            dir,
            &[
                "workspaces",
                "artifacts",
                "list",
                &id,
                "--sort",
                "-size_bytes",
                "--json",
            ],
        )
        .await,
    );
    assert_eq!(artifacts["total"], 0);
}

/// `orch ... ` as admin with `stdin` piped in.
async fn orch_piped(server: &TestServer, dir: &Path, args: &[&str], stdin: &[u8]) -> Output {
    let config = dir.join("config.json").display().to_string();
    let env = [
        ("ORCH_URL", server.url.as_str()),
        ("ORCH_API_KEY", server.admin_key.as_str()),
        ("ORCH_CONFIG", config.as_str()),
    ];
    common::orch_stdin(args, &env, stdin).await
}

#[tokio::test]
async fn task_and_workspace_artifacts_go_up_from_files_and_stdin_and_come_back() {
    let server = TestServer::start().await;
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let (_, workspace) = server.launch_fixtures("Artifacts", "Artifacts repo").await;
    let task = server
        .admin()
        .tasks()
        .create(&orchestrator_client::api::CreateTask {
            title: "produce a report".into(),
            task_type: "docs".into(),
            workspace_id: Some(workspace),
            ..Default::default()
        })
        .await
        .unwrap();
    let (task, workspace) = (task.id.to_string(), workspace.to_string());

    // A task artifact from a file: linked to the task and its workspace.
    let report = dir.join("report.md");
    std::fs::write(&report, b"# Report\nall green\n").unwrap();
    let up = json(
        &orch(
            &server,
            dir,
            &[
                "tasks",
                "artifacts",
                "upload",
                &task,
                report.to_str().unwrap(),
                "--description",
                "the summary",
                "-o",
                "json",
            ],
        )
        .await,
    );
    assert_eq!(up["file_name"], "report.md");
    assert_eq!(up["task_id"], task.as_str());
    assert_eq!(up["workspace_id"], workspace.as_str());
    assert_eq!(up["size_bytes"], 19);
    let report_id = up["id"].as_str().unwrap().to_owned();

    // From standard input: the name is required, then given.
    let nameless = orch_piped(
        &server,
        dir,
        &["tasks", "artifacts", "upload", &task, "-"],
        b"log",
    )
    .await;
    assert!(!nameless.status.success());
    assert!(
        String::from_utf8_lossy(&nameless.stderr).contains("--name"),
        "{nameless:?}"
    );
    let log = json(
        &orch_piped(
            &server,
            dir,
            &[
                "tasks",
                "artifacts",
                "upload",
                &task,
                "-",
                "--name",
                "test.log",
                "--request-id",
                "log-1",
                "-o",
                "json",
            ],
            b"ok 1\nok 2\n",
        )
        .await,
    );
    assert_eq!(log["content_type"], "text/plain");
    assert_eq!(log["size_bytes"], 10);

    // A workspace artifact (admin), linked to the task by flag, from stdin.
    let bundle = json(
        &orch_piped(
            &server,
            dir,
            &[
                "workspaces",
                "artifacts",
                "upload",
                &workspace,
                "-",
                "--name",
                "bundle.bin",
                "--content-type",
                "application/octet-stream",
                "--task-id",
                &task,
                "--stage-name",
                "build",
                "-o",
                "json",
            ],
            &[0, 1, 2, 255],
        )
        .await,
    );
    assert_eq!(bundle["stage_name"], "build");
    let bundle_id = bundle["id"].as_str().unwrap().to_owned();

    // The task lists all three; the workspace explorer filters and sorts.
    let listed = json(
        &orch(
            &server,
            dir,
            &["tasks", "artifacts", "list", &task, "--all", "-o", "json"],
        )
        .await,
    );
    assert_eq!(listed["total"], 3, "{listed}");
    let by_size = text(
        &orch(
            &server,
            dir,
            &[
                "workspaces",
                "artifacts",
                "list",
                &workspace,
                "--task-id",
                &task,
                "--sort",
                "-size_bytes",
                "--field",
                "file_name",
            ],
        )
        .await,
    );
    assert_eq!(
        by_size.lines().collect::<Vec<_>>(),
        ["report.md", "test.log", "bundle.bin"]
    );

    // Downloads: to standard output byte for byte, or to a file with -O.
    let raw = orch(
        &server,
        dir,
        &["workspaces", "artifacts", "download", &bundle_id],
    )
    .await;
    assert!(raw.status.success(), "{raw:?}");
    assert_eq!(raw.stdout, vec![0, 1, 2, 255]);
    let out = dir.join("copy.md");
    let saved = json(
        &orch(
            &server,
            dir,
            &[
                "workspaces",
                "artifacts",
                "download",
                &report_id,
                "-O",
                out.to_str().unwrap(),
                "-o",
                "json",
            ],
        )
        .await,
    );
    assert_eq!(saved["size_bytes"], 19);
    assert_eq!(std::fs::read(&out).unwrap(), b"# Report\nall green\n");

    // An unknown artifact is a 404 (exit 4), nothing on stdout.
    let missing = orch(
        &server,
        dir,
        &[
            "workspaces",
            "artifacts",
            "download",
            "00000000-0000-4000-8000-000000000000",
        ],
    )
    .await;
    assert_eq!(missing.status.code(), Some(4), "{missing:?}");
    assert!(missing.stdout.is_empty());
}
