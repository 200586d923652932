//! Paths as URIs: the one percent-encoder of the crate, and the two URI shapes the reports
//! write (a relative reference under SARIF's `%SRCROOT%`, and the `file://` URI of a folder).
//! The language server's `file:` URIs (`lsp::uri`) encode through it too.
//!
//! The encoding is the `percent-encoding` crate's: every byte outside the set a caller keeps is
//! written as `%XX` (upper-case hex), every non-ASCII byte always, and nothing else is ever
//! changed, so that decoding gives the path's bytes back. Each set keeps the ASCII letters and
//! digits and the punctuation it names ([`NON_ALPHANUMERIC`] less those bytes).

use camino::Utf8Path;
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};

/// What a `file:` URI of an editor encodes: everything but the ASCII letters and digits,
/// RFC 3986's unreserved punctuation and `/`.
pub const PATH_UNRESERVED: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'/')
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// What a relative reference encodes: everything but the ASCII letters and digits, the
/// unreserved punctuation, the sub-delimiters, `@` and `/`. `:` is encoded, so that a first
/// segment like `c:` is never read as a scheme.
pub const RELATIVE_REFERENCE_KEPT: &AsciiSet = &PATH_UNRESERVED
    .remove(b'!')
    .remove(b'$')
    .remove(b'&')
    .remove(b'\'')
    .remove(b'(')
    .remove(b')')
    .remove(b'*')
    .remove(b'+')
    .remove(b',')
    .remove(b';')
    .remove(b'=')
    .remove(b'@');

/// [`RELATIVE_REFERENCE_KEPT`] less `:`, for the path of an absolute URI (after its scheme).
pub const ABSOLUTE_PATH_KEPT: &AsciiSet = &RELATIVE_REFERENCE_KEPT.remove(b':');

/// Append `text` to `out`, every byte in `encoded` (and every non-ASCII byte) written as `%XX`.
pub fn percent_encode_into(out: &mut String, text: &str, encoded: &'static AsciiSet) {
    out.extend(utf8_percent_encode(text, encoded));
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

    /// Each set keeps exactly the ASCII letters, the digits and the punctuation it names; the
    /// other ASCII bytes are written as upper-case `%XX`.
    #[test]
    fn each_set_keeps_exactly_its_named_bytes() {
        for (set, kept) in [
            (PATH_UNRESERVED, &b"/-._~"[..]),
            (RELATIVE_REFERENCE_KEPT, b"-._~!$&'()*+,;=@/"),
            (ABSOLUTE_PATH_KEPT, b"-._~!$&'()*+,;=@/:"),
        ] {
            for byte in 0u8..0x80 {
                let mut out = String::new();
                percent_encode_into(&mut out, &char::from(byte).to_string(), set);
                let expected = if byte.is_ascii_alphanumeric() || kept.contains(&byte) {
                    char::from(byte).to_string()
                } else {
                    format!("%{byte:02X}")
                };
                assert_eq!(out, expected, "byte {byte:#04x}");
            }
        }
    }
}
