//! What changed between two states of a set of named things (the files of a project, the stages
//! of a graph): the one type every comparison of two states returns.

/// The names added, modified and removed between two states, each list in the order the
/// comparison that made it states.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Changes<Name> {
    pub added: Vec<Name>,
    pub modified: Vec<Name>,
    pub removed: Vec<Name>,
}

impl<Name> Changes<Name> {
    pub fn is_empty(&self) -> bool {
        self.added.is_empty() && self.modified.is_empty() && self.removed.is_empty()
    }
}
