//! `docs/diagnostics.md`, generated from the codes: the introduction
//! (`page_introduction.md` beside this file), then one `## <code>` section per [`Code`] in the
//! enum's order, each the variant's doc comment.
//!
//! Invariant: the committed page is this function's text byte for byte (the `docs` integration
//! test compares them and says how to regenerate the page).

use crate::leaves::diagnostics::Code;

/// The page's opening prose: severities, locations, output formats.
const INTRODUCTION: &str = include_str!("page_introduction.md");

/// The text of `docs/diagnostics.md`.
pub fn diagnostics_page() -> String {
    let mut page = String::from(INTRODUCTION);
    for (index, code) in Code::all().enumerate() {
        if index > 0 {
            page.push('\n');
        }
        page.push_str("## ");
        page.push_str(code.as_str());
        page.push_str("\n\n");
        let section = code.documentation();
        page.push_str(section);
        if !section.ends_with('\n') {
            page.push('\n');
        }
    }
    page
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_page_has_one_section_per_code_in_the_enum_s_order() {
        let page = diagnostics_page();
        let headings: Vec<&str> = page
            .lines()
            .filter_map(|line| line.strip_prefix("## "))
            .collect();
        let codes: Vec<&str> = Code::all().map(Code::as_str).collect();
        assert_eq!(headings, codes);
        assert!(page.starts_with("# Diagnostics\n"));
        assert!(page.ends_with(".\n") && !page.ends_with("\n\n"));
    }
}
