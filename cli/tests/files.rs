//! `topk run` never loses or alters a file it did not succeed in writing: the reproducers of issue 66
//! (a header nested deep, an output that is the input through any path or link, two outputs that are one
//! file, an output that is a folder) and faults injected mid-run (a file size limit, an output folder that
//! goes away, a folder that takes an output's place, an unreadable input, signals). Each failure must
//! exit 2 within a second with one line on stderr, leave every file that existed byte-identical, and
//! leave no temporary file.
//!
//! The faults mid-run are timed with a FIFO as the input: `topk` checks its outputs, then blocks reading
//! the FIFO, so once the test's open of the FIFO for writing returns, the checks are done and the test
//! can change the file system (or send a signal) before it hands the data over.
#![cfg(unix)]

use std::collections::BTreeMap;
use std::ffi::CString;
use std::io::Write;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

fn topk() -> PathBuf {
    std::env::var_os("TOPK_CLI").map_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_topk")), PathBuf::from)
}

/// A fresh directory, removed when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new() -> TempDir {
        static COUNT: AtomicUsize = AtomicUsize::new(0);
        let n = COUNT.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("topk-files-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("create temp dir");
        TempDir(dir)
    }

    fn path(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }

    /// Every file under the directory (symbolic links as their target's text), with its bytes.
    fn snapshot(&self) -> BTreeMap<PathBuf, Vec<u8>> {
        fn walk(dir: &Path, out: &mut BTreeMap<PathBuf, Vec<u8>>) {
            for entry in std::fs::read_dir(dir).expect("read dir") {
                let path = entry.expect("dir entry").path();
                let meta = std::fs::symlink_metadata(&path).expect("metadata");
                if meta.is_symlink() {
                    let target = std::fs::read_link(&path).expect("read link");
                    out.insert(path, target.as_os_str().as_bytes().to_vec());
                } else if meta.is_dir() {
                    out.insert(path.clone(), b"<dir>".to_vec());
                    walk(&path, out);
                } else if meta.file_type().is_file() {
                    out.insert(
                        path.clone(),
                        std::fs::read(&path).unwrap_or_else(|_| b"<unreadable>".to_vec()),
                    );
                } else {
                    out.insert(path, b"<special>".to_vec());
                }
            }
        }
        let mut out = BTreeMap::new();
        walk(&self.0, &mut out);
        out
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A .npy file of `shape` whose elements are `data` (little-endian bytes of type `descr`).
fn npy(descr: &str, shape: &[usize], data: &[u8]) -> Vec<u8> {
    let dims: Vec<String> = shape.iter().map(usize::to_string).collect();
    let tuple = if dims.len() == 1 {
        format!("({},)", dims[0])
    } else {
        format!("({})", dims.join(", "))
    };
    let header = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {tuple}, }}\n");
    let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
    bytes.extend_from_slice(&(header.len() as u16).to_le_bytes());
    bytes.extend_from_slice(header.as_bytes());
    bytes.extend_from_slice(data);
    bytes
}

/// A u8 input of `rows` x `len` with varied values.
fn u8_input(rows: usize, len: usize) -> Vec<u8> {
    let data: Vec<u8> = (0..rows * len)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 7) as u8)
        .collect();
    npy("|u1", &[rows, len], &data)
}

fn args(input: &Path, k: usize, values: &Path, indices: &Path) -> Vec<String> {
    [
        "run",
        "--input",
        input.to_str().unwrap(),
        "--axis",
        "-1",
        "--k",
        &k.to_string(),
        "--direction",
        "decreasing",
        "--values",
        values.to_str().unwrap(),
        "--indices",
        indices.to_str().unwrap(),
    ]
    .map(String::from)
    .to_vec()
}

/// A failure as the issue asks: status 2, one `error:` line holding `message`, nothing on stdout, within
/// a second of `start`, and the directory exactly as `before`.
fn assert_failed(dir: &TempDir, before: &BTreeMap<PathBuf, Vec<u8>>, out: &Output, start: Instant, message: &str) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.starts_with("error: ") && stderr.contains(message),
        "{message:?} not in {stderr}"
    );
    assert!(out.stdout.is_empty(), "{}", String::from_utf8_lossy(&out.stdout));
    assert!(
        start.elapsed() < Duration::from_secs(1),
        "took {:?}: {stderr}",
        start.elapsed()
    );
    let after = dir.snapshot();
    assert!(
        &after == before,
        "files changed: before {:?}, after {:?}",
        before.keys().collect::<Vec<_>>(),
        after.keys().collect::<Vec<_>>()
    );
}

