//! What every transport (REST, GraphQL, MCP, the review dashboard) shares, below all of
//! them: the state handlers reach, who is calling, and the per-caller limits and metrics.

pub mod browser_ui;
pub mod caller;
pub mod error;
pub mod metrics;
pub mod params;
pub mod rate_limit;
pub mod state;
