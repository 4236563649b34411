//! `orch acp sessions|claim`: ACP sessions and the claim that opens one.

use crate::cli::{GlobalOpts, PageArgs};
use crate::config;
use crate::output::{self, fields, opt, table};
use clap::{Args, Subcommand, ValueEnum};
use orchestrator_client::api::{
    AcpClaim, AcpClaimSession, AcpMode, AcpSession, AcpSessionFilter, AcpTransport,
    CreateAcpSession,
};
use uuid::Uuid;

#[derive(Debug, Subcommand)]
pub enum AcpCommand {
    /// List, open, show, heartbeat or close ACP sessions.
    #[command(subcommand)]
    Sessions(SessionsCommand),
    /// Claim, start and open a session for the next task of an ACP agent
    /// (prints nothing and exits 0 when none).
    Claim(ClaimArgs),
}

#[derive(Debug, Subcommand)]
pub enum SessionsCommand {
    /// Sessions, newest first.
    List(ListArgs),
    /// Open a session (mode session reuses the open one).
    Create(CreateArgs),
    /// Show one session.
    Get(IdArg),
    /// Report the session alive (`--idle` for idle).
    Heartbeat(HeartbeatArgs),
    /// Close a session.
    Close(IdArg),
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum TransportArg {
    Stdio,
    Http,
    Websocket,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum ModeArg {
    Run,
    Session,
}

impl From<TransportArg> for AcpTransport {
    fn from(t: TransportArg) -> Self {
        match t {
            TransportArg::Stdio => Self::Stdio,
            TransportArg::Http => Self::Http,
            TransportArg::Websocket => Self::Websocket,
        }
    }
}

impl From<ModeArg> for AcpMode {
    fn from(m: ModeArg) -> Self {
        match m {
            ModeArg::Run => Self::Run,
            ModeArg::Session => Self::Session,
        }
    }
}

#[derive(Debug, Args)]
pub struct ListArgs {
    /// Only sessions of this agent (id).
    #[arg(long)]
    pub agent: Option<Uuid>,
    /// Only sessions of this workflow (id).
    #[arg(long)]
    pub workflow: Option<Uuid>,
    #[command(flatten)]
    pub page: PageArgs,
}

#[derive(Debug, Args)]
pub struct SessionArgs {
    /// How the agent talks ACP to its runtime.
    #[arg(long, value_enum, default_value = "stdio")]
    pub transport: TransportArg,
    /// `run` (one task, then the session ends) or `session` (kept for further prompts).
    #[arg(long, value_enum, default_value = "run")]
    pub mode: ModeArg,
    /// The working directory the session runs in, on the worker's host.
    #[arg(long)]
    pub workspace_path: Option<String>,
}

#[derive(Debug, Args)]
pub struct CreateArgs {
    /// The agent that holds the session (id).
    #[arg(long)]
    pub agent: Uuid,
    /// The worker the agent runs on (id).
    #[arg(long)]
    pub worker: Option<Uuid>,
    /// The workflow the session works for (id).
    #[arg(long)]
    pub workflow: Option<Uuid>,
    #[command(flatten)]
    pub session: SessionArgs,
}

#[derive(Debug, Args)]
pub struct IdArg {
    /// The session's id.
    pub id: Uuid,
}

#[derive(Debug, Args)]
pub struct HeartbeatArgs {
    /// The session's id.
    pub id: Uuid,
    /// Report the session idle (waiting for a prompt) instead of busy.
    #[arg(long)]
    pub idle: bool,
}

#[derive(Debug, Args)]
pub struct ClaimArgs {
    /// The agent that claims (id).
    #[arg(long)]
    pub agent: Uuid,
    /// The worker the agent runs on (id).
    #[arg(long)]
    pub worker: Option<Uuid>,
    /// Extra routing tags (default: acp).
    #[arg(long = "tag")]
    pub tags: Vec<String>,
    /// Answer the task with its execution packet.
    #[arg(long)]
    pub include_context: bool,
    #[command(flatten)]
    pub session: SessionArgs,
}

pub async fn run(global: &GlobalOpts, command: AcpCommand) -> anyhow::Result<()> {
    let client = config::client(global)?;
    let acp = client.acp();
    match command {
        AcpCommand::Sessions(SessionsCommand::List(args)) => {
            let filter = AcpSessionFilter {
                agent_id: args.agent,
                workflow_id: args.workflow,
                ..Default::default()
            };
            let page = args.page.fetch(|p| acp.list_sessions(&filter, p)).await?;
            output::emit(global.format(), &page, || {
                let mut t = table(&["id", "agent", "status", "mode", "transport", "task"]);
                for s in &page.items {
                    t.add_row(vec![
                        s.id.to_string(),
                        s.agent_id.to_string(),
                        s.status.as_str().to_owned(),
                        s.mode.as_str().to_owned(),
                        s.transport.as_str().to_owned(),
                        opt(&s.task_id),
                    ]);
                }
                t
            });
        }
        AcpCommand::Sessions(SessionsCommand::Create(args)) => {
            let request = CreateAcpSession {
                agent_id: args.agent,
                worker_id: args.worker,
                workflow_id: args.workflow,
                transport: args.session.transport.into(),
                mode: args.session.mode.into(),
                workspace_path: args.session.workspace_path,
                metadata: None,
            };
            show(global, &acp.create_session(&request).await?);
        }
        AcpCommand::Sessions(SessionsCommand::Get(args)) => {
            show(global, &acp.get_session(args.id).await?)
        }
        AcpCommand::Sessions(SessionsCommand::Heartbeat(args)) => {
            let status = if args.idle {
                orchestrator_client::api::AcpLiveStatus::Idle
            } else {
                orchestrator_client::api::AcpLiveStatus::Active
            };
            let request = orchestrator_client::api::AcpHeartbeat {
                status: Some(status),
            };
            show(global, &acp.heartbeat(args.id, &request).await?);
        }
        AcpCommand::Sessions(SessionsCommand::Close(args)) => {
            show(global, &acp.close(args.id).await?)
        }
        AcpCommand::Claim(args) => {
            let request = AcpClaim {
                agent_id: args.agent,
                worker_id: args.worker,
                routing_tags: (!args.tags.is_empty()).then_some(args.tags),
                include_context: args.include_context,
                session: Some(AcpClaimSession {
                    transport: args.session.transport.into(),
                    mode: args.session.mode.into(),
                    workspace_path: args.session.workspace_path,
                }),
            };
            if let Some(claimed) = acp.claim(&request).await? {
                output::emit(global.format(), &claimed, || {
                    fields(&[
                        ("session", claimed.session.id.to_string()),
                        ("session_status", claimed.session.status.as_str().to_owned()),
                        ("task", claimed.task.id.to_string()),
                        ("title", claimed.task.title.clone()),
                        ("cwd", opt(&claimed.task.cwd)),
                        ("files", claimed.task.file_references.len().to_string()),
                    ])
                });
            }
        }
    }
    Ok(())
}

fn show(global: &GlobalOpts, s: &AcpSession) {
    output::emit(global.format(), s, || {
        fields(&[
            ("id", s.id.to_string()),
            ("agent_id", s.agent_id.to_string()),
            ("status", s.status.as_str().to_owned()),
            ("mode", s.mode.as_str().to_owned()),
            ("transport", s.transport.as_str().to_owned()),
            ("workflow_id", opt(&s.workflow_id)),
            ("task_id", opt(&s.task_id)),
            ("workspace_path", opt(&s.workspace_path)),
            ("reused", s.reused.to_string()),
        ])
    });
}
