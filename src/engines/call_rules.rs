//! What one call's classify runs share: each function version's routes compiled once, and
//! the time their rules have taken together.
//!
//! A split of 50,000 items before a classify node ran it 50,000 times, and each run compiled
//! the function's patterns (up to 8 MiB of programs, ~5 ms a heavy pattern) and could spend
//! [`RULE_BUDGET`] on its rules: hours of one call. Now a call compiles a version once and
//! its inputs' rules share [`CALL_RULE_BUDGET`]; past it the rest of its classify runs fail
//! naming it. A call resumed by another worker starts a fresh share. Rules that the lazy DFA
//! holds read hundreds of MB a second, and a call's inputs together are parts of its files,
//! so only patterns that run microseconds a byte come near the share; runs at once may each
//! pass it by what one input's deadline allows ([`RULE_BUDGET`]).

use super::EngineError;
use crate::functions::type_settings::classify::Route;
use crate::memo::Memo;
use crate::versions::FunctionVersion;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// Time the rules of one input take at most.
pub const RULE_BUDGET: Duration = Duration::from_secs(2);
/// Time the rules of all of one call's inputs take at most, together.
pub const CALL_RULE_BUDGET: Duration = Duration::from_secs(60);
/// Function versions whose routes a call keeps compiled (a workflow with more classify nodes
/// compiles again as it goes from one to another).
const VERSIONS_KEPT: usize = 4;

type Routes = Arc<Vec<Route>>;

pub struct CallRules {
    /// A version's routes never change: kept the call's whole length.
    compiled: Memo<(String, i64), Routes>,
    spent: Mutex<Duration>,
}

impl Default for CallRules {
    fn default() -> Self {
        Self { compiled: Memo::new(Duration::MAX, VERSIONS_KEPT), spent: Mutex::default() }
    }
}

/// When the rules of one input must stop, and what that bound is, for the error.
#[derive(Clone, Copy, Debug)]
pub struct Deadline {
    pub at: Instant,
    pub budget: Duration,
    /// "on this input" or "in this call".
    pub scope: &'static str,
}

impl CallRules {
    /// The routes of `function`, compiled by `compile` the first time the call needs them.
    pub fn routes(
        &self,
        function: &FunctionVersion,
        compile: impl FnOnce() -> Result<Vec<Route>, EngineError>,
    ) -> Result<Routes, EngineError> {
        let key = (function.function_id.clone(), function.version_num);
        if let Some(routes) = self.compiled.get(&key) {
            return Ok(routes);
        }
        let routes = Arc::new(compile()?);
        self.compiled.put(key, routes.clone());
        Ok(routes)
    }

    /// The deadline of an input's rules starting now: [`RULE_BUDGET`], or what is left of
    /// the call's when less.
    pub fn deadline(&self) -> Deadline {
        let left = CALL_RULE_BUDGET.saturating_sub(*self.lock_spent());
        let (budget, scope) = if left < RULE_BUDGET {
            (CALL_RULE_BUDGET, "in this call")
        } else {
            (RULE_BUDGET, "on this input")
        };
        Deadline { at: Instant::now() + left.min(RULE_BUDGET), budget, scope }
    }

    /// Counts time an input's rules took.
    pub fn spend(&self, took: Duration) {
        *self.lock_spent() += took;
    }

    fn lock_spent(&self) -> std::sync::MutexGuard<'_, Duration> {
        self.spent.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn version(id: &str) -> FunctionVersion {
        FunctionVersion {
            function_id: id.into(),
            function_name: id.into(),
            version_num: 1,
            function_type: "classify".into(),
            body: serde_json::json!({}),
        }
    }

    #[test]
    fn a_version_is_compiled_once_a_call() {
        let rules = CallRules::default();
        let mut compiled = 0;
        for _ in 0..3 {
            rules
                .routes(&version("f"), || {
                    compiled += 1;
                    Ok(Vec::new())
                })
                .unwrap();
        }
        assert_eq!(compiled, 1);
        let failed = rules.routes(&version("g"), || Err(EngineError::new("invalid_config", "bad")));
        assert!(failed.is_err());
    }

    #[test]
    fn the_calls_budget_shrinks_the_last_inputs_deadline_and_names_itself() {
        let rules = CallRules::default();
        let first = rules.deadline();
        assert_eq!((first.budget, first.scope), (RULE_BUDGET, "on this input"));
        rules.spend(CALL_RULE_BUDGET - Duration::from_secs(1));
        let late = rules.deadline();
        assert_eq!((late.budget, late.scope), (CALL_RULE_BUDGET, "in this call"));
        assert!(late.at <= Instant::now() + Duration::from_secs(1));
        rules.spend(Duration::from_secs(5));
        assert!(rules.deadline().at <= Instant::now(), "nothing left");
    }
}
