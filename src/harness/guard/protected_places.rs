//! The places an agent never writes, and the paths that reach them: a path is resolved against
//! the file system before it is compared (relative to the folder it is used in, symbolic links
//! followed, `..` folded after the links before it are resolved), and a glob is expanded
//! against the file system.
//!
//! Invariants: resolving reads only the file system's entries and links, never a file's
//! contents; a path that does not exist yet resolves through its longest existing prefix; a
//! link chain longer than [`MAX_LINK_HOPS`] stops being followed (what is left is compared as
//! written); the one file allowed under `.aidlc-engine` is the learning loop's selections
//! handoff, `.aidlc-engine/learnings/<stage>-selections.json`, as resolved.

use camino::{Utf8Component, Utf8Path, Utf8PathBuf};
use globset::{GlobBuilder, GlobMatcher};

/// How many symbolic links one path may pass through before the rest is taken as written.
pub const MAX_LINK_HOPS: usize = 40;
/// How many paths one glob may expand to before the rest are not looked at.
const MAX_GLOB_MATCHES: usize = 4096;
/// How many entries a removed folder's walk looks at for a protected place inside it.
const MAX_WALKED_ENTRIES: usize = 50_000;
/// Folders a removed folder's walk does not descend into (no record lives in them).
const UNWALKED_FOLDERS: [&str; 3] = [".git", "node_modules", "target"];

/// The folders and files of a project an agent never writes, by name.
const GUARDED_NAMES: [&str; 3] = [".aidlc-hooks-health", ".aidlc-engine", ".aidlc-human-turn"];

/// What the guard protects beyond the fixed names: the session's transcript (resolved) and the
/// folder holding it (unless that folder is the root or one below it).
pub struct ProtectedPlaces {
    transcript: Option<Utf8PathBuf>,
    home: Option<Utf8PathBuf>,
}

impl ProtectedPlaces {
    /// The places for a session whose transcript is `transcript`, with `~` meaning `home`.
    pub fn new(transcript: Option<&Utf8Path>, home: Option<Utf8PathBuf>) -> Self {
        Self {
            transcript: transcript.map(resolve_through_links),
            home,
        }
    }

    /// The home folder, `~`.
    pub fn home(&self) -> Option<&Utf8Path> {
        self.home.as_deref()
    }

