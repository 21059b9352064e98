//! The cost budget of one GraphQL request, checked after parsing and before anything runs.
//!
//! Cost = async-graphql's complexity (each field 1; a list or connection multiplies its
//! selection by its size argument, see the `complexity` attributes of the resolvers) plus
//! [`ROOT_FIELD_COST`] for every root field of the document, aliases included: each root
//! field is at least one store round trip, so `{a: entity(…) b: entity(…) …}` a thousand
//! times costs a thousand round trips, not a thousand fields. A request over
//! [`super::MAX_COMPLEXITY`] is refused whole (HTTP 400) with its cost and the limit.

use async_graphql::extensions::{
    Extension, ExtensionContext, ExtensionFactory, NextParseQuery, NextValidation,
};
use async_graphql::parser::types::{ExecutableDocument, Selection, SelectionSet};
use async_graphql::{ServerError, ServerResult, ValidationResult, Variables};
use std::collections::HashSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// What each root field (and each alias of one) adds to a request's cost.
pub const ROOT_FIELD_COST: usize = 100;

/// Marks the error of a refused request (the transport answers it with HTTP 400).
pub const COST_EXTENSION: &str = "cost";

/// Installs [`Budget`] on a schema.
pub struct CostBudget {
    pub limit: usize,
}

impl ExtensionFactory for CostBudget {
    fn create(&self) -> Arc<dyn Extension> {
        Arc::new(Budget { limit: self.limit, root_fields: AtomicUsize::new(0) })
    }
}

/// One request's budget: the root fields counted at parse, the total checked at validation.
struct Budget {
    limit: usize,
    root_fields: AtomicUsize,
}

#[async_trait::async_trait]
impl Extension for Budget {
    async fn parse_query(
        &self,
        ctx: &ExtensionContext<'_>,
        query: &str,
        variables: &Variables,
        next: NextParseQuery<'_>,
    ) -> ServerResult<ExecutableDocument> {
        let document = next.run(ctx, query, variables).await?;
        self.root_fields.store(root_fields(&document), Ordering::Relaxed);
        Ok(document)
    }

    async fn validation(
        &self,
        ctx: &ExtensionContext<'_>,
        next: NextValidation<'_>,
    ) -> Result<ValidationResult, Vec<ServerError>> {
        let result = next.run(ctx).await?;
        let roots = self.root_fields.load(Ordering::Relaxed);
        let cost = result.complexity.saturating_add(roots.saturating_mul(ROOT_FIELD_COST));
        if cost > self.limit {
            let mut error = ServerError::new(
                format!(
                    "the query is too complex: it costs {cost} and the limit is {} (each root field or \
                     alias costs {ROOT_FIELD_COST}, every other field 1, and a list multiplies its \
                     selection by its `first` or `limit`); ask for fewer fields or smaller pages, or \
                     split it into several requests",
                    self.limit
                ),
                None,
            );
            let mut extensions = async_graphql::ErrorExtensionValues::default();
            extensions.set("code", 400);
            extensions.set(COST_EXTENSION, cost as u64);
            extensions.set("limit", self.limit as u64);
            error.extensions = Some(extensions);
            return Err(vec![error]);
        }
        Ok(result)
    }
}

/// Root fields of every operation, fragments at the root expanded (each fragment once per
/// spread; a cycle, which validation refuses anyway, is not followed twice).
fn root_fields(document: &ExecutableDocument) -> usize {
    document
        .operations
        .iter()
        .map(|(_, operation)| count(document, &operation.node.selection_set.node, &mut HashSet::new()))
        .fold(0, usize::saturating_add)
}

fn count(document: &ExecutableDocument, set: &SelectionSet, open: &mut HashSet<String>) -> usize {
    let mut total = 0usize;
    for selection in &set.items {
        total = total.saturating_add(match &selection.node {
            Selection::Field(_) => 1,
            Selection::InlineFragment(inline) => count(document, &inline.node.selection_set.node, open),
            Selection::FragmentSpread(spread) => {
                let name = spread.node.fragment_name.node.as_str();
                match document.fragments.get(name) {
                    Some(fragment) if open.insert(name.to_string()) => {
                        let found = count(document, &fragment.node.selection_set.node, open);
                        open.remove(name);
                        found
                    }
                    _ => 0,
                }
            }
        });
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;

    fn roots(query: &str) -> usize {
        root_fields(&async_graphql::parser::parse_query(query).unwrap())
    }

    #[test]
    fn aliases_and_fragments_at_the_root_each_count() {
        assert_eq!(roots("{ a: entity(id: \"1\") { entityID } b: entity(id: \"2\") { entityID } }"), 2);
        assert_eq!(roots("query { ...F ...F } fragment F on QueryRoot { x: buckets { totalCount } y: buckets { totalCount } }"), 4);
        assert_eq!(roots("{ ... on QueryRoot { entity(id: \"1\") { entityID } } }"), 1);
        assert_eq!(roots("query { ...F } fragment F on QueryRoot { ...F }"), 0);
    }
}
