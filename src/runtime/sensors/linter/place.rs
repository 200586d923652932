//! Where the fired file is and which linter its project uses. Every upward walk stops at the
//! project folder when the file is inside it (outside it, at the filesystem root).

use std::time::Duration;

use camino::{Utf8Path, Utf8PathBuf};
use serde_json::Value;

use crate::runtime::sensors::node_tool::folders_upward;

/// The longest the lint itself may run.
pub(super) const LINT_STEP_CAP: Duration = Duration::from_secs(5 * 60);

/// The file names of an eslint configuration, flat and legacy.
const ESLINT_CONFIG_FILE_NAMES: [&str; 12] = [
    "eslint.config.js",
    "eslint.config.mjs",
    "eslint.config.cjs",
    "eslint.config.ts",
    "eslint.config.mts",
    "eslint.config.cts",
    ".eslintrc.js",
    ".eslintrc.cjs",
    ".eslintrc.yaml",
    ".eslintrc.yml",
    ".eslintrc.json",
    ".eslintrc",
];

/// The file names of a Biome configuration.
const BIOME_CONFIG_FILE_NAMES: [&str; 2] = ["biome.json", "biome.jsonc"];

/// A `package.json` larger than this is not read for an `eslintConfig` key.
const LARGEST_PACKAGE_JSON_BYTES: u64 = 4 * 1024 * 1024;

/// The fired file and the folders the linter is looked for in.
#[derive(Debug, Clone)]
pub(super) struct LintPlace {
    pub(super) file: Utf8PathBuf,
    /// The file's nearest folder with a `package.json` (else the project folder, or the file's
    /// folder outside the project); the linter runs here.
    pub(super) lint_root: Utf8PathBuf,
    /// From the file's folder up to the project folder: where configurations are looked for.
    pub(super) config_folders: Vec<Utf8PathBuf>,
    /// From the lint root up to the project folder: where `node_modules/.bin` is looked for.
    pub(super) tool_folders: Vec<Utf8PathBuf>,
}

impl LintPlace {
    pub(super) fn of(project_dir: &Utf8Path, file: &Utf8Path) -> Self {
        let file_folder = file.parent().unwrap_or(file);
        let config_folders = folders_upward(file_folder, project_dir);
        let lint_root = config_folders
            .iter()
            .find(|folder| folder.join("package.json").is_file())
            .cloned()
            .unwrap_or_else(|| {
                if file_folder.starts_with(project_dir) {
                    project_dir.to_owned()
                } else {
                    file_folder.to_owned()
                }
            });
        let tool_folders = folders_upward(&lint_root, project_dir);
        Self {
            file: file.to_owned(),
            lint_root,
            config_folders,
            tool_folders,
        }
    }

    /// Biome when a `biome.json` or `biome.jsonc` sits between the file and the project folder
    /// and no eslint configuration does (a file of [`ESLINT_CONFIG_FILE_NAMES`], or an
    /// `eslintConfig` key in a `package.json`); eslint otherwise, which then decides itself
    /// whether it has a configuration.
    pub(super) fn configured_linter(&self) -> ConfiguredLinter {
        if self.config_folders.iter().any(|f| has_eslint_config(f)) {
            return ConfiguredLinter::Eslint {
                config_present: true,
            };
        }
        let biome_config = self.config_folders.iter().find_map(|folder| {
            BIOME_CONFIG_FILE_NAMES
                .iter()
                .map(|name| folder.join(name))
                .find(|path| path.is_file())
        });
        match biome_config {
            Some(config) => ConfiguredLinter::Biome { config },
            None => ConfiguredLinter::Eslint {
                config_present: false,
            },
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum ConfiguredLinter {
    /// eslint; `config_present` says whether a configuration file was seen (eslint may still
    /// find one further up).
    Eslint {
        config_present: bool,
    },
    Biome {
        config: Utf8PathBuf,
    },
}

fn has_eslint_config(folder: &Utf8Path) -> bool {
    ESLINT_CONFIG_FILE_NAMES
        .iter()
        .any(|name| folder.join(name).is_file())
        || package_json_has_eslint_config(&folder.join("package.json"))
}

fn package_json_has_eslint_config(path: &Utf8Path) -> bool {
    let small_enough = std::fs::metadata(path)
        .is_ok_and(|metadata| metadata.is_file() && metadata.len() <= LARGEST_PACKAGE_JSON_BYTES);
    small_enough
        && crate::leaves::fs_util::read_input(path)
            .ok()
            .and_then(|bytes| serde_json::from_slice::<Value>(&bytes).ok())
            .is_some_and(|manifest| manifest.get("eslintConfig").is_some())
}
