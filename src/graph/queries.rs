//! Every Cypher statement the graph services run, one file each under `cypher/`.

macro_rules! cypher {
    ($($name:ident => $file:literal),* $(,)?) => {
        $( pub const $name: &str = include_str!(concat!("../../cypher/", $file, ".cypher")); )*
    };
}

cypher! {
    BUCKET_ENSURE_DEFAULT => "bucket_ensure_default",
    BUCKET_CREATE => "bucket_create",
    BUCKET_GET => "bucket_get",
    BUCKET_LIST_AFTER => "bucket_list_after",
    BUCKET_LIST_BEFORE => "bucket_list_before",
    BUCKET_COUNT => "bucket_count",
    BUCKET_UPDATE => "bucket_update",
    BUCKET_DELETE => "bucket_delete",
    BUCKET_DELETE_BLOCKERS => "bucket_delete_blockers",
    BUCKET_MENTIONS_PAGE => "bucket_mentions_page",
    BUCKET_ENTITIES_PAGE => "bucket_entities_page",
    BUCKET_MEMBERS_DELETE => "bucket_members_delete",
    ENTITY_TYPE_CREATE => "entity_type_create",
    ENTITY_TYPE_GET => "entity_type_get",
    ENTITY_TYPE_LIST_AFTER => "entity_type_list_after",
    ENTITY_TYPE_LIST_BEFORE => "entity_type_list_before",
    ENTITY_TYPE_COUNT => "entity_type_count",
    ENTITY_TYPE_ANCESTORS => "entity_type_ancestors",
    ENTITY_TYPE_UPDATE => "entity_type_update",
    ENTITY_TYPE_DELETE => "entity_type_delete",
}

cypher! {
    ENTITY_KEYS_LOOKUP => "entity_keys_lookup",
    ENTITY_ATTRIBUTES => "entity_attributes",
    ENTITY_HOMONYMS => "entity_homonyms",
    ENTITY_SEED => "entity_seed",
    ENTITY_RESOLVE => "entity_resolve",
    ENTITY_DETAILS => "entity_details",
    REVIEW_QUEUE => "review_queue",
    REVIEW_QUEUE_ORDERED => "review_queue_ordered",
    ENTITY_FIND => "entity_find",
    ENTITY_FIND_ORDERED => "entity_find_ordered",
    REVIEW_QUEUE_PAGE_ORDERED => "review_queue_page_ordered",
    REVIEW_COUNT_STATUS => "review_count_status",
    REVIEW_DONE_TODAY => "review_done_today",
    ENTITY_REOPEN => "entity_reopen",
    ID_BLOCKS_NEXT => "id_blocks_next",
    ID_BLOCKS_SINCE => "id_blocks_since",
    MIGRATION_DONE => "migration_done",
    MIGRATION_MARK_DONE => "migration_mark_done",
    ID_KEYS_MISSING => "id_keys_missing",
    ID_KEYS_SET => "id_keys_set",
    ENTITY_SET_STATUS => "entity_set_status",
    ENTITY_ADD_KEY => "entity_add_key",
    ENTITY_REMOVE_KEY => "entity_remove_key",
    ENTITY_KEY_GET => "entity_key_get",
    ENTITY_SYNONYMS => "entity_synonyms",
    ENTITY_SYNONYMS_BATCH => "entity_synonyms_batch",
    ENTITY_SET_CANONICAL => "entity_set_canonical",
    ENTITY_ASSIGN_TYPE => "entity_assign_type",
    ENTITY_TYPE_BY_NAME => "entity_type_by_name",
    ENTITY_TYPE_NAMES => "entity_type_names",
    ENTITY_TYPE_DELETE_BLOCKERS => "entity_type_delete_blockers",
    RELATION_CREATE => "relation_create",
    MENTION_CREATE => "mention_create",
    MENTION_LINKED => "mention_linked",
    RELATIONS_OUTBOUND => "relations_outbound",
    RELATIONS_INBOUND => "relations_inbound",
    KNOWLEDGE_GRAPH_EDGES => "knowledge_graph_edges",
    KNOWLEDGE_GRAPH_PAGE_ORDERED => "knowledge_graph_page_ordered",
    ENTITY_SCAN_END_ORDERED => "entity_scan_end_ordered",
    RELATION_SCAN_END_ORDERED => "relation_scan_end_ordered",
    ENTITY_SEARCH => "entity_search",
    ORPHAN_KEYS_DELETE => "orphan_keys_delete",
    ORPHAN_KEYS_FIND => "orphan_keys_find",
    TENANT_ENTITY_COUNT => "tenant_entity_count",
    TENANT_MENTION_COUNT => "tenant_mention_count",
    TENANT_RELATION_COUNT => "tenant_relation_count",
    ENTITY_NEIGHBORS => "entity_neighbors",
    ENTITY_NODES => "entity_nodes",
    ENTITY_MERGE => "entity_merge",
    ENTITY_MERGE_BATCH => "entity_merge_batch",
    ENTITY_UNMERGE => "entity_unmerge",
    ENTITY_MERGES => "entity_merges",
    ENTITY_MERGES_TIMELINE => "entity_merges_timeline",
    MERGE_GET => "merge_get",
    MERGE_RECORD => "merge_record",
}

