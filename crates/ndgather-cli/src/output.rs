//! Files the CLI writes (`-o`, `bench --json`): whole or not at all. The data goes to a
//! temporary file in the destination's folder, which is renamed over the destination once
//! it is complete, so a write that fails or is killed midway leaves whatever was there
//! before, and a symlink at the destination is replaced rather than written through.

use crate::error::CliError;
use std::fs::File;
use std::path::Path;

/// Writes the file at `path` with `write`, replacing what is there only once `write` has
/// succeeded. Devices and pipes (`/dev/null`, a FIFO, `/dev/stdout`) are written in place:
/// they cannot be replaced, and are not files a half write could spoil.
pub fn write_file(
    path: &Path,
    write: impl FnOnce(&mut File) -> Result<(), CliError>,
) -> Result<(), CliError> {
    let label = path.display().to_string();
    let io = |e| CliError::io(&label, e);
    if is_special(path) {
        let mut file = File::create(path).map_err(io)?;
        return write(&mut file);
    }
    let folder = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let name = path
        .file_name()
        .ok_or_else(|| CliError::Usage(format!("-o {label}: name a file, not a folder")))?;
    let mut prefix = std::ffi::OsString::from(".");
    prefix.push(name);
    prefix.push(".");
    let mut builder = tempfile::Builder::new();
    builder.prefix(&prefix).suffix(".tmp");
    // The mode a new file gets from `File::create`: read and write for all, less the umask
    // (the temporary file's default is the owner's only).
    #[cfg(unix)]
    builder.permissions(std::os::unix::fs::PermissionsExt::from_mode(0o666));
    let mut temp = builder.tempfile_in(folder).map_err(io)?;
    // On an error the temporary file is dropped, which deletes it.
    write(temp.as_file_mut())?;
    temp.persist(path).map_err(|e| io(e.error))?;
    Ok(())
}

/// Whether `path` is (or links to, or lies among) the system's devices and streams, which
/// are written where they are.
fn is_special(path: &Path) -> bool {
    let device = path.starts_with("/dev") || path.starts_with("/proc");
    let not_file = std::fs::metadata(path).is_ok_and(|m| !m.is_file());
    device || not_file
}
