//! Entity resolution's scoring model, one for merge suggestions and automatic merges:
//! Fellegi–Sunter match weights per compared field, estimated from the tenant's own data.
//!
//! - [`names`]: the name a comparison sees (qualifiers such as "the", "restaurant",
//!   "(paris)" and legal suffixes dropped) and the one-word spelling guard.
//! - [`comparisons`]: which attributes compare and how, read from the entity type's
//!   `attributeSchema` (`x-compare`, `x-tolerance`), and the comparison levels.
//! - [`model`]: m/u per level, the prior, the match weight, the calibrated probability and
//!   the explanation (per-field level and weight) every suggestion and merge carries.
//! - [`em`]: the name's u from random pairs, m and the prior by expectation–maximisation
//!   over the candidate pairs (as Splink does), each attribute's u per name level from the
//!   candidate pairs that are surely not matches, with curated decisions as fixed labels.
//! - [`rarity`]: rare words count more: the name's weight adjusted by how rare the rarest
//!   word two names share is among the type's names (Splink's term-frequency adjustment).
//! - [`noise`]: words of a name that are an address, a country or a legal form, which never
//!   count as the rare word two names share.
//! - [`calibration`]: reliability curve, Brier score and expected calibration error of the
//!   probabilities on labelled pairs (the resolution benchmark prints them).
//! - [`blocking`]: candidate pairs from several keys (name tokens, phonetic keys, the core
//!   name, exact attribute values), never all pairs.

pub mod blocking;
pub mod calibration;
pub mod comparisons;
pub mod decide;
pub mod em;
pub mod model;
pub mod names;
pub mod noise;
pub mod pairs;
pub mod rarity;
pub mod record;
pub mod strangers;