/// Runs `topk` with `args` in `dir` and checks that it failed as [`assert_failed`] says.
fn expect_refusal(dir: &TempDir, args: &[String], message: &str) {
    let before = dir.snapshot();
    let start = Instant::now();
    let out = Command::new(topk())
        .args(args)
        .current_dir(&dir.0)
        .output()
        .expect("run topk");
    assert_failed(dir, &before, &out, start, message);
}

/// A directory with input `x.npy` and existing outputs `v.npy` and `i.npy` (whose bytes must survive).
fn with_existing_outputs() -> TempDir {
    let dir = TempDir::new();
    std::fs::write(dir.path("x.npy"), u8_input(4, 50)).unwrap();
    std::fs::write(dir.path("v.npy"), b"the values of an earlier run").unwrap();
    std::fs::write(dir.path("i.npy"), b"the indices of an earlier run").unwrap();
    dir
}

#[test]
fn deeply_nested_headers_are_refused_at_once() {
    let dir = TempDir::new();
    for (depth, open) in [(22, "["), (22, "{'a': "), (30, "("), (200, "["), (20_000, "[")] {
        let nested = open.repeat(depth);
        let header = format!("{{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'x': {nested}");
        let mut bytes = b"\x93NUMPY\x02\x00".to_vec();
        bytes.extend_from_slice(&(header.len() as u32).to_le_bytes());
        bytes.extend_from_slice(header.as_bytes());
        bytes.extend_from_slice(&[0; 4]);
        std::fs::write(dir.path("deep.npy"), &bytes).unwrap();
        let a = args(&dir.path("deep.npy"), 1, &dir.path("v.npy"), &dir.path("i.npy"));
        expect_refusal(&dir, &a, "nested more than");
    }
    // The same nesting inside an otherwise valid dict value is refused by depth, not parsed.
    let header = format!(
        "{{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'x': {}1{}}}",
        "[".repeat(40),
        "]".repeat(40)
    );
    std::fs::write(dir.path("deep.npy"), npy_with_header(&header, &[0; 4])).unwrap();
    let a = args(&dir.path("deep.npy"), 1, &dir.path("v.npy"), &dir.path("i.npy"));
    expect_refusal(&dir, &a, "nested more than");
}

fn npy_with_header(header: &str, data: &[u8]) -> Vec<u8> {
    let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
    bytes.extend_from_slice(&(header.len() as u16).to_le_bytes());
    bytes.extend_from_slice(header.as_bytes());
    bytes.extend_from_slice(data);
    bytes
}

#[test]
fn an_output_that_is_the_input_is_refused() {
    let dir = with_existing_outputs();
    let (x, v, i) = (dir.path("x.npy"), dir.path("v.npy"), dir.path("i.npy"));
    std::os::unix::fs::symlink(&x, dir.path("link.npy")).unwrap();
    std::fs::hard_link(&x, dir.path("hard.npy")).unwrap();
    std::fs::create_dir(dir.path("sub")).unwrap();
    let relative = PathBuf::from("sub/../x.npy");
    for (values, indices) in [
        (x.clone(), i.clone()),
        (v.clone(), x.clone()),
        (dir.path("link.npy"), i.clone()),
        (v.clone(), dir.path("hard.npy")),
        (relative.clone(), i.clone()),
    ] {
        expect_refusal(&dir, &args(&x, 2, &values, &indices), "is the input file");
    }
    // The input named through a link or a relative path, the output directly.
    expect_refusal(&dir, &args(&dir.path("link.npy"), 2, &x, &i), "is the input file");
    expect_refusal(&dir, &args(Path::new("x.npy"), 2, &v, &x), "is the input file");
}