    /// What `resolved` is, when it is something agents do not write.
    pub fn what_is(&self, resolved: &Utf8Path) -> Option<&'static str> {
        if let Some(transcript) = &self.transcript
            && (resolved == transcript
                || transcript
                    .parent()
                    .filter(|folder| folder.components().count() > 2)
                    .is_some_and(|folder| resolved.starts_with(folder)))
        {
            return Some("the session's transcript");
        }
        let components: Vec<&str> = resolved
            .components()
            .map(|component| component.as_str())
            .collect();
        if is_selections_handoff(&components) {
            return None;
        }
        if let Some(name) = components
            .iter()
            .find(|component| GUARDED_NAMES.contains(component))
        {
            return Some(match *name {
                ".aidlc-hooks-health" => "the hooks-health folder",
                ".aidlc-human-turn" => "the human-turn marker",
                _ => "the engine's record folder",
            });
        }
        let aidlc = components
            .iter()
            .position(|component| *component == "aidlc");
        let audit = components
            .iter()
            .rposition(|component| *component == "audit");
        match (aidlc, audit) {
            (Some(root), Some(audit)) if audit > root => Some("an audit folder"),
            _ => None,
        }
    }

    /// `word` as a path used in `folder` (`None`: a folder the guard cannot tell), resolved;
    /// a leading `~` or `$HOME` is the home folder.
    pub fn resolve(&self, word: &str, folder: Option<&Utf8Path>) -> Utf8PathBuf {
        let written = word.replace('\\', "/");
        let expanded = self.expand_home(&written);
        let path = Utf8PathBuf::from(expanded);
        let path = match folder {
            Some(folder) if path.is_relative() => folder.join(path),
            _ => path,
        };
        resolve_through_links(&path)
    }

    fn expand_home(&self, written: &str) -> String {
        let Some(home) = &self.home else {
            return written.to_owned();
        };
        for prefix in ["~", "$HOME", "${HOME}"] {
            if let Some(rest) = written.strip_prefix(prefix)
                && (rest.is_empty() || rest.starts_with('/'))
            {
                return format!("{home}{rest}");
            }
        }
        written.to_owned()
    }

    /// The protected place `word` reaches when written in `folder`, and what it is: the path
    /// itself (a glob that matches nothing stays as written), every path its glob expands to,
    /// a protected name its glob could match in a folder that holds or would hold one, and
    /// (when `removes`) a protected place inside it.
    pub fn reached_by(
        &self,
        word: &str,
        glob: bool,
        folder: Option<&Utf8Path>,
        removes: bool,
    ) -> Option<(Utf8PathBuf, &'static str)> {
        if word.is_empty() {
            return None;
        }
        let candidates = if glob {
            if let Some(reached) = self.glob_could_match(word, folder) {
                return Some(reached);
            }
            // A glob that matches nothing stays as written (bash without `nullglob`).
            let mut matches = self.glob_matches(word, folder);
            matches.push(self.resolve(word, folder));
            matches
        } else {
            vec![self.resolve(word, folder)]
        };
        for path in candidates {
            if let Some(what) = self.what_is(&path) {
                return Some((path, what));
            }
            if removes && let Some(inside) = self.protected_place_inside(&path) {
                return Some(inside);
            }
        }
        None
    }

    /// The paths `pattern` expands to in `folder`, matched component by component against the
    /// folders' listings (at most [`MAX_GLOB_MATCHES`]).
    fn glob_matches(&self, pattern: &str, folder: Option<&Utf8Path>) -> Vec<Utf8PathBuf> {
        let (base, components) = self.glob_parts(pattern, folder);
        let mut found = vec![base];
        for component in components {
            let Some(matcher) = component_matcher(&component) else {
                found = found
                    .into_iter()
                    .map(|path| path.join(&component))
                    .collect();
                continue;
            };
            let mut next = Vec::new();
            for path in &found {
                let resolved = resolve_through_links(path);
                let Ok(entries) = resolved.read_dir_utf8() else {
                    continue;
                };
                for entry in entries.flatten() {
                    if next.len() >= MAX_GLOB_MATCHES {
                        break;
                    }
                    if matcher.is_match(entry.file_name()) {
                        next.push(resolved.join(entry.file_name()));
                    }
                }
            }
            found = next;
        }
        found
            .iter()
            .map(|path| resolve_through_links(path))
            .collect()
    }

    /// A protected place `pattern`'s first glob component could name in the folder before it,
    /// when that folder holds it or lies under an `aidlc` folder (where records live).
    fn glob_could_match(
        &self,
        pattern: &str,
        folder: Option<&Utf8Path>,
    ) -> Option<(Utf8PathBuf, &'static str)> {
        let (base, components) = self.glob_parts(pattern, folder);
        let mut before = base;
        for component in components {
            let Some(matcher) = component_matcher(&component) else {
                before.push(&component);
                continue;
            };
            let before = resolve_through_links(&before);
            let under_aidlc = before.components().any(|part| part.as_str() == "aidlc");
            let transcript_names = self
                .transcript
                .iter()
                .flat_map(|transcript| {
                    [
                        transcript.file_name(),
                        transcript.parent().and_then(Utf8Path::file_name),
                    ]
                })
                .flatten();
            let names = ["audit"]
                .into_iter()
                .chain(GUARDED_NAMES)
                .chain(transcript_names);
            for name in names {
                let candidate = before.join(name);
                if matcher.is_match(name)
                    && (under_aidlc || candidate.symlink_metadata().is_ok())
                    && let Some(what) = self.what_is(&candidate)
                {
                    return Some((candidate, what));
                }
            }
            return None;
        }
        None
    }

    /// The folder a glob starts from and its components after it.
    fn glob_parts(&self, pattern: &str, folder: Option<&Utf8Path>) -> (Utf8PathBuf, Vec<String>) {
        let written = self.expand_home(&pattern.replace('\\', "/"));
        let path = Utf8PathBuf::from(&written);
        let base = if path.is_absolute() {
            Utf8PathBuf::from("/")
        } else {
            folder.map_or_else(Utf8PathBuf::new, Utf8Path::to_path_buf)
        };
        let components = written
            .split('/')
            .filter(|component| !component.is_empty())
            .map(str::to_owned)
            .collect();
        (base, components)
    }

    /// A protected place inside the folder `path` (the session's transcript, or an entry met
    /// walking it, links not followed), when removing `path` would remove it too.
    fn protected_place_inside(&self, path: &Utf8Path) -> Option<(Utf8PathBuf, &'static str)> {
        if let Some(transcript) = &self.transcript
            && transcript.starts_with(path)
        {
            return Some((transcript.clone(), "the session's transcript"));
        }
        if !path
            .symlink_metadata()
            .is_ok_and(|metadata| metadata.is_dir())
            || path
                .file_name()
                .is_some_and(|name| UNWALKED_FOLDERS.contains(&name))
        {
            return None;
        }
        let mut walked = 0;
        let mut folders = vec![path.to_path_buf()];
        while let Some(folder) = folders.pop() {
            let Ok(entries) = folder.read_dir_utf8() else {
                continue;
            };
            for entry in entries.flatten() {
                walked += 1;
                if walked > MAX_WALKED_ENTRIES {
                    return None;
                }
                let entry_path = entry.path().to_path_buf();
                if let Some(what) = self.what_is(&entry_path) {
                    return Some((entry_path, what));
                }
                if entry.file_type().is_ok_and(|kind| kind.is_dir())
                    && !UNWALKED_FOLDERS.contains(&entry.file_name())
                {
                    folders.push(entry_path);
                }
            }
        }
        None
    }
}

