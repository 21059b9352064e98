//! Functions and workflows: immutable numbered versions, validation, and the lists.

pub mod model;