cypher! {
    BUCKET_DEFAULT => "bucket_default",
}

cypher! {
    REVIEWER_ASSIGN => "reviewer_assign",
    REVIEWER_LIST => "reviewer_list",
    REVIEWER_REMOVE => "reviewer_remove",
    REVIEWER_ASSIGNMENTS => "reviewer_assignments",
}

cypher! {
    ENTITY_CANDIDATES => "entity_candidates",
    ENTITY_CANDIDATES_ORDERED => "entity_candidates_ordered",
    ENTITY_CANDIDATES_BY_ID => "entity_candidates_by_id",
}

cypher! {
    ENTITY_MENTIONS => "entity_mentions",
    RELATIONS_OUTBOUND_BATCH => "relations_outbound_batch",
    RELATIONS_INBOUND_BATCH => "relations_inbound_batch",
    ENTITY_NEIGHBOR_PAIRS => "entity_neighbor_pairs",
    ENTITY_MERGES_BATCH => "entity_merges_batch",
    ENTITY_TYPES_BY_IDS => "entity_types_by_ids",
    ENTITY_TYPE_CHILDREN => "entity_type_children",
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `text` from the first line starting with `from` up to (not including) the first line
    /// after it starting with `to` (to the end without one).
    fn between(text: &str, from: &str, to: Option<&str>) -> String {
        let lines: Vec<&str> = text.lines().skip_while(|line| !line.starts_with(from)).collect();
        let end = to.and_then(|to| lines.iter().skip(1).position(|l| l.starts_with(to)).map(|i| i + 1));
        lines[..end.unwrap_or(lines.len())].join("\n")
    }

    /// The conditions of the first WHERE after the line starting with `from`, each without its
    /// `WHERE` or `AND`: the windowed statements (FalkorDB) put them after their bounds in one
    /// WHERE, the ordered ones (Neo4j) in a WHERE of their own after the scan's `LIMIT $scan`.
    fn conditions_after(text: &str, from: &str) -> Vec<String> {
        text.lines()
            .skip_while(|line| !line.starts_with(from))
            .skip(1)
            .skip_while(|line| line.starts_with("WITH"))
            .take_while(|line| line.starts_with("WHERE") || line.starts_with(' '))
            .map(|line| line.trim().trim_start_matches("WHERE ").trim_start_matches("AND ").to_string())
            .collect()
    }

    /// An ordered statement's scan: its lines from the MATCH to the ORDER BY of the index.
    fn scan(text: &str) -> String {
        let lines: Vec<&str> = text.lines().skip_while(|line| !line.starts_with("MATCH")).collect();
        let end = lines.iter().position(|line| line.starts_with("ORDER BY")).expect("an ORDER BY");
        lines[..=end].join("\n")
    }

    #[test]
    fn neo4js_one_statement_pages_filter_as_the_windowed_ones_after_the_same_bounded_scan() {
        let tenant = "  AND e.accountID = $accountID";
        let conditions = conditions_after(REVIEW_QUEUE, tenant);
        assert_eq!(conditions.len(), 4, "{conditions:?}");
        assert_eq!(conditions_after(REVIEW_QUEUE_ORDERED, "LIMIT $scan"), conditions);
        assert_eq!(conditions_after(REVIEW_QUEUE_PAGE_ORDERED, "LIMIT $scan"), conditions);
        assert_eq!(
            conditions_after(ENTITY_FIND_ORDERED, "LIMIT $scan"),
            conditions_after(ENTITY_FIND, tenant)
        );
        let edges = conditions_after(KNOWLEDGE_GRAPH_EDGES, "  AND r.accountID = $accountID");
        assert_eq!(edges.len(), 6, "{edges:?}");
        assert_eq!(conditions_after(KNOWLEDGE_GRAPH_PAGE_ORDERED, "LIMIT $scan"), edges);
        // Where a short page's scan stopped is read over the same rows in the same order.
        for statement in [REVIEW_QUEUE_ORDERED, REVIEW_QUEUE_PAGE_ORDERED, ENTITY_FIND_ORDERED] {
            assert_eq!(scan(statement), scan(ENTITY_SCAN_END_ORDERED));
        }
        let edge_scan = scan(KNOWLEDGE_GRAPH_PAGE_ORDERED).replace("WITH a, r, b", "WITH r");
        assert_eq!(edge_scan, scan(RELATION_SCAN_END_ORDERED));
    }

    #[test]
    fn neo4js_one_statement_review_page_reads_records_as_entity_details() {
        let records = |text| between(text, "OPTIONAL MATCH (k:Key", None);
        assert_eq!(records(REVIEW_QUEUE_PAGE_ORDERED), records(ENTITY_DETAILS));
    }

    /// Every statement file under `cypher/` (not the schemas): its name and text.
    fn statement_files() -> Vec<(String, String)> {
        let root = crate::provision::source_dir().join("cypher");
        let files: Vec<(String, String)> = std::fs::read_dir(&root)
            .unwrap()
            .map(|file| file.unwrap().path())
            .filter(|path| path.extension().is_some_and(|ext| ext == "cypher"))
            .map(|path| {
                let text = std::fs::read_to_string(&path).unwrap();
                (path.file_name().unwrap().to_string_lossy().into_owned(), text)
            })
            .collect();
        assert!(files.len() > 50, "{} statement files under {}", files.len(), root.display());
        files
    }

    #[test]
    fn the_statements_adding_spellings_keep_a_key_to_its_bound() {
        let bound = crate::graph::entities::FORMS_PER_KEY;
        for statement in [MENTION_CREATE, ENTITY_ADD_KEY] {
            assert!(statement.contains(&format!("size(coalesce(k.forms, [k.text])) < {bound}")));
        }
        assert_eq!(ENTITY_SEED.matches(&format!("[..{bound}]")).count(), 4, "both keys, created or matched");
    }

    #[test]
    fn the_three_candidates_statements_read_the_same_columns_the_same_way() {
        let tail = |text| between(text, "OPTIONAL MATCH (t:EntityType", None);
        assert_eq!(tail(ENTITY_CANDIDATES_ORDERED), tail(ENTITY_CANDIDATES));
        assert_eq!(tail(ENTITY_CANDIDATES_BY_ID), tail(ENTITY_CANDIDATES));
    }

    /// Neo4j plans a statement on its indexes' samples, which say "empty" for a while after a
    /// bulk load into a new database, and then may read a whole index for each row looked up
    /// (see README, Neo4j): so a MATCH that finds a node by a property with an index of its own
    /// in Neo4j's schema names that index on the next line.
    #[test]
    fn every_lookup_by_an_indexed_property_names_its_index() {
        let schema = include_str!("../../cypher/schema/neo4j.cypher");
        // `FOR (x:Label) ON (x.prop)` and `FOR (x:Label) REQUIRE x.prop IS UNIQUE`, one property.
        let indexed: Vec<(String, String)> = schema
            .lines()
            .filter_map(|line| {
                let (_, rest) = line.split_once("FOR (")?;
                let (var, rest) = rest.split_once(':')?;
                let (label, rest) = rest.split_once(')')?;
                let prop = match rest.trim().split_once(' ')? {
                    ("ON", on) => on.trim().trim_end_matches(';').strip_prefix('(')?.strip_suffix(')')?,
                    ("REQUIRE", require) => require.split_whitespace().next()?,
                    _ => return None,
                };
                let prop = prop.strip_prefix(&format!("{var}."))?;
                (!prop.contains(',')).then(|| (label.to_string(), prop.to_string()))
            })
            .collect();
        assert!(indexed.contains(&("Entity".into(), "id".into())), "{indexed:?}");
        let mut unhinted = Vec::new();
        for (name, text) in statement_files() {
            let lines: Vec<&str> = text.lines().map(str::trim).filter(|l| !l.starts_with("//")).collect();
            for (at, line) in lines.iter().enumerate() {
                if !(line.starts_with("MATCH ") || line.starts_with("OPTIONAL MATCH ")) {
                    continue;
                }
                // The first node written with properties: `(var:Label {prop: ...`.
                let Some((label, prop)) = line.split('(').skip(1).find_map(|node| {
                    let (_, rest) = node.split_once(':')?;
                    let (label, map) = rest.split_once(" {")?;
                    Some((label, map.split_once(':')?.0))
                }) else {
                    continue;
                };
                let hinted = lines.get(at + 1).is_some_and(|next| next.starts_with("USING INDEX"));
                if indexed.iter().any(|(l, p)| l == label && p == prop) && !hinted {
                    unhinted.push(format!("{name}: {line}"));
                }
            }
        }
        assert!(unhinted.is_empty(), "lookups without a USING INDEX hint on the next line: {unhinted:#?}");
    }

    /// FalkorDB drops index hints line by line (`store::graph::falkordb`): a hint sharing a
    /// line with other Cypher would take that Cypher with it, or stay and be refused.
    #[test]
    fn every_index_hint_sits_on_a_line_of_its_own() {
        let mut hints = 0;
        for (name, text) in statement_files() {
            for line in text.lines().map(str::trim) {
                if line.starts_with("//") || !line.contains("USING ") {
                    continue;
                }
                let hint =
                    line.strip_prefix("USING INDEX SEEK ").or_else(|| line.strip_prefix("USING INDEX "));
                let well_formed = hint.is_some_and(|h| {
                    h.split_once(':').is_some_and(|(var, index)| {
                        !var.contains(' ') && index.ends_with(')') && index.matches('(').count() == 1
                    })
                });
                assert!(well_formed, "{name}: {line:?} is not a hint alone on its line");
                hints += 1;
            }
        }
        assert!(hints > 0, "no hint found");
    }
}
