//! Homonyms: entities of one name (under one type and bucket) that their attributes keep
//! apart. When the type marks attributes comparable (`x-compare`, see
//! [`crate::graph::resolution::comparisons`]), a seeded row joins the entity its name names
//! only if their attributes agree enough ([`model::seed_joins`]); else it joins the first
//! homonym of that name that agrees, or becomes a new homonym.
//!
//! A name key points at one entity, so a homonym's name key is the name's key followed by
//! the row's seed tag, with `homonymOf` naming the name's key (indexed: a seed finds every
//! homonym of a name with one lookup). The tag makes a replayed row find its own homonym
//! again. A refresh of merge suggestions compares homonyms like any pair, so homonyms that
//! are one entity after all are merged or suggested there.
//!
//! A name has at most [`HOMONYMS_PER_NAME`] homonyms: a row of that name joins one whose
//! attributes agree, and when none does it is rejected, saying so, rather than compared with
//! ever more of them (each row of the name reads and compares every homonym, so seeding N rows
//! of one name was quadratic in N, and the write's check of them quadratic again).

use super::Prepared;
use crate::error::ServiceResult;
use crate::graph::columns::{attributes_col, str_col};
use crate::graph::resolution::model;
use crate::graph::{queries, GraphService, Tenant};
use crate::params;
use serde_json::{json, Value};
use std::collections::{BTreeMap, HashMap, HashSet};

/// Homonyms one name (under one type and bucket) may have: 200 entities of one name that
/// their attributes keep apart is already a name that says little; past it a seeded row that
/// joins none of them is rejected, naming the bound.
pub const HOMONYMS_PER_NAME: usize = 200;

/// What a wave's lookup found for its rows' names.
#[derive(Default)]
pub(super) struct Named {
    /// The entity each found key points at.
    pub owner: HashMap<String, String>,
    /// Homonym keys of each looked-up name key, with their entity, in key order.
    homonyms: HashMap<String, Vec<(String, String)>>,
    /// The compared attributes of entities rows may join, by entity ID.
    attributes: HashMap<String, BTreeMap<String, String>>,
}

/// Where a row goes.
pub(super) struct Target {
    pub entity_id: String,
    /// The key the write MERGEs: the row's name key, or a homonym's.
    pub key: String,
    /// Set when the row creates a homonym: the name key it is a homonym of.
    pub homonym_of: Option<String>,
}

impl GraphService {
    /// Looks up who the wave's keys name, and for rows with compared attributes whose name is
    /// taken, the name's homonyms and every candidate's attributes. Rows without compared
    /// attributes cost one statement for the wave, as before homonyms existed.
    pub(super) async fn look_up_names(&self, tenant: &Tenant, pending: &[&Prepared]) -> ServiceResult<Named> {
        let keys: Vec<&String> = pending.iter().flat_map(|p| p.keys()).collect();
        let found = self.run(tenant, queries::ENTITY_KEYS_LOOKUP, params! { "keys" => keys }).await?;
        let owner: HashMap<String, String> =
            found.iter().map(|row| (str_col(row, "key"), str_col(row, "entityID"))).collect();
        let mut named = Named { owner, homonyms: HashMap::new(), attributes: HashMap::new() };
        let taken: Vec<&String> = pending.iter().filter_map(|p| named.homonyms_checked(p)).collect();
        if !taken.is_empty() {
            for row in self.run(tenant, queries::ENTITY_HOMONYMS, params! { "keys" => taken }).await? {
                let homonym = (str_col(&row, "homonymKey"), str_col(&row, "entityID"));
                named.homonyms.entry(str_col(&row, "key")).or_default().push(homonym);
            }
        }
        let mut ids: Vec<&String> = pending
            .iter()
            .filter(|p| compares(p))
            .flat_map(|p| {
                let homonyms = named.homonyms.get(&p.key).into_iter().flatten().map(|(_, id)| id);
                p.keys().filter_map(|k| named.owner.get(k)).chain(homonyms)
            })
            .collect::<HashSet<_>>()
            .into_iter()
            .collect();
        if !ids.is_empty() {
            ids.sort();
            let mut keys: Vec<&String> = pending
                .iter()
                .flat_map(|p| p.fields.iter().map(|f| &f.key))
                .collect::<HashSet<_>>()
                .into_iter()
                .collect();
            keys.sort();
            let rows = self
                .run(tenant, queries::ENTITY_ATTRIBUTES, params! { "ids" => ids, "keys" => keys })
                .await?;
            named.attributes =
                rows.iter().map(|row| (str_col(row, "entityID"), attributes_col(row))).collect();
        }
        Ok(named)
    }
}

