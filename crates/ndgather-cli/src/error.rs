//! The CLI's errors: each becomes one `error: <message>` line on stderr and exit status 1.

use std::path::Path;

/// Everything the CLI can report.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// The library refused the call (TensorFlow's wording).
    #[error(transparent)]
    Gather(#[from] ndgather::GatherError),
    /// An inline literal could not be read.
    #[error("{arg}: {source}")]
    Literal {
        /// The argument's name.
        arg: &'static str,
        /// What was wrong.
        source: ndgather::literal::LiteralError,
    },
    /// A file could not be opened, read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// What the OS said.
        source: std::io::Error,
    },
    /// A `.npy` file is malformed or of an unsupported kind.
    #[error("{path}: {reason}")]
    Npy {
        /// The file.
        path: String,
        /// What was wrong.
        reason: String,
    },
    /// Arguments that parse but do not make sense together.
    #[error("{0}")]
    Usage(String),
    /// Anything else: a malformed benchmark suite, an internal inconsistency.
    #[error("{0}")]
    Internal(String),
}

impl CliError {
    /// An I/O error on `path`.
    pub fn io(path: &Path, source: std::io::Error) -> CliError {
        CliError::Io {
            path: path.display().to_string(),
            source,
        }
    }

    /// A malformed or unsupported `.npy` file.
    pub fn npy(path: &Path, reason: String) -> CliError {
        CliError::Npy {
            path: path.display().to_string(),
            reason,
        }
    }
}
