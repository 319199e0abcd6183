//! Files the CLI writes (`-o`, `bench --json`): whole or not at all. The data goes to a
//! temporary file in the destination's folder, which is flushed to disk and renamed over the
//! destination once it is complete, so a write that fails or is killed midway (or a crash
//! after the rename) leaves whatever was there before, and a symlink at the destination is
//! replaced rather than written through.

use crate::error::CliError;
use std::fs::{File, Metadata, OpenOptions, Permissions};
use std::path::Path;

/// Writes the file at `path` with `write`, replacing what is there only once `write` has
/// succeeded; a file replaced keeps its permission bits. Devices and pipes (`/dev/null`, a
/// FIFO, `/dev/stdout`) are written in place: they cannot be replaced, and are not files a
/// half write could spoil. Errors name `path`, never the temporary file.
pub fn write_file(
    path: &Path,
    write: impl FnOnce(&mut File) -> Result<(), CliError>,
) -> Result<(), CliError> {
    let label = path.display().to_string();
    let io = |e| CliError::io(&label, e);
    if is_stream(path) {
        let mut file = File::create(path).map_err(io)?;
        return write(&mut file);
    }
    let folder = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    if path.file_name().is_none() {
        return Err(CliError::Usage(format!(
            "-o {label}: name a file, not a folder"
        )));
    }
    let old = std::fs::symlink_metadata(path)
        .ok()
        .filter(Metadata::is_file);
    // A short name of our own, so that a destination whose name is near the system's limit
    // still has room for its temporary file.
    let mut temp = tempfile::Builder::new()
        .prefix(".ndgather-")
        .suffix(".tmp")
        .make_in(folder, |temp| create(temp, old.is_some()))
        .map_err(io)?;
    if let Some(old) = old {
        // Set before any data is written, so the new contents are never readable by more
        // people than the old were.
        temp.as_file()
            .set_permissions(kept(old.permissions()))
            .map_err(io)?;
    }
    // On an error the temporary file is dropped, which deletes it.
    write(temp.as_file_mut())?;
    temp.as_file().sync_all().map_err(io)?;
    temp.persist(path).map_err(|e| io(e.error))?;
    Ok(())
}

/// Creates the temporary file at `path`, failing if anything is there. A file that replaces
/// another is made readable by its owner only until it gets the old file's mode; a new one
/// gets the mode `File::create` gives (read and write for all, less the umask).
fn create(path: &Path, replaces: bool) -> std::io::Result<File> {
    let mut options = OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, if replaces { 0o600 } else { 0o666 });
    #[cfg(not(unix))]
    let _ = replaces;
    options.open(path)
}

/// The permission bits a replacement keeps: read, write and execute for each class, not
/// set-user-ID, set-group-ID or sticky (new contents are not what those were granted to).
fn kept(old: Permissions) -> Permissions {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        Permissions::from_mode(old.mode() & 0o777)
    }
    #[cfg(not(unix))]
    old
}

/// Whether `path` is written where it is: a device, FIFO or socket (or a symlink to one,
/// such as `/dev/stdout` on a terminal or pipe), or a name of one of this process's own
/// descriptors (`/dev/stdout` redirected to a file). The decision is by the file's type,
/// not by the folder it is in: a symlink to a regular file anywhere, `/dev/shm` included,
/// is replaced.
fn is_stream(path: &Path) -> bool {
    let Ok(meta) = std::fs::metadata(path) else {
        return false;
    };
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        let kind = meta.file_type();
        let special =
            kind.is_char_device() || kind.is_block_device() || kind.is_fifo() || kind.is_socket();
        special || names_descriptor(path)
    }
    #[cfg(not(unix))]
    {
        !meta.is_file() && !meta.is_dir()
    }
}

/// Whether `path` is the kernel's name for a descriptor of this process (`/dev/stdout`,
/// `/dev/stderr`, `/dev/fd/N`, `/proc/self/fd/N`): writing there means writing to that
/// descriptor, whatever it is open on, and the names live in folders only the system
/// writes to. Replacing one would put a file in `/dev` or fail.
#[cfg(unix)]
fn names_descriptor(path: &Path) -> bool {
    let fd = |folder: &str| {
        path.strip_prefix(folder)
            .ok()
            .and_then(Path::to_str)
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
    };
    path == Path::new("/dev/stdout")
        || path == Path::new("/dev/stderr")
        || fd("/dev/fd")
        || fd("/proc/self/fd")
}