/// Whether `components` end in `.aidlc-engine/learnings/<stage>-selections.json` with no other
/// protected name before.
fn is_selections_handoff(components: &[&str]) -> bool {
    let [before @ .., ".aidlc-engine", "learnings", file] = components else {
        return false;
    };
    file.len() > "-selections.json".len()
        && file.ends_with("-selections.json")
        && !before
            .iter()
            .any(|component| GUARDED_NAMES.contains(component) || *component == "audit")
}

/// A matcher for one glob component, or `None` when it holds no glob (or is not one globset
/// reads, then taken as written).
fn component_matcher(component: &str) -> Option<GlobMatcher> {
    if !component.contains(['*', '?', '[', '{']) {
        return None;
    }
    GlobBuilder::new(component)
        .literal_separator(true)
        .backslash_escape(true)
        .build()
        .ok()
        .map(|glob| glob.compile_matcher())
}

/// `path` with every symbolic link in it followed and `.` and `..` folded after the links
/// before them are resolved, as the kernel walks it; components that do not exist are kept as
/// written. A relative path stays relative to the process's folder.
pub fn resolve_through_links(path: &Utf8Path) -> Utf8PathBuf {
    let mut resolved = Utf8PathBuf::new();
    let mut pending: Vec<String> = Vec::new();
    push_components(&mut pending, path, &mut resolved);
    let mut hops = 0;
    while let Some(component) = pending.pop() {
        match component.as_str() {
            "." => {}
            ".." => {
                if resolved.file_name().is_some() {
                    resolved.pop();
                } else if resolved.as_str().is_empty() || resolved.as_str().ends_with("..") {
                    resolved.push("..");
                }
            }
            name => {
                let candidate = resolved.join(name);
                let link = candidate
                    .symlink_metadata()
                    .is_ok_and(|metadata| metadata.file_type().is_symlink());
                match candidate.read_link_utf8() {
                    Ok(target) if link && hops < MAX_LINK_HOPS => {
                        hops += 1;
                        push_components(&mut pending, &target, &mut resolved);
                    }
                    _ => resolved = candidate,
                }
            }
        }
    }
    resolved
}

