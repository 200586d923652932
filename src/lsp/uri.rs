//! `file:` URIs and the absolute paths they name.
//!
//! Only `file:` URIs with an empty or `localhost` authority name files here; anything else (an
//! `untitled:` buffer, a remote file) is not a project file, and requests about it get no
//! result. Percent-escapes are decoded on the way in and written for every byte outside the
//! unreserved set on the way out, so a path with spaces or non-ASCII names round-trips.

use camino::{Utf8Path, Utf8PathBuf};
use lsp_types::Uri;
use percent_encoding::percent_decode_str;

use crate::leaves::file_uri::{PATH_UNRESERVED, percent_encode_into};

/// The absolute path a `file:` URI names; `None` for any other URI, or one whose path is not
/// UTF-8 once decoded.
pub fn path_of_uri(uri: &Uri) -> Option<Utf8PathBuf> {
    let text = uri.as_str();
    let (scheme, rest) = text.split_once(':')?;
    if !scheme.eq_ignore_ascii_case("file") {
        return None;
    }
    let rest = rest.strip_prefix("//")?;
    let path_start = rest.find('/')?;
    let authority = &rest[..path_start];
    if !(authority.is_empty() || authority.eq_ignore_ascii_case("localhost")) {
        return None;
    }
    let path = &rest[path_start..];
    let path = path.split(['?', '#']).next().unwrap_or_default();
    if !every_escape_is_well_formed(path) {
        return None;
    }
    let decoded = percent_decode_str(path).decode_utf8().ok()?;
    let path = Utf8PathBuf::from(decoded.into_owned());
    path.is_absolute().then_some(path)
}

/// The `file:` URI of an absolute path.
pub fn uri_of_path(path: &Utf8Path) -> Option<Uri> {
    let mut text = String::from("file://");
    percent_encode_into(&mut text, path.as_str(), PATH_UNRESERVED);
    text.parse().ok()
}

/// Whether every `%` in `text` starts an escape of two hex digits: the decoder would keep a
/// broken one as it is, and a path read from a URI that holds one is refused instead.
fn every_escape_is_well_formed(text: &str) -> bool {
    text.match_indices('%').all(|(index, _)| {
        text.get(index + 1..index + 3)
            .is_some_and(|hex| hex.bytes().all(|byte| byte.is_ascii_hexdigit()))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_uris_round_trip_with_spaces_and_non_ascii() {
        let path = Utf8Path::new("/tmp/my project/été/aidlc-x.md");
        let uri = uri_of_path(path).unwrap();
        assert_eq!(
            uri.as_str(),
            "file:///tmp/my%20project/%C3%A9t%C3%A9/aidlc-x.md"
        );
        assert_eq!(path_of_uri(&uri).unwrap(), path);
        let localhost: Uri = "file://localhost/tmp/a%20b.md".parse().unwrap();
        assert_eq!(path_of_uri(&localhost).unwrap(), "/tmp/a b.md");
    }

    #[test]
    fn broken_escapes_are_refused() {
        assert!(every_escape_is_well_formed("/tmp/a%20b%C3%A9"));
        for text in ["/tmp/%zz", "/tmp/%2", "/tmp/a%", "/tmp/%+1", "/tmp/%%20"] {
            assert!(!every_escape_is_well_formed(text), "{text}");
        }
    }

    #[test]
    fn other_uris_name_no_file() {
        for text in [
            "untitled:Untitled-1",
            "https://example.com/a.md",
            "file://server/share/a.md",
            "file:///tmp/%ff.md",
            "file:///tmp/%zz.md",
            "file:///tmp/%2.md",
            "file:///tmp/a%",
            "file:///tmp/%+1.md",
        ] {
            // A URI the type refuses to parse never reaches `path_of_uri`.
            if let Ok(uri) = text.parse::<Uri>() {
                assert_eq!(path_of_uri(&uri), None, "{text}");
            }
        }
    }
}
