//! The input read in pieces, and the outputs written both or neither, with nothing else touched.
//!
//! - Before anything is written, every output is resolved (symbolic links followed, the folder made
//!   absolute) and refused if it is the input (the same device and inode, whatever the path) or if two
//!   outputs are one file, or if it is a folder or not a regular file.
//! - Each output goes to a temporary file of its own beside its target (`.NAME.topk-PID-N.tmp`, created
//!   exclusively), written and synced whole before any target changes.
//! - Then each existing target gets a second name (`.NAME.topk-PID-N.old`, a hard link, or the file
//!   moved aside where links fail), and the temporary files are renamed over the targets. If any step
//!   fails, the second names are renamed back over whatever replaced the targets, new targets are removed,
//!   and the temporary files go: a failed run leaves every file as it found it.
//! - A signal (see the command line's `signals.rs`) ends the process at once while nothing of it is on
//!   disk; while outputs are being written it is noted, and the writer undoes its work at its next
//!   piece; once the renames have begun it is ignored (they take microseconds).
//!
//! Shared by the `topk` command line and the GPU crate's `topk_gpu` (through `#[path]`): `std` only.

use std::fs::{self, File, Metadata, OpenOptions};
use std::io::{ErrorKind, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicI32, AtomicU8, Ordering};

/// Bytes read or written between two looks at the signal flag and the progress callback.
const PIECE: usize = 1 << 20;

/// Nothing of this process is on disk: a signal may end it at once.
pub(crate) const IDLE: u8 = 0;
/// Temporary files exist: a signal is noted in [`SIGNAL`] and the writer undoes its work.
pub(crate) const WRITING: u8 = 1;
/// The renames have begun (or are done): a signal is ignored until the process ends.
pub(crate) const COMMITTING: u8 = 2;
/// A signal handler took the process: it ends now, and nothing may be created.
pub(crate) const EXITING: u8 = 3;

/// One of the phases above.
pub(crate) static PHASE: AtomicU8 = AtomicU8::new(IDLE);
/// The signal noted while [`WRITING`], or 0.
pub(crate) static SIGNAL: AtomicI32 = AtomicI32::new(0);

/// The name of a signal the command line handles.
pub(crate) fn signal_name(signal: i32) -> &'static str {
    match signal {
        1 => "SIGHUP",
        2 => "SIGINT",
        15 => "SIGTERM",
        _ => "a signal",
    }
}

fn interrupted() -> Result<(), String> {
    match SIGNAL.load(Ordering::SeqCst) {
        0 => Ok(()),
        signal => Err(format!("interrupted by {}; no output written", signal_name(signal))),
    }
}

/// The whole of `path`; `progress` is told the bytes read so far and the file's size.
pub(crate) fn read_input(path: &Path, progress: &mut dyn FnMut(u64, u64)) -> Result<Vec<u8>, String> {
    let fail = |e: std::io::Error| format!("cannot read {}: {e}", path.display());
    let mut file = File::open(path).map_err(fail)?;
    let size = file.metadata().map_err(fail)?.len();
    let mut bytes = Vec::new();
    // A FIFO or a device reports 0 and grows as it is read; a regular file is read into one allocation.
    bytes
        .try_reserve_exact(usize::try_from(size).unwrap_or(usize::MAX).saturating_add(1))
        .map_err(|_| format!("cannot read {}: cannot allocate {size} bytes", path.display()))?;
    let mut piece = vec![0u8; PIECE];
    loop {
        match file.read(&mut piece) {
            Ok(0) => return Ok(bytes),
            Ok(n) => {
                bytes
                    .try_reserve(n)
                    .map_err(|_| format!("cannot read {}: out of memory", path.display()))?;
                bytes.extend_from_slice(&piece[..n]);
                progress(bytes.len() as u64, size);
            }
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Err(fail(e)),
        }
    }
}

/// Outputs checked against the input and each other, ready to be written.
pub(crate) struct Outputs {
    targets: Vec<Target>,
}

struct Target {
    /// The path as given, for messages.
    shown: String,
    /// The path written: symbolic links followed, the folder absolute.
    path: PathBuf,
    /// The existing file's metadata.
    existing: Option<Metadata>,
}

/// The device and inode of a file, where the platform has them.
#[cfg(unix)]
fn file_id(meta: &Metadata) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    Some((meta.dev(), meta.ino()))
}

#[cfg(not(unix))]
fn file_id(_: &Metadata) -> Option<(u64, u64)> {
    None
}

