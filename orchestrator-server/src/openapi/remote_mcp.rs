//! Remote MCP servers: each route's input and output types.

use super::describe::*;
use http::Method as M;
use orchestrator_core::api::*;

/// Remote MCP servers.
pub(super) fn docs() -> Vec<Doc> {
    vec![
        op(M::GET, "/api/v1/remote-mcp-servers", "List remote MCP servers", page::<RemoteMcpServer>()).paged(),
        op(M::POST, "/api/v1/remote-mcp-servers", "Register a remote MCP server (verified against it first)", created::<RemoteMcpServer>()).body::<RemoteMcpServerRequest>(),
        op(M::GET, "/api/v1/remote-mcp-servers/{id}", "Get a remote MCP server", ok::<RemoteMcpServer>()),
        op(M::PUT, "/api/v1/remote-mcp-servers/{id}", "Replace a remote MCP server (verified first)", ok::<RemoteMcpServer>()).body::<RemoteMcpServerRequest>(),
        op(M::DELETE, "/api/v1/remote-mcp-servers/{id}", "Delete a remote MCP server", ok::<RemoteMcpServer>()),
        op(M::POST, "/api/v1/remote-mcp-servers/{id}/reverify", "Verify a stored remote MCP server again", ok::<RemoteMcpServer>()),
        op(M::POST, "/api/v1/remote-mcp-servers/{id}/oauth/reconnect", "Start OAuth (authorization code with PKCE) for a server; open the returned URL", ok::<OAuthAuthorization>()),
        op(M::POST, "/api/v1/remote-mcp-servers/{id}/oauth/disconnect", "Revoke and forget a server's OAuth tokens", ok::<RemoteMcpServer>()),
        op(M::GET, "/api/v1/remote-mcp-servers/oauth/callback", "The OAuth redirect target: exchanges the code, stores the tokens, verifies the server", ok::<RemoteMcpServer>())
            .param("code", TEXT, "The authorization code")
            .param("state", TEXT, "The one-time state from reconnect")
            .param("error", TEXT, "The authorization server's error, when it refused"),
    ]
}
