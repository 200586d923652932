//! A sensor binding's selection values, `default_severity` and `fire_on`: one type each, from
//! the manifest the compile reads, through the graph it writes, to the dispatcher, the write
//! hook and the gates that read the graph back (D6: selection comes from the compiled graph).
//!
//! Each value is spelled once, by its variant's name (strum); the manifest parser, the graph's writer and its
//! reader all compare against it. (The diagnostics' `Severity`, how bad a compile problem is,
//! is a different thing.)

use strum::{EnumString, IntoStaticStr, VariantArray};

/// A binding's `default_severity`: whether a failure of the sensor stops the gate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, IntoStaticStr, EnumString, VariantArray)]
#[strum(serialize_all = "lowercase")]
pub enum Severity {
    /// Findings are reported; the gate still opens.
    Advisory,
    /// Findings, or a fire that could not be evaluated, stop the stage's gate.
    Blocking,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// A binding's `fire_on`: when the sensor fires, on an agent's write or at the stage's gate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, IntoStaticStr, EnumString, VariantArray)]
#[strum(serialize_all = "lowercase")]
pub enum FireOn {
    /// When an agent writes a file that `matches` selects (the write hook).
    Write,
    /// When the stage's approval gate opens, once per declared deliverable.
    Gate,
}

impl FireOn {
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_value_reads_back_from_its_own_spelling_and_no_other() {
        for &severity in Severity::VARIANTS {
            assert_eq!(severity.as_str().parse::<Severity>().ok(), Some(severity));
        }
        for &fire_on in FireOn::VARIANTS {
            assert_eq!(fire_on.as_str().parse::<FireOn>().ok(), Some(fire_on));
        }
        for other in ["", "Blocking", "critical", "Gate", " write"] {
            assert!(other.parse::<Severity>().is_err(), "{other:?}");
            assert!(other.parse::<FireOn>().is_err(), "{other:?}");
        }
    }
}