impl Outputs {
    /// Resolves `outputs` (the option's name and its path) and refuses any that is the `input`, a
    /// folder or a special file, or that names the same file as another.
    pub(crate) fn prepare(input: &Path, outputs: &[(&str, &Path)]) -> Result<Outputs, String> {
        let targets = outputs
            .iter()
            .map(|&(option, path)| Target::resolve(option, path))
            .collect::<Result<Vec<_>, _>>()?;
        let input_meta = fs::metadata(input).ok();
        let input_path = fs::canonicalize(input).ok();
        for (target, &(option, _)) in targets.iter().zip(outputs) {
            let same_id = match (&target.existing, &input_meta) {
                (Some(a), Some(b)) => file_id(a).is_some() && file_id(a) == file_id(b),
                _ => false,
            };
            if same_id || input_path.as_ref() == Some(&target.path) {
                return Err(format!(
                    "{option} {} is the input file {}; choose another output",
                    target.shown,
                    input.display()
                ));
            }
        }
        for (i, a) in targets.iter().enumerate() {
            for (j, b) in targets.iter().enumerate().skip(i + 1) {
                let same_id = match (&a.existing, &b.existing) {
                    (Some(x), Some(y)) => file_id(x).is_some() && file_id(x) == file_id(y),
                    _ => false,
                };
                if same_id || a.path == b.path {
                    return Err(format!(
                        "{} and {} name the same file {}",
                        outputs[i].0, outputs[j].0, b.shown
                    ));
                }
            }
        }
        Ok(Outputs { targets })
    }

    /// Writes `contents[i]` to target `i`: all of them or, on any error, none (every existing target
    /// as it was, no temporary file left). `progress` is told the bytes written since its last call.
    pub(crate) fn write(&self, contents: &[&[u8]], progress: &mut dyn FnMut(u64)) -> Result<(), String> {
        if contents.len() != self.targets.len() {
            return Err(format!(
                "{} outputs for {} contents",
                self.targets.len(),
                contents.len()
            ));
        }
        if PHASE
            .compare_exchange(IDLE, WRITING, Ordering::SeqCst, Ordering::SeqCst)
            .is_err()
        {
            // A signal handler is ending the process.
            return Err("interrupted; no output written".to_string());
        }
        let mut steps: Vec<Step> = self.targets.iter().map(|_| Step::default()).collect();
        let result = self.write_steps(&mut steps, contents, progress);
        match result {
            Ok(()) => {
                for step in &steps {
                    if let Some((backup, _)) = &step.backup {
                        let _ = fs::remove_file(backup);
                    }
                }
                Ok(())
            }
            Err(message) => {
                let kept = self.undo(&mut steps);
                PHASE.store(IDLE, Ordering::SeqCst);
                Err(message + &kept)
            }
        }
    }

    fn write_steps(&self, steps: &mut [Step], contents: &[&[u8]], progress: &mut dyn FnMut(u64)) -> Result<(), String> {
        for ((target, step), bytes) in self.targets.iter().zip(steps.iter_mut()).zip(contents) {
            let fail = |e: std::io::Error| format!("cannot write {}: {e}", target.shown);
            let (temp, mut file) = create_beside(&target.path, "tmp").map_err(fail)?;
            step.temp = Some(temp);
            for piece in bytes.chunks(PIECE) {
                interrupted()?;
                file.write_all(piece).map_err(fail)?;
                progress(piece.len() as u64);
            }
            file.sync_all().map_err(fail)?;
            if let Some(meta) = &target.existing {
                // The replacement keeps the file's permissions.
                file.set_permissions(meta.permissions()).map_err(fail)?;
            }
        }
        interrupted()?;
        PHASE.store(COMMITTING, Ordering::SeqCst);
        interrupted()?;
        for (target, step) in self.targets.iter().zip(steps.iter_mut()) {
            if target.existing.is_some() {
                step.backup = second_name(&target.path).map_err(|e| format!("cannot write {}: {e}", target.shown))?;
            }
        }
        for (target, step) in self.targets.iter().zip(steps.iter_mut()) {
            let Some(temp) = &step.temp else {
                return Err(format!("cannot write {}: no temporary file", target.shown));
            };
            fs::rename(temp, &target.path).map_err(|e| format!("cannot write {}: {e}", target.shown))?;
            step.replaced = true;
        }
        Ok(())
    }

