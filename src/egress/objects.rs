//! Local object-store sends: a tenant writes only under its own folder,
//! `<CANON_OBJECT_STORE_DIR>/<account>/<environment>/` (default root `<data dir>/objects`).
//!
//! `s3Bucket` and `s3Prefix` are relative folder names there. Absolute paths, `file://` and
//! other URLs, `..` and control characters are refused when the function is saved
//! ([`relative_folder`]) and again when writing; while writing, each folder on the way is
//! checked, so a symbolic link that leads out of the tenant's folder is refused rather than
//! followed, and the file itself is created new, never through a link.

use std::fs;
use std::io::{self, Write};
use std::path::{Component, Path, PathBuf};

/// `text` as a relative folder path: the reason it is refused otherwise.
pub fn relative_folder(text: &str) -> Result<PathBuf, String> {
    if text.contains("://") {
        return Err(format!(
            "{text:?} is a URL; a local object store takes a folder name under canon's object store \
             (set s3Endpoint for an S3-compatible service)"
        ));
    }
    if text.chars().any(char::is_control) {
        return Err("must not contain control characters".into());
    }
    let path = Path::new(text);
    let mut relative = PathBuf::new();
    for component in path.components() {
        match component {
            Component::Normal(part) => relative.push(part),
            Component::CurDir => {}
            Component::ParentDir => return Err(format!("{text:?} must not contain `..`")),
            Component::RootDir | Component::Prefix(_) => {
                return Err(format!(
                    "{text:?} is an absolute path; name a folder relative to your object store"
                ))
            }
        }
    }
    Ok(relative)
}

/// Writes `body` as a new file at `<root>/<tenant_folder>/<relative>`; every folder on the
/// way is created or checked to stay under the tenant's folder. The file appears at its name
/// whole or not at all; a name already taken is left as it is (`AlreadyExists`). Blocking:
/// run it off the async workers.
pub fn write_new(root: &Path, tenant_folder: &Path, relative: &Path, body: &[u8]) -> io::Result<PathBuf> {
    fs::create_dir_all(root)?;
    let root = root.canonicalize()?;
    let (Some(file_name), Some(parent)) = (relative.file_name(), relative.parent()) else {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, "no file name"));
    };
    let mut folder = root.clone();
    let mut fence = root.clone();
    for (depth, component) in tenant_folder.components().chain(parent.components()).enumerate() {
        let Component::Normal(part) = component else {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, "not a plain relative path"));
        };
        folder = step(&fence, &folder.join(part))?;
        if depth + 1 == tenant_folder.components().count() {
            // From here on nothing may leave the tenant's own folder.
            fence = folder.clone();
        }
    }
    let path = folder.join(file_name);
    // Written whole under a temporary name beside it, then linked to its name: a reader (or a
    // restart after a crash) never finds the object empty or cut short, and a link fails on a
    // name already taken, so an existing object is never overwritten, nor a link followed.
    let temporary = folder.join(format!(".{}.{}.partial", file_name.to_string_lossy(), ulid::Ulid::new()));
    let written = write_whole(&temporary, body).and_then(|()| fs::hard_link(&temporary, &path));
    let _ = fs::remove_file(&temporary);
    written?;
    // The new name itself survives a crash once its folder is synced.
    fs::File::open(&folder)?.sync_all()?;
    Ok(path)
}

/// `body` as the new file `path` (never through a link), on disk when this returns.
fn write_whole(path: &Path, body: &[u8]) -> io::Result<()> {
    let mut options = fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NOFOLLOW).mode(0o600);
    }
    let mut file = options.open(path)?;
    file.write_all(body)?;
    file.sync_data()
}