#[test]
fn two_outputs_that_are_one_file_are_refused() {
    let dir = with_existing_outputs();
    let (x, v) = (dir.path("x.npy"), dir.path("v.npy"));
    std::fs::create_dir(dir.path("out")).unwrap();
    std::os::unix::fs::symlink(dir.path("out"), dir.path("out-link")).unwrap();
    std::fs::hard_link(&v, dir.path("v-again.npy")).unwrap();
    let absolute = dir.path("out").join("v.npy");
    for (values, indices) in [
        // Neither exists: the same folder and name through two paths.
        (PathBuf::from("out/v.npy"), absolute.clone()),
        (PathBuf::from("out-link/v.npy"), absolute.clone()),
        (PathBuf::from("./out/../out/v.npy"), PathBuf::from("out/v.npy")),
        // Both exist: one file through a relative and an absolute path, and a hard link.
        (PathBuf::from("v.npy"), v.clone()),
        (v.clone(), dir.path("v-again.npy")),
    ] {
        expect_refusal(&dir, &args(&x, 2, &values, &indices), "name the same file");
    }
}

#[test]
fn an_output_that_is_a_folder_or_special_is_refused() {
    let dir = with_existing_outputs();
    let (x, v, i) = (dir.path("x.npy"), dir.path("v.npy"), dir.path("i.npy"));
    std::fs::create_dir(dir.path("some_directory")).unwrap();
    expect_refusal(&dir, &args(&x, 2, &v, &dir.path("some_directory")), "is a folder");
    expect_refusal(&dir, &args(&x, 2, &dir.path("some_directory"), &i), "is a folder");
    expect_refusal(&dir, &args(&x, 2, &v, Path::new("/dev/null")), "not a regular file");
    expect_refusal(&dir, &args(&x, 2, &v, &dir.path("missing/i.npy")), "cannot write");
    expect_refusal(&dir, &args(&x, 2, &v, &dir.path("v.npy/i.npy")), "cannot write");
    std::os::unix::fs::symlink(dir.path("nowhere.npy"), dir.path("dangling.npy")).unwrap();
    expect_refusal(&dir, &args(&x, 2, &v, &dir.path("dangling.npy")), "missing file");
    // A bad request changes nothing either, whatever it is.
    expect_refusal(&dir, &args(&x, 99, &v, &i), "K = 99");
    expect_refusal(&dir, &args(&i, 2, &v, &dir.path("new.npy")), "not a .npy file");
}

#[test]
fn a_successful_run_replaces_outputs_in_place() {
    let dir = with_existing_outputs();
    let (x, v) = (dir.path("x.npy"), dir.path("v.npy"));
    std::fs::set_permissions(&v, std::fs::Permissions::from_mode(0o640)).unwrap();
    // An output that is a link to a file: the file is replaced and the link stays a link.
    std::fs::write(dir.path("real-i.npy"), b"old").unwrap();
    std::os::unix::fs::symlink(dir.path("real-i.npy"), dir.path("i-link.npy")).unwrap();
    let out = Command::new(topk())
        .args(args(&x, 3, &v, &dir.path("i-link.npy")))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(String::from_utf8_lossy(&out.stdout).lines().count(), 1);
    let values = std::fs::read(&v).unwrap();
    assert!(values.starts_with(b"\x93NUMPY") && values.len() == 128 + 4 * 3);
    assert_eq!(std::fs::metadata(&v).unwrap().permissions().mode() & 0o777, 0o640);
    assert!(std::fs::symlink_metadata(dir.path("i-link.npy")).unwrap().is_symlink());
    assert_eq!(std::fs::read(dir.path("real-i.npy")).unwrap().len(), 128 + 4 * 4 * 3);
    let mut names: Vec<String> = std::fs::read_dir(&dir.0)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["i-link.npy", "i.npy", "real-i.npy", "v.npy", "x.npy"]);
}

#[test]
fn a_write_that_fails_midway_changes_nothing() {
    // RLIMIT_FSIZE in the child (as `ulimit -f`): a write past it fails with EFBIG, since topk ignores
    // SIGXFSZ. 1000 rows of 100 u8, K = 100, u64 indices: the values (100 KB) fit under the 300 KB
    // limit and are complete when the indices (800 KB) fail; with 60 KB the values fail too.
    for limit in [300_000u64, 60_000] {
        let dir = with_existing_outputs();
        std::fs::write(dir.path("x.npy"), u8_input(1000, 100)).unwrap();
        let (x, v, i) = (dir.path("x.npy"), dir.path("v.npy"), dir.path("i.npy"));
        let mut command = Command::new(topk());
        command.args(args(&x, 100, &v, &i)).args(["--index-type", "u64"]);
        // SAFETY: setrlimit is async-signal-safe, and the closure touches nothing else.
        unsafe {
            command.pre_exec(move || {
                let rlimit = libc::rlimit {
                    rlim_cur: limit,
                    rlim_max: limit,
                };
                if libc::setrlimit(libc::RLIMIT_FSIZE, &rlimit) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let before = dir.snapshot();
        let start = Instant::now();
        let out = command.output().unwrap();
        assert_failed(&dir, &before, &out, start, "File too large");
    }
}

/// Makes a FIFO at `path`.
fn fifo(path: &Path) {
    let name = CString::new(path.as_os_str().as_bytes()).unwrap();
    // SAFETY: a valid C string.
    assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o600) }, 0, "mkfifo");
}

