//! `orch bench` against a real server: every workload runs tiny and prints
//! a JSON report with its parameters, environment and results. No timing
//! assertions: this proves the harness, not the figures.

use orchestrator_client::api::{TaskFilter, TaskState};
use orchestrator_tests::TestServer;
use serde_json::Value;

mod common;

use common::{json, orch_with};

async fn bench(server: &TestServer, args: &[&str]) -> Value {
    let mut all = vec!["bench"];
    all.extend_from_slice(args);
    all.extend_from_slice(&[
        "--url",
        &server.url,
        "--api-key",
        &server.admin_key,
        "-o",
        "json",
        "--quiet",
    ]);
    let report = json(&orch_with(&all, &[]).await);
    let env = &report["environment"];
    assert_eq!(env["target"], "remote");
    assert_eq!(env["backend"], orchestrator_tests::backend());
    assert!(env["cores"].as_u64().unwrap() >= 1);
    assert!(env["build_profile"].is_string());
    assert!(report["parameters"].is_object());
    assert!(report["duration_s"].is_number());
    assert!(
        report["server"].is_null(),
        "a remote target has no server memory"
    );
    assert_eq!(report["errors"], 0, "{report}");
    report
}

#[tokio::test]
async fn every_bench_workload_runs_and_reports() {
    let server = TestServer::start_with(|c| c.rate_limit_per_minute = 0).await;

    let lifecycle = bench(&server, &["lifecycle", "--tasks", "50", "--agents", "4"]).await;
    assert_eq!(lifecycle["workload"], "lifecycle");
    assert_eq!(lifecycle["parameters"]["tasks"], 50);
    assert_eq!(lifecycle["results"]["tasks_created"], 50);
    assert_eq!(lifecycle["results"]["tasks_completed"], 50);
    assert!(lifecycle["results"]["tasks_per_s"].as_f64().unwrap() > 0.0);
    for route in [
        "POST /tasks",
        "POST /tasks/claim",
        "POST /tasks/:id/start",
        "POST /tasks/:id/complete",
    ] {
        let l = &lifecycle["latency_ms"][route];
        assert_eq!(l["count"], 50, "{route}: {l}");
        for p in ["p50_ms", "p95_ms", "p99_ms", "max_ms"] {
            assert!(l[p].is_number(), "{route} {p}");
        }
    }
    // Every task of the run is completed on the server too.
    let completed = server
        .admin()
        .tasks()
        .list(
            &TaskFilter {
                state: Some(TaskState::Completed),
                ..Default::default()
            },
            orchestrator_client::api::PageRequest::new(1, 1),
        )
        .await
        .unwrap();
    assert_eq!(completed.total, 50);

    let claim = bench(
        &server,
        &[
            "claim-latency",
            "--rate",
            "50",
            "--duration",
            "1",
            "--agents",
            "4",
        ],
    )
    .await;
    assert_eq!(claim["results"]["claims"], 50);
    assert_eq!(claim["results"]["empty_claims"], 0);
    assert!(claim["results"]["claim_p99_ms"].is_number());
    // Each claim's time from its arrival is its wait before sending plus
    // the claim itself; the complete that follows is not counted (the
    // histograms keep three significant digits: hence the 2%).
    let mean = |key: &str| claim["latency_ms"][key]["mean_ms"].as_f64().unwrap();
    let parts = mean("wait (arrival to send)") + mean("POST /tasks/claim");
    assert!(
        (mean("claim (from arrival)") - parts).abs() <= 0.02 * parts + 0.01,
        "{}",
        claim["latency_ms"]
    );

    let ingest = bench(
        &server,
        &[
            "ingest",
            "--batch",
            "20",
            "--clients",
            "2",
            "--batches",
            "6",
        ],
    )
    .await;
    assert_eq!(ingest["results"]["rows"], 120);
    assert_eq!(ingest["latency_ms"]["POST /logs/ingest"]["count"], 6);

    let stream = bench(&server, &["stream", "--tasks", "20", "--interval-ms", "2"]).await;
    assert_eq!(stream["results"]["wakeups"], 20);
    assert_eq!(stream["results"]["missed"], 0);
    assert!(stream["results"]["wakeup_p99_ms"].is_number());

    let noop = bench(&server, &["noop", "--clients", "2", "--duration", "1"]).await;
    assert!(noop["results"]["requests"].as_u64().unwrap() > 0);
}

/// `--embedded`'s argument for the test's backend: the test PostgreSQL
/// server's URL (the bench makes and drops a database of its own on it) or
/// `sqlite`.
fn embedded_backend() -> String {
    std::env::var("ORCH_TEST_DATABASE_URL")
        .ok()
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| "sqlite".into())
}

/// `--embedded` starts its own `orch serve` child (on the test's backend:
/// SQLite, or a fresh database on the test PostgreSQL server, dropped after)
/// and reports that server's memory.
#[tokio::test]
async fn embedded_bench_starts_its_own_server_and_reports_its_memory() {
    let embedded = embedded_backend();
    let args = [
        "bench",
        "lifecycle",
        "--tasks",
        "20",
        "--agents",
        "2",
        "--embedded",
        &embedded,
        "-o",
        "json",
        "--quiet",
    ];
    let report = json(&orch_with(&args, &[]).await);
    assert_eq!(report["environment"]["target"], "embedded");
    assert_eq!(
        report["environment"]["backend"],
        orchestrator_tests::backend()
    );
    assert_eq!(report["results"]["tasks_completed"], 20);
    assert!(report["server"]["peak_rss_mib"].as_f64().unwrap() > 0.0);
    assert!(report["server"]["pid"].as_u64().is_some());
}