    /// Puts every target back as it was; the text to add to the error when that failed somewhere.
    fn undo(&self, steps: &mut [Step]) -> String {
        let mut kept = String::new();
        for (target, step) in self.targets.iter().zip(steps.iter_mut()).rev() {
            let restored = match (&step.backup, step.replaced) {
                // The old file's second name goes back over the new one, or over the empty place.
                (Some((backup, _)), true) | (Some((backup, Aside::Moved)), false) => fs::rename(backup, &target.path),
                (Some((backup, Aside::Linked)), false) => fs::remove_file(backup),
                (None, true) => fs::remove_file(&target.path),
                (None, false) => Ok(()),
            };
            if restored.is_err()
                && let Some((backup, _)) = &step.backup
            {
                kept = format!(
                    "; the previous {} could not be put back and is kept as {}",
                    target.shown,
                    backup.display()
                );
            }
            if !step.replaced
                && let Some(temp) = &step.temp
            {
                let _ = fs::remove_file(temp);
            }
        }
        kept
    }
}

/// What [`Outputs::write`] has done for one target, for [`Outputs::undo`].
#[derive(Default)]
struct Step {
    temp: Option<PathBuf>,
    backup: Option<(PathBuf, Aside)>,
    replaced: bool,
}

/// How an existing target got its second name.
enum Aside {
    /// A hard link: the target is still in place.
    Linked,
    /// Renamed: the target's name is free until the new file takes it.
    Moved,
}

impl Target {
    fn resolve(option: &str, path: &Path) -> Result<Target, String> {
        let shown = path.display().to_string();
        let name = path
            .file_name()
            .filter(|_| !shown.ends_with(std::path::MAIN_SEPARATOR) && !shown.ends_with('/'))
            .ok_or_else(|| format!("{option} {shown} does not name a file"))?;
        match fs::metadata(path) {
            Ok(meta) if meta.is_dir() => Err(format!("{option} {shown} is a folder")),
            Ok(meta) if !meta.is_file() => Err(format!("{option} {shown} is not a regular file")),
            Ok(meta) => {
                let resolved = fs::canonicalize(path).map_err(|e| format!("cannot write {shown}: {e}"))?;
                Ok(Target {
                    shown,
                    path: resolved,
                    existing: Some(meta),
                })
            }
            Err(e) if e.kind() == ErrorKind::NotFound => {
                if fs::symlink_metadata(path).is_ok() {
                    return Err(format!("{option} {shown} is a symbolic link to a missing file"));
                }
                let parent = path
                    .parent()
                    .filter(|p| !p.as_os_str().is_empty())
                    .unwrap_or(Path::new("."));
                let folder = fs::canonicalize(parent)
                    .map_err(|e| format!("cannot write {shown}: the folder {}: {e}", parent.display()))?;
                if !folder.is_dir() {
                    return Err(format!("cannot write {shown}: {} is not a folder", parent.display()));
                }
                Ok(Target {
                    shown,
                    path: folder.join(name),
                    existing: None,
                })
            }
            Err(e) => Err(format!("cannot write {shown}: {e}")),
        }
    }
}

/// `.NAME.topk-PID-N.SUFFIX` beside `path`, for the first N that is free.
fn beside(path: &Path, suffix: &str, n: u32) -> PathBuf {
    let mut name = std::ffi::OsString::from(".");
    name.push(path.file_name().unwrap_or_default());
    name.push(format!(".topk-{}-{n}.{suffix}", std::process::id()));
    path.with_file_name(name)
}

/// A new file beside `path`, created exclusively (an existing file of that name is never opened).
fn create_beside(path: &Path, suffix: &str) -> std::io::Result<(PathBuf, File)> {
    let mut n = 0;
    loop {
        let temp = beside(path, suffix, n);
        match OpenOptions::new().write(true).create_new(true).open(&temp) {
            Ok(file) => return Ok((temp, file)),
            Err(e) if e.kind() == ErrorKind::AlreadyExists && n < 100 => n += 1,
            Err(e) => return Err(e),
        }
    }
}

/// A second name for the existing file at `path` (a hard link, or the file moved there), so that it can
/// be put back; `None` if the file has gone meanwhile.
fn second_name(path: &Path) -> std::io::Result<Option<(PathBuf, Aside)>> {
    let mut n = 0;
    loop {
        let backup = beside(path, "old", n);
        match fs::hard_link(path, &backup) {
            Ok(()) => return Ok(Some((backup, Aside::Linked))),
            Err(e) if e.kind() == ErrorKind::AlreadyExists && n < 100 => n += 1,
            Err(e) if e.kind() == ErrorKind::NotFound => return Ok(None),
            // A file system without hard links: move the file aside instead (`backup` is free).
            Err(e) => {
                if fs::symlink_metadata(&backup).is_ok() {
                    if n >= 100 {
                        return Err(e);
                    }
                    n += 1;
                    continue;
                }
                return match fs::rename(path, &backup) {
                    Ok(()) => Ok(Some((backup, Aside::Moved))),
                    Err(e) if e.kind() == ErrorKind::NotFound => Ok(None),
                    Err(e) => Err(e),
                };
            }
        }
    }
}