/// Starts `topk` on a FIFO input and returns once it has checked its outputs and opened the FIFO,
/// with the FIFO's write end.
fn start_on_fifo(args: &[String]) -> (Child, std::fs::File) {
    let input = Path::new(&args[2]);
    let child = Command::new(topk())
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Opening a FIFO for writing blocks until the reader opens it.
    let writer = std::fs::OpenOptions::new().write(true).open(input).unwrap();
    (child, writer)
}

#[test]
fn an_output_folder_that_disappears_changes_nothing() {
    let dir = with_existing_outputs();
    std::fs::create_dir(dir.path("out")).unwrap();
    fifo(&dir.path("fifo.npy"));
    let a = args(&dir.path("fifo.npy"), 2, &dir.path("v.npy"), &dir.path("out/i.npy"));
    let (child, mut writer) = start_on_fifo(&a);
    std::fs::remove_dir(dir.path("out")).unwrap();
    let before = dir.snapshot();
    let start = Instant::now();
    writer.write_all(&u8_input(4, 50)).unwrap();
    drop(writer);
    let out = child.wait_with_output().unwrap();
    assert_failed(&dir, &before, &out, start, "cannot write");
}

#[test]
fn a_folder_in_an_outputs_place_undoes_the_other_output() {
    // The values are renamed over v.npy, then the indices' rename fails (a folder took out/i.npy after
    // the checks): v.npy must be put back.
    let dir = with_existing_outputs();
    std::fs::create_dir(dir.path("out")).unwrap();
    fifo(&dir.path("fifo.npy"));
    let a = args(&dir.path("fifo.npy"), 2, &dir.path("v.npy"), &dir.path("out/i.npy"));
    let (child, mut writer) = start_on_fifo(&a);
    std::fs::create_dir(dir.path("out/i.npy")).unwrap();
    std::fs::write(dir.path("out/i.npy/keep"), b"a file in the folder").unwrap();
    let before = dir.snapshot();
    let start = Instant::now();
    writer.write_all(&u8_input(4, 50)).unwrap();
    drop(writer);
    let out = child.wait_with_output().unwrap();
    assert_failed(&dir, &before, &out, start, "cannot write");
}

#[test]
fn an_unreadable_input_changes_nothing() {
    let dir = with_existing_outputs();
    let (v, i) = (dir.path("v.npy"), dir.path("i.npy"));
    std::fs::create_dir(dir.path("folder.npy")).unwrap();
    expect_refusal(&dir, &args(&dir.path("folder.npy"), 1, &v, &i), "cannot read");
    expect_refusal(&dir, &args(&dir.path("missing.npy"), 1, &v, &i), "cannot read");
    expect_refusal(&dir, &args(&dir.path("x.npy/y.npy"), 1, &v, &i), "cannot read");
    let locked = dir.path("locked.npy");
    std::fs::write(&locked, u8_input(2, 2)).unwrap();
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o000)).unwrap();
    // Root reads it anyway; the case only means something where the test itself cannot.
    if std::fs::read(&locked).is_err() {
        expect_refusal(&dir, &args(&locked, 1, &v, &i), "Permission denied");
    }
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o600)).unwrap();
    // A FIFO whose writer stops short: the data ends before the shape says.
    fifo(&dir.path("fifo.npy"));
    let (child, mut writer) = start_on_fifo(&args(&dir.path("fifo.npy"), 1, &v, &i));
    let before = dir.snapshot();
    let start = Instant::now();
    let whole = u8_input(4, 50);
    writer.write_all(&whole[..whole.len() - 10]).unwrap();
    drop(writer);
    let out = child.wait_with_output().unwrap();
    assert_failed(&dir, &before, &out, start, "data bytes");
}