/// `lifecycle --preload N` runs the lifecycle three times on the empty
/// database, copies N finished tasks with their events and log rows into it
/// (here 150 from a template of the three runs' 60: two whole copies and
/// half of one), and runs it three times again: the copies are history,
/// never claimed, and both phases' figures are in the report, the compared
/// ones the medians of their runs.
#[tokio::test]
async fn preload_writes_history_between_two_lifecycle_runs() {
    let embedded = embedded_backend();
    let args = [
        "bench",
        "lifecycle",
        "--tasks",
        "20",
        "--agents",
        "2",
        "--preload",
        "150",
        "--embedded",
        &embedded,
        "-o",
        "json",
        "--quiet",
    ];
    let report = json(&orch_with(&args, &[]).await);
    let results = &report["results"];
    assert_eq!(report["parameters"]["preload"], 150);
    assert_eq!(report["parameters"]["phase_runs"], 3, "{report}");
    assert_eq!(results["preloaded_tasks"], 150, "{report}");
    // Every finished task has its created, claimed, started and completed
    // events and platform log rows of its transitions.
    assert!(
        results["preloaded_events"].as_u64().unwrap() >= 4 * 150,
        "{report}"
    );
    assert!(
        results["preloaded_logs"].as_u64().unwrap() >= 150,
        "{report}"
    );
    // The loaded run reported drained its own 20 tasks and nothing of the
    // history.
    assert_eq!(results["tasks_completed"], 20, "{report}");
    assert_eq!(report["errors"], 0, "{report}");
    assert!(results["empty_tasks_per_s"].as_f64().unwrap() > 0.0);
    assert!(results["scale_ratio"].as_f64().unwrap() > 0.0);
    assert!(report["latency_ms"]["empty POST /tasks/claim"].is_object());
    // Three runs a phase; the compared figures are their medians, and the
    // run that stands for a phase is the one of median rate.
    let runs = |key: &str| -> Vec<f64> {
        let values: Vec<f64> = results[key]
            .as_array()
            .unwrap_or_else(|| panic!("{key}: {report}"))
            .iter()
            .map(|v| v.as_f64().unwrap())
            .collect();
        assert_eq!(values.len(), 3, "{key}: {report}");
        values
    };
    let middle = |mut values: Vec<f64>| {
        values.sort_by(f64::total_cmp);
        values[1]
    };
    let figure = |key: &str| results[key].as_f64().unwrap();
    assert_eq!(figure("claim_p99_ms"), middle(runs("claim_p99_ms_runs")));
    assert_eq!(
        figure("empty_claim_p99_ms"),
        middle(runs("empty_claim_p99_ms_runs"))
    );
    assert_eq!(figure("tasks_per_s"), middle(runs("tasks_per_s_runs")));
    assert_eq!(
        figure("empty_tasks_per_s"),
        middle(runs("empty_tasks_per_s_runs"))
    );
}

/// `--retention`: the history is aged past a one-day retention, the server
/// restarted with it, and the report comes only once the server's sweep has
/// deleted every aged task, event and log row (the bench watches the
/// database), while the second run's own tasks stay.
#[tokio::test]
async fn preload_with_retention_reports_the_purge_of_the_aged_history() {
    let embedded = embedded_backend();
    let args = [
        "bench",
        "lifecycle",
        "--tasks",
        "20",
        "--agents",
        "2",
        "--preload",
        "50",
        "--retention",
        "--embedded",
        &embedded,
        "-o",
        "json",
        "--quiet",
    ];
    let report = json(&orch_with(&args, &[]).await);
    let results = &report["results"];
    assert_eq!(report["parameters"]["retention"], true, "{report}");
    // One run a phase: the second measures the sweep while it runs.
    assert_eq!(report["parameters"]["phase_runs"], 1, "{report}");
    // The first run's 20 tasks and the 50 copies were aged and deleted.
    assert_eq!(results["retention_aged_tasks"], 70, "{report}");
    assert!(
        results["retention_aged_events"].as_u64().unwrap() >= 4 * 70,
        "{report}"
    );
    assert!(results["retention_tasks_per_s"].as_f64().unwrap() > 0.0);
    assert!(results["retention_rows_per_s"].as_f64().unwrap() > 0.0);
    assert_eq!(results["tasks_completed"], 20, "{report}");
    assert_eq!(report["errors"], 0, "{report}");
}

/// `--retention` only makes sense with `--preload`.
#[tokio::test]
async fn retention_needs_preload() {
    let out = orch_with(
        &[
            "bench",
            "lifecycle",
            "--retention",
            "--embedded",
            "sqlite",
            "--quiet",
        ],
        &[],
    )
    .await;
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("--preload"), "{stderr}");
}

/// `--preload` writes into the server's database, so it needs a server the
/// bench started itself.
#[tokio::test]
async fn preload_needs_an_embedded_server() {
    let server = TestServer::start().await;
    let out = orch_with(
        &[
            "bench",
            "lifecycle",
            "--tasks",
            "5",
            "--preload",
            "10",
            "--url",
            &server.url,
            "--api-key",
            &server.admin_key,
            "--quiet",
        ],
        &[],
    )
    .await;
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("--embedded"), "{stderr}");
}