impl Named {
    /// The entity a row goes to: its name's, else the first agreeing homonym's, else its
    /// synonyms' one, else a new one. `Err` is why the row is rejected: its synonyms name
    /// several entities, or its name has `homonyms_per_name` homonyms and none agrees.
    pub(super) fn target(&self, prepared: &Prepared, homonyms_per_name: usize) -> Result<Target, String> {
        let joins = |id: &String| match self.attributes.get(id) {
            Some(values) if compares(prepared) => {
                model::seed_joins(&prepared.fields, &prepared.compared, values)
            }
            _ => true,
        };
        let new_id = prepared.new_id.clone();
        let name_key = || prepared.key.clone();
        if let Some(id) = self.owner.get(&prepared.key) {
            if joins(id) {
                return Ok(Target { entity_id: id.clone(), key: name_key(), homonym_of: None });
            }
            let homonyms = self.homonyms.get(&prepared.key).map_or(&[][..], Vec::as_slice);
            if let Some((key, id)) = homonyms.iter().find(|(_, id)| joins(id)) {
                return Ok(Target { entity_id: id.clone(), key: key.clone(), homonym_of: None });
            }
            if homonyms.len() >= homonyms_per_name {
                return Err(format!(
                    "its name already names {} entities of this type in this bucket that their attributes keep apart (the most one name may name), and its attributes agree with none of them; seed it under a more specific name or in another bucket",
                    homonyms.len() + 1
                ));
            }
            let tag = prepared.params["tag"].as_str().unwrap_or_default();
            let key = format!("{}\u{1f}{tag}", prepared.key);
            return Ok(Target { entity_id: new_id, key, homonym_of: Some(name_key()) });
        }
        let by_synonym: HashSet<&String> =
            prepared.synonym_keys.iter().filter_map(|k| self.owner.get(k)).collect();
        let entity_id = match by_synonym.len() {
            0 => new_id,
            1 => by_synonym.into_iter().next().filter(|id| joins(id)).cloned().unwrap_or(new_id),
            _ => {
                let mut ids: Vec<&String> = by_synonym.into_iter().collect();
                ids.sort();
                return Err(format!(
                    "its synonyms name several entities ({ids:?}); merge them or seed the row without those synonyms"
                ));
            }
        };
        Ok(Target { entity_id, key: name_key(), homonym_of: None })
    }

    /// The row's keys found pointing at an entity: its write must still find them there.
    pub(super) fn expected(&self, prepared: &Prepared) -> Vec<Value> {
        let owned = prepared.keys().filter_map(|k| self.owner.get(k).map(|id| (k, id)));
        owned.map(|(key, id)| json!({ "key": key, "entityID": id })).collect()
    }

    /// The homonyms of the row's name found, as their keys and their entities, in key order:
    /// the write finds the same two lists or leaves the row out. (Lists compared whole, in
    /// the engine's key order, keep that check linear in the homonyms.)
    pub(super) fn expected_homonyms(&self, prepared: &Prepared) -> (Vec<&String>, Vec<&String>) {
        self.homonyms.get(&prepared.key).into_iter().flatten().map(|(key, id)| (key, id)).unzip()
    }

    /// The name key whose homonyms the write checks: set when they were looked up.
    pub(super) fn homonyms_checked<'a>(&self, prepared: &'a Prepared) -> Option<&'a String> {
        (compares(prepared) && self.owner.contains_key(&prepared.key)).then_some(&prepared.key)
    }
}

/// A row with neither synonyms nor compared attributes goes to the entity its name key
/// names, or to a new one: the write's own MERGE on that key decides, so such a row is not
/// looked up first (one engine statement less per wave when no row of it needs a lookup).
pub(super) fn resolved_in_write(prepared: &Prepared) -> bool {
    prepared.synonym_keys.is_empty() && !compares(prepared)
}

fn compares(prepared: &Prepared) -> bool {
    !prepared.compared.is_empty()
}