/// Pushes `path`'s components onto `pending` (a stack: the first component on top); an
/// absolute `path` restarts `resolved` at the root.
fn push_components(pending: &mut Vec<String>, path: &Utf8Path, resolved: &mut Utf8PathBuf) {
    let mut components = Vec::new();
    for component in path.components() {
        match component {
            Utf8Component::RootDir | Utf8Component::Prefix(_) => {
                *resolved = Utf8PathBuf::from(component.as_str());
                if component.as_str() != "/" {
                    resolved.push("/");
                }
            }
            Utf8Component::CurDir => {}
            Utf8Component::ParentDir => components.push("..".to_owned()),
            Utf8Component::Normal(name) => components.push(name.to_owned()),
        }
    }
    pending.extend(components.into_iter().rev());
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp_folder() -> (tempfile::TempDir, Utf8PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let root = resolve_through_links(&Utf8PathBuf::try_from(dir.path().to_path_buf()).unwrap());
        (dir, root)
    }

    #[test]
    fn links_are_followed_and_dot_dot_is_folded_after_them() {
        let (_dir, root) = temp_folder();
        let record = root.join("aidlc/spaces/default/intents/r");
        std::fs::create_dir_all(record.join("audit")).unwrap();
        std::fs::create_dir_all(root.join("elsewhere/deep")).unwrap();
        std::os::unix::fs::symlink(&record, root.join("rec")).unwrap();
        std::os::unix::fs::symlink(record.join("audit/x.md"), root.join("dangling")).unwrap();
        std::os::unix::fs::symlink(root.join("elsewhere/deep"), record.join("deep")).unwrap();
        assert_eq!(
            resolve_through_links(&root.join("rec/audit/x.md")),
            record.join("audit/x.md")
        );
        assert_eq!(
            resolve_through_links(&root.join("dangling")),
            record.join("audit/x.md")
        );
        // `deep/..` is the link's target's parent, not the record.
        assert_eq!(
            resolve_through_links(&record.join("deep/../y")),
            root.join("elsewhere/y")
        );
        assert_eq!(
            resolve_through_links(&root.join("src/../rec/./audit/new/../z")),
            record.join("audit/z")
        );
        std::os::unix::fs::symlink(root.join("loop"), root.join("loop")).unwrap();
        assert_eq!(
            resolve_through_links(&root.join("loop/x")),
            root.join("loop/x")
        );
    }

    #[test]
    fn protected_places_are_named_and_the_selections_handoff_is_not() {
        let places = ProtectedPlaces::new(Some(Utf8Path::new("/h/t/s.jsonl")), None);
        for (path, what) in [
            ("/p/aidlc/x/audit/a.md", Some("an audit folder")),
            ("/p/src/audit/a.md", None),
            (
                "/p/aidlc/x/.aidlc-engine/prompts/a",
                Some("the engine's record folder"),
            ),
            ("/p/aidlc/x/.aidlc-engine/learnings/s-selections.json", None),
            (
                "/p/aidlc/x/.aidlc-engine/learnings/-selections.json",
                Some("the engine's record folder"),
            ),
            (
                "/p/aidlc/x/.aidlc-engine/learnings/s-selections.json/x",
                Some("the engine's record folder"),
            ),
            (
                "/p/aidlc/x/.aidlc-engine/learnings/s.json",
                Some("the engine's record folder"),
            ),
            ("/p/.aidlc-human-turn", Some("the human-turn marker")),
            ("/h/t/other.jsonl", Some("the session's transcript")),
        ] {
            assert_eq!(places.what_is(Utf8Path::new(path)), what, "{path}");
        }
        let at_the_root = ProtectedPlaces::new(Some(Utf8Path::new("/s.jsonl")), None);
        assert_eq!(at_the_root.what_is(Utf8Path::new("/p/x")), None);
        assert!(at_the_root.what_is(Utf8Path::new("/s.jsonl")).is_some());
    }

    #[test]
    fn globs_reach_what_they_expand_to_and_what_they_could_name() {
        let (_dir, root) = temp_folder();
        let record = root.join("aidlc/spaces/default/intents/r");
        std::fs::create_dir_all(record.join("audit")).unwrap();
        std::fs::write(record.join("audit/x.md"), "").unwrap();
        std::fs::create_dir_all(root.join("build")).unwrap();
        std::fs::write(root.join("build/a.o"), "").unwrap();
        let places = ProtectedPlaces::new(None, None);
        let reached = |word: &str, removes| {
            places
                .reached_by(word, true, Some(&root), removes)
                .map(|(_, what)| what)
        };
        assert_eq!(
            reached("aidlc/spaces/default/intents/r/aud*", true),
            Some("an audit folder")
        );
        assert_eq!(
            reached("aidlc/*/*/intents/r/audit/*.md", false),
            Some("an audit folder")
        );
        // Nothing there yet, but the glob could name the audit folder under `aidlc`.
        assert_eq!(
            reached("aidlc/spaces/new/intents/q/a?dit", false),
            Some("an audit folder")
        );
        assert_eq!(reached("build/*", true), None);
        // Matching nothing, it is written as it stands.
        assert_eq!(
            reached("aidlc/spaces/default/intents/r/audit/new-*", false),
            Some("an audit folder")
        );
        assert_eq!(reached("*", false), None);
        assert_eq!(reached("*", true), Some("an audit folder"));
    }
}
