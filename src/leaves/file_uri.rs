//! Paths as URIs: the one percent-encoder of the crate, and the two URI shapes the reports
//! write (a relative reference under SARIF's `%SRCROOT%`, and the `file://` URI of a folder).
//! The language server's `file:` URIs (`lsp::uri`) encode through it too.
//!
//! Invariant: every byte outside the set a caller keeps is written as `%XX` (upper-case hex),
//! ASCII letters and digits are always kept, and nothing else is ever changed, so that decoding
//! gives the path's bytes back.

use std::fmt::Write as _;

use camino::Utf8Path;

/// RFC 3986's unreserved punctuation and `/`: what a `file:` URI of an editor keeps.
pub const PATH_UNRESERVED: &[u8] = b"/-._~";

/// The unreserved punctuation, the sub-delimiters, `@` and `/`: what a relative reference keeps.
/// `:` is left out, so that a first segment like `c:` is never read as a scheme.
pub const RELATIVE_REFERENCE_KEPT: &[u8] = b"-._~!$&'()*+,;=@/";

/// [`RELATIVE_REFERENCE_KEPT`] and `:`, for the path of an absolute URI (after its scheme).
pub const ABSOLUTE_PATH_KEPT: &[u8] = b"-._~!$&'()*+,;=@/:";

/// Append `text` to `out`, keeping ASCII letters, digits and the bytes of `kept`, and writing
/// every other byte as `%XX`.
pub fn percent_encode_into(out: &mut String, text: &str, kept: &[u8]) {
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || kept.contains(&byte) {
            out.push(char::from(byte));
        } else {
            let _ = write!(out, "%{byte:02X}");
        }
    }
}

/// A relative path as a URI reference (SARIF's `artifactLocation.uri`): `\` turned into `/`,
/// then every byte outside [`RELATIVE_REFERENCE_KEPT`] percent-encoded.
pub fn relative_uri_reference(path: &Utf8Path) -> String {
    let mut uri = String::with_capacity(path.as_str().len());
    percent_encode_into(
        &mut uri,
        &path.as_str().replace('\\', "/"),
        RELATIVE_REFERENCE_KEPT,
    );
    uri
}

/// The `file://` URI of a folder, ending in `/` (SARIF's `originalUriBaseIds`): `\` turned into
/// `/`, a `/` put before a path that has none (`C:/x` → `file:///C:/x/`).
pub fn folder_file_uri(folder: &Utf8Path) -> String {
    let mut uri = String::from("file://");
    let path = folder.as_str().replace('\\', "/");
    if !path.starts_with('/') {
        uri.push('/');
    }
    percent_encode_into(&mut uri, &path, ABSOLUTE_PATH_KEPT);
    if !uri.ends_with('/') {
        uri.push('/');
    }
    uri
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris_are_percent_encoded_relative_references() {
        assert_eq!(
            relative_uri_reference(Utf8Path::new("docs/my file#1%.md")),
            "docs/my%20file%231%25.md"
        );
        assert_eq!(
            relative_uri_reference(Utf8Path::new("c:/x.md")),
            "c%3A/x.md"
        );
        assert_eq!(
            relative_uri_reference(Utf8Path::new("naïve/a+b.md")),
            "na%C3%AFve/a+b.md"
        );
        assert_eq!(relative_uri_reference(Utf8Path::new("a\\b.md")), "a/b.md");
    }

    #[test]
    fn a_folder_uri_keeps_its_colons_and_ends_in_a_slash() {
        assert_eq!(
            folder_file_uri(Utf8Path::new("/home/my repo")),
            "file:///home/my%20repo/"
        );
        assert_eq!(
            folder_file_uri(Utf8Path::new("C:\\ci\\shop")),
            "file:///C:/ci/shop/"
        );
    }

    #[test]
    fn only_the_kept_bytes_survive() {
        let mut out = String::new();
        percent_encode_into(&mut out, "a b/c:d~é", PATH_UNRESERVED);
        assert_eq!(out, "a%20b/c%3Ad~%C3%A9");
    }
}
