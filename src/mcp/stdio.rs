//! MCP over stdin and stdout for desktop agents that launch their MCP servers as processes:
//! the same tools as `/mcp`, each call forwarded to a running server through the typed
//! [`Client`], with the client's key.

use rmcp::model::Extensions;
use rmcp::ServiceExt;
use serde_json::Value;

use super::tools::JobTools;
use super::upstream::{RestCall, ToolProblem, Upstream};
use crate::client::{Client, ClientError};
use crate::domain::Plan;

/// Calls a running server over HTTP(S).
#[derive(Clone, Debug)]
struct ClientUpstream {
    client: Client,
}

impl Upstream for ClientUpstream {
    async fn call(&self, _request: &Extensions, call: RestCall) -> Result<Value, Box<ToolProblem>> {
        let answered = self
            .client
            .request_json(call.method, &call.path, &call.query, call.body.as_ref())
            .await;
        match answered {
            Ok(response) => Ok(response.value),
            Err(ClientError::Api(refused)) => Err(Box::new(ToolProblem {
                problem: refused.problem,
                quota: refused.quota,
            })),
            Err(other) => Err(ToolProblem::unavailable(format!(
                "the API could not be reached: {other}"
            ))),
        }
    }

    async fn plan(&self, _request: &Extensions) -> Option<Plan> {
        // Asked at each listing (a request that is not counted), so a changed plan shows.
        self.client.usage().await.ok().map(|usage| usage.value.plan)
    }
}

/// Serves MCP on this process's stdin and stdout until the client closes them, every tool
/// call going to the server `client` calls, with its key.
pub async fn serve_stdio(client: Client) -> std::io::Result<()> {
    let tools = JobTools::new(ClientUpstream { client });
    let running = tools
        .serve(rmcp::transport::stdio())
        .await
        .map_err(std::io::Error::other)?;
    running.waiting().await.map_err(std::io::Error::other)?;
    Ok(())
}
