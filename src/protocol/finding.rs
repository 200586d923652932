//! One problem a sensor reported, as the gate report shows it: the unit both halves share. The
//! sensors read their failed verdicts into findings (`sensors::finding`), and every report
//! format renders them.

use camino::Utf8PathBuf;

/// One finding a sensor reported; serialised (the json format's `findings`) with its fields in
/// this order.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Finding {
    /// Project-relative with `/` separators (absolute only for a file outside the project).
    #[schemars(with = "String")]
    pub file: Utf8PathBuf,
    /// What kind of problem: a lint rule id, `missing-heading`, `untagged-claim`, `gap`, …
    pub rule: String,
    /// The problem in one sentence, without its location (the location is the fields below).
    pub message: String,
    /// 1-based; null when the sensor knows only the file.
    pub line: Option<u64>,
    /// 1-based; only with a line.
    pub column: Option<u64>,
    /// The line where the problem ends (1-based, inclusive), when known.
    pub end_line: Option<u64>,
    /// The column where the problem ends (1-based, exclusive), when known.
    pub end_column: Option<u64>,
    /// How to fix it, when the sensor knows.
    pub help: Option<String>,
}

impl Finding {
    /// A finding on the whole file.
    pub fn at_file(
        file: impl Into<Utf8PathBuf>,
        rule: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        Self {
            file: file.into(),
            rule: rule.into(),
            message: message.into(),
            line: None,
            column: None,
            end_line: None,
            end_column: None,
            help: None,
        }
    }

    /// The line and column when they are real positions (1-based); a column without a line is
    /// dropped, since no viewer can place it.
    pub fn position(&self) -> (Option<u64>, Option<u64>) {
        let line = self.line.filter(|line| *line >= 1);
        let column = line.and(self.column.filter(|column| *column >= 1));
        (line, column)
    }
}