fn kill(child: &Child, signal: libc::c_int) {
    // SAFETY: a plain system call on our own child's id.
    assert_eq!(unsafe { libc::kill(child.id() as libc::pid_t, signal) }, 0);
}

#[test]
fn a_signal_while_reading_ends_the_run_at_once() {
    for (signal, name) in [
        (libc::SIGINT, "SIGINT"),
        (libc::SIGTERM, "SIGTERM"),
        (libc::SIGHUP, "SIGHUP"),
    ] {
        let dir = with_existing_outputs();
        fifo(&dir.path("fifo.npy"));
        let a = args(&dir.path("fifo.npy"), 2, &dir.path("v.npy"), &dir.path("i.npy"));
        let (child, writer) = start_on_fifo(&a);
        let before = dir.snapshot();
        let start = Instant::now();
        kill(&child, signal);
        // The writer stays open: topk must not wait for the data.
        let out = child.wait_with_output().unwrap();
        drop(writer);
        assert_failed(&dir, &before, &out, start, &format!("interrupted by {name}"));
    }
}

#[test]
fn a_signal_at_any_moment_leaves_both_outputs_or_neither() {
    // 1000 rows of 1000 u8 (1 MB), K = 1000 with u64 indices: 9 MB of output, written in pieces. One
    // signal is sent as soon as a temporary file appears (while writing), the others spread over the
    // time an undisturbed run takes, so that they land while reading, selecting, writing or renaming. Whatever the moment: status 0 with both outputs complete, or
    // status 2 with both as they were; never a temporary file left.
    let input = u8_input(1000, 1000);
    let run = |signal_after: Option<Duration>| {
        let dir = with_existing_outputs();
        fifo(&dir.path("fifo.npy"));
        let mut a = args(&dir.path("fifo.npy"), 1000, &dir.path("v.npy"), &dir.path("i.npy"));
        a.extend(["--index-type".to_string(), "u64".to_string()]);
        let (child, mut writer) = start_on_fifo(&a);
        let before = dir.snapshot();
        let start = Instant::now();
        writer.write_all(&input).unwrap();
        drop(writer);
        if let Some(delay) = signal_after {
            if delay == Duration::MAX {
                // As soon as a temporary file exists: while the outputs are being written.
                while !std::fs::read_dir(&dir.0)
                    .unwrap()
                    .any(|e| e.unwrap().file_name().to_string_lossy().ends_with(".tmp"))
                {
                    assert!(start.elapsed() < Duration::from_secs(30), "no temporary file seen");
                }
            } else {
                std::thread::sleep(delay);
            }
            // The process may have ended already; it is not reaped yet, so the id is still its own.
            // SAFETY: a plain system call on our own child's id.
            unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGTERM) };
        }
        let out = child.wait_with_output().unwrap();
        let took = start.elapsed();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        let after = dir.snapshot();
        let finished = match out.status.code() {
            Some(0) => {
                assert!(stderr.is_empty(), "{stderr}");
                let names: Vec<_> = after.keys().collect();
                assert_eq!(names.len(), before.len(), "{names:?}");
                assert_eq!(after[&dir.path("v.npy")].len(), 128 + 1000 * 1000);
                assert_eq!(after[&dir.path("i.npy")].len(), 128 + 8 * 1000 * 1000);
                true
            }
            Some(2) => {
                assert_eq!(stderr.lines().count(), 1, "{stderr}");
                assert!(stderr.starts_with("error: interrupted by SIGTERM"), "{stderr}");
                assert!(
                    after == before,
                    "{signal_after:?}: files changed: {:?}",
                    after.keys().collect::<Vec<_>>()
                );
                false
            }
            other => panic!("{signal_after:?}: status {other:?} ({:?}): {stderr}", out.status),
        };
        (finished, took)
    };
    let (finished, whole) = run(None);
    assert!(finished);
    let (finished, _) = run(Some(Duration::MAX));
    assert!(!finished, "the run ended before its signal, sent while it wrote");
    let mut outcomes = [0usize; 2];
    for tenth in 0..12 {
        let (finished, _) = run(Some(whole * tenth / 10));
        outcomes[usize::from(finished)] += 1;
    }
    eprintln!(
        "an undisturbed run: {whole:?}; interrupted: {}, finished: {}",
        outcomes[0], outcomes[1]
    );
}
