//! The CLI's errors: each becomes one `error: <message>` line on stderr and exit status 1.

use std::fmt::Display;

/// Everything the CLI can report.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// The library refused the call (TensorFlow's wording).
    #[error(transparent)]
    Gather(#[from] ndgather::Error),
    /// An inline literal could not be read.
    #[error("{arg}: {source}")]
    Literal {
        /// The argument's name.
        arg: &'static str,
        /// What was wrong.
        source: crate::literal::LiteralError,
    },
    /// A file could not be opened, read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// What the OS said.
        source: std::io::Error,
    },
    /// An input is malformed or of an unsupported kind.
    #[error("{path}: {reason}")]
    Npy {
        /// The file.
        path: String,
        /// What was wrong.
        reason: String,
    },
    /// The library refused the call because of a flag's value: TensorFlow's message, and
    /// what the flag allows.
    #[error("{source} ({hint})")]
    Flag {
        /// The library's error.
        source: Box<ndgather::Error>,
        /// What the flag allows.
        hint: String,
    },
    /// Arguments that parse but do not make sense together.
    #[error("{0}")]
    Usage(String),
    /// Anything else: a malformed benchmark suite, an internal inconsistency.
    #[error("{0}")]
    Internal(String),
}

impl CliError {
    /// An I/O error on `path` (a file, or `<stdin>` / `<stdout>`).
    pub fn io(path: impl Display, source: std::io::Error) -> CliError {
        CliError::Io {
            path: path.to_string(),
            source,
        }
    }

    /// A malformed or unsupported input: `path` names it (a file, `FILE:NAME`, `<stdin>`).
    pub fn npy(path: impl Display, reason: String) -> CliError {
        CliError::Npy {
            path: path.to_string(),
            reason,
        }
    }
}