/// Enters (creating when missing) the folder `next`, which must stay under `fence`.
fn step(fence: &Path, next: &Path) -> io::Result<PathBuf> {
    let escapes = || {
        io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!("{} leads out of the tenant's object store folder", next.display()),
        )
    };
    match fs::symlink_metadata(next) {
        Ok(meta) if meta.file_type().is_symlink() => {
            let target = next.canonicalize()?;
            if !target.starts_with(fence) || !target.is_dir() {
                return Err(escapes());
            }
            Ok(target)
        }
        Ok(meta) if meta.is_dir() => Ok(next.to_path_buf()),
        Ok(_) => Err(io::Error::new(io::ErrorKind::AlreadyExists, format!("{} is a file", next.display()))),
        Err(err) if err.kind() == io::ErrorKind::NotFound => {
            match fs::create_dir(next) {
                Ok(()) => {}
                Err(err) if err.kind() == io::ErrorKind::AlreadyExists => {}
                Err(err) => return Err(err),
            }
            // Created by someone else meanwhile: judge what is there now.
            if fs::symlink_metadata(next)?.file_type().is_symlink() {
                return step(fence, next);
            }
            Ok(next.to_path_buf())
        }
        Err(err) => Err(err),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_relative_folders_are_accepted() {
        assert_eq!(relative_folder("exports/2024").unwrap(), PathBuf::from("exports/2024"));
        assert_eq!(relative_folder("./a/./b/").unwrap(), PathBuf::from("a/b"));
        for refused in ["/tmp/x", "file:///tmp/x", "s3://bucket", "../x", "a/../../b", "a\u{1}b", "a\0b"] {
            assert!(relative_folder(refused).is_err(), "{refused}");
        }
    }

    #[test]
    fn writes_stay_in_the_tenant_folder_even_through_links() {
        let root = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let tenant = Path::new("acc_1/sandbox");
        let written = write_new(root.path(), tenant, Path::new("out/a.json"), b"{}").unwrap();
        assert!(written.starts_with(root.path().canonicalize().unwrap().join("acc_1/sandbox/out")));

        let home = root.path().join("acc_1/sandbox");
        std::os::unix::fs::symlink(outside.path(), home.join("escape")).unwrap();
        let err = write_new(root.path(), tenant, Path::new("escape/b.json"), b"{}").unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::PermissionDenied, "{err}");
        std::os::unix::fs::symlink(home.join("out"), home.join("inside")).unwrap();
        assert!(write_new(root.path(), tenant, Path::new("inside/c.json"), b"{}").is_ok());
        // Another tenant's folder is outside this one's fence.
        write_new(root.path(), Path::new("acc_2/sandbox"), Path::new("x/d.json"), b"{}").unwrap();
        std::os::unix::fs::symlink(root.path().join("acc_2/sandbox/x"), home.join("theirs")).unwrap();
        assert!(write_new(root.path(), tenant, Path::new("theirs/e.json"), b"{}").is_err());
        assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 0);
    }

    #[test]
    fn an_object_appears_whole_or_not_at_all_and_is_never_overwritten() {
        let root = tempfile::tempdir().unwrap();
        let tenant = Path::new("acc_1/sandbox");
        let body = vec![b'x'; 32 * 1024 * 1024];
        let file = root.path().join("acc_1/sandbox/out/big.json");
        let watching = std::sync::atomic::AtomicBool::new(true);
        std::thread::scope(|scope| {
            // A reader looking while it is written sees no file or the whole of it.
            let reader = scope.spawn(|| {
                let mut seen = Vec::new();
                while watching.load(std::sync::atomic::Ordering::Relaxed) {
                    if let Ok(meta) = std::fs::metadata(&file) {
                        seen.push(meta.len());
                    }
                }
                seen
            });
            write_new(root.path(), tenant, Path::new("out/big.json"), &body).unwrap();
            watching.store(false, std::sync::atomic::Ordering::Relaxed);
            let seen = reader.join().unwrap();
            assert!(seen.iter().all(|len| *len == body.len() as u64), "partial sizes seen: {:?}", {
                let mut partial: Vec<_> = seen.into_iter().filter(|len| *len != body.len() as u64).collect();
                partial.dedup();
                partial
            });
        });
        let err = write_new(root.path(), tenant, Path::new("out/big.json"), b"{}").unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::AlreadyExists);
        assert_eq!(std::fs::metadata(&file).unwrap().len(), body.len() as u64, "left as it was");
        let names: Vec<_> =
            std::fs::read_dir(file.parent().unwrap()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names, vec![std::ffi::OsString::from("big.json")], "no temporary file is left behind");
    }
}
